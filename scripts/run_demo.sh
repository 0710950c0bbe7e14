#!/usr/bin/env bash
# One demo the way a chapter section shows it: build it if needed, run it with your options into a new
#   runs/<demo>-<date>-<time>/   (<demo>.csv, <demo>.json, <demo>.claims.csv, logs/, plots/)
# which git ignores, draw that demo's figure(s) as the report does (scripts/plots.py), and print the path of
# each plot and of the CSV. Compare two such runs with scripts/compare.py.
#
#   scripts/run_demo.sh [--skip-build] [--build-dir DIR] [--out DIR] <demo> [demo options]
#   e.g. scripts/run_demo.sh <demo> --quick
#   <demo>          a name listed in build/demos.txt (without its chapter); what follows goes to the demo
#                   (build/bin/<demo> --help lists its options)
#   --skip-build    run the binary as it is (default: cmake --build <build folder> --target <demo> first)
#   --build-dir DIR a build folder other than build/
#   --out DIR       write the run there instead of runs/<demo>-<date>-<time>/
# Exits with the demo's status: 77 when it is waived (no GPU, or a feature this GPU lacks), with its reason.
set -uo pipefail
source "$(dirname "$0")/lib/common.sh"
cd "$CML_ROOT" || exit 2
skip_build=0
build_dir=build
out=""
while [ $# -gt 0 ]; do
  case $1 in
    --skip-build) skip_build=1; shift ;;
    --build-dir) need_value "$@"; build_dir=$(from_caller "$2"); shift 2 ;;
    --out) need_value "$@"; out=$(from_caller "$2"); shift 2 ;;
    -h|--help) print_help ;;
    -*) usage_error "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || usage_error "name a demo (see --help; build/demos.txt lists them)"
demo=$1
shift
[ -f "$build_dir/demos.txt" ] ||
  usage_error "$build_dir/demos.txt missing: build first (README: cmake --preset release && cmake --build --preset release)"
python3 scripts/lib/run_folder.py demos "$build_dir" | grep -xF -- "$demo" >/dev/null ||
  usage_error "unknown demo '$demo' (not in $build_dir/demos.txt)"
if [ $skip_build -eq 0 ]; then
  log "building $demo (cmake --build $build_dir --target $demo)"
  build_tree --logs "$build_dir/run_demo" --target "$demo" --if-unconfigured "$build_dir" || exit 1
fi
bin=$build_dir/bin/$demo
[ -x "$bin" ] || usage_error "unknown demo '$demo' (no $bin: build it, or drop --skip-build)"
# A demo's --help prints its options and writes nothing: no run folder for it.
for a in "$@"; do case $a in -h|--help) exec "$bin" "$@" ;; esac; done

out=$(realpath -m "${out:-runs/$demo-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$out/logs" || die "cannot create $out"
outputs=()
# A demo that draws a stream timeline says so in the build's run list (add_demo ... TIMELINE).
[ -n "$(python3 scripts/lib/run_folder.py plan "$build_dir" --label "$demo" --timeline 2>/dev/null)" ] &&
  outputs=(--timeline "$out/$demo.timeline.json")
# The demo's table on the terminal and in logs/<demo>.log; its errors or waiver line after it, on stderr.
"$bin" "$@" --csv "$out/$demo.csv" --json "$out/$demo.json" --claims-csv "$out/$demo.claims.csv" \
  "${outputs[@]}" 2>"$out/logs/$demo.err" | tee "$out/logs/$demo.log"
rc=${PIPESTATUS[0]}
cat "$out/logs/$demo.err" >&2
[ $rc -eq 0 ] || exit $rc  # 77: waived, the demo's line above says why; 2: an option the demo refused

ensure_matplotlib || die "matplotlib missing: no plots (the CSV is $out/$demo.csv)"
# The figures report.py draws for this run label (plots.SPECS), and the stream timeline where there is one.
python3 - "$out" "$demo" <<'EOF' || die "plotting failed"
import os, sys
sys.path.insert(0, "scripts")
import plots, report, timeline_plot
out, label = sys.argv[1:]
runs, _ = report.load(out)
os.makedirs(os.path.join(out, "plots"), exist_ok=True)
for spec in plots.specs_for(label):
    png = plots.render(spec, runs[label]["rows"], runs, os.path.join(out, "plots"))
    if png:
        print(f"plot: {png}")
trace = os.path.join(out, label + ".timeline.json")
if os.path.exists(trace):
    print("plot: " + timeline_plot.render(trace, os.path.join(out, "plots", label + "_timeline.png")))
EOF
echo "csv: $out/$demo.csv"
