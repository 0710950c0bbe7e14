#!/usr/bin/env python3
"""scripts/compare.py on two CSVs made from a real reference CSV (results/nvidia-h200/smem_square.csv): each
change, the rows found in one run only, two run folders, and every kind of bad input (exit 2, one line
"error: ..." on stderr). Then scripts/run_demo.sh without a GPU: an unknown demo (exit 2, one line), a real
demo (exit 77 and its waiver line), --help from another folder (exit 0), and a whole run through a stand-in
demo binary that writes the reference CSV (the plots and the CSV path are printed).

    python3 tests/report/test_compare.py [BUILD_DIR]      (default: build/ of the repository)"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REFERENCE = os.path.join(ROOT, "results", "nvidia-h200", "smem_square.csv")
COMPARE = os.path.join(ROOT, "scripts", "compare.py")
RUN_DEMO = os.path.join(ROOT, "scripts", "run_demo.sh")
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def write(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)
    return path


def make_pair(tmp):
    """A: the reference rows, B: rows 0-3 at 0.8x the time (faster), 4-7 at 1.005x within a 1 % spread (same),
    8 at 1.25x (slower), 9 at 1.005x with both spreads 0.2 % (slower: more than the noise), the last row
    dropped (only in A) and one row of another size added (only in B)."""
    with open(REFERENCE, newline="") as f:
        reader = csv.DictReader(f)
        header, rows = reader.fieldnames, list(reader)
    assert len(rows) == 16, "the reference CSV changed shape: adapt the test"
    a = [dict(r) for r in rows]
    for r in a[4:8]:
        r["spread_pct"] = "1.0"
    a[9]["spread_pct"] = "0.2"
    a[0]["gb_per_s"] = "100"
    b = [dict(r) for r in a]
    for i, r in enumerate(b):
        scale = 0.8 if i < 4 else 1.005 if i < 8 or i == 9 else 1.25 if i == 8 else 1.0
        r["median_ms"] = repr(float(r["median_ms"]) * scale)
    b[0]["gb_per_s"] = "125"
    extra = dict(b[-1], size="4096")
    b = b[:-1] + [extra]
    return header, a, b


def run(cmd, cwd=None):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def expect_error(args, what):
    rc, out, err = run([sys.executable, COMPARE, *args])
    lines = err.strip().splitlines()
    check(rc == 2 and len(lines) == 1 and lines[0].startswith("error: "),
          f"compare.py, {what}: want exit 2 and one 'error:' line, got exit {rc}, stderr {err!r}")
    return lines[0] if lines else ""


def changes(out):
    """variant+params -> the change on its line."""
    got = {}
    for line in out.splitlines():
        for v in ("same (within noise)", "faster", "slower", "untimed"):
            if line.endswith(v):
                got[" ".join(re.split(r"\s{2,}", line)[:3])] = v
    return got


def test_compare(tmp):
    header, a, b = make_pair(tmp)
    fa = write(os.path.join(tmp, "A.csv"), header, a)
    fb = write(os.path.join(tmp, "B.csv"), header, b)
    rc, out, err = run([sys.executable, COMPARE, fa, fb])
    print(out, end="")
    check(out.startswith("== smem_square: 15 rows matched"), "the first line names the demo")
    check(rc == 0 and not err, f"compare.py A B: exit {rc}, stderr {err!r}")
    got = changes(out)
    want = {}
    for i, r in enumerate(a[:15]):
        want[" ".join([r["variant"], r["params"], r["size"]])] = (
            "faster" if i < 4 else "slower" if i in (8, 9) else "same (within noise)")
    check(got == want, f"compare.py changes: got {got}, want {want}")
    last = out.strip().splitlines()[-1]
    check(last == "B against A: 4 faster, 2 slower, 9 within noise, 2 unmatched", f"summary line: {last!r}")
    check(" 1.250 " in out.splitlines()[2], "row 0's GB/s ratio 1.250 missing: " + out.splitlines()[2])
    only_a, only_b = out.split("only in A:")[1].split("only in B:")
    check(a[15]["variant"] in only_a and "2112" in only_a, f"only in A lists {only_a!r}")
    check("4096" in only_b, f"only in B lists {only_b!r}")

    # Two run folders: the common <label>.csv is compared; a claims CSV and a CSV in one folder only are not.
    da, db = os.path.join(tmp, "runA"), os.path.join(tmp, "runB")
    for d, f in ((da, fa), (db, fb)):
        os.makedirs(d)
        shutil.copy(f, os.path.join(d, "smem_square.csv"))
        write(os.path.join(d, "smem_square.claims.csv"), ["claim", "status"], [{"claim": "x", "status": "held"}])
    shutil.copy(fa, os.path.join(da, "smem_rectangle.csv"))
    rc, out2, err = run([sys.executable, COMPARE, da, db])
    check(rc == 0 and out2.strip().splitlines()[-1] == last, f"compare.py on folders: exit {rc}, {out2[-200:]!r} {err!r}")

    # Bad input.
    errors = [expect_error([fa, os.path.join(tmp, "missing.csv")], "a missing file")]
    malformed = write(os.path.join(tmp, "claims.csv"), ["claim", "status"], [{"claim": "x", "status": "held"}])
    errors.append(expect_error([fa, malformed], "a CSV without variant/params/size/median_ms"))
    empty = os.path.join(tmp, "empty.csv")
    open(empty, "w").close()
    errors.append(expect_error([empty, fb], "an empty file"))
    other = write(os.path.join(tmp, "other.csv"), header, [dict(r, demo="smem_rectangle") for r in b])
    errors.append(expect_error([fa, other], "two different demos"))
    nothing = write(os.path.join(tmp, "nothing.csv"), header, [dict(r, size="999") for r in b])
    errors.append(expect_error([fa, nothing], "rows that match nothing"))
    errors.append(expect_error([da, fb], "a folder and a file"))
    errors.append(expect_error([fa, db], "a file and a folder"))
    os.makedirs(os.path.join(tmp, "emptyrun"))
    errors.append(expect_error([da, os.path.join(tmp, "emptyrun")], "folders without a common CSV"))
    print("\n".join(errors))


def test_run_demo(tmp, build):
    def bash(*args, cwd=ROOT):
        return run(["bash", RUN_DEMO, *args], cwd=cwd)

    rc, out, err = bash("no_such_demo")
    check(rc == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: "),
          f"run_demo.sh no_such_demo: exit {rc}, stderr {err!r}")
    rc, out, err = bash("--help", cwd=tmp)
    check(rc == 0 and "run_demo.sh" in out, f"run_demo.sh --help from {tmp}: exit {rc}, stderr {err!r}")

    demos = os.path.join(build, "demos.txt")
    gpus = run(["bash", "-c", "nvidia-smi -L 2>/dev/null | grep -c '^GPU '"])[1].strip()
    if not os.path.exists(os.path.join(build, "bin", "smem_square")):
        print(f"run_demo.sh waiver case skipped: no {build}/bin/smem_square")
    elif gpus not in ("", "0"):
        print("run_demo.sh waiver case skipped: a GPU is visible (the demo would run)")
    else:
        rc, out, err = bash("--skip-build", "--build-dir", build, "--out", os.path.join(tmp, "waived"), "smem_square")
        lines = err.strip().splitlines()
        check(rc == 77 and len(lines) == 1 and lines[0].startswith("smem_square: waived: "),
              f"run_demo.sh smem_square without a GPU: exit {rc}, stderr {err!r}")
        print(f"run_demo.sh smem_square: exit {rc}: {err.strip()}")
    check(os.path.exists(demos), f"{demos} missing")

    # A whole run through a stand-in binary: it writes the reference CSV where --csv says.
    fake = os.path.join(tmp, "fake-build")
    os.makedirs(os.path.join(fake, "bin"))
    with open(os.path.join(fake, "demos.txt"), "w") as f:
        f.write("03_shared_memory/smem_square\n")
    stub = os.path.join(fake, "bin", "smem_square")
    with open(stub, "w") as f:
        f.write(f"""#!/usr/bin/env bash
echo "stand-in smem_square $*"
while [ $# -gt 0 ]; do [ "$1" = --csv ] && cp '{REFERENCE}' "$2"; shift; done
""")
    os.chmod(stub, 0o755)
    rc, out, err = bash("--skip-build", "--build-dir", fake, "--out", os.path.join(tmp, "run"), "smem_square",
                        "--quick", cwd=tmp)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("run_demo.sh plotting case skipped: no matplotlib")
        return
    plots = [line[len("plot: "):] for line in out.splitlines() if line.startswith("plot: ")]
    csv_line = out.strip().splitlines()[-1] if out.strip() else ""
    check(rc == 0 and "stand-in smem_square --quick --csv" in out, f"run_demo.sh stand-in: exit {rc}, {out!r} {err!r}")
    check(plots and all(os.path.isfile(p) for p in plots), f"run_demo.sh plots: {plots}")
    check(csv_line == "csv: " + os.path.join(tmp, "run", "smem_square.csv"), f"run_demo.sh csv line: {csv_line!r}")
    print(out, end="")


def main():
    build = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    with tempfile.TemporaryDirectory() as tmp:
        test_compare(tmp)
        test_run_demo(tmp, build)
    for f in failures:
        print("FAIL:", f)
    print(f"compare.py and run_demo.sh: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
