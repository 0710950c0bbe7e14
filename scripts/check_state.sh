#!/usr/bin/env bash
# Runs `ctest --schedule-random` twice in a row and checks that the device state (persisting-L2 limit,
# a new stream's access-policy window, device flags, limits) reads the same before and after.
#   scripts/check_state.sh [--build-dir DIR] [extra ctest args]
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
build="$CML_ROOT/build"
case ${1:-} in -h|--help) print_help ;; esac
[ "${1:-}" = --build-dir ] && { need_value "$@"; build=$(from_caller "$2"); shift 2; }
build=$(cd "$build" && pwd) || die "no build directory $build"
probe="$build/tests/state_probe"
[ -x "$probe" ] || die "$probe not built"
before=$("$probe")
case $? in
  0) ;;
  77) log "no usable GPU: nothing to compare (skipped)"; exit 77 ;;
  *) die "state_probe failed" ;;
esac
ok=1
for pass in 1 2; do
  log "ctest --schedule-random, pass $pass"
  (cd "$build" && ctest --schedule-random --timeout 600 "$@" >"$build/state_ctest_$pass.log" 2>&1) || ok=0
  # The summary line and any failures (ctest ends with the skipped list, which would hide them).
  grep -E 'tests passed|\*\*\*(Failed|Timeout|Exception)|\((Failed|Timeout)\)$' "$build/state_ctest_$pass.log" || true
done
after=$("$probe")
echo "state before:"; echo "$before" | sed 's/^/  /'
if [ "$before" = "$after" ]; then echo "state after: identical"; else
  echo "state after: CHANGED"; diff <(echo "$before") <(echo "$after"); ok=0; fi
[ $ok -eq 1 ]
