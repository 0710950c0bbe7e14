#!/usr/bin/env bash
# Maintainers only: make a finished run the committed reference set of its GPU, results/<gpu>/, and
# regenerate the figures the chapter READMEs quote from it. `scripts/run_all.sh --reference` calls this
# after a clean run; it can also promote a run made earlier:
#   scripts/promote_reference.sh runs/<gpu>-<date>-<time> [--build-dir build] [--no-readmes]
#
# A demo this run waived (one that needs two GPUs, on a one-GPU host), or did not run at all (a run of some
# demos with --only, to measure a new or changed demo), keeps the earlier reference's data for it, with
# that data's own provenance (provenance.<label>.json), and its claims are judged again on that data with
# the current claim tables (--claims-eval). Nothing else of the old set survives, except profile/ (Nsight
# Compute tables, made by scripts/profile.sh).
set -euo pipefail
source "$(dirname "$0")/lib/common.sh"
cd "$CML_ROOT"
case ${1:-} in -h|--help) print_help ;; esac
run=${1:+$(from_caller "$1")}
[ -n "$run" ] && [ -d "$run" ] || usage_error "usage: promote_reference.sh RUN_DIR [--build-dir DIR]"
build_dir=build
readmes=--readmes
shift
while [ $# -gt 0 ]; do
  case $1 in
    --build-dir) need_value "$@"; build_dir=$(from_caller "$2"); shift 2 ;;
    --no-readmes) readmes=""; shift ;;
    *) usage_error "unknown option $1" ;;
  esac
done
# scripts/lib/run_folder.py reads and edits the run folders' files (status.txt, runs.txt): the one place that
# knows their format. A reference is a finished full run at default sizes with no failed demo.
folder() { python3 scripts/lib/run_folder.py "$@"; }
slug=$(folder check-reference "$run") || exit 1
dest=results/$slug
stage=$(mktemp -d "results/.$slug.stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

# The new run, minus its report (rebuilt below over the whole set).
cp -r "$run"/. "$stage"/
rm -rf "$stage/REPORT.md" "$stage/plots"
# Keeps one demo run of the earlier reference, with its provenance, judged again with today's claims.
keep() {
  local label=$1 demo=$2
  for ext in csv json claims.csv timeline.json; do
    [ -f "$dest/$label.$ext" ] && cp "$dest/$label.$ext" "$stage/$label.$ext"
  done
  mkdir -p "$stage/logs"
  [ -f "$dest/logs/$label.log" ] && cp "$dest/logs/$label.log" "$stage/logs/$label.log"
  if [ -f "$dest/provenance.$label.json" ]; then
    cp "$dest/provenance.$label.json" "$stage/provenance.$label.json"
  elif [ -f "$dest/provenance.json" ]; then
    cp "$dest/provenance.json" "$stage/provenance.$label.json"
  fi
  if [ -x "$build_dir/bin/$demo" ]; then
    "$build_dir/bin/$demo" --claims-eval "$stage/$label.csv" --claims-csv "$stage/$label.claims.csv" >/dev/null || true
  fi
}
# Waived here, measured in the earlier reference: keep that data.
for label in $(folder labels "$run" --state waived); do
  [ -f "$dest/$label.csv" ] || continue
  log "keeping $label from the earlier reference (waived in this run)"
  keep "$label" "$(folder get "$run" "$label" demo)"
  folder mark-kept "$stage" "$label"
done
# Not run at all (a run of some demos, --only): keep the earlier reference's data of the others.
for label in $(folder labels "$dest" --not-in "$run"); do
  folder copy-entry "$dest" "$stage" "$label"
  if [ ! -f "$dest/$label.csv" ]; then
    # Waived there too (no data): the set still says so, and why.
    mkdir -p "$stage/logs"
    [ -f "$dest/logs/$label.log" ] && cp "$dest/logs/$label.log" "$stage/logs/$label.log"
    [ -f "$dest/$label.claims.csv" ] && cp "$dest/$label.claims.csv" "$stage/$label.claims.csv"
    continue
  fi
  log "keeping $label from the earlier reference (not in this run)"
  keep "$label" "$(folder get "$dest" "$label" demo)"
  folder mark-kept "$stage" "$label"
done
[ -d "$dest/profile" ] && cp -r "$dest/profile" "$stage/profile"

rm -rf "$dest.old"
[ -d "$dest" ] && mv "$dest" "$dest.old"
mv "$stage" "$dest"
trap - EXIT
rm -rf "$dest.old"
ensure_matplotlib
python3 scripts/report.py "$dest" $readmes
log "reference set $dest replaced by $run; review and commit results/ and the chapter READMEs"
