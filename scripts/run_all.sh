#!/usr/bin/env bash
# The main job: build (Release, native arch) if needed, run every demo at its default sizes, write
# CSV/JSON into results/<gpu-slug>/, then the report (results/<gpu-slug>/REPORT.md with plots).
#   scripts/run_all.sh [--quick] [--only REGEX] [--out DIR] [--no-report]
# Keeps going past a failed demo; lists failures at the end and exits 1 if there were any.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
cd "$CML_ROOT"
quick=()
only=""
out=""
report=1
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=(--quick); shift ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --no-report) report=0; shift ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) die "unknown option $1 (see --help)" ;;
  esac
done

ensure_build_deps
log "build (Release, native architecture when a GPU is visible)"
cmake --preset release >/tmp/cml-configure.log 2>&1 || { tail -n 20 /tmp/cml-configure.log; die "configure failed"; }
cmake --build --preset release -j "$(nproc 2>/dev/null || echo 2)" >/tmp/cml-build.log 2>&1 \
  || { tail -n 30 /tmp/cml-build.log; die "build failed (log: /tmp/cml-build.log)"; }

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
if [ -z "$gpu" ]; then
  log "no GPU visible: the demos would all be waived (exit 77). Built everything; nothing to measure."
  exit 0
fi
slug=$(printf '%s' "$gpu" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
out=${out:-results/$slug}
mkdir -p "$out/logs"
cp build/demos.txt "$out/demos.txt"

# Extra runs beyond the defaults: "demo|label|args".
extra_runs=(
  "transpose_shared|transpose_shared_16384|--size 16384"
  "bandwidth_ceiling|bandwidth_ceiling_repeat|"
)
runs=()
while IFS= read -r line; do
  [ -n "$line" ] || continue
  demo=${line#*/}
  runs+=("$demo|$demo|")
done <build/demos.txt
for e in "${extra_runs[@]}"; do [ -x "build/bin/${e%%|*}" ] && runs+=("$e"); done
if [ -n "$only" ]; then
  filtered=()
  for r in "${runs[@]}"; do [[ ${r#*|} =~ $only ]] && filtered+=("$r"); done
  runs=("${filtered[@]}")
fi

n=${#runs[@]}
# label|demo|args of every run, so the report can say how each CSV was produced.
printf '%s\n' "${runs[@]}" | awk -F'|' '{print $2 "|" $1 "|" $3}' >"$out/runs.txt.tmp" && mv "$out/runs.txt.tmp" "$out/runs.txt"
start=$(date +%s)
failures=()
k=0
log "running $n demos on $gpu -> $out"
for r in "${runs[@]}"; do
  k=$((k + 1))
  IFS='|' read -r demo label args <<<"$r"
  t0=$(date +%s)
  # shellcheck disable=SC2086
  "build/bin/$demo" "${quick[@]}" $args --csv "$out/$label.csv" --json "$out/$label.json" \
    >"$out/logs/$label.log" 2>&1
  rc=$?
  now=$(date +%s)
  elapsed=$((now - start))
  eta=$(( elapsed * (n - k) / k ))
  case $rc in
    0) state=ok ;;
    77) state="waived ($(grep -m1 -o 'waived: .*' "$out/logs/$label.log" | cut -c9-80))" ;;
    *) state="FAILED (exit $rc)"; failures+=("$label (exit $rc, log $out/logs/$label.log)") ;;
  esac
  printf '[%2d/%d] %-28s %-10s %4ds   elapsed %dm%02ds  ETA %dm%02ds\n' "$k" "$n" "$label" "$state" \
    $((now - t0)) $((elapsed / 60)) $((elapsed % 60)) $((eta / 60)) $((eta % 60))
done
total=$(( $(date +%s) - start ))
log "demos done in $((total / 60))m$((total % 60))s"

if [ $report -eq 1 ]; then
  if ensure_matplotlib; then
    python3 scripts/report.py "$out" --readmes || failures+=("report (scripts/report.py)")
  else
    failures+=("report (matplotlib missing)")
  fi
fi

if [ ${#failures[@]} -gt 0 ]; then
  echo "FAILURES:"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
log "all demos ok; results in $out"
