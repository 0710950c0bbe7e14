#!/usr/bin/env bash
# Checks one demo's claims without a GPU:
#   --claims lists at least one claim (three when the demo has three or more variants) and exits 0;
#   --claims --claim NAME lists that one claim; --plan-sizes fits every published card;
#   for every reference set in results/ with this demo's CSV, --claims-eval judges the claims on it with
#   no claim that cannot find its rows (held or not is the data's business, not this test's), says so when
#   the CSV comes without its JSON (a full run assumed), and with --claims-csv - writes nothing but the
#   claims CSV to stdout.
# Usage: claims_contract.sh <demo-binary> <source root>
set -u
exe=$1
root=$2
name=$(basename "$exe")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0
check() {  # check <description> <command...>
  local what=$1; shift
  if "$@" >"$tmp/out" 2>"$tmp/err"; then pass=$((pass + 1)); else
    echo "FAIL: $name: $what (exit $?)"; head -n 20 "$tmp/out" "$tmp/err"; fail=$((fail + 1)); fi
}

check "--claims exits 0" "$exe" --claims
claims=$("$exe" --claims | grep -cE '^[a-z0-9_]+ \((device|host)\)$')
variants=$("$exe" --list | grep -c .)
need=1
[ "$variants" -ge 3 ] && need=3
if [ "$claims" -ge "$need" ]; then pass=$((pass + 1)); else
  echo "FAIL: $name declares $claims claim(s); a demo with $variants variants needs at least $need"; fail=$((fail + 1)); fi
first=$("$exe" --claims | grep -m1 -oE '^[a-z0-9_]+ \((device|host)\)$' | cut -d' ' -f1)
if [ -n "$first" ]; then
  n=$("$exe" --claims --claim "$first" | grep -cE '^[a-z0-9_]+ \((device|host)\)$')
  if [ "$n" -eq 1 ]; then pass=$((pass + 1)); else echo "FAIL: $name --claims --claim $first listed $n"; fail=$((fail + 1)); fi
fi
if "$exe" --help | grep -q "claims checked after every run"; then pass=$((pass + 1)); else
  echo "FAIL: $name --help does not list the claims"; fail=$((fail + 1)); fi
check "--plan-sizes: the default size fits every published card" "$exe" --plan-sizes

for csv in "$root"/results/*/"$name".csv "$root"/results/*/"$name"_*.csv; do
  [ -f "$csv" ] || continue
  case $csv in *.claims.csv) continue ;; esac
  # Extra runs (label_suffix.csv) belong to this demo only if their rows say so.
  [ "$(sed -n '2p' "$csv" | cut -d, -f2)" = "$name" ] || continue
  check "--claims-eval ${csv#"$root"/} (a claim could not find its rows)" "$exe" --claims-eval "$csv"
  # A saved --quick run (its JSON says so) is judged as the live run was: every claim not applicable.
  cp "$csv" "$tmp/quick.csv"
  printf '{\n  "run": {"complete": false, "not_judged": "--quick run: sizes and samples too small to judge"},\n  "rows": []\n}\n' \
    >"$tmp/quick.json"
  if "$exe" --claims-eval "$tmp/quick.csv" >"$tmp/out" 2>"$tmp/err" && ! grep -qE '^  (held|NOT HELD|ERROR) ' "$tmp/out" &&
     grep -qE '^  n/a ' "$tmp/out"; then pass=$((pass + 1)); else
    echo "FAIL: $name --claims-eval judged a saved --quick run as a full one:"; head -n 8 "$tmp/out" "$tmp/err"
    fail=$((fail + 1)); fi
  # A CSV without its JSON is judged as a full run, and the output says that it was assumed.
  cp "$csv" "$tmp/bare.csv"
  if "$exe" --claims-eval "$tmp/bare.csv" >"$tmp/out" 2>"$tmp/err" &&
     grep -q "no run record in $tmp/bare.json: judged as a full run" "$tmp/out"; then pass=$((pass + 1)); else
    echo "FAIL: $name --claims-eval of a CSV without its JSON does not say it assumed a full run:"
    head -n 4 "$tmp/out" "$tmp/err"; fail=$((fail + 1)); fi
  # With --claims-csv -, stdout is the claims CSV alone: the human lines go to stderr.
  first_line=$("$exe" --claims-eval "$csv" --claims-csv - 2>/dev/null | head -n 1)
  if [ "$first_line" = "device,demo,claim,kind,status,value,bound,measure,text,detail" ]; then pass=$((pass + 1)); else
    echo "FAIL: $name --claims-eval --claims-csv - starts stdout with '$first_line', not the CSV header"; fail=$((fail + 1)); fi
done
echo "$name: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
