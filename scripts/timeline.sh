#!/usr/bin/env bash
# Nsight Systems timeline of one demo (transfers, streams, overlap): writes <build>/timeline/<demo>.nsys-rep
# and prints the CUDA API / GPU trace summaries.
#   scripts/timeline.sh <demo> [demo args]
# UNTESTED on the project's GPU host: nsys is not installed there. Written against `nsys profile` /
# `nsys stats` as documented; report problems.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
[ $# -ge 1 ] || die "usage: scripts/timeline.sh <demo> [demo args]"
demo=$1; shift
build=${CML_BUILD:-$CML_ROOT/build}
command -v nsys >/dev/null || die "nsys (Nsight Systems) not found on PATH"
mkdir -p "$build/timeline"
nsys profile --trace=cuda,nvtx,osrt --cuda-um-cpu-page-faults=true --cuda-um-gpu-page-faults=true \
  --force-overwrite=true -o "$build/timeline/$demo" "$build/bin/$demo" "$@"
nsys stats --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum "$build/timeline/$demo.nsys-rep"
