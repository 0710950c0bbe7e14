#!/usr/bin/env bash
# The tests, from a fresh clone: install what is missing, configure (Release), build, run ctest.
# Without a GPU the CPU tests run and every GPU/smoke test is reported as skipped.
#   scripts/test.sh [--build-dir DIR] [extra ctest arguments, e.g. -L cpu]
#   --build-dir DIR   build and test there instead of build/ (the release preset's folder)
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
build=build
case ${1:-} in
  -h|--help) print_help ;;
  --build-dir) need_value "$@"; build=$(from_caller "$2"); shift 2 ;;
esac
cd "$CML_ROOT"
ensure_build_deps
ensure_matplotlib || log "warning: matplotlib unavailable; the report test will fail"
ensure_sass_tools || log "warning: cuobjdump unavailable; the sass.* tests will be reported as skipped"
jobs=$(nproc 2>/dev/null || echo 2)
log "configure and build ($jobs jobs)"
build_tree --jobs "$jobs" "$build" || exit 1
log "ctest"
# As the release test preset runs them: the output of a failed test shown, no tests at all an error.
ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$jobs" "$@"
