#!/usr/bin/env bash
# compute-sanitizer over every demo (--quick) and every GPU test binary, for each tool, with a table of
# findings (tool x target). Needs a GPU and a built tree (scripts/gpu_check.sh or cmake --preset release).
#   scripts/sanitize.sh [--tools memcheck,racecheck,initcheck,synccheck] [--targets demos|tests|all]
#                       [--only REGEX] [--jobs N] [--shards K] [--timeout SECONDS] [--build-dir DIR] [--logs DIR]
#                       [--plan]
# --jobs runs N sanitizer processes at once (default: half the cores, at most 8); each test binary is split
# into K GoogleTest shards (default: 8; never more than it has tests) that count as one target in the
# table. --plan prints the runs and their lanes (one at a time or shared, and the GPU each sees) without
# running them. Exit status: 0 when every run reports 0 findings, 1 otherwise.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
tools=memcheck,racecheck,initcheck,synccheck
targets=all
only=""
per_run=600
cores=$(nproc 2>/dev/null || echo 2)
jobs=$(( cores / 2 > 8 ? 8 : (cores / 2 < 1 ? 1 : cores / 2) ))
shards=8
build="$CML_ROOT/build"
logs=""
plan=0
while [ $# -gt 0 ]; do
  case $1 in
    --tools) need_value "$@"; tools=$2; shift 2 ;;
    --targets) need_value "$@"; targets=$2; shift 2 ;;
    --only) need_value "$@"; only=$2; shift 2 ;;
    --jobs) need_value "$@"; jobs=$2; shift 2 ;;
    --shards) need_value "$@"; shards=$2; shift 2 ;;
    --timeout) need_value "$@"; per_run=$2; shift 2 ;;
    --build-dir) need_value "$@"; build=$(from_caller "$2"); shift 2 ;;
    --logs) need_value "$@"; logs=$2; shift 2 ;;
    --plan) plan=1; shift ;;
    -h|--help) print_help ;;
    *) usage_error "unknown option $1" ;;
  esac
done
need_count --jobs "$jobs"
need_count --shards "$shards"
need_count --timeout "$per_run"
case $targets in demos|tests|all) ;; *) usage_error "--targets must be demos, tests or all" ;; esac
IFS=, read -r -a tool_list <<<"$tools"
for tool in "${tool_list[@]}"; do
  case $tool in memcheck|racecheck|initcheck|synccheck) ;; *) usage_error "unknown tool '$tool'" ;; esac
done
logs=${logs:-$build/sanitize}
[ $plan -eq 1 ] || command -v compute-sanitizer >/dev/null || die "compute-sanitizer not found (CUDA Toolkit bin/ on PATH?)"
[ -f "$build/demos.txt" ] || die "$build/demos.txt missing: build first"

# How each target must run, as add_demo and add_cml_test declare it (build/target_flags.txt): device_state
# targets change device-wide state (the persisting-L2 set-aside, access-policy windows) or read it back and
# compare, and run one at a time, so that no two of them see each other's settings; all_gpus targets need
# every GPU visible (peer access); all others are spread over the GPUs one per run.
declare -A flagged
for flag in device_state all_gpus; do
  names=$(python3 "$CML_ROOT/scripts/lib/run_folder.py" targets "$build" --flag $flag) || exit 1
  while IFS= read -r name; do [ -n "$name" ] && flagged["$flag|$name"]=1; done <<<"$names"
done
has_flag() { [ -n "${flagged["$1|$2"]:-}" ]; }   # has_flag FLAG TARGET
gpu_count=$(visible_gpus)
[ "$gpu_count" -ge 1 ] || gpu_count=1
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && gpu_count=1   # the caller chose the devices

targets_list=()   # "label|command"
if [ "$targets" != tests ]; then
  while IFS= read -r demo; do
    [ -n "$demo" ] && targets_list+=("$demo|$build/bin/$demo --quick")
  done < <(python3 "$CML_ROOT/scripts/lib/run_folder.py" demos "$build")
fi
if [ "$targets" != demos ]; then
  for t in "$build"/tests/*_gpu_tests; do
    [ -x "$t" ] && targets_list+=("$(basename "$t")|$t")
  done
fi
if [ -n "$only" ]; then
  kept=()
  for t in "${targets_list[@]}"; do [[ ${t%%|*} =~ $only ]] && kept+=("$t"); done
  targets_list=("${kept[@]}")
fi
[ ${#targets_list[@]} -gt 0 ] || die "no targets selected"

# One sanitizer run. Writes <log> and <log>.res: "findings api_errors announced rc seconds".
run_one() {
  local tool=$1 cmd=$2 log_file=$3 shard=$4 gpu=$5 extra=() env_args=()
  [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  # CML_SANITIZER_SWEEP: the tests skip their largest sizes and walk boundary shapes only (tests/testing.hpp).
  if [ "$shard" != - ]; then   # "index/total"
    env_args+=(GTEST_TOTAL_SHARDS="${shard#*/}" GTEST_SHARD_INDEX="${shard%/*}" CML_SANITIZER_SWEEP=1)
  fi
  [ "$gpu" != - ] && env_args+=(CUDA_VISIBLE_DEVICES="$gpu")
  local t0=$SECONDS
  # shellcheck disable=SC2086
  env "${env_args[@]}" timeout "$per_run" compute-sanitizer --tool "$tool" "${extra[@]}" --print-limit 20 \
    $cmd >"$log_file" 2>&1
  local rc=$? secs=$((SECONDS - t0)) findings api announced
  if [ "$tool" = racecheck ]; then
    # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)": count errors and warnings.
    findings=$(sed -n 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) errors*, \([0-9]*\) warnings*).*/\1 \2/p' "$log_file" \
               | awk '{print $1 + $2}' | tail -n 1)
    [ -n "$findings" ] || findings=$(grep -Eo 'RACECHECK SUMMARY: [0-9]+' "$log_file" | grep -Eo '[0-9]+$' | tail -n 1)
  else
    findings=$(grep -Eo 'ERROR SUMMARY: [0-9]+' "$log_file" | tail -n 1 | grep -Eo '[0-9]+$')
  fi
  api=$(grep -c 'Program hit' "$log_file")
  announced=$(sed -n 's/.*expected CUDA API errors (deliberate): \([0-9]*\) failing call.*/\1/p' "$log_file" \
              | awk '{s += $1} END {print s + 0}')
  echo "${findings:--} $api $announced $rc $secs" >"$log_file.res"
  printf '%-10s %-40s findings %s, API errors %s (announced %s), exit %s, %ss\n' "$tool" \
    "$(basename "$log_file" .log)" "${findings:--}" "$api" "$announced" "$rc" "$secs"
}

# The work list: one unit per (tool, target, shard). Test binaries are sharded; demos are not.
units=()   # "tool|label|shard|command"
for tool in "${tool_list[@]}"; do
  for t in "${targets_list[@]}"; do
    label=${t%%|*}; cmd=${t#*|}
    if [[ $label == *_gpu_tests ]]; then
      # No more shards than tests: an empty shard never calls CUDA, and compute-sanitizer fails such a run.
      n=$(CML_SANITIZER_SWEEP=1 "$cmd" --gtest_list_tests 2>/dev/null | grep -c '^  ')
      k=$(( n >= 1 && n < shards ? n : shards ))
      for ((s = 0; s < k; ++s)); do units+=("$tool|$label|$s/$k|$cmd"); done
    else
      units+=("$tool|$label|-|$cmd")
    fi
  done
done

log_of() { local tool=$1 label=$2 shard=$3; [ "$shard" = - ] && echo "$logs/$tool/$label.log" || echo "$logs/$tool/$label.shard${shard%/*}.log"; }

serial=() parallel=()
for u in "${units[@]}"; do
  IFS='|' read -r _ label _ _ <<<"$u"
  if has_flag device_state "$label"; then serial+=("$u"); else parallel+=("$u"); fi
done
# The GPU a unit sees ("-": every visible one): the serial lane uses the first; the k-th unit of the shared
# lanes the next in turn; a target that needs them all sees them all.
lanes=1
serial_gpu() {
  if [ "$gpu_count" -gt 1 ] && ! has_flag all_gpus "$1"; then echo 0; else echo -; fi
}
shared_gpu() {
  local k=$1 label=$2
  if [ "$gpu_count" -gt 1 ] && ! has_flag all_gpus "$label"; then echo $(( (k + lanes) % gpu_count )); else echo -; fi
}
if [ $plan -eq 1 ]; then
  for u in "${serial[@]}"; do
    IFS='|' read -r tool label shard _ <<<"$u"
    echo "one-at-a-time $tool $label $shard gpu $(serial_gpu "$label")"
  done
  k=0
  for u in "${parallel[@]}"; do
    IFS='|' read -r tool label shard _ <<<"$u"
    echo "shared $tool $label $shard gpu $(shared_gpu $k "$label")"
    k=$((k + 1))
  done
  exit 0
fi
for tool in "${tool_list[@]}"; do
  rm -rf "${logs:?}/$tool"; mkdir -p "$logs/$tool"
done
log "compute-sanitizer: ${#units[@]} runs (${#serial[@]} one at a time), $jobs at once, $gpu_count GPU(s), timeout ${per_run}s each"
start=$(date +%s)

# The state-sensitive units run in order in one background lane; the rest share the other slots.
(
  for u in "${serial[@]}"; do
    IFS='|' read -r tool label shard cmd <<<"$u"
    run_one "$tool" "$cmd" "$(log_of "$tool" "$label" "$shard")" "$shard" "$(serial_gpu "$label")"
  done
) &
k=0
for u in "${parallel[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
  IFS='|' read -r tool label shard cmd <<<"$u"
  gpu=$(shared_gpu $k "$label")
  k=$((k + 1))
  run_one "$tool" "$cmd" "$(log_of "$tool" "$label" "$shard")" "$shard" "$gpu" &
done
wait
log "sanitizer runs done in $(( $(date +%s) - start ))s"

# One cell per (tool, target): shards add up; any timeout or failure shows.
declare -A result
bad=0
slowest=0 slowest_run=""
for tool in "${tool_list[@]}"; do
  for t in "${targets_list[@]}"; do
    label=${t%%|*}
    findings=0 api=0 announced=0 rc=0 timeouts=0 unknown=0 all_waived=1
    for res in "$logs/$tool/$label".log.res "$logs/$tool/$label".shard*.log.res; do
      [ -f "$res" ] || continue
      read -r f a n r secs <"$res"
      if [ "${secs:-0}" -gt "$slowest" ]; then slowest=$secs slowest_run="$tool ${res#"$logs/$tool/"}"; fi
      if [ "$f" = - ]; then unknown=1; else findings=$((findings + f)); fi
      api=$((api + a)); announced=$((announced + n))
      [ "$r" -eq 124 ] && timeouts=1
      [ "$r" -ne 77 ] && all_waived=0
      [ "$r" -ne 0 ] && [ "$r" -ne 77 ] && rc=$r
    done
    # Failed API calls a demo makes on purpose are announced by it (cml::announce_expected_api_error);
    # compute-sanitizer counts them as errors. A run with nothing else, all of them announced, is clean.
    if [ $timeouts -eq 1 ]; then cell="timeout"; bad=1
    elif [ $all_waived -eq 1 ]; then cell="waived"
    elif [ $unknown -eq 1 ]; then cell="rc=$rc?"; bad=1
    elif [ $findings -gt 0 ] && [ $findings -eq $api ] && [ $api -eq $announced ] && [ $rc -eq 0 ]; then
      cell="0 (+$api announced)"
    elif [ $findings -ne 0 ] || [ $rc -ne 0 ]; then cell="$findings (rc=$rc)"; bad=1
    else cell="0"; fi
    result["$tool|$label"]=$cell
  done
done

width=32
for t in "${targets_list[@]}"; do label=${t%%|*}; [ ${#label} -lt $width ] || width=$(( ${#label} + 1 )); done
echo
printf '%-*s' $width "target"
for tool in "${tool_list[@]}"; do printf ' %-18s' "$tool"; done
echo
for t in "${targets_list[@]}"; do
  label=${t%%|*}
  printf '%-*s' $width "$label"
  for tool in "${tool_list[@]}"; do printf ' %-18s' "${result["$tool|$label"]}"; done
  echo
done
echo "(findings per tool; test binaries in up to $shards shards, summed; logs in $logs)"
# A learner who raises --jobs or runs on a slower host sees how close the longest run came to --timeout.
echo "slowest run: ${slowest_run%.log.res} ${slowest}s of the ${per_run}s timeout"
exit $bad
