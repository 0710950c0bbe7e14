#!/usr/bin/env bash
# scripts/sanitize.sh's bookkeeping, checked without a GPU: a stand-in compute-sanitizer on PATH runs
# stand-in demos and a stand-in test binary, and the table must read each outcome the way it is meant
# to: findings, failed API calls the demo announced, a waiver (exit 77), a run past --timeout, and a
# binary with fewer tests than shards; and --plan must give each target the lane and GPUs its flags in
# build/target_flags.txt ask for. Runs anywhere.
# Usage: sanitize_table.sh <source root>
set -u
root=$(cd "$1" && pwd) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/path" "$work/build/bin" "$work/build/tests"

# The stand-in sanitizer: runs the command after its options, then prints the summary a real one prints,
# with as many errors as the command asked for (FAKE_ERRORS=N on its output) and one "Program hit" line
# per announced API error (FAKE_API=N).
cat >"$work/path/compute-sanitizer" <<'EOF'
#!/usr/bin/env bash
tool=memcheck
while [ $# -gt 0 ]; do
  case $1 in
    --tool) tool=$2; shift 2 ;;
    --racecheck-report|--print-limit) shift 2 ;;
    *) break ;;
  esac
done
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
errors=$(printf '%s\n' "$out" | sed -n 's/^FAKE_ERRORS=//p' | tail -n 1)
api=$(printf '%s\n' "$out" | sed -n 's/^FAKE_API=//p' | tail -n 1)
for ((i = 0; i < ${api:-0}; ++i)); do echo "========= Program hit cudaErrorInvalidValue on CUDA API call"; done
total=$(( ${errors:-0} + ${api:-0} ))
if [ "$tool" = racecheck ]; then
  echo "========= RACECHECK SUMMARY: $total hazards displayed ($total errors, 0 warnings)"
else
  echo "========= ERROR SUMMARY: $total errors"
fi
exit $rc
EOF

# demo NAME SCRIPT [FLAGS]: a stand-in demo, listed in demos.txt and target_flags.txt.
demo() {
  printf '#!/usr/bin/env bash\n%s\n' "$2" >"$work/build/bin/$1"
  echo "ch/$1" >>"$work/build/demos.txt"
  echo "$1|${3:-}" >>"$work/build/target_flags.txt"
}
demo clean_demo 'exit 0' device_state
demo racy_demo 'echo FAKE_ERRORS=3' all_gpus
demo announcing_demo 'echo "expected CUDA API errors (deliberate): 2 failing call(s)"; echo FAKE_API=2'
demo waived_demo 'echo "needs a feature this GPU lacks"; exit 77'
demo slow_demo 'sleep 10'
# Two tests: with the default eight shards, six would be empty.
cat >"$work/build/tests/two_gpu_tests" <<'EOF'
#!/usr/bin/env bash
if [ "${1:-}" = --gtest_list_tests ]; then printf 'Suite.\n  first\n  second\n'; exit 0; fi
echo "shard ${GTEST_SHARD_INDEX:-none} of ${GTEST_TOTAL_SHARDS:-none} sweep ${CML_SANITIZER_SWEEP:-0}"
EOF
echo "two_gpu_tests|" >>"$work/build/target_flags.txt"
chmod +x "$work/path/compute-sanitizer" "$work/build/bin/"* "$work/build/tests/two_gpu_tests"

out=$(PATH="$work/path:$PATH" bash "$root/scripts/sanitize.sh" --build-dir "$work/build" --tools memcheck,racecheck \
      --jobs 4 --timeout 3 2>&1)
rc=$?
pass=0 fail=0
check() {  # check WHAT CONDITION...
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what"; fi
}
row() { printf '%s\n' "$out" | grep -E "^$1 " | tr -s ' ' | sed 's/ $//'; }
check "exit 1 when a run has findings or times out (got $rc)" test $rc -eq 1
check "clean demo: 0 / 0" test "$(row clean_demo)" = "clean_demo 0 0"
check "racy demo: 3 findings per tool" test "$(row racy_demo)" = "racy_demo 3 (rc=0) 3 (rc=0)"
check "announced API errors count as clean" test "$(row announcing_demo)" = \
  "announcing_demo 0 (+2 announced) 0 (+2 announced)"
check "exit 77 reads as waived" test "$(row waived_demo)" = "waived_demo waived waived"
check "a run past --timeout reads as timeout" test "$(row slow_demo)" = "slow_demo timeout timeout"
check "the test binary: 0 / 0" test "$(row two_gpu_tests)" = "two_gpu_tests 0 0"
shards=$(find "$work/build/sanitize/memcheck" -name 'two_gpu_tests.shard*.log' | wc -l)
check "two tests make two shards, not eight (got $shards)" test "$shards" -eq 2
check "each shard runs its own index under the sweep" \
  grep -q 'shard 1 of 2 sweep 1' "$work/build/sanitize/racecheck/two_gpu_tests.shard1.log"
slowest=$(printf '%s\n' "$out" | grep '^slowest run:')
check "the slowest run is the one that timed out (got '$slowest')" \
  grep -Eq '^slowest run: (memcheck|racecheck) slow_demo [0-9]+s of the 3s timeout$' <<<"$slowest"

# The lanes, on a stand-in host with two GPUs: the device_state demo alone on the first GPU, the all_gpus demo
# beside the others on both, every other run on one GPU in turn.
mkdir -p "$work/gpus"
printf '#!/bin/sh\necho "GPU 0: stand-in"; echo "GPU 1: stand-in"\n' >"$work/gpus/nvidia-smi"
chmod +x "$work/gpus/nvidia-smi"
plan=$(env -u CUDA_VISIBLE_DEVICES PATH="$work/gpus:$work/path:$PATH" bash "$root/scripts/sanitize.sh" \
       --build-dir "$work/build" --tools memcheck --logs "$work/plan_logs" --plan 2>&1)
check "--plan: the device_state demo runs alone on GPU 0" grep -qx 'one-at-a-time memcheck clean_demo - gpu 0' <<<"$plan"
check "--plan: the all_gpus demo sees every GPU" grep -qx 'shared memcheck racy_demo - gpu -' <<<"$plan"
check "--plan: the others one GPU each" grep -qx 'shared memcheck announcing_demo - gpu 0' <<<"$plan"
check "--plan: one line per run (got $(wc -l <<<"$plan"))" test "$(wc -l <<<"$plan")" -eq 7
check "--plan runs nothing" test ! -e "$work/plan_logs"
echo "sanitize table: $pass passed, $fail failed"
[ $fail -eq 0 ] || { printf '%s\n' "$out" "$plan"; exit 1; }
