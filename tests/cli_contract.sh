#!/usr/bin/env bash
# Checks one demo's command-line contract without needing a GPU:
#   --help and --list exit 0; every bad invocation below exits 2 with exactly one line on stderr and
#   leaves no output file behind.
# Usage: cli_contract.sh <demo-binary>
set -u
exe=$1
name=$(basename "$exe")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0

expect_ok() {
  if "$exe" "$@" >"$tmp/out" 2>"$tmp/err"; then pass=$((pass + 1)); else
    echo "FAIL: $name $* exited $? (expected 0)"; fail=$((fail + 1)); fi
}

expect_usage_error() {
  "$exe" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$? lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne 2 ]; then
    echo "FAIL: $name $* exited $rc (expected 2); stderr: $(head -c 300 "$tmp/err")"; fail=$((fail + 1))
  elif [ "$lines" -ne 1 ]; then
    echo "FAIL: $name $* wrote $lines lines to stderr (expected 1):"; cat "$tmp/err"; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

expect_ok --help
expect_ok --list
first_variant=$("$exe" --list | head -n 1 | awk '{print $1}')

expect_usage_error --bogus
expect_usage_error --size
expect_usage_error --size abc
expect_usage_error --size -1
expect_usage_error --size 0
expect_usage_error --size 10Q
expect_usage_error --size 99999999999999999999999
expect_usage_error --size 1T
expect_usage_error --size 16G --size 32G
expect_usage_error --reps 0
expect_usage_error --reps -3
expect_usage_error --reps 2.5
expect_usage_error --warmup-ms fast
expect_usage_error --device -1
expect_usage_error --variant no_such_variant
expect_usage_error --cold --warm
expect_usage_error --csv "$tmp/no/such/dir/out.csv"
expect_usage_error --json "$tmp/no/such/dir/out.json"
expect_usage_error --csv - --json -
expect_usage_error --csv - --claims-csv -
expect_usage_error --claim no_such_claim
expect_usage_error --claims --claim no_such_claim
expect_usage_error --claims-csv "$tmp/no/such/dir/claims.csv"
expect_usage_error --claims-csv ""
expect_usage_error --claims-eval "$tmp/no/such/file.csv"
expect_usage_error --claims-eval -
printf 'not,a,demo,csv\n1,2,3,4\n' >"$tmp/bad.csv"
expect_usage_error --claims-eval "$tmp/bad.csv"
expect_usage_error --strict=yes
expect_usage_error positional
expect_usage_error --help=yes
# Writable output paths beside a mistake: the demo may probe them, but must leave nothing behind.
expect_usage_error --csv "$tmp/o.csv" --reps 0
expect_usage_error --csv "$tmp/o.csv" --json "$tmp/no/such/dir/out.json"
expect_usage_error --json "$tmp/o.json" --claims-csv "$tmp/o.claims.csv" --bogus
expect_usage_error --claims-csv "$tmp/o.claims.csv" --csv "$tmp/no/such/dir/out.csv"
[ -n "$first_variant" ] && expect_ok --list --variant "$first_variant"

left=$(find "$tmp" -mindepth 1 -not -name out -not -name err -not -name bad.csv)
if [ -n "$left" ]; then echo "FAIL: $name left output behind: $left"; fail=$((fail + 1)); fi
echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
