#!/usr/bin/env bash
# The one command to run on a GPU host: configure (native arch, unless the build folder is already
# configured) + build + ctest (all labels; CPU tests in parallel, GPU tests one at a time) +
# compute-sanitizer memcheck over every demo's smoke run + every demo at its defaults with --strict (the
# main job, scripts/run_all.sh, into an untracked runs/ folder: a device-side claim that does not hold
# fails the check), ending with a one-screen summary.
# --claims-run DIR judges a run the main job already made (scripts/run_all.sh) instead of running the
# demos again. --no-build checks a build folder as it is (e.g. built on a machine without a GPU and
# copied here, where the same absolute path must hold it): no configure, no compile. With no GPU visible
# it stops after ctest's CPU tests and exits 77.
#   scripts/gpu_check.sh [--logs DIR] [--build-dir DIR] [--no-build] [--no-claims | --claims-run DIR]
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
cd "$CML_ROOT" || exit 2
build=build
logs=""
claims=1
claims_run=""
no_build=0
while [ $# -gt 0 ]; do
  case $1 in
    --logs) need_value "$@"; logs=$(from_caller "$2"); shift 2 ;;
    --build-dir) need_value "$@"; build=$(from_caller "$2"); shift 2 ;;
    --no-claims) claims=0; shift ;;
    --no-build) no_build=1; shift ;;
    --claims-run) need_value "$@"; claims_run=$(from_caller "$2"); shift 2 ;;
    -h|--help) print_help ;;
    *) usage_error "unknown option $1 (see --help)" ;;
  esac
done
logs=${logs:-$build/gpu_check}   # $build: relative to the repository, or absolute
mkdir -p "$logs"
rm -f "$logs"/{configure,build,ctest,memcheck,claims}.log   # a summary never quotes an earlier check's log
ensure_build_deps
jobs=$(nproc 2>/dev/null || echo 4)
status_configure=FAIL status_build=FAIL status_ctest=FAIL status_memcheck=FAIL status_claims=FAIL
[ $claims -eq 0 ] && status_claims=skipped
# Without a GPU, ctest still builds and runs the CPU tests (the GPU tests skip); the sanitizer and the
# claims have nothing to run on, and the check ends with 77 (skipped), neither passed nor failed.
has_gpu=1
[ "$(visible_gpus)" -ge 1 ] || has_gpu=0
if [ $has_gpu -eq 0 ]; then
  status_memcheck="skipped (no GPU visible)"
  [ $claims -eq 1 ] && [ -z "$claims_run" ] && status_claims="skipped (no GPU visible)"
fi

if [ $no_build -eq 1 ]; then
  [ -f "$build/CTestTestfile.cmake" ] && [ -f "$build/demos.txt" ] || die "--no-build: $build holds no build"
  echo "--no-build: checking $build as built ($(grep -m1 '^CMAKE_CUDA_ARCHITECTURES' "$build/CMakeCache.txt"))" \
    | tee "$logs/configure.log" "$logs/build.log"
  status_configure=ok status_build=ok
else
  build_tree --logs "$logs" --jobs "$jobs" "$build"
  case $? in 0) status_configure=ok status_build=ok ;; 2) status_configure=ok ;; esac
fi
if [ $status_build = ok ]; then
  ctest --test-dir "$build" -j "$jobs" --timeout 600 --output-on-failure >"$logs/ctest.log" 2>&1 && status_ctest=ok
  [ $has_gpu -eq 1 ] && bash scripts/sanitize.sh --tools memcheck --targets demos --build-dir "$build" \
    --logs "$logs/sanitize" >"$logs/memcheck.log" 2>&1 && status_memcheck=ok
  if [ $claims -eq 1 ] && [ -n "$claims_run" ]; then
    # The claims held and no demo failed (a failed demo's claims are not in the tally at all).
    python3 scripts/claims_summary.py "$claims_run" >"$logs/claims.log" 2>&1 &&
      [ -z "$(python3 scripts/lib/run_folder.py labels "$claims_run" --state failed)" ] && status_claims=ok
  elif [ $claims -eq 1 ] && [ $has_gpu -eq 1 ]; then
    bash scripts/run_all.sh --strict --skip-build --build-dir "$build" >"$logs/claims.log" 2>&1 && status_claims=ok
  fi
fi

echo "================ gpu_check summary ================"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu:        /'
[ $has_gpu -eq 1 ] || echo "gpu:        none visible: the GPU and smoke tests were skipped; this check needs a GPU host"
echo "configure:  $status_configure   (log: $logs/configure.log)"
echo "build:      $status_build   (log: $logs/build.log)"
echo "ctest:      $status_ctest   $(grep -E 'tests passed|tests failed' "$logs/ctest.log" 2>/dev/null | tail -n 1)"
grep -A 40 'The following tests' "$logs/ctest.log" 2>/dev/null | grep -E 'Failed|Not Run|Timeout|Exception' | head -n 20
skipped=$(ctest_skipped "$logs/ctest.log")
echo "            skipped tests: ${skipped:-0}"
echo "memcheck:   $status_memcheck   (demos --quick; log: $logs/memcheck.log)"
grep -vE '^(memcheck) ' "$logs/memcheck.log" 2>/dev/null | grep -vE ' 0 *$|^target|^\(|^$' | head -n 20
echo "claims:     $status_claims   (every demo at its defaults, --strict${claims_run:+, judged on $claims_run}; log: $logs/claims.log)"
sed -n '/^====* summary/,$p' "$logs/claims.log" 2>/dev/null | sed 's/^/            /' | head -n 40
[ $status_configure = ok ] && [ $status_build = ok ] && [ $status_ctest = ok ] && [ "$status_claims" != FAIL ] \
  || exit 1
[ $has_gpu -eq 1 ] || exit 77
[ "$status_memcheck" = ok ]
