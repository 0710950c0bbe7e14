#!/usr/bin/env bash
# The one command to run on a GPU host: configure (native arch) + build + ctest (all labels; CPU tests
# in parallel, GPU tests one at a time) + compute-sanitizer memcheck over every demo's smoke run, ending
# with a one-screen summary.
#   scripts/gpu_check.sh [--logs DIR]
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
cd "$CML_ROOT"
logs="$CML_ROOT/build/gpu_check"
[ "${1:-}" = --logs ] && logs=$2
mkdir -p "$logs"
ensure_build_deps
jobs=$(nproc 2>/dev/null || echo 4)
status_configure=FAIL status_build=FAIL status_ctest=FAIL status_memcheck=FAIL

if cmake --preset release >"$logs/configure.log" 2>&1; then status_configure=ok; fi
if [ $status_configure = ok ] && cmake --build --preset release -j "$jobs" >"$logs/build.log" 2>&1; then status_build=ok; fi
if [ $status_build = ok ]; then
  ctest --preset release -j "$jobs" --timeout 600 >"$logs/ctest.log" 2>&1 && status_ctest=ok
  bash scripts/sanitize.sh --tools memcheck --targets demos --logs "$logs/sanitize" >"$logs/memcheck.log" 2>&1 \
    && status_memcheck=ok
fi

echo "================ gpu_check summary ================"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu:        /'
echo "configure:  $status_configure   (log: $logs/configure.log)"
echo "build:      $status_build   (log: $logs/build.log)"
echo "ctest:      $status_ctest   $(grep -E 'tests passed|tests failed' "$logs/ctest.log" 2>/dev/null | tail -n 1)"
grep -A 40 'The following tests' "$logs/ctest.log" 2>/dev/null | grep -E 'Failed|Not Run|Timeout|Exception' | head -n 20
skipped=$(grep -c 'Skipped' "$logs/ctest.log" 2>/dev/null || true)
echo "            skipped tests: ${skipped:-0}"
echo "memcheck:   $status_memcheck   (demos --quick; log: $logs/memcheck.log)"
grep -vE '^(memcheck) ' "$logs/memcheck.log" 2>/dev/null | grep -vE ' 0 *$|^target|^\(|^$' | head -n 20
[ $status_configure = ok ] && [ $status_build = ok ] && [ $status_ctest = ok ] && [ $status_memcheck = ok ]
