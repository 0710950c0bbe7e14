#!/usr/bin/env bash
# Checks that a demo refuses bad values of its own options on a GPU, before it prints anything: each
# argument is one command line (split on spaces) that must exit 2 with exactly one line on stderr and
# nothing on stdout. Most checks need the device (limits, free memory), so without a usable GPU the demo
# waives (exit 77); a line waived means the contract was not checked in full, and the test is skipped
# (77) even where other lines, refused while parsing, did pass.
# Usage: option_contract.sh <demo-binary> "<args>" ["<args>" ...]
set -u
exe=$1
shift
name=$(basename "$exe")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0
waived=0
for line in "$@"; do
  read -r -a args <<<"$line"
  "$exe" "${args[@]}" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  if [ "$rc" -eq 77 ]; then
    waived=$((waived + 1))
  elif [ "$rc" -ne 2 ]; then
    echo "FAIL: $name $line exited $rc (expected 2); stderr: $(head -c 300 "$tmp/err")"; fail=$((fail + 1))
  elif [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
    echo "FAIL: $name $line wrote $(wc -l <"$tmp/err") lines to stderr (expected 1):"; cat "$tmp/err"
    fail=$((fail + 1))
  elif [ -s "$tmp/out" ]; then
    echo "FAIL: $name $line printed to stdout before refusing it:"; head -n 5 "$tmp/out"; fail=$((fail + 1))
  else
    echo "ok: $name $line -> $(cat "$tmp/err")"; pass=$((pass + 1))
  fi
done
echo "$name: $pass refused as expected, $fail failed, $waived waived"
[ "$fail" -eq 0 ] || exit 1
[ "$waived" -eq 0 ] || exit 77
