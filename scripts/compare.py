#!/usr/bin/env python3
"""Before and after: the rows of two runs of a demo side by side, each read against the noise
into account (in the spirit of nvbench's compare script).

    python3 scripts/compare.py A.csv B.csv          (two --csv files of the same demo)
    python3 scripts/compare.py RUN_A RUN_B          (two run folders: every <label>.csv found in both)

Rows are matched by (variant, params, size). For each matched row it prints A's and B's median time, the
ratio B/A of the time (and of gb_per_s where both rows have it), each run's noise (the row's spread_pct:
(max - min) / median in %) and what changed: "faster" or "slower" only where the time moved by more than the
larger of the two spreads, else "same (within noise)". Rows found in only one run are listed apart; a row
without a time (a fact or a read-back) is matched but not judged. Ends with one summary line.

Bad input (a missing file, a file that is no demo CSV, runs of two different demos, a folder against a file,
runs with no row in common) prints one line "error: ..." and exits 2."""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402  scripts/report.py: reading a run's CSV, row keys
from lib import run_folder  # noqa: E402  scripts/lib/run_folder.py: which files of a run folder are its CSVs

NEEDED = ("variant", "params", "size", "median_ms")


class BadInput(Exception):
    pass


def read_rows(path):
    """The rows of one demo CSV, after checking that it is one."""
    try:
        with open(path, newline="") as f:
            header = next(csv.reader(f), None)
        rows = report.read_csv(path)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"{path}: cannot read it ({e.__class__.__name__})")
    missing = [c for c in NEEDED if c not in (header or [])]
    if missing:
        raise BadInput(f"{path}: not a demo CSV (its header lacks {', '.join(missing)})")
    return rows


def demo_name(rows):
    names = {r.get("demo") for r in rows if r.get("demo")}
    return names.pop() if len(names) == 1 else None


def pairs(a, b):
    """[(label, rows of A, rows of B)] for two files or two folders."""
    for p in (a, b):
        if not os.path.exists(p):
            raise BadInput(f"{p}: no such file or folder")
    if os.path.isdir(a) != os.path.isdir(b):
        folder, other = (a, b) if os.path.isdir(a) else (b, a)
        raise BadInput(f"{folder} is a folder and {other} a file: give two CSV files or two run folders")
    if os.path.isdir(a):
        la, lb = run_folder.csv_labels(a), run_folder.csv_labels(b)
        common = [label for label in la if label in lb]
        if not common:
            raise BadInput(f"{a} and {b} have no <label>.csv in common")
        labels = [(label, la[label], lb[label]) for label in common]
    else:
        labels = [(None, a, b)]
    out = []
    for label, pa, pb in labels:
        ra, rb = read_rows(pa), read_rows(pb)
        da, db = demo_name(ra), demo_name(rb)
        if da and db and da != db:
            raise BadInput(f"{pa} holds demo {da}, {pb} demo {db}: compare two runs of the same demo")
        out.append((label or da or db or os.path.basename(pa), ra, rb))
    return out


def spread(row):
    """The row's noise in %, from spread_pct (or from min/max/median where an older CSV lacks it)."""
    s = report.num(row.get("spread_pct"))
    if s is not None:
        return s
    lo, hi, med = (report.num(row.get(k)) for k in ("min_ms", "max_ms", "median_ms"))
    return 100.0 * (hi - lo) / med if lo is not None and hi is not None and med else None


def judge(ra, rb):
    """(time ratio B/A, GB/s ratio B/A, spread A, spread B, change) of two matched rows."""
    ta, tb = report.num(ra.get("median_ms")), report.num(rb.get("median_ms"))
    ga, gb = report.num(ra.get("gb_per_s")), report.num(rb.get("gb_per_s"))
    sa, sb = spread(ra), spread(rb)
    ratio = tb / ta if ta and tb else None
    gratio = gb / ga if ga and gb else None
    if ratio is None:
        return ratio, gratio, sa, sb, "untimed"
    noise = max(sa or 0.0, sb or 0.0) / 100.0
    if abs(ratio - 1.0) <= noise:
        return ratio, gratio, sa, sb, "same (within noise)"
    return ratio, gratio, sa, sb, "faster" if ratio < 1.0 else "slower"


def cell(v, form=report.fmt_cell):
    return "-" if v is None else form(v)


def ratio_cell(v):
    return cell(v, lambda x: f"{x:.3f}")


def noise_cell(v):
    return cell(v, lambda x: f"{x:.2f}%")


def table(header, rows):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    return ["  ".join(str(x).ljust(w) for x, w in zip(line, widths)).rstrip() for line in [header] + rows]


def compare(label, rows_a, rows_b, counts):
    """The lines for one demo; counts collects the changes."""
    keys_a, keys_b = report.unique_rows(rows_a), report.unique_rows(rows_b)
    matched, only_a = [], []
    for k, ra in keys_a.items():
        rb = keys_b.get(k)
        if rb is None:
            only_a.append(k)
            continue
        ratio, gratio, sa, sb, change = judge(ra, rb)
        counts[change] = counts.get(change, 0) + 1
        matched.append([*k, cell(report.num(ra.get("median_ms"))), cell(report.num(rb.get("median_ms"))),
                        ratio_cell(ratio), ratio_cell(gratio), noise_cell(sa), noise_cell(sb), change])
    only_b = [k for k in keys_b if k not in keys_a]
    # A key that names several rows in one run (none in the committed sets) cannot be matched: say so.
    ambiguous = (len(rows_a) - len(keys_a)) + (len(rows_b) - len(keys_b))
    counts["unmatched"] = counts.get("unmatched", 0) + len(only_a) + len(only_b) + ambiguous
    counts["matched"] = counts.get("matched", 0) + len(matched)
    lines = [f"== {label}: {len(matched)} rows matched"]
    if matched:
        lines += table(["variant", "params", "size", "A ms", "B ms", "B/A time", "B/A GB/s", "noise A",
                        "noise B", "change"], matched)
    for name, keys in (("only in A", only_a), ("only in B", only_b)):
        if keys:
            lines += [f"{name}:"] + [f"  {v}  {p}  {s}".rstrip() for v, p, s in keys]
    if ambiguous:
        lines.append(f"{ambiguous} rows left out: their (variant, params, size) names more than one row of a run")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", metavar="A", help="the run before: a demo's --csv file or a run folder")
    ap.add_argument("b", metavar="B", help="the run after: the same kind as A")
    args = ap.parse_args()
    counts, lines = {}, []
    try:
        for label, ra, rb in pairs(args.a, args.b):
            lines += compare(label, ra, rb, counts) + [""]
        if not counts.get("matched"):
            raise BadInput(f"no row of {args.a} matches a row of {args.b} by (variant, params, size)")
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines), end="")
    summary = (f"{counts.get('faster', 0)} faster, {counts.get('slower', 0)} slower, "
               f"{counts.get('same (within noise)', 0)} within noise, {counts['unmatched']} unmatched")
    if counts.get("untimed"):
        summary += f" ({counts['untimed']} matched rows have no time to compare)"
    print(f"B against A: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
