#!/usr/bin/env python3
"""Builds results/<gpu>/REPORT.md (tables and PNG plots) from the demos' CSV/JSON only, and optionally
regenerates each chapter README's results tables between <!-- results:<name> --> markers.

    python3 scripts/report.py results/nvidia-h200 [--readmes] [--out DIR]

Reads: <dir>/*.csv (one per demo run), <dir>/*.json (device header), <dir>/demos.txt (chapter of each
demo), and <dir>/NOTES.md if present (provenance notes, copied under the header). Writes: <out>/REPORT.md and <out>/plots/*.png (out defaults to the results directory)."""
import argparse
import csv
import datetime
import json
import math
import os
import re
import sys
from collections import OrderedDict

import plots  # scripts/plots.py: which figure each demo gets

CHAPTERS = OrderedDict([
    ("01_memory_model", "Chapter 01 — the memory model"),
    ("02_global_memory", "Chapter 02 — global memory access patterns"),
    ("03_shared_memory", "Chapter 03 — shared memory"),
    ("04_transfers", "Chapter 04 — host-device transfers"),
    ("05_l2_persistence", "Chapter 05 — L2 persistence"),
])
CORE = ["variant", "params", "size", "median_ms", "gb_per_s", "pct_peak"]
SKIP = {"device", "demo", "bytes", "min_ms", "max_ms", "spread_pct", "reps", "batch", "cache"}


def num(v):
    try:
        x = float(v)
        return x if math.isfinite(x) else None
    except (TypeError, ValueError):
        return None


def fmt_cell(v):
    x = num(v)
    if x is None:
        return str(v) if v not in (None, "") else ""
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1e7 or a < 1e-3:
        return f"{x:.3g}"
    if a >= 100:
        return f"{x:.0f}" if a >= 1000 else f"{x:.1f}"
    return f"{x:.3g}"


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def markdown_table(rows, max_rows=400):
    if not rows:
        return "_(no rows)_\n"
    cols = [c for c in CORE if c in rows[0]]
    extras = [c for c in rows[0] if c not in CORE and c not in SKIP and c != "verified"]
    # Drop columns that are empty in every row.
    cols = [c for c in cols + extras if any(r.get(c) not in ("", None) for r in rows)] + ["verified"]
    out = "| " + " | ".join(cols) + " |\n|" + "|".join("---" for _ in cols) + "|\n"
    for r in rows[:max_rows]:
        out += "| " + " | ".join(fmt_cell(r.get(c, "")) for c in cols) + " |\n"
    if len(rows) > max_rows:
        out += f"\n_({len(rows) - max_rows} more rows in the CSV)_\n"
    return out


def load(results):
    runs = OrderedDict()  # label -> {"rows":..., "json":...}
    for name in sorted(os.listdir(results)):
        if not name.endswith(".csv") or ".tmp." in name:
            continue
        label = name[:-4]
        entry = {"rows": read_csv(os.path.join(results, name)), "json": None}
        jpath = os.path.join(results, label + ".json")
        if os.path.exists(jpath):
            with open(jpath) as f:
                entry["json"] = json.load(f)
        runs[label] = entry
    chapter_of = {}
    manifest = os.path.join(results, "demos.txt")
    if os.path.exists(manifest):
        for line in open(manifest):
            line = line.strip()
            if "/" in line:
                ch, demo = line.split("/", 1)
                chapter_of[demo] = ch
    commands = {}
    runs_txt = os.path.join(results, "runs.txt")
    if os.path.exists(runs_txt):
        for line in open(runs_txt):
            parts = line.rstrip("\n").split("|")
            if len(parts) == 3 and parts[2].strip():
                commands[parts[0]] = f"build/bin/{parts[1]} {parts[2].strip()}"
    for label, entry in runs.items():
        entry["command"] = commands.get(label)
    return runs, chapter_of


def command_of(label, entry):
    if entry.get("command"):
        return f"`{entry['command']}`"
    return f"`build/bin/{demo_of(label, entry)}` at its defaults"


def demo_of(label, entry):
    rows = entry["rows"]
    if rows and rows[0].get("demo"):
        return rows[0]["demo"]
    if entry["json"]:
        return entry["json"].get("demo", label)
    return label


def device_header(runs):
    for entry in runs.values():
        d = (entry["json"] or {}).get("device")
        if d:
            return d
    return None


def write_report(results, out, runs, chapter_of):
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    d = device_header(runs)
    lines = ["# cuda-memory-lab report", ""]
    if d:
        lines += [f"**{d['name']}** (sm_{d['cc'].replace('.', '')}), {d['sm_count']} SMs, SM clock {d['sm_clock_mhz']} MHz, "
                  f"memory clock {d['memory_clock_mhz']} MHz, {d['bus_width_bits']}-bit bus, "
                  f"{d['total_memory_bytes'] / 2**30:.1f} GiB, L2 {d['l2_bytes'] / 2**20:.1f} MiB "
                  f"(persisting max {d['persisting_l2_max_bytes'] / 2**20:.2f} MiB), theoretical "
                  f"{d['peak_gb_per_s']:.0f} GB/s; driver {d['driver']}, runtime {d['runtime']}.", ""]
    stamp = datetime.datetime.fromtimestamp(max(os.path.getmtime(os.path.join(results, f"{l}.csv")) for l in runs)) \
        if runs else datetime.datetime.now()
    lines += [f"Results of `scripts/run_all.sh`, measured {stamp:%Y-%m-%d}. GB = 1e9 bytes; bytes counted as read + "
              "written; every row was verified against a CPU reference before it was timed.", ""]
    notes = os.path.join(results, "NOTES.md")
    if os.path.exists(notes):
        lines += [open(notes).read().strip(), ""]
    produced = {"tables": [], "plots": []}
    by_chapter = OrderedDict((c, []) for c in CHAPTERS)
    for label, entry in runs.items():
        by_chapter.setdefault(chapter_of.get(demo_of(label, entry), "other"), []).append(label)
    for ch, labels in by_chapter.items():
        if not labels:
            continue
        lines += [f"## {CHAPTERS.get(ch, ch)}", ""]
        for label in labels:
            entry = runs[label]
            lines += [f"### {label}", "", f"Command: {command_of(label, entry)}.", ""]
            for spec in plots.specs_for(label):
                png = plots.render(spec, entry["rows"], runs, os.path.join(out, "plots"))
                if png:
                    produced["plots"].append(os.path.basename(png))
                    lines += [f"![{spec['title']}](plots/{os.path.basename(png)})", ""]
            lines += [markdown_table(entry["rows"]), ""]
            produced["tables"].append(label)
    tmp = os.path.join(out, "REPORT.md.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(lines))
    os.replace(tmp, os.path.join(out, "REPORT.md"))
    return produced


MARKER = re.compile(r"(<!-- results:(?P<name>[A-Za-z0-9_\-]+) -->)(.*?)(<!-- /results:(?P=name) -->)", re.S)


def update_readmes(root, results, runs):
    d = device_header(runs) or {}
    changed = []
    for dirpath in sorted(os.listdir(root)):
        readme = os.path.join(root, dirpath, "README.md")
        if not (re.match(r"\d\d_", dirpath) and os.path.exists(readme)):
            continue
        text = open(readme).read()

        def repl(m):
            name = m.group("name")
            if name not in runs:
                return m.group(0)
            csv_path = os.path.join(results, f"{name}.csv")
            when = datetime.datetime.fromtimestamp(os.path.getmtime(csv_path))
            rel = os.path.relpath(csv_path, root)
            body = (f"\n_{d.get('name', 'GPU')}, {when:%Y-%m-%d}, `scripts/run_all.sh` ({command_of(name, runs[name])}); "
                    f"data: [{rel}](../{rel})_\n\n" + markdown_table(runs[name]["rows"], 60))
            return m.group(1) + body + m.group(4)

        new = MARKER.sub(repl, text)
        if new != text:
            with open(readme + ".tmp", "w") as f:
                f.write(new)
            os.replace(readme + ".tmp", readme)
            changed.append(readme)
    return changed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results")
    ap.add_argument("--out")
    ap.add_argument("--readmes", action="store_true", help="regenerate chapter README tables between markers")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    if not os.path.isdir(a.results):
        sys.exit(f"report: {a.results} is not a directory")
    runs, chapter_of = load(a.results)
    if not runs:
        sys.exit(f"report: no CSV files in {a.results}")
    out = a.out or a.results
    produced = write_report(a.results, out, runs, chapter_of)
    print(f"report: {os.path.join(out, 'REPORT.md')}: {len(produced['tables'])} tables, {len(produced['plots'])} plots")
    if a.readmes:
        for r in update_readmes(a.root, a.results, runs):
            print(f"report: updated {r}")


if __name__ == "__main__":
    main()
