#!/usr/bin/env bash
# A timeline of copies and kernels overlapping in streams.
#   scripts/timeline.sh [demo args]          stream_overlap traced with CUDA events: writes
#                                            <build>/timeline/stream_overlap.json (Chrome trace: open it in
#                                            https://ui.perfetto.dev) and draws it as .png beside it
#   scripts/timeline.sh --nsys <demo> [args] the same picture from Nsight Systems, for any demo: writes
#                                            <build>/timeline/<demo>.nsys-rep and prints the CUDA API and
#                                            GPU trace summaries (needs nsys on PATH)
# CML_BUILD picks the build folder (default build/).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
build=${CML_BUILD:-$CML_ROOT/build}
case "${1:-}" in
  -h|--help) sed -n '2,9p' "$CML_SELF"; exit 0 ;;
esac
if [ "${1:-}" = --nsys ]; then
  shift
  [ $# -ge 1 ] || usage_error "usage: scripts/timeline.sh --nsys <demo> [demo args]"
  demo=$1; shift
  command -v nsys >/dev/null || die "nsys (Nsight Systems) not found on PATH; scripts/timeline.sh without --nsys needs only the GPU"
  mkdir -p "$build/timeline"
  nsys profile --trace=cuda,nvtx,osrt --cuda-um-cpu-page-faults=true --cuda-um-gpu-page-faults=true \
    --force-overwrite=true -o "$build/timeline/$demo" "$build/bin/$demo" "$@"
  nsys stats --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum "$build/timeline/$demo.nsys-rep"
  exit 0
fi
[ -x "$build/bin/stream_overlap" ] || die "$build/bin/stream_overlap not built (cmake --build --preset release)"
mkdir -p "$build/timeline"
trace=$build/timeline/stream_overlap.json
"$build/bin/stream_overlap" --variant staged --timeline "$trace" "$@"
python3 "$CML_ROOT/scripts/timeline_plot.py" "$trace" "${trace%.json}.png"
