#!/usr/bin/env bash
# The scripts answer a mistake on their command line as the demos do: exit 2 and one line on stderr,
# before they build, install or touch a GPU; the Python helpers as argparse does. Runs anywhere (no GPU).
# Usage: scripts_cli.sh <source root>
set -u
cd "$1" || exit 1
pass=0 fail=0
# expect_error STYLE COMMAND...: exit 2 with stderr "error: ..." on one line (STYLE line), or ending in
# argparse's "<tool>: error: ..." with no traceback (STYLE argparse).
expect_error() {
  local style=$1 err rc ok=0
  shift
  err=$("$@" 2>&1 >/dev/null </dev/null)
  rc=$?
  if [ $rc -eq 2 ]; then
    case $style in
      line) [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ $err == error:* ]] && ok=1 ;;
      argparse) [[ $(printf '%s\n' "$err" | tail -n 1) == *": error: "* ]] && [[ $err != *Traceback* ]] && ok=1 ;;
    esac
  fi
  if [ $ok -eq 1 ]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL: %s -> exit %d, stderr:\n%s\n' "$*" "$rc" "$err"
  fi
}
expect_usage_error() { expect_error line bash "$@"; }
expect_argparse_error() { expect_error argparse python3 "$@"; }
expect_usage_error scripts/gpu_check.sh --bogus
expect_usage_error scripts/gpu_check.sh --logs
expect_usage_error scripts/run_all.sh --bogus
expect_usage_error scripts/run_all.sh --out
expect_usage_error scripts/run_all.sh --reference --quick
# A run never writes into the reference sets, however the folder is spelled or from wherever it is named.
expect_usage_error scripts/run_all.sh --out results
expect_usage_error scripts/run_all.sh --out results/
expect_usage_error scripts/run_all.sh --out "$PWD/results/some-gpu/run"
expect_usage_error scripts/run_all.sh --out results/../results/new
expect_usage_error -c 'cd results && bash ../scripts/run_all.sh --out .'
expect_usage_error scripts/sanitize.sh --bogus
expect_usage_error scripts/sanitize.sh --jobs
expect_usage_error scripts/sanitize.sh --jobs 0
expect_usage_error scripts/sanitize.sh --timeout 10s
expect_usage_error scripts/sanitize.sh --targets everything
expect_usage_error scripts/sanitize.sh --tools memcheck,leakcheck
expect_usage_error scripts/fuzz.sh --bogus
expect_usage_error scripts/fuzz.sh --seconds -1
expect_usage_error scripts/peer_transpose.sh
expect_usage_error scripts/peer_transpose.sh --bogus
expect_usage_error scripts/peer_transpose.sh one_dir another_dir
expect_usage_error scripts/promote_reference.sh
expect_usage_error scripts/ci_cuda12.sh --bogus
expect_usage_error scripts/ci_cuda12.sh --version 11.8
expect_usage_error scripts/ci_cuda12.sh --jobs x
expect_usage_error scripts/ci_cuda12.sh --gpu --no-ctest
expect_usage_error scripts/check_state.sh --build-dir
expect_usage_error scripts/profile.sh
expect_usage_error scripts/profile.sh --bogus smem_square
expect_usage_error scripts/profile.sh --build-dir
expect_usage_error scripts/timeline.sh --nsys
expect_usage_error scripts/timeline.sh --build-dir
expect_usage_error scripts/test.sh --build-dir
expect_usage_error scripts/run_demo.sh --bogus
expect_usage_error scripts/run_demo.sh
expect_usage_error scripts/run_demo.sh no_such_demo
# --help prints the script's own header from anywhere, with the script named by a path relative to there or
# an absolute one, run by bash or as the executable it is.
outside=$(mktemp -d)
rel=$(realpath --relative-to="$outside" "$PWD")
expect_help() {
  local out
  if out=$(cd "$outside" && "$@" --help 2>&1 </dev/null) && [ -n "$out" ] && [[ $out != error:* ]]; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    printf 'FAIL: %s --help from %s -> %s\n' "$*" "$outside" "$(printf '%s\n' "$out" | head -n 2)"
  fi
}
for script in scripts/*.sh; do
  expect_help bash "$rel/$script"
  expect_help "$rel/$script"
  expect_help "$PWD/$script"
done
rmdir "$outside"
# The Python helpers keep argparse's answer (exit 2, a usage line, then "<tool>: error: ..."), never a traceback.
if command -v python3 >/dev/null; then
  expect_argparse_error scripts/profile_table.py --ncu /nonexistent.csv --demo /nonexistent.csv
  expect_argparse_error scripts/provenance.py /nonexistent
  expect_argparse_error scripts/check_docs.py --bogus
  expect_argparse_error scripts/compare.py only_one.csv
  # report.py draws with matplotlib, which the report tests need anyway.
  python3 -c 'import matplotlib' 2>/dev/null && expect_argparse_error scripts/report.py /nonexistent
fi
echo "scripts' bad input: $pass passed, $fail failed"
[ $fail -eq 0 ]
