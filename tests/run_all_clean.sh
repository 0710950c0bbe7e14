#!/usr/bin/env bash
# The main job never writes a tracked file. On a machine without a GPU, scripts/run_all.sh builds nothing
# new (--skip-build over this build) and finds nothing to measure; with a GPU it runs every demo --quick
# into runs/. Either way `git status --porcelain` of tracked files must be the same before and after.
# Usage: run_all_clean.sh <source root> <build dir>
set -u
root=$1
build=$2
cd "$root" || exit 1
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "not a git checkout: skipped"; exit 77; }
before=$(git status --porcelain --untracked-files=no)
before_hash=$(git ls-files -m -z | xargs -0 -r sha1sum)
args=(--skip-build --build-dir "$build" --no-report)
nvidia-smi -L >/dev/null 2>&1 && args+=(--quick --only '^(bandwidth_ceiling|global_variable)$')
bash scripts/run_all.sh "${args[@]}"
rc=$?
after=$(git status --porcelain --untracked-files=no)
after_hash=$(git ls-files -m -z | xargs -0 -r sha1sum)
if [ "$before" != "$after" ] || [ "$before_hash" != "$after_hash" ]; then
  echo "FAIL: scripts/run_all.sh changed tracked files:"
  diff <(echo "$before"; echo "$before_hash") <(echo "$after"; echo "$after_hash")
  exit 1
fi
[ $rc -eq 0 ] || { echo "FAIL: scripts/run_all.sh exited $rc"; exit 1; }
echo "run_all.sh left every tracked file as it was: 1 passed, 0 failed"
