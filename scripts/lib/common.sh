# Shared by the scripts: paths, colours-free logging, dependency checks.
# shellcheck shell=bash
CML_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# The script that sourced this file, as an absolute path: its --help reads its own header after it has changed
# to the repository root, wherever it was started from and however it was named.
CML_SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
# Where the script was started: a path on its command line means what it means there, even in the scripts
# that then work from the repository root.
CML_CALLER_DIR=$PWD
# from_caller PATH: PATH as the caller meant it (absolute, or relative to CML_CALLER_DIR).
from_caller() { case $1 in /*) printf '%s\n' "$1" ;; *) printf '%s\n' "$CML_CALLER_DIR/$1" ;; esac; }

# --help: the header comment of the script that sourced this file (its lines after the first, up to the first
# line that is not a comment), without the comment marks; then exit 0.
print_help() { awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$CML_SELF"; exit 0; }

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }
# A caller's mistake on the command line: one line, exit 2 (a failure of the work itself exits 1).
usage_error() { printf 'error: %s\n' "$*" >&2; exit 2; }
# need_value "$@" in an option parser: the option in $1 must be followed by a value.
need_value() { [ $# -ge 2 ] || usage_error "$1 needs a value (see --help)"; }
# need_count NAME VALUE: VALUE must be a positive integer.
need_count() { [[ $2 =~ ^[1-9][0-9]*$ ]] || usage_error "$1 needs a positive integer, not '$2'"; }

# The release preset builds in build/ with Ninja; CMake refuses a build/ configured before with another
# generator. Say so in one line, and how to recover, instead of CMake's error.
check_preset_build_dir() {
  local cache=$CML_ROOT/build/CMakeCache.txt gen
  [ -f "$cache" ] || return 0
  gen=$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache")
  [ -z "$gen" ] || [ "$gen" = Ninja ] ||
    die "build/ was configured with '$gen'; the release preset uses Ninja: remove build/ (rm -rf build) and run again"
}

# build_tree [--logs DIR] [--jobs N] [--target T] [--if-unconfigured] BUILD_DIR [-- CMAKE_ARGS...]
# The one way the scripts configure and build. build/ is configured with the release preset (Ninja, Release;
# CMake picks the GPU architecture), any other folder Release with Ninja and CMAKE_ARGS; --if-unconfigured
# leaves a configured folder as it is. Then it builds everything, or target T, with N jobs (default: every
# core). With --logs, CMake's output goes to DIR/configure.log and DIR/build.log, and a failure shows their
# last lines; without, it shows as it comes. Returns 0, 1 when the configure failed, 2 when the build did.
build_tree() {
  local logs="" jobs target=() if_unconfigured=0 dir
  jobs=$(nproc 2>/dev/null || echo 2)
  while [ $# -gt 0 ]; do
    case $1 in
      --logs) logs=$2; shift 2 ;;
      --jobs) jobs=$2; shift 2 ;;
      --target) target=(--target "$2"); shift 2 ;;
      --if-unconfigured) if_unconfigured=1; shift ;;
      *) dir=$1; shift; break ;;
    esac
  done
  [ "${1:-}" = -- ] && shift
  local configure_log=/dev/stdout build_log=/dev/stdout
  if [ -n "$logs" ]; then
    mkdir -p "$logs" || return 1
    configure_log=$logs/configure.log build_log=$logs/build.log
  fi
  if [ $if_unconfigured -eq 0 ] || [ ! -f "$dir/CMakeCache.txt" ]; then
    ensure_build_deps
    local configure
    if [ "$(realpath -m "$dir")" = "$CML_ROOT/build" ]; then
      check_preset_build_dir
      configure=(cmake --preset release "$@")
    else
      configure=(cmake -S "$CML_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@")
      [ -f "$dir/CMakeCache.txt" ] || configure+=(-G Ninja)
    fi
    if ! (cd "$CML_ROOT" && "${configure[@]}") >"$configure_log" 2>&1; then
      [ -n "$logs" ] && tail -n 20 "$configure_log" >&2
      printf 'error: configure failed%s\n' "${logs:+ (log: $configure_log)}" >&2
      return 1
    fi
  fi
  if ! cmake --build "$dir" -j "$jobs" "${target[@]}" >"$build_log" 2>&1; then
    [ -n "$logs" ] && tail -n 30 "$build_log" >&2
    printf 'error: build failed%s\n' "${logs:+ (log: $build_log)}" >&2
    return 2
  fi
}

# How many GPUs nvidia-smi lists (0 without a driver or a GPU).
visible_gpus() { nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true; }

# How many tests a ctest log lists as skipped (exit 77: no GPU, or a waived feature); 0 when none.
ctest_skipped() { sed -n '/did not run/,/^$/p' "$1" 2>/dev/null | grep -c '(Skipped)' || true; }

# True when a CMake package config for $1 (e.g. fmt, GTest) is installed in a usual prefix.
have_cmake_package() {
  local name=$1 d
  for d in /usr/lib/*/cmake /usr/lib/cmake /usr/lib64/cmake /usr/local/lib/cmake /usr/local/lib64/cmake \
           /usr/local/lib/*/cmake /usr/share/cmake /opt/*/lib/cmake ${CMAKE_PREFIX_PATH:+${CMAKE_PREFIX_PATH//:/ }}; do
    [ -d "$d" ] || continue
    if compgen -G "$d/$name/*onfig.cmake" >/dev/null || compgen -G "$d/$name*/*onfig.cmake" >/dev/null \
       || compgen -G "$d/cmake/$name/*onfig.cmake" >/dev/null; then
      return 0
    fi
  done
  return 1
}

# Installs what the build needs when it is missing: apt when root, otherwise prints the command.
ensure_build_deps() {
  [ -n "${CML_BUILD_DEPS_CHECKED:-}" ] && return 0
  CML_BUILD_DEPS_CHECKED=1
  local pkgs=()
  command -v cmake >/dev/null || pkgs+=(cmake)
  command -v ninja >/dev/null || pkgs+=(ninja-build)
  have_cmake_package fmt || pkgs+=(libfmt-dev)
  have_cmake_package GTest || pkgs+=(libgtest-dev)
  command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || die "nvcc not found: install the CUDA Toolkit (12.x or 13.x)"
  case ":$PATH:" in *:/usr/local/cuda/bin:*) ;; *) [ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin" ;; esac
  [ ${#pkgs[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    log "installing missing packages: ${pkgs[*]}"
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${pkgs[@]}"; } >/tmp/cml-apt.log 2>&1; then
      tail -n 5 /tmp/cml-apt.log >&2
      log "warning: could not install ${pkgs[*]}; configuring anyway (CMake will say what is missing)"
    fi
  else
    log "missing: ${pkgs[*]}. Install them with:"
    log "  sudo apt-get install -y ${pkgs[*]}"
    log "configuring anyway (CMake will say what is missing)"
  fi
}

# cuobjdump and nvdisasm, which the sass.* tests read the demos' machine code with. A full CUDA toolkit has
# both; a compiler-only install does not, and then NVIDIA's wheels of the two tools go into .whl/sass-tools
# (ignored by git; CMake looks there). Without them the sass.* tests are reported as skipped.
ensure_sass_tools() {
  local bin dest="$CML_ROOT/.whl/sass-tools" version=13.2.51
  bin=$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")
  [ -x "$bin/cuobjdump" ] && [ -x "$bin/nvdisasm" ] && return 0
  [ -x "$dest/nvidia/cu13/bin/cuobjdump" ] && [ -x "$dest/nvidia/cu13/bin/nvdisasm" ] && return 0
  log "installing cuobjdump and nvdisasm $version (NVIDIA's wheels) into .whl/sass-tools"
  python3 -m pip install -q --no-deps --target "$dest" "nvidia-cuda-cuobjdump==$version" \
      "nvidia-cuda-nvdisasm==$version" >/tmp/cml-pip-sass.log 2>&1 \
    || { tail -n 3 /tmp/cml-pip-sass.log >&2; return 1; }
}

# matplotlib for the report (pip, user-level when not root).
ensure_matplotlib() {
  python3 -c 'import matplotlib' 2>/dev/null && return 0
  log "installing matplotlib with pip"
  python3 -m pip install -q matplotlib >/tmp/cml-pip.log 2>&1 \
    || python3 -m pip install -q --user matplotlib >>/tmp/cml-pip.log 2>&1 \
    || { tail -n 5 /tmp/cml-pip.log >&2; return 1; }
}
