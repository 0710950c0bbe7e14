#!/usr/bin/env bash
# The tests, from a fresh clone: install what is missing, configure (Release), build, run ctest.
# Without a GPU the CPU tests run and every GPU/smoke test is reported as skipped.
#   scripts/test.sh [extra ctest arguments, e.g. -L cpu]
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
case ${1:-} in -h|--help) sed -n '2,4p' "$CML_SELF"; exit 0 ;; esac
cd "$CML_ROOT"
ensure_build_deps
ensure_matplotlib || log "warning: matplotlib unavailable; the report test will fail"
ensure_sass_tools || log "warning: cuobjdump unavailable; the sass.* tests will be reported as skipped"
jobs=$(nproc 2>/dev/null || echo 2)
log "configure and build ($jobs jobs)"
build_tree --jobs "$jobs" build || exit 1
log "ctest"
ctest --preset release -j "$jobs" "$@"
