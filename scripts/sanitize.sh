#!/usr/bin/env bash
# compute-sanitizer over every demo (--quick) and every GPU test binary, for each tool, with a table of
# findings (tool x target). Needs a GPU and a built tree (scripts/gpu_check.sh or cmake --preset release).
#   scripts/sanitize.sh [--tools memcheck,racecheck,initcheck,synccheck] [--targets demos|tests|all]
#                       [--only REGEX] [--timeout SECONDS] [--build DIR] [--logs DIR]
# Exit status: 0 when every run reports 0 findings, 1 otherwise.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
tools=memcheck,racecheck,initcheck,synccheck
targets=all
only=""
per_run=600
build="$CML_ROOT/build"
logs=""
while [ $# -gt 0 ]; do
  case $1 in
    --tools) tools=$2; shift 2 ;;
    --targets) targets=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --timeout) per_run=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) die "unknown option $1" ;;
  esac
done
logs=${logs:-$build/sanitize}
command -v compute-sanitizer >/dev/null || die "compute-sanitizer not found (CUDA Toolkit bin/ on PATH?)"
[ -f "$build/demos.txt" ] || die "$build/demos.txt missing: build first"

runs=()   # "label|command"
if [ "$targets" != tests ]; then
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    demo=${line#*/}
    runs+=("$demo|$build/bin/$demo --quick")
  done <"$build/demos.txt"
fi
if [ "$targets" != demos ]; then
  for t in "$build"/tests/*_gpu_tests; do
    [ -x "$t" ] && runs+=("$(basename "$t")|$t")
  done
fi

if [ -n "$only" ]; then
  kept=()
  for run in "${runs[@]}"; do [[ ${run%%|*} =~ $only ]] && kept+=("$run"); done
  runs=("${kept[@]}")
fi

IFS=, read -r -a tool_list <<<"$tools"
declare -A result
bad=0
for tool in "${tool_list[@]}"; do
  mkdir -p "$logs/$tool"
  for run in "${runs[@]}"; do
    label=${run%%|*}
    cmd=${run#*|}
    log_file="$logs/$tool/$label.log"
    extra=()
    [ "$tool" = racecheck ] && extra=(--racecheck-report all)
    # shellcheck disable=SC2086
    timeout "$per_run" compute-sanitizer --tool "$tool" "${extra[@]}" --print-limit 20 $cmd >"$log_file" 2>&1
    rc=$?
    findings=$(grep -Eo '(ERROR SUMMARY|RACECHECK SUMMARY): [0-9]+' "$log_file" | tail -n 1 | grep -Eo '[0-9]+$')
    if [ "$tool" = racecheck ]; then
      # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)": count errors and warnings.
      findings=$(sed -n 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) errors*, \([0-9]*\) warnings*).*/\1 \2/p' "$log_file" | awk '{print $1+$2}' | tail -n 1)
      [ -n "$findings" ] || findings=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+' "$log_file" | grep -Eo '[0-9]+$' | tail -n 1)
    fi
    # Failed API calls a demo makes on purpose are announced by it (cml::announce_expected_api_error);
    # compute-sanitizer counts them as errors. A run with nothing else, all of them announced, is clean.
    api=$(grep -c 'Program hit' "$log_file")
    announced=$(sed -n 's/.*expected CUDA API errors (deliberate): \([0-9]*\) failing call.*/\1/p' "$log_file" \
                | awk '{s += $1} END {print s + 0}')
    if [ "$rc" -eq 124 ]; then cell="timeout"; bad=1
    elif [ -n "$findings" ] && [ "$findings" -gt 0 ] && [ "$findings" -eq "$api" ] && [ "$api" -eq "$announced" ] \
         && [ "$rc" -eq 0 ]; then cell="0 (+$api announced)"
    elif [ "$rc" -eq 77 ]; then cell="waived"
    elif [ -z "$findings" ]; then cell="rc=$rc?"; bad=1
    elif [ "$findings" -ne 0 ] || { [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; }; then cell="$findings (rc=$rc)"; bad=1
    else cell="0"; fi
    result["$tool|$label"]=$cell
    printf '%-10s %-32s %s\n' "$tool" "$label" "$cell"
  done
done

echo
printf '%-32s' "target"
for tool in "${tool_list[@]}"; do printf ' %-11s' "$tool"; done
echo
for run in "${runs[@]}"; do
  label=${run%%|*}
  printf '%-32s' "$label"
  for tool in "${tool_list[@]}"; do printf ' %-11s' "${result["$tool|$label"]}"; done
  echo
done
echo "(findings per tool; logs in $logs)"
exit $bad
