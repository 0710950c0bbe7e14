#!/usr/bin/env bash
# Profile one demo with Nsight Compute and print the blog posts' nvprof-style table: load/store efficiency, sectors
# per request, shared wavefronts per request and bank conflicts, DRAM bytes — each next to the access
# model's prediction (from the demo's own CSV) and the difference.
#   scripts/profile.sh [--build-dir DIR] [--out DIR] <demo> [--variant NAME ...] [other demo arguments]
#   --build-dir DIR  the build folder whose bin/<demo> runs (default build/)
#   --out DIR        where ncu's CSV, the demo's CSV and log and the table go (default <build>/profile/<demo>;
#                    also the environment variable CML_PROFILE_OUT)
# The demo runs in --profile mode: one timed launch per measurement, bracketed by cudaProfilerStart/Stop
# and an NVTX range "variant#k|params", so ncu profiles exactly those launches (not the verification
# launch, the L2 flushes or the copy ceiling). ncu always runs with --clock-control none.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
build=$CML_ROOT/build
out=${CML_PROFILE_OUT:-}
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) need_value "$@"; build=$(from_caller "$2"); shift 2 ;;
    --out) need_value "$@"; out=$(from_caller "$2"); shift 2 ;;
    -h|--help) print_help ;;
    -*) usage_error "unknown option $1 before the demo's name (see --help)" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage_error "usage: scripts/profile.sh [--build-dir DIR] [--out DIR] <demo> [--variant NAME] [demo args]"
demo=$1; shift
exe="$build/bin/$demo"
[ -x "$exe" ] || die "$exe not found (build first: cmake --preset release && cmake --build --preset release)"
command -v ncu >/dev/null || die "ncu (Nsight Compute) not found on PATH"
out=${out:-$build/profile/$demo}
mkdir -p "$out"

metrics=(
  gpu__time_duration.sum
  l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
  l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
  l1tex__t_requests_pipe_lsu_mem_global_op_st.sum
  l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
  smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct
  smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct
  smsp__inst_executed_op_shared_ld.sum
  smsp__inst_executed_op_shared_st.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  dram__bytes_read.sum
  dram__bytes_write.sum
)
# The same wavefronts as ncu derives them from each instruction's addresses alone ("ideal"): beside the
# hardware's counts they separate an access pattern's conflicts from passes lost to other warps. And the shared
# instructions counted from the SASS, which leaves out those with every lane predicated off (profile_table.py
# divides by these). Asked for only where this ncu and GPU know them.
ideal=(smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st
       smsp__sass_inst_executed_op_shared_ld smsp__sass_inst_executed_op_shared_st)
known=$(ncu --query-metrics 2>/dev/null || true)
for m in "${ideal[@]}"; do
  grep -q "^$m " <<<"$known" && metrics+=("$m.sum")
done
list=$(IFS=,; echo "${metrics[*]}")
rename=()
ncu --help 2>/dev/null | grep -q -- '--print-nvtx-rename' && rename=(--print-nvtx-rename kernel)

log "ncu --clock-control none on $demo $*"
ncu --clock-control none --profile-from-start off --nvtx "${rename[@]}" --metrics "$list" \
    --csv --page raw --print-units base --log-file "$out/ncu.csv" \
    "$exe" --profile --csv "$out/demo.csv" "$@" >"$out/demo.log" 2>&1 \
  || { tail -n 20 "$out/demo.log"; die "profiling failed (logs in $out)"; }
python3 "$CML_ROOT/scripts/profile_table.py" --ncu "$out/ncu.csv" --demo "$out/demo.csv" --markdown "$out/table.md"
log "table also written to $out/table.md"
