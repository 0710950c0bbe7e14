#!/usr/bin/env python3
"""Writes <run>/provenance.json: where and how a run was made, read from the machine and the run itself
(never copied from a hand-written file).

    python3 scripts/provenance.py RUN_DIR --command "scripts/run_all.sh ..." --wall-s 187 [--build-dir build]
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import tempfile

from lib import run_folder  # scripts/lib/run_folder.py: the demos' JSON device headers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=30, cwd=ROOT).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def source_tree():
    """The git tree hash of the files as they are on disk (tracked and untracked files git does not ignore),
    made on a temporary index so the checkout's own index is untouched. It equals the tree of the commit that
    holds exactly this code (`git log --format='%h %T'` finds it), also where the .git beside the files is not
    the one they came from, or `git describe` says -dirty."""
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, GIT_INDEX_FILE=os.path.join(d, "index"))
        try:
            subprocess.run(["git", "add", "-A"], cwd=ROOT, env=env, capture_output=True, timeout=120, check=True)
            return subprocess.run(["git", "write-tree"], cwd=ROOT, env=env, capture_output=True, text=True,
                                  timeout=60, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""


def gpus():
    fields = ["name", "driver_version", "memory.total", "clocks.sm", "clocks.max.sm", "clocks.mem",
              "ecc.mode.current", "pcie.link.gen.current", "pcie.link.width.current"]
    out = sh(["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader"])
    rows = []
    for line in out.splitlines():
        vals = [v.strip() for v in line.split(",")]
        if len(vals) == len(fields):
            rows.append(dict(zip(fields, vals)))
    return rows


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def runtime_of(run_dir):
    d = next((d for d in run_folder.device_headers(run_dir) if d.get("runtime")), None)
    return (d["runtime"], d.get("driver")) if d else ("", "")


def architectures(build_dir):
    cache = os.path.join(ROOT, build_dir, "CMakeCache.txt")
    try:
        for line in open(cache):
            if line.startswith("CMAKE_CUDA_ARCHITECTURES:"):
                return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--command", default="")
    ap.add_argument("--wall-s", type=float, default=None)
    ap.add_argument("--build-dir", default="build")
    a = ap.parse_args()
    if not os.path.isdir(a.run_dir):
        ap.error(f"{a.run_dir} is not a directory")
    now = datetime.datetime.now().astimezone()
    runtime, driver = runtime_of(a.run_dir)
    g = gpus()
    prov = {
        "date": now.strftime("%Y-%m-%d"),
        "time": now.strftime("%H:%M:%S %Z"),
        # CML_SOURCE_VERSION names the code when the tree was copied without its .git.
        "git_describe": os.environ.get("CML_SOURCE_VERSION")
        or sh(["git", "describe", "--always", "--dirty", "--tags"]) or "not a git checkout",
        "source_tree": source_tree() or "not a git checkout",
        "command": a.command,
        "wall_s": a.wall_s,
        "gpu_count": len(g),
        "gpus": g,
        "cuda_runtime": runtime,
        "cuda_driver_api": driver,
        "cuda_architectures_built": architectures(a.build_dir),
        "nvcc": (sh(["nvcc", "--version"]).splitlines() or [""])[-1],
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
    }
    path = os.path.join(a.run_dir, "provenance.json")
    with open(path + ".tmp", "w") as f:
        json.dump(prov, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)
    print(path)


if __name__ == "__main__":
    main()
