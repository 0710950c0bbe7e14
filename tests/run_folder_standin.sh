#!/usr/bin/env bash
# The main job's run folder and a reference set's promotion, without a GPU: stand-in demos (one ok, one
# waived, one failing, an extra run) and a stand-in nvidia-smi. scripts/run_all.sh must write status.txt,
# runs.txt and demos.txt line for line as expected, refuse an --only that matches nothing before it makes a
# folder, and exit 1 for the failed demo; scripts/promote_reference.sh, run on a copy of the scripts with an
# earlier reference set, must keep the earlier data of a demo waived now and of one not run now, and mark them
# kept. Usage: run_folder_standin.sh <source root>
set -u
root=$(cd "$1" && pwd) || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() {  # check DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); printf 'FAIL: %s\n  expected: %s\n  got:      %s\n' "$1" "$2" "$3"; fi
}
mkdir -p "$work/bin" "$work/build/bin"
printf '#!/bin/bash\ncase "$*" in *name*) echo "NVIDIA Stand-in GPU" ;; -L) echo "GPU 0: NVIDIA Stand-in GPU" ;; esac\n' \
  >"$work/bin/nvidia-smi"
chmod +x "$work/bin/nvidia-smi"
# The device header of a reference set's demo JSON, as a GPU of its own.
python3 - "$root" "$work/device.json" <<'EOF' || exit 1
import glob, json, sys
d = next(json.load(open(p))["device"] for p in sorted(glob.glob(sys.argv[1] + "/results/*/bandwidth_ceiling.json")))
d.update(name="NVIDIA Stand-in GPU", slug="stand-in-gpu")
json.dump({"device": d}, open(sys.argv[2], "w"))
EOF
# A stand-in demo: writes the files it is asked for, then exits as its name says.
standin() {
  cat >"$work/build/bin/$1" <<EOF
#!/bin/bash
echo "args: \$*"
while [ \$# -gt 0 ]; do
  case \$1 in
    --csv) printf 'device,demo,variant,params,size,median_ms,gb_per_s,verified\nStand-in,$1,copy,,8,1.0,2.0,true\n' >"\$2"; shift ;;
    --json) cp "$work/device.json" "\$2"; shift ;;
    --claims-csv) printf 'claim,kind,status,value,bound,measure,text,detail\n' >"\$2"; shift ;;
  esac
  shift
done
$2
EOF
  chmod +x "$work/build/bin/$1"
}
standin alpha 'echo alpha; exit 0'
standin beta 'echo "beta: waived: no such | feature here" >&2; exit 77'
standin gamma 'echo gamma broke; exit 3'
printf '01_x/alpha\n01_x/beta\n02_y/gamma\n' >"$work/build/demos.txt"
printf 'alpha|alpha||0\nalpha|alpha_big|--size 64M|0\nbeta|beta||1\ngamma|gamma||0\n' >"$work/build/demo_runs.txt"
run_all() { PATH="$work/bin:$PATH" bash "$root/scripts/run_all.sh" --skip-build --build-dir "$work/build" --no-report "$@"; }

run_all --out "$work/run" >"$work/run_all.log" 2>&1
check "run_all.sh exits 1 for the failed demo" 1 $?
check "status.txt" "$(printf 'alpha|alpha|ok|0|\nbeta|beta|waived|77|no such | feature here\ngamma|gamma|failed|3|\nalpha_big|alpha|ok|0|')" \
  "$(cat "$work/run/status.txt")"
check "runs.txt" "$(printf 'alpha|alpha|\nbeta|beta|\ngamma|gamma|\nalpha_big|alpha|--size 64M')" "$(cat "$work/run/runs.txt")"
check "demos.txt" "$(cat "$work/build/demos.txt")" "$(cat "$work/run/demos.txt")"
check "a timeline asked of the run that declares one, and of no other" "1 0" \
  "$(grep -c -- "--timeline $work/run/beta.timeline.json" "$work/run/logs/beta.log") $(cat "$work/run/logs/alpha.log" \
     "$work/run/logs/gamma.log" "$work/run/logs/alpha_big.log" | grep -c -- --timeline)"
check "an extra run's arguments" 1 "$(grep -c -- '^args: --size 64M --csv' "$work/run/logs/alpha_big.log")"
check "the summary names the failed run" 1 "$(grep -c 'FAILED  gamma (exit 3)' "$work/run_all.log")"
run_all --only 'zzz' --out "$work/none" >/dev/null 2>&1
check "--only matching nothing: exit 2" 2 $?
check "--only matching nothing: no run folder" no "$([ -e "$work/none" ] && echo yes || echo no)"

# A promotion on a copy of the scripts, over an earlier reference set of the same GPU.
mkdir -p "$work/root/results"
cp -r "$root/scripts" "$work/root/scripts"
rm -rf "$work/root/scripts/__pycache__" "$work/root/scripts/lib/__pycache__"
cp -r "$work/run" "$work/earlier"
sed -i 's/|failed|3|/|ok|0|/; s/|waived|77|.*/|ok|0|/' "$work/earlier/status.txt"
printf 'delta|delta|waived|77|needs two GPUs\nepsilon|epsilon|ok|0|\n' >>"$work/earlier/status.txt"
printf 'epsilon|epsilon|--rounds 3\n' >>"$work/earlier/runs.txt"
cp "$work/earlier/alpha.csv" "$work/earlier/beta.csv"
cp "$work/earlier/alpha.csv" "$work/earlier/epsilon.csv"
mv "$work/earlier" "$work/root/results/stand-in-gpu"
sed -i 's/|failed|3|/|ok|0|/' "$work/run/status.txt"   # a reference has no failed demo
(cd "$work/root" && bash scripts/promote_reference.sh "$work/run" --build-dir "$work/build" --no-readmes) \
  >"$work/promote.log" 2>&1
check "promote_reference.sh exits 0" 0 $?
check "promoted status.txt" "$(printf '%s\n' 'alpha|alpha|ok|0|' 'beta|beta|kept|77|measured earlier, see provenance.beta.json' \
  'gamma|gamma|ok|0|' 'alpha_big|alpha|ok|0|' 'delta|delta|waived|77|needs two GPUs' \
  'epsilon|epsilon|kept|0|measured earlier, see provenance.epsilon.json')" \
  "$(cat "$work/root/results/stand-in-gpu/status.txt")"
check "promoted runs.txt keeps the runs not run now" "epsilon|epsilon|--rounds 3" \
  "$(tail -n 1 "$work/root/results/stand-in-gpu/runs.txt")"
check "the kept data's provenance" "beta epsilon" \
  "$(cd "$work/root/results/stand-in-gpu" && ls provenance.*.json | sed 's/provenance\.//; s/\.json//' | xargs)"
# A run with a failed demo is no reference.
sed -i 's/^gamma|gamma|ok|0|/gamma|gamma|failed|3|/' "$work/run/status.txt"
(cd "$work/root" && bash scripts/promote_reference.sh "$work/run" --no-readmes) >/dev/null 2>"$work/err"
check "promote_reference.sh refuses a run with a failed demo" "1 error: $work/run has failed demos: not a reference" \
  "$? $(cat "$work/err")"
echo "run folder with stand-in demos: $pass passed, $fail failed"
[ $fail -eq 0 ]
