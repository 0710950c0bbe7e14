#!/usr/bin/env bash
# The main job: build (Release; native architecture when a GPU is visible) if needed, run every demo at
# its default sizes, judge each demo's claims on this GPU, and write everything to a new run folder
#   runs/<gpu>-<date>-<time>/   (CSV/JSON/claims per demo, the stream timeline, logs/, provenance.json,
#                                REPORT.md, plots/)
# which git ignores: a run never changes a tracked file. It ends with a summary: demos ok / waived /
# failed, device-side claims held N of M (each one not held with its numbers), host-dependent claims.
#
#   scripts/run_all.sh [--quick] [--only REGEX] [--out DIR] [--no-report] [--strict] [--skip-build]
#                      [--build-dir DIR] [--reference]
#   --only REGEX the runs whose label matches: a demo's name, or the label of an extra run that its add_demo
#                declares (the second field of build/demo_runs.txt), e.g. --only '^(demo_a|demo_b)$'
#   --strict     exit 1 when a device-side claim does not hold (scripts/gpu_check.sh uses it)
#   --reference  maintainers only: after the run, make it the committed reference set of this GPU
#                (scripts/promote_reference.sh: results/<gpu>/ and the figures in the chapter READMEs)
# Keeps going past a failed demo; lists failures at the end and exits 1 if there were any.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
cd "$CML_ROOT" || exit 2
quick=()
only=""
out=""
report=1
strict=0
reference=0
skip_build=0
build_dir=build
cmdline="scripts/run_all.sh $*"
while [ $# -gt 0 ]; do
  case $1 in
    --quick) quick=(--quick); shift ;;
    --only) need_value "$@"; only=$2; shift 2 ;;
    --out) need_value "$@"; out=$(from_caller "$2"); shift 2 ;;
    --no-report) report=0; shift ;;
    --strict) strict=1; shift ;;
    --reference) reference=1; shift ;;
    --skip-build) skip_build=1; shift ;;
    --build-dir) need_value "$@"; build_dir=$(from_caller "$2"); shift 2 ;;
    -h|--help) print_help ;;
    *) usage_error "unknown option $1 (see --help)" ;;
  esac
done
if [ $reference -eq 1 ] && { [ ${#quick[@]} -gt 0 ] || [ -n "$only" ]; }; then
  usage_error "--reference needs the full run at default sizes (no --quick, no --only)"
fi
case "$(realpath -m "${out:-runs}")/" in
  "$(realpath -m "$CML_ROOT/results")/"*)
    usage_error "--out must not be results/ or inside it: reference sets change only through --reference" ;;
esac

wall_start=$(date +%s)
if [ $skip_build -eq 0 ]; then
  log "build (Release, native architecture when a GPU is visible) in $build_dir"
  build_tree --logs "$build_dir/run_all" "$build_dir" || exit 1
fi
[ -f "$build_dir/demos.txt" ] || die "$build_dir/demos.txt missing: build first (or drop --skip-build)"

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
if [ -z "$gpu" ]; then
  log "no GPU visible: the demos would all be waived (exit 77). Built everything; nothing to measure."
  exit 0
fi
slug=$(printf '%s' "$gpu" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
stamp=$(date +%Y%m%d-%H%M%S)
out=${out:-runs/$slug-$stamp}
# What to run comes from the build (add_demo in each chapter's CMakeLists.txt): every demo at its defaults
# first, in chapter order; then the extra runs (a label of their own). scripts/lib/run_folder.py writes the
# run folder's files (runs.txt, status.txt, demos.txt), the one place that knows their format.
plan=$(python3 scripts/lib/run_folder.py init "$out" "$build_dir" ${only:+"--only=$only"}) || exit $?
mapfile -t runs <<<"$plan"
n=${#runs[@]}
start=$(date +%s)
failures=()
k=0
log "running $n demos on $gpu -> $out"
for r in "${runs[@]}"; do
  k=$((k + 1))
  IFS='|' read -r demo label args timeline <<<"$r"
  t0=$(date +%s)
  # Outputs beyond the table: the stream timeline (drawn by the report as plots/<label>_timeline.png).
  outputs=()
  [ "$timeline" = 1 ] && outputs=(--timeline "$out/$label.timeline.json")
  # shellcheck disable=SC2086
  "$build_dir/bin/$demo" "${quick[@]}" $args --csv "$out/$label.csv" --json "$out/$label.json" \
    --claims-csv "$out/$label.claims.csv" "${outputs[@]}" >"$out/logs/$label.log" 2>&1
  rc=$?
  now=$(date +%s)
  elapsed=$((now - start))
  eta=$(( elapsed * (n - k) / k ))
  state=$(python3 scripts/lib/run_folder.py record "$out" "$label" "$demo" "$rc") || die "cannot write $out/status.txt"
  [ "$state" = failed ] && failures+=("$label (exit $rc, log $out/logs/$label.log)")
  printf '[%2d/%d] %-28s %-8s %4ds   elapsed %dm%02ds  ETA %dm%02ds\n' "$k" "$n" "$label" "$state" \
    $((now - t0)) $((elapsed / 60)) $((elapsed % 60)) $((eta / 60)) $((eta % 60))
done
total=$(( $(date +%s) - start ))
log "demos done in $((total / 60))m$((total % 60))s"

# Provenance, generated from this run only.
python3 scripts/provenance.py "$out" --command "$cmdline" --wall-s $(( $(date +%s) - wall_start )) \
  --build-dir "$build_dir" >/dev/null || failures+=("provenance (scripts/provenance.py)")

if [ $report -eq 1 ]; then
  if ensure_matplotlib; then
    python3 scripts/report.py "$out" >/dev/null || failures+=("report (scripts/report.py)")
  else
    failures+=("report (matplotlib missing)")
  fi
fi

# The summary: demos, then claims (device-side counted, host-dependent apart).
python3 scripts/claims_summary.py "$out"
claims_rc=$?
if [ $claims_rc -eq 3 ]; then
  failures+=("claims that cannot find their rows (a defect; see above)")
elif [ $strict -eq 1 ] && [ $claims_rc -ne 0 ]; then
  failures+=("--strict: device-side claims not held (see above)")
fi
[ -f "$out/REPORT.md" ] && log "report: $out/REPORT.md"

if [ $reference -eq 1 ]; then
  if [ ${#failures[@]} -gt 0 ]; then
    log "not promoted to a reference set: the run had failures"
  else
    bash scripts/promote_reference.sh "$out" || failures+=("promote_reference.sh")
  fi
fi

if [ ${#failures[@]} -gt 0 ]; then
  echo "FAILURES:"
  printf '  %s\n' "${failures[@]}"
  exit 1
fi
log "all demos ok; results in $out"
