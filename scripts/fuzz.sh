#!/usr/bin/env bash
# Runs the CLI fuzzer (built with the project when clang++ is present) for a while and reports how many
# inputs it tried.   scripts/fuzz.sh [--seconds N] [--build-dir DIR]
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
seconds=600
build="$CML_ROOT/build"
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) need_value "$@"; seconds=$2; shift 2 ;;
    --build-dir) need_value "$@"; build=$(from_caller "$2"); shift 2 ;;
    -h|--help) print_help ;;
    *) usage_error "unknown option $1" ;;
  esac
done
need_count --seconds "$seconds"
fuzzer="$build/fuzz/fuzz_cli"
[ -x "$fuzzer" ] || die "$fuzzer not built (needs clang++; build the project first)"
corpus=$(mktemp -d)
cp "$CML_ROOT"/tests/fuzz/corpus/* "$corpus"/
log "fuzzing the CLI parser for ${seconds}s"
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=5 -print_final_stats=1 "$corpus" 2>"$corpus.log" \
  || { tail -n 40 "$corpus.log"; die "the fuzzer found a problem (log: $corpus.log)"; }
runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$corpus.log" | grep -Eo '[0-9]+$')
peak=$(grep -Eo 'stat::peak_rss_mb: *[0-9]+' "$corpus.log" | grep -Eo '[0-9]+$')
log "done: $runs inputs tried in ${seconds}s, no crash, hang or leak (peak RSS ${peak} MB); corpus $(ls "$corpus" | wc -l) files"
rm -rf "$corpus" "$corpus.log"
