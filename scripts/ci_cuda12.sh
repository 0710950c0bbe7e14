#!/usr/bin/env bash
# CUDA 12 check (CI runs it after scripts/test.sh): the whole project (demos and tests) built with this
# machine's nvcc against the CUDA 12 runtime headers, the CUDA 12 CCCL (CUB, Thrust, libcu++) and the
# CUDA 12 libcudart.so.12, all from PyPI wheels; then proof that it really was 12.x, and a demo run.
#
#   scripts/ci_cuda12.sh [--version 12.4|12.9|all] [--archs LIST] [--jobs N] [--no-ctest | --gpu]
#
#   --version  which CUDA 12 runtime: 12.4 (default: the oldest this project supports) or 12.9, or all
#   --archs    CMAKE_CUDA_ARCHITECTURES of this build (default 75;90: valid for every CUDA 12 toolkit)
#   --no-ctest skip the CPU tests of this build (they need no GPU)
#   --gpu      on a GPU host: run all of this build's tests, the GPU and smoke tests included (without a
#              usable GPU they are reported skipped, as in scripts/test.sh)
#
# What it checks, per version (build dir build-cuda12-<version>, wheels in .whl/cu12-<version>; both are
# ignored by git):
#   1. a probe compiled with the exact flags of a CUDA and of a C++ target of this build:
#      static_assert(CUDART_VERSION == 12x0) and, for CUDA, CCCL's major version 2 (CUDA 13 ships 3);
#   2. the header dependencies ninja recorded for every object: cuda_runtime_api.h comes from the wheel
#      for all of them and from the toolkit for none;
#   3. every demo and test binary needs libcudart.so.12 (readelf), and ldd resolves it into the wheel;
#   4. a demo answers --help and --claims, and the CPU tests pass, on libcudart.so.12;
#   5. with --gpu, the build's kernels and demos on this GPU through the CUDA 12 runtime, the only check
#      of the code written per runtime version (the driver entry point behind the TMA tensor maps and the
#      compressible allocations, the managed-memory prefetch and advice calls).
# What it cannot check: code generation by a real 12.x nvcc (nvcc here is the machine's own). The wheels
# come from PyPI: on a GPU host without internet, copy .whl/cu12-<version> from a machine that has them.
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
cd "$CML_ROOT"

versions=12.4
archs="75;90"
jobs=$(nproc 2>/dev/null || echo 2)
run_ctest=1
gpu=0
while [ $# -gt 0 ]; do
  case $1 in
    --version) need_value "$@"; versions=$2; shift 2 ;;
    --archs) need_value "$@"; archs=$2; shift 2 ;;
    --jobs) need_value "$@"; jobs=$2; shift 2 ;;
    --no-ctest) run_ctest=0; shift ;;
    --gpu) gpu=1; shift ;;
    -h|--help) print_help ;;
    *) usage_error "unknown argument '$1' (try --help)" ;;
  esac
done
[ "$versions" = all ] && versions="12.4 12.9"

# The wheel versions: runtime and CCCL of the same toolkit release.
wheels_for() {
  case $1 in
    12.4) echo "nvidia-cuda-runtime-cu12==12.4.127 nvidia-cuda-cccl-cu12==12.4.127.post1" ;;
    12.9) echo "nvidia-cuda-runtime-cu12==12.9.79 nvidia-cuda-cccl-cu12==12.9.27" ;;
    *) usage_error "--version: 12.4 or 12.9 (or all), not '$1'" ;;
  esac
}
for v in $versions; do wheels_for "$v" >/dev/null; done   # an unknown version stops here, exit 2
need_count --jobs "$jobs"
[ $gpu -eq 1 ] && [ $run_ctest -eq 0 ] && usage_error "--gpu runs the tests: it cannot go with --no-ctest"

ensure_build_deps
command -v readelf >/dev/null || die "readelf not found (binutils)"

check_version() {
  local ver=$1 major=${1%%.*} minor=${1#*.}
  local expect=$((major * 1000 + minor * 10))
  local whl=$CML_ROOT/.whl/cu12-$ver
  local rt=$whl/nvidia/cuda_runtime cccl=$whl/nvidia/cuda_cccl
  local bdir=build-cuda12-$ver
  local t0=$SECONDS

  if [ ! -f "$whl/.complete" ]; then
    log "CUDA $ver: pip install --target .whl/cu12-$ver $(wheels_for "$ver")"
    rm -rf "$whl"
    # shellcheck disable=SC2046  # the package specs are words without spaces
    python3 -m pip install -q --disable-pip-version-check --no-deps --target "$whl" $(wheels_for "$ver") \
      || die "pip could not install the CUDA $ver wheels"
    touch "$whl/.complete"
  fi
  [ -f "$rt/lib/libcudart.so.12" ] || die "no libcudart.so.12 in $rt/lib"
  if [ ! -f "$rt/include/cuda_runtime_api.h" ] || [ ! -d "$cccl/include/cub" ]; then
    die "CUDA $ver headers missing in $whl"
  fi

  log "CUDA $ver: configure and build $bdir (nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), architectures $archs, $jobs jobs)"
  # CMAKE_CUDA_RUNTIME_LIBRARY=None: CMake links no cudart of the toolkit's; CML_CUDART_LIBRARY and
  # CML_CUDA_INCLUDE_DIRS (common/CMakeLists.txt) put the wheel's runtime and headers in its place.
  build_tree --logs "$bdir" --jobs "$jobs" "$bdir" -- "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
    -DCMAKE_CUDA_RUNTIME_LIBRARY=None "-DCML_CUDART_LIBRARY=$rt/lib/libcudart.so.12" \
    "-DCML_CUDA_INCLUDE_DIRS=$rt/include;$cccl/include" || die "CUDA $ver: the build of $bdir failed"
  grep -F "cuda-memory-lab:" "$bdir/configure.log" || true

  log "CUDA $ver: header probe with the build's own compile commands"
  cat >"$bdir/cuda12_probe.cu" <<EOF
#include <cuda_runtime.h>
static_assert(CUDART_VERSION == $expect, "not the CUDA $ver runtime headers");
#ifdef __CUDACC__
#include <cub/version.cuh>
static_assert(CUB_VERSION / 100000 == 2, "not the CCCL 2.x of CUDA 12");
#endif
int cml_cuda12_probe() { return CUDART_VERSION; }
EOF
  cp "$bdir/cuda12_probe.cu" "$bdir/cuda12_probe.cpp"
  python3 - "$bdir" <<'EOF'
import json, os, shlex, subprocess, sys
bdir = os.path.abspath(sys.argv[1])
cmds = json.load(open(os.path.join(bdir, "compile_commands.json")))
def pick(pred):
    return next(c for c in cmds if pred(c["file"]))
# The CUDA flags of a demo and the C++ flags of a test: both get the headers through cml::common.
for entry, probe in ((pick(lambda f: f.endswith(".cu") and "/0" in f), "cuda12_probe.cu"),
                     (pick(lambda f: f.endswith(".cpp") and "/tests/" in f), "cuda12_probe.cpp")):
    args = shlex.split(entry["command"])
    args[args.index("-c") + 1] = os.path.join(bdir, probe)
    args[args.index("-o") + 1] = os.path.join(bdir, probe + ".o")
    r = subprocess.run(args, cwd=entry["directory"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"probe failed with the flags of {entry['file']}:\n{r.stdout}{r.stderr}")
    print(f"  {probe}: static_assert held with the flags of {os.path.relpath(entry['file'], os.path.dirname(bdir))}")
EOF

  log "CUDA $ver: header dependencies of every object (ninja -t deps)"
  local deps wheel_objs toolkit_objs
  deps=$(ninja -C "$bdir" -t deps)
  wheel_objs=$(awk -v h="$rt/include/cuda_runtime_api.h" '/^[^ ].*: #deps/ {o=$1} $1==h {print o}' <<<"$deps" | sort -u | wc -l)
  toolkit_objs=$(awk -v h="$rt/include/cuda_runtime_api.h" '/^[^ ].*: #deps/ {o=$1} $1 ~ /\/cuda_runtime_api\.h$/ && $1 != h {print o}' <<<"$deps" | sort -u)
  echo "  objects that include cuda_runtime_api.h from the CUDA $ver wheel: $wheel_objs; from the toolkit: $(grep -c . <<<"$toolkit_objs" || true)"
  [ -z "$toolkit_objs" ] || die "CUDA $ver: objects compiled against the toolkit's runtime headers: $toolkit_objs"
  [ "$wheel_objs" -gt 0 ] || die "CUDA $ver: no object recorded the wheel's cuda_runtime_api.h (no deps?)"

  log "CUDA $ver: every binary needs libcudart.so.12"
  local bins=() b bad=0
  mapfile -t bins < <(find "$bdir/bin" "$bdir/tests" -maxdepth 1 -type f -perm -u+x 2>/dev/null | sort)
  [ ${#bins[@]} -gt 0 ] || die "CUDA $ver: no binaries in $bdir/bin, $bdir/tests"
  for b in "${bins[@]}"; do
    if ! readelf -d "$b" | grep -q 'NEEDED.*\[libcudart\.so\.12\]'; then
      # The CPU-only test binaries (the CLI parser) need no CUDA runtime at all: they may not link it.
      if nm "$b" 2>/dev/null | grep -Eq ' U cudaGetDeviceCount(@|$)'; then
        echo "  $b: no NEEDED libcudart.so.12"; bad=1
      fi
    fi
    if readelf -d "$b" | grep -q 'NEEDED.*libcudart\.so\.13'; then echo "  $b: needs libcudart.so.13"; bad=1; fi
    if nm "$b" 2>/dev/null | grep -Eq 'libcudart_static_| T cudaGetDeviceCount(@|$)'; then echo "  $b: has a static cudart"; bad=1; fi
  done
  [ $bad -eq 0 ] || die "CUDA $ver: binaries not linked against libcudart.so.12 alone"
  # The first demo of the build (any demo answers --help and --claims), else the first binary.
  local demo
  demo=$bdir/bin/$(python3 scripts/lib/run_folder.py demos "$bdir" | head -n 1)
  [ -f "$demo" ] && [ -x "$demo" ] || demo=${bins[0]}
  echo "  ${#bins[@]} binaries checked; $(basename "$demo"): $(LD_LIBRARY_PATH="$rt/lib" ldd "$demo" | grep libcudart | sed 's/^[[:space:]]*//')"

  log "CUDA $ver: $(basename "$demo") --help and --claims on libcudart.so.12"
  LD_LIBRARY_PATH="$rt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$demo" --help >"$bdir/help.txt" \
    || die "CUDA $ver: $demo --help failed"
  head -n 1 "$bdir/help.txt"
  LD_LIBRARY_PATH="$rt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$demo" --claims >"$bdir/claims.txt" \
    || die "CUDA $ver: $demo --claims failed"
  echo "  --claims: $(wc -l <"$bdir/claims.txt") lines, first: $(head -n 1 "$bdir/claims.txt")"

  if [ $run_ctest -eq 1 ]; then
    # The tests that run this build's binaries (GoogleTest suites, CLI and claims contracts; with --gpu the
    # GPU, smoke and options tests too, one GPU test at a time by their resource lock); the docs, report
    # and run_all checks do not depend on the build and scripts/test.sh ran them already.
    local labels=(-L cpu) what=CPU
    [ $gpu -eq 1 ] && labels=() && what="all (GPU included)"
    log "CUDA $ver: $what tests of this build"
    LD_LIBRARY_PATH="$rt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      ctest --test-dir "$bdir" "${labels[@]}" -E '^(docs|report|run_all)\.' -j "$jobs" --output-on-failure \
      >"$bdir/ctest.log" 2>&1 \
      || { tail -n 40 "$bdir/ctest.log"; die "CUDA $ver: tests failed (log: $bdir/ctest.log)"; }
    grep -E "tests passed|tests failed" "$bdir/ctest.log"
    echo "  skipped: $(ctest_skipped "$bdir/ctest.log")"
  fi
  log "CUDA $ver: ok ($((SECONDS - t0)) s)"
}

for v in $versions; do
  wheels_for "$v" >/dev/null
  check_version "$v"
done
