#!/usr/bin/env bash
# Maintainers: this suite's transposes beside the best public Hopper TMA transpose, on this GPU, in one run.
# The peer (simveit/effective_transpose, MIT licence) is not part of the suite: give a checkout of it.
#   scripts/peer_transpose.sh PEER_DIR [--rounds N] [--build-dir DIR] [--out DIR]
# Builds PEER_DIR/transpose_swizzle_batched.cu (32768 x 32768 floats, hard-coded; it checks its own result
# and times 10000 back-to-back launches between two events) with nvcc for sm_90a into the output folder, then
# alternates, N rounds (default 3):
#   the peer, and transpose_shared --size 32768 with the TMA transposes (tma_64x64, tma_64x64_col), the
#   classic tiles (tiled_64x8, fast_64x8, fast_64x8_col), the float4 tiles capped at 3 blocks per SM
#   (tile64_vec4_3pb, tile64_vec4_3pb_col, tile64_vec4_3pb_col_pf) and the copy with the last one's access
#   pattern (tile_move_vec4_col_pf: not a transpose, that pattern's own ceiling)
# (each verified bit-exactly before it is timed; cudaMemcpy D2D of the same matrix in the same process).
# Prints every round and the ratio of the medians. Output: runs/peer-transpose-<date>-<time>/ (ignored by
# git). Needs a GPU of compute capability 9.0; exits 77 on any other.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
cd "$CML_ROOT"
peer=""
rounds=3
build_dir=build
out=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) need_value "$@"; rounds=$2; shift 2 ;;
    --build-dir) need_value "$@"; build_dir=$(from_caller "$2"); shift 2 ;;
    --out) need_value "$@"; out=$(from_caller "$2"); shift 2 ;;
    -h|--help) print_help ;;
    -*) usage_error "unknown option $1 (see --help)" ;;
    *) [ -z "$peer" ] || usage_error "one PEER_DIR only"; peer=$(from_caller "$1"); shift ;;
  esac
done
[ -n "$peer" ] || usage_error "usage: peer_transpose.sh PEER_DIR [--rounds N] [--build-dir DIR] [--out DIR]"
src=$peer/transpose_swizzle_batched.cu
[ -f "$src" ] || die "$src not found: PEER_DIR is a checkout of simveit/effective_transpose"
[[ $rounds =~ ^[1-9][0-9]?$ ]] || usage_error "--rounds takes 1 to 99, got '$rounds'"
demo=$build_dir/bin/transpose_shared
[ -x "$demo" ] || die "$demo missing: build first (cmake --preset release && cmake --build build)"
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null | head -n 1 || true)
if [ "$cc" != "9.0" ]; then
  echo "waived: the peer's kernel is built for sm_90a and needs a GPU of compute capability 9.0 (this one: ${cc:-none})"
  exit 77
fi
out=${out:-runs/peer-transpose-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || die "cannot create $out"

log "building the peer ($src) for sm_90a"
# The peer's own Makefile flags, minus cuBLAS, which this file does not use.
nvcc -std=c++17 -O3 -DNDEBUG -w --use_fast_math -arch=sm_90a -o "$out/peer_transpose" "$src" -lcuda \
  >"$out/peer_build.log" 2>&1 || { tail -n 20 "$out/peer_build.log"; die "the peer did not build"; }

# tile_move_vec4_col_pf is not a transpose: the copy with tile64_vec4_3pb_col_pf's access pattern, its ceiling.
variants=(tma_64x64 tma_64x64_col tiled_64x8 fast_64x8 fast_64x8_col tile64_vec4_3pb tile64_vec4_3pb_col
          tile64_vec4_3pb_col_pf tile_move_vec4_col_pf)
for r in $(seq 1 "$rounds"); do
  log "round $r of $rounds: peer"
  "$out/peer_transpose" >"$out/peer.$r.log" 2>&1 || { cat "$out/peer.$r.log"; die "the peer failed"; }
  grep -q '^Passed' "$out/peer.$r.log" || { cat "$out/peer.$r.log"; die "the peer's own check did not pass"; }
  log "round $r of $rounds: transpose_shared --size 32768"
  args=(--size 32768 --csv "$out/suite.$r.csv")
  for v in "${variants[@]}"; do args+=(--variant "$v"); done
  "$demo" "${args[@]}" >"$out/suite.$r.log" 2>&1 || { tail -n 20 "$out/suite.$r.log"; die "transpose_shared failed"; }
done

python3 - "$out" "$rounds" "${variants[@]}" <<'EOF' | tee "$out/summary.txt"
import csv, re, statistics, sys
out, rounds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
peer, suite, memcpy = [], {v: [] for v in variants}, []
for r in range(1, rounds + 1):
    m = re.search(r"Bandwidth = ([0-9.eE+]+) GB/s", open(f"{out}/peer.{r}.log").read())
    if not m:
        sys.exit(f"round {r}: no 'Bandwidth = ... GB/s' line in the peer's output")
    peer.append(float(m.group(1)))
    for row in csv.DictReader(open(f"{out}/suite.{r}.csv")):
        if row["variant"] in suite and row["verified"] == "true":
            suite[row["variant"]].append(float(row["gb_per_s"]))
            memcpy.append(float(row["gb_per_s"]) / float(row["vs_memcpy"]))
for v in variants:
    if len(suite[v]) != rounds:
        sys.exit(f"{v}: {len(suite[v])} verified rows in {rounds} rounds")
gpu = next(csv.DictReader(open(f"{out}/suite.1.csv")))["device"]
med = statistics.median
print(f"{gpu}, 32768 x 32768 floats, GB/s (GB = 1e9, bytes read + written), {rounds} rounds")
print(f"{'':24}" + "".join(f"{'round ' + str(r + 1):>11}" for r in range(rounds)) + f"{'median':>11}")
print(f"{'peer (simveit)':24}" + "".join(f"{x:11.0f}" for x in peer) + f"{med(peer):11.0f}")
for v in variants:
    print(f"{v:24}" + "".join(f"{x:11.0f}" for x in suite[v]) + f"{med(suite[v]):11.0f}")
print(f"{'cudaMemcpy D2D':24}{'':{11 * rounds}}{med(memcpy):11.0f}")
for v in variants:
    vs_peer = f"{v} / peer = {med(suite[v]) / med(peer):.3f}   " if not v.startswith("tile_move") else ""
    print(f"{vs_peer}{v} / cudaMemcpy = {med(suite[v]) / med(memcpy):.3f}")
print(f"peer / cudaMemcpy = {med(peer) / med(memcpy):.3f}")
EOF
log "results in $out"
