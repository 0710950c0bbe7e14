#!/usr/bin/env bash
# The main job never writes a tracked file: with a GPU it runs two demos --quick (--skip-build over this
# build) into runs/, and `git status --porcelain` of tracked files, and of anything under results/, must be
# the same before and after. Without a GPU run_all.sh measures nothing, so the test is skipped (77).
# Usage: run_all_clean.sh <source root> <build dir>
set -u
root=$1
build=$2
cd "$root" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || { echo "no GPU visible: run_all.sh would measure nothing; skipped"; exit 77; }
state() { git status --porcelain --untracked-files=no; git status --porcelain --untracked-files=all -- results; }
before=$(state)
before_hash=$(git ls-files -m -z | xargs -0 -r sha1sum)
bash scripts/run_all.sh --skip-build --build-dir "$build" --no-report --quick \
  --only '^(bandwidth_ceiling|global_variable)$'
rc=$?
after=$(state)
after_hash=$(git ls-files -m -z | xargs -0 -r sha1sum)
if [ "$before" != "$after" ] || [ "$before_hash" != "$after_hash" ]; then
  echo "FAIL: scripts/run_all.sh changed tracked files:"
  diff <(echo "$before"; echo "$before_hash") <(echo "$after"; echo "$after_hash")
  exit 1
fi
[ $rc -eq 0 ] || { echo "FAIL: scripts/run_all.sh exited $rc"; exit 1; }
echo "run_all.sh left every tracked file as it was: 1 passed, 0 failed"
