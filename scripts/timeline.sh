#!/usr/bin/env bash
# A timeline of copies and kernels overlapping in streams.
#   scripts/timeline.sh [--build-dir DIR] [demo args]
#       the demo whose add_demo() says TIMELINE (chapter 04's stream overlap), traced with CUDA events:
#       writes <build>/timeline/<demo>.json (a Chrome trace: open it in https://ui.perfetto.dev) and draws it
#       as <demo>.png beside it
#   scripts/timeline.sh [--build-dir DIR] --nsys <demo> [demo args]
#       the same picture from Nsight Systems, for any demo: writes <build>/timeline/<demo>.nsys-rep and prints
#       the CUDA API and GPU trace summaries (needs nsys on PATH)
#   --build-dir DIR   the build folder whose bin/ runs (default build/)
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
build=$CML_ROOT/build
nsys=0
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) need_value "$@"; build=$(from_caller "$2"); shift 2 ;;
    --nsys) nsys=1; shift; break ;;
    -h|--help) print_help ;;
    *) break ;;
  esac
done
if [ $nsys -eq 1 ]; then
  [ $# -ge 1 ] || usage_error "usage: scripts/timeline.sh --nsys <demo> [demo args]"
  demo=$1; shift
  command -v nsys >/dev/null || die "nsys (Nsight Systems) not found on PATH; scripts/timeline.sh without --nsys needs only the GPU"
  mkdir -p "$build/timeline"
  nsys profile --trace=cuda,nvtx,osrt --cuda-um-cpu-page-faults=true --cuda-um-gpu-page-faults=true \
    --force-overwrite=true -o "$build/timeline/$demo" "$build/bin/$demo" "$@"
  nsys stats --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum "$build/timeline/$demo.nsys-rep"
  exit 0
fi
# The demo that writes a stream timeline is declared in its chapter's CMakeLists.txt (add_demo ... TIMELINE).
demo=$(python3 "$CML_ROOT/scripts/lib/run_folder.py" plan "$build" --defaults --timeline --field demo | head -n 1)
[ -n "$demo" ] || die "no demo of $build writes a stream timeline (add_demo ... TIMELINE; configure first)"
[ -x "$build/bin/$demo" ] || die "$build/bin/$demo not built (cmake --build --preset release)"
mkdir -p "$build/timeline"
trace=$build/timeline/$demo.json
"$build/bin/$demo" --timeline "$trace" "$@"
python3 "$CML_ROOT/scripts/timeline_plot.py" "$trace" "${trace%.json}.png"
