#!/usr/bin/env python3
"""The files of a run folder and of the build's run list, read and written in one place.

A run folder (runs/<gpu>-<date>-<time>/ from scripts/run_all.sh, or a reference set results/<gpu>/) holds:
  status.txt          label|demo|state|exit|reason per run: ok, waived (reason: the demo's "waived: ..." line),
                      failed, or kept (a reference set's earlier data, see provenance.<label>.json)
  runs.txt            label|demo|args per run: how each CSV was made
  demos.txt           chapter/demo per line (a copy of the build's)
  <label>.csv, .json, .claims.csv, .timeline.json, logs/<label>.log: what each demo run wrote
  provenance.json     scripts/provenance.py; its "command" says how the run was started
The build folder holds demos.txt, demo_runs.txt (demo|label|args|timeline per line, from add_demo) and
target_flags.txt (name|flag,flag per demo and test binary, from add_demo and add_cml_test: device_state for
one that must run alone, all_gpus for one that needs every GPU).

The shell scripts use it through this command line (one line "error: ..." and exit 2 on a caller's mistake,
exit 1 on a folder that cannot be used):
  run_folder.py plan BUILD [--only REGEX] [--label L] [--defaults] [--timeline] [--field F]
                                       the runs of the main job, defaults first ("demo|label|args|timeline",
                                       or the one field F of each)
  run_folder.py demos FOLDER           the demo names of FOLDER/demos.txt, in order
  run_folder.py targets BUILD [--flag F]
                                       the demos and test binaries of BUILD/target_flags.txt, in order
                                       ("name|flags", or only the names of those declaring flag F)
  run_folder.py init RUN BUILD [--only REGEX]
                                       a new run folder: logs/, demos.txt, runs.txt, an empty status.txt;
                                       prints the plan as `plan` does
  run_folder.py record RUN LABEL DEMO EXIT
                                       a finished demo run: its state from the exit code (and the reason of a
                                       waiver from logs/LABEL.log), written to status.txt and printed
  run_folder.py set-status RUN LABEL DEMO STATE EXIT [REASON]
                                       one status line, replacing the label's line where it has one
  run_folder.py get RUN LABEL FIELD    one field of the label's status line (exit 1 without one)
  run_folder.py labels RUN [--state S] [--not-in OTHER]
                                       the labels of status.txt, in order
  run_folder.py mark-kept RUN LABEL    the label's data comes from an earlier reference run
  run_folder.py copy-entry FROM TO LABEL
                                       the label's runs.txt and status.txt lines of FROM appended to TO's
  run_folder.py check-reference RUN    exit 1 unless RUN can become a reference set; prints its GPU's slug
"""
import argparse
import csv
import glob
import json
import os
import re
import shutil
import sys

STATUS_FIELDS = ("label", "demo", "state", "exit", "reason")
PLAN_FIELDS = ("demo", "label", "args", "timeline")
# How a target must be run (add_demo's and add_cml_test's DEVICE_STATE and ALL_GPUS, lower case).
TARGET_FLAGS = ("device_state", "all_gpus")
# Reasons and labels are the demos' own text: whatever bytes they hold are written back as they were read.
_TEXT = dict(encoding="utf-8", errors="surrogateescape", newline="")


class Unusable(Exception):
    """A folder that cannot be used as asked (exit 1)."""


def _lines(path):
    if not os.path.exists(path):
        return []
    with open(path, **_TEXT) as f:
        return [line[:-1] if line.endswith("\n") else line for line in f]


def _write_lines(path, lines):
    tmp = path + ".tmp"
    with open(tmp, "w", **_TEXT) as f:
        f.writelines(line + "\n" for line in lines)
    os.replace(tmp, path)


# ---- status.txt ---------------------------------------------------------------------------------------------

def read_status(run_dir):
    """[{label, demo, state, exit, reason}] in the order of status.txt (none when it is missing)."""
    rows = []
    for line in _lines(os.path.join(run_dir, "status.txt")):
        parts = line.split("|", 4)
        if len(parts) == 5:
            rows.append(dict(zip(STATUS_FIELDS, parts)))
    return rows


def status_line(label, demo, state, exit_code, reason=""):
    return f"{label}|{demo}|{state}|{exit_code}|{reason}"


def set_status(run_dir, label, demo, state, exit_code, reason=""):
    """Writes the label's status line in place of its earlier one, or after the others."""
    path = os.path.join(run_dir, "status.txt")
    lines = _lines(path)
    new = status_line(label, demo, state, exit_code, reason)
    at = next((i for i, line in enumerate(lines) if line.split("|", 1)[0] == label), None)
    if at is None:
        lines.append(new)
    else:
        lines[at] = new
    _write_lines(path, lines)


def waiver_reason(log_path):
    """The text after the first "waived: " a demo's log holds (its reason for exit 77), or ""."""
    for line in _lines(log_path):
        at = line.find("waived: ")
        if at >= 0:
            return line[at + len("waived: "):]
    return ""


def record(run_dir, label, demo, exit_code):
    """A finished demo run into status.txt: 0 ok, 77 waived (with the reason its log gives), else failed."""
    state, reason = {0: ("ok", ""), 77: ("waived", None)}.get(int(exit_code), ("failed", ""))
    if reason is None:
        reason = waiver_reason(os.path.join(run_dir, "logs", label + ".log"))
    set_status(run_dir, label, demo, state, exit_code, reason)
    return state


def mark_kept(run_dir, label):
    """The label's line says its data was measured in an earlier reference run (its exit code stays)."""
    row = next((r for r in read_status(run_dir) if r["label"] == label), None)
    if row is None:
        raise Unusable(f"{run_dir}/status.txt has no line for {label}")
    set_status(run_dir, label, row["demo"], "kept", row["exit"], f"measured earlier, see provenance.{label}.json")


# ---- runs.txt, demos.txt, the CSVs ----------------------------------------------------------------------------

def read_runs(run_dir):
    """{label: {demo, args}} of runs.txt, in its order."""
    out = {}
    for line in _lines(os.path.join(run_dir, "runs.txt")):
        parts = line.split("|")
        if len(parts) == 3:
            out[parts[0]] = {"demo": parts[1], "args": parts[2]}
    return out


def copy_entry(src, dest, label):
    """Appends the label's lines of src's runs.txt and status.txt to dest's."""
    for name in ("runs.txt", "status.txt"):
        mine = [line for line in _lines(os.path.join(src, name)) if line.split("|", 1)[0] == label]
        if mine:
            _write_lines(os.path.join(dest, name), _lines(os.path.join(dest, name)) + mine)


def read_chapters(folder):
    """{demo: chapter} of folder/demos.txt (a run folder's copy or the build's), in its order."""
    out = {}
    for line in _lines(os.path.join(folder, "demos.txt")):
        line = line.strip()
        if "/" in line:
            chapter, demo = line.split("/", 1)
            out[demo] = chapter
    return out


def csv_labels(folder):
    """{label: path} of every demo CSV in a run folder (not the claims, not a file still being written)."""
    return {n[:-4]: os.path.join(folder, n) for n in sorted(os.listdir(folder))
            if n.endswith(".csv") and ".tmp." not in n and not n.endswith(".claims.csv")}


def read_claims(run_dir):
    """label -> list of claim rows (dicts with claim, kind, status, value, bound, measure, text, detail)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(run_dir, "*.claims.csv"))):
        label = os.path.basename(path)[: -len(".claims.csv")]
        with open(path, newline="") as f:
            out[label] = list(csv.DictReader(f))
    return out


def device_headers(folder):
    """The "device" object of every JSON in the folder that has one, by file name."""
    for path in sorted(glob.glob(os.path.join(folder, "*.json"))):
        try:
            with open(path) as f:
                d = json.load(f).get("device") or {}
        except (OSError, ValueError, AttributeError):
            continue
        if d:
            yield d


# ---- the build's run list ---------------------------------------------------------------------------------------

def read_plan(build_dir):
    """The runs of the main job from build_dir/demo_runs.txt: every demo at its defaults (label = demo) in
    chapter order, then the extra runs."""
    path = os.path.join(build_dir, "demo_runs.txt")
    if not os.path.exists(path):
        raise Unusable(f"{path} missing: configure again (cmake --preset release)")
    runs = [dict(zip(PLAN_FIELDS, line.split("|", 3))) for line in _lines(path) if line.split("|", 1)[0]]
    runs = [r for r in runs if len(r) == len(PLAN_FIELDS)]
    return [r for r in runs if r["label"] == r["demo"]] + [r for r in runs if r["label"] != r["demo"]]


def read_target_flags(build_dir):
    """{name: [flags]} of build_dir/target_flags.txt: every demo and test binary, in the order declared."""
    path = os.path.join(build_dir, "target_flags.txt")
    if not os.path.exists(path):
        raise Unusable(f"{path} missing: configure again (cmake --preset release)")
    out = {}
    for line in _lines(path):
        name, _, flags = line.partition("|")
        if name:
            out[name] = [f for f in flags.split(",") if f]
    return out


def _print_targets(build_dir, flag=None):
    for name, flags in read_target_flags(build_dir).items():
        if flag is None:
            print(f"{name}|{','.join(flags)}")
        elif flag in flags:
            print(name)


def select(plan, only=None, label=None, defaults=False, timeline=False):
    out = [r for r in plan if (only is None or re.search(only, r["label"]))
           and (label is None or r["label"] == label)
           and (not defaults or r["label"] == r["demo"]) and (not timeline or r["timeline"] == "1")]
    return out


def init(run_dir, build_dir, only=None):
    """A new run folder for the plan's runs (those whose label matches `only`); returns them."""
    runs = select(read_plan(build_dir), only=only)
    if not runs:
        raise ValueError(f"--only '{only}' matches no run (labels: the second field of "
                         f"{os.path.join(build_dir, 'demo_runs.txt')})")
    try:
        os.makedirs(os.path.join(run_dir, "logs"), exist_ok=True)
        shutil.copyfile(os.path.join(build_dir, "demos.txt"), os.path.join(run_dir, "demos.txt"))
    except OSError as e:
        raise Unusable(f"cannot create {run_dir} ({e.strerror})")
    _write_lines(os.path.join(run_dir, "runs.txt"), [f"{r['label']}|{r['demo']}|{r['args']}" for r in runs])
    _write_lines(os.path.join(run_dir, "status.txt"), [])
    return runs


# ---- reference sets -----------------------------------------------------------------------------------------

def check_reference(run_dir):
    """The slug of the run's GPU, when the run can become a reference set; else Unusable says why."""
    if not (os.path.isfile(os.path.join(run_dir, "status.txt"))
            and os.path.isfile(os.path.join(run_dir, "provenance.json"))):
        raise Unusable(f"{run_dir} is not a finished run (status.txt, provenance.json)")
    if any(r["state"] == "failed" for r in read_status(run_dir)):
        raise Unusable(f"{run_dir} has failed demos: not a reference")
    # A reference is the full run at default sizes (run_all.sh --reference refuses the same options).
    try:
        with open(os.path.join(run_dir, "provenance.json")) as f:
            command = str(json.load(f).get("command", ""))
    except (OSError, ValueError, AttributeError):
        command = ""
    if "--quick" in command or "--only" in command:
        raise Unusable(f"{run_dir} ran with --quick or --only: not a reference")
    slug = next((d["slug"] for d in device_headers(run_dir) if d.get("slug")), None)
    if not slug:
        raise Unusable(f"cannot tell the GPU of {run_dir} (no demo JSON with a device slug)")
    return slug


# ---- command line ----------------------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"error: {message}", file=sys.stderr)
        sys.exit(2)


def _print_plan(runs, field=None):
    for r in runs:
        print(r[field] if field else "|".join(r[k] for k in PLAN_FIELDS))


def _get(run_dir, label, field):
    row = next((r for r in read_status(run_dir) if r["label"] == label), None)
    if row is None:
        raise Unusable(f"{run_dir}/status.txt has no line for {label}")
    print(row[field])


def _labels(run_dir, state=None, not_in=None):
    skip = {r["label"] for r in read_status(not_in)} if not_in else set()
    for r in read_status(run_dir):
        if (state is None or r["state"] == state) and r["label"] not in skip:
            print(r["label"])


# command: (what it does with the parsed arguments, its arguments: a name, or (name, argparse keywords))
COMMANDS = {
    "plan": (lambda a: _print_plan(select(read_plan(a.build), a.only, a.label, a.defaults, a.timeline), a.field),
             ["build", ("--only", {}), ("--label", {}), ("--defaults", {"action": "store_true"}),
              ("--timeline", {"action": "store_true"}), ("--field", {"choices": PLAN_FIELDS})]),
    "demos": (lambda a: print("\n".join(read_chapters(a.folder))), ["folder"]),
    "targets": (lambda a: _print_targets(a.build, a.flag), ["build", ("--flag", {"choices": TARGET_FLAGS})]),
    "init": (lambda a: _print_plan(init(a.run, a.build, a.only)), ["run", "build", ("--only", {})]),
    "record": (lambda a: print(record(a.run, a.label, a.demo, a.exit)),
               ["run", "label", "demo", ("exit", {"type": int})]),
    "set-status": (lambda a: set_status(a.run, a.label, a.demo, a.state, a.exit, a.reason),
                   ["run", "label", "demo", ("state", {"choices": ("ok", "waived", "failed", "kept")}),
                    ("exit", {"type": int}), ("reason", {"nargs": "?", "default": ""})]),
    "get": (lambda a: _get(a.run, a.label, a.field), ["run", "label", ("field", {"choices": STATUS_FIELDS})]),
    "labels": (lambda a: _labels(a.run, a.state, a.not_in), ["run", ("--state", {}), ("--not-in", {})]),
    "mark-kept": (lambda a: mark_kept(a.run, a.label), ["run", "label"]),
    "copy-entry": (lambda a: copy_entry(a.src, a.dest, a.label), ["src", "dest", "label"]),
    "check-reference": (lambda a: print(check_reference(a.run)), ["run"]),
}


def main(argv=None):
    ap = _Parser(prog="run_folder.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    for name, (_, args) in COMMANDS.items():
        p = sub.add_parser(name)
        for arg in args:
            arg, kw = arg if isinstance(arg, tuple) else (arg, {})
            p.add_argument(arg, **kw)
    a = ap.parse_args(argv)
    try:
        COMMANDS[a.cmd][0](a)
        sys.stdout.flush()
    except BrokenPipeError:
        # A reader that wanted the first lines only (head -n 1) has gone: not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except re.error as e:
        ap.error(f"--only: not a regular expression ({e})")
    except ValueError as e:
        ap.error(str(e))
    except Unusable as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
