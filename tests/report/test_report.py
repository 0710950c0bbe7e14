#!/usr/bin/env python3
"""The report step on a small committed fixture (trimmed CSVs of a real H200 run): every table and every
plot the report promises must be produced, and the README marker rewriting must work, including the root
README's example output rebuilt from fixture/logs/bandwidth_ceiling.log (a log of the H200 reference set),
which the docs check must flag once it drifts. The comparison with a reference set must match a row to the row
of the same variant, parameters and size."""
import csv
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.join(HERE, "fixture")

sys.path.insert(0, os.path.join(ROOT, "scripts"))
import plots  # noqa: E402  (scripts/plots.py: which figure each run label gets, from NN_*/plot_specs.py)


def figures_of(folder):
    """The figures scripts/plots.py draws for the runs in `folder` ({name: label}), and the labels it draws none for."""
    names, bare = {}, []
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".csv") or name.endswith(".claims.csv"):
            continue
        label = name[:-4]
        specs = plots.specs_for(label)
        bare += [] if specs else [label]
        names.update({s["name"]: label for s in specs})
        if os.path.exists(os.path.join(folder, label + ".timeline.json")):
            names[label + "_timeline"] = label
    return names, bare


def figure_failures():
    """Every figure a README embeds is one the plot specs draw from its set's runs. (A run without a figure is a
    fact demo that shows its table: docs.check holds its chapter section to that.)"""
    failures = []
    for readme in sorted(glob.glob(os.path.join(ROOT, "*", "README.md"))) + [os.path.join(ROOT, "README.md")]:
        for slug, name in re.findall(r"results/([a-z0-9-]+)/plots/([A-Za-z0-9_]+)\.png", open(readme).read()):
            drawn, _ = figures_of(os.path.join(ROOT, "results", slug))
            if name not in drawn:
                failures.append(f"{os.path.relpath(readme, ROOT)} embeds {slug}/plots/{name}.png, which no plot "
                                "spec draws from that set's runs")
    return failures


def compare_failures():
    """A sweep of one variant over sizes, compared with itself: every row must match its own size; and how a
    table cell prints."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import report
    sweep = [{"variant": "mapped", "params": "", "size": str(n), "gb_per_s": str(g)}
             for n, g in ((1024, 0.3), (65536, 9.0), (67108864, 76.0))]
    sweep.append({"variant": "device", "params": "", "size": "1024", "median_ms": "0.004"})
    twice = [{"variant": "copy", "params": "", "size": "8", "gb_per_s": "1"},
             {"variant": "copy", "params": "", "size": "8", "gb_per_s": "2"}]
    runs = {"sweep": {"rows": sweep}, "twice": {"rows": twice}}
    got = report.compare_with_reference(runs, runs)
    want = [("sweep", 4, 1.0, 0)]  # a key that names two rows is ambiguous and not compared
    failures = [] if got == want else [f"compare_with_reference on a size sweep: {got}, expected {want}"]
    # Cells print as the demos' tables print them: NaN as "-", text as text.
    cells = {"nan": "-", "inf": "inf", "": "", "cold": "cold", "4251.7": "4252", "0.9737": "0.974"}
    bad = {c: report.fmt_cell(c) for c in cells if report.fmt_cell(c) != cells[c]}
    return failures + ([f"fmt_cell: {bad}, expected {cells}"] if bad else [])


def example_failures(root):
    """The root README's example output is the reference set's log: rebuilt from it with the legend's marks,
    and the docs check flags a copy that differs from it by one digit."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import check_docs
    import report
    readme = os.path.join(root, "README.md")
    with open(readme, "w") as f:
        f.write("intro\n<!-- example:bandwidth_ceiling -->\nstale\n<!-- /example:bandwidth_ceiling -->\nlegend\n")
    fresh = report.render_chapter_readmes(root)[readme]
    failures = []
    block = fresh.split("```\n")[1] if fresh.count("```\n") == 2 else ""
    lines = block.split("\n")
    log = open(os.path.join(FIXTURE, "logs", "bandwidth_ceiling.log")).read()
    want = {"①": "device 0: ", "②": "variant ", "③": "claims: "}
    for mark, start in want.items():
        marked = [line for line in lines if mark in line]
        if len(marked) != 1 or not marked[0].startswith(start):
            failures.append(f"example: {mark} should mark the one line that starts with {start!r}: {marked}")
    if "stale" in fresh or not fresh.startswith("intro\n") or not fresh.endswith("legend\n"):
        failures.append("example: the block between the markers was not replaced, or text around it changed")
    if "so far)" in block:
        failures.append("example: the stderr progress lines were kept")
    if "copy_vec4_ilp8 " not in block or any(line.rstrip(" ①②③") not in log for line in lines if line):
        failures.append("example: a line is not the log's")
    with open(readme, "w") as f:
        f.write(fresh)
    if any(f.startswith("README.md:") for f in check_docs.check_generated(root)):
        failures.append("example: the docs check fails on a freshly generated block")
    with open(readme, "w") as f:
        f.write(fresh.replace("copy_scalar / gb_per_s copy_vec4 = 0.", "copy_scalar / gb_per_s copy_vec4 = 1.", 1))
    if not any(f.startswith("README.md:") for f in check_docs.check_generated(root)):
        failures.append("example: the docs check passes a block whose figure differs from the log")
    return failures


def published_failures(report_text):
    """results/published.csv: every row cites a source and a URL and has a numeric value. The report's published
    section: on the fixture (an H200) a same-GPU row gets this run's value and the ratio, a row of another Hopper
    GPU shows as the same generation, a row the run lacks says so, and a row of another generation is left out."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import report
    failures = []
    rows = report.read_csv(os.path.join(ROOT, "results", "published.csv"))
    for r in rows:
        if not (r.get("source") or "").strip() or not (r.get("url") or "").startswith("https://") \
                or report.num(r.get("value")) is None:
            failures.append(f"published.csv: row {r.get('id')!r} lacks a source, a URL or a numeric value")
    if not rows or len({r["id"] for r in rows}) != len(rows):
        failures.append("published.csv: no rows, or an id repeats")
    section = report_text.partition("## Published measurements\n")[2].split("\n## ", 1)[0]
    if not re.search(r"\| same GPU \|.*\| \d+\.\d{3} \|", section):
        failures.append("published: the fixture's report has no same-GPU row with a ratio")

    # A scratch table, so that what is checked does not depend on which figures results/published.csv holds.
    l2 = next(float(r["gb_per_s"]) for r in report.read_csv(os.path.join(FIXTURE, "cache_bandwidth.csv"))
              if r["variant"] == "l2")
    cols = ["id", "quantity", "gpu", "generation", "value", "unit", "source", "url", "suite_demo", "suite_variant",
            "suite_params", "suite_column", "differences"]
    scratch = [["a", "l2_bw", "H200", "Hopper", "5000", "GB/s", "src a", "https://a", "cache_bandwidth", "l2", "",
                "gb_per_s", "diff a"],
               ["b", "l2_bw", "H100 PCIe", "Hopper", "5000", "GB/s", "src b", "https://b", "cache_bandwidth", "l2",
                "", "gb_per_s", "diff b"],
               ["c", "dsm", "H200", "Hopper", "181", "cycles", "src c", "https://c", "distributed_shared", "latency",
                "neighbour", "cycles_per_hop", "diff c"],
               ["d", "l2_bw", "A100", "Ampere", "5000", "GB/s", "src d", "https://d", "cache_bandwidth", "l2", "",
                "gb_per_s", "diff d"]]
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "results"))
        with open(os.path.join(root, "results", "published.csv"), "w", newline="") as f:
            csv.writer(f).writerows([cols] + scratch)
        runs, _ = report.load(FIXTURE)
        table = "\n".join(report.published_section(runs, report.device_header(runs), root, root))
    want = {"a": ["same GPU", f"{l2 / 5000:.3f}", "diff a"], "b": ["same generation", f"{l2 / 5000:.3f}"],
            "c": ["same GPU", "not measured in this run"]}
    for key, parts in want.items():
        line = next((x for x in table.split("\n") if f"(https://{key})" in x), "")
        if not all(f"| {p} |" in line for p in parts):
            failures.append(f"published: row {key} should show {parts}: {line!r}")
    if "(https://d)" in table:
        failures.append("published: a row of another generation is shown")
    return failures


def main():
    failures = compare_failures()
    with tempfile.TemporaryDirectory() as out:
        run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), FIXTURE, "--out", out],
                             capture_output=True, text=True)
        print(run.stdout, run.stderr, sep="")
        if run.returncode != 0:
            print(f"FAIL: report.py exited {run.returncode}")
            return 1
        report = open(os.path.join(out, "REPORT.md")).read()
        if "NVIDIA H200" not in report:
            failures.append("device header missing")
        failures += published_failures(report)
        for name in sorted(os.listdir(FIXTURE)):
            if name.endswith(".csv") and f"### {name[:-4]}\n" not in report:
                failures.append(f"table for {name[:-4]} missing")
        failures += figure_failures()
        for plot in figures_of(FIXTURE)[0]:
            png = os.path.join(out, "plots", plot + ".png")
            if not os.path.exists(png) or os.path.getsize(png) < 5000:
                failures.append(f"plot {plot}.png missing or empty")
            elif f"(plots/{plot}.png)" not in report:
                failures.append(f"plot {plot}.png not linked from REPORT.md")

        # README marker rewriting, on a scratch chapter folder.
        chapter = os.path.join(out, "root", "99_scratch")
        os.makedirs(chapter)
        # The README figures come from the reference set results/readme_source.txt names.
        os.makedirs(os.path.join(out, "root", "results"))
        os.symlink(FIXTURE, os.path.join(out, "root", "results", "fixture-gpu"))
        with open(os.path.join(out, "root", "results", "readme_source.txt"), "w") as f:
            f.write("fixture-gpu\n")
        with open(os.path.join(chapter, "README.md"), "w") as f:
            f.write("before\n<!-- results:vector_width -->\nstale\n<!-- /results:vector_width -->\nafter\n")
        run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "report.py"), FIXTURE, "--out", out,
                              "--readmes", "--root", os.path.join(out, "root")], capture_output=True, text=True)
        text = open(os.path.join(chapter, "README.md")).read()
        if run.returncode != 0 or "stale" in text or "vector_width.csv" not in text or "claims held" not in text \
                or not text.endswith("after\n"):
            failures.append("README results block was not regenerated")
        failures += example_failures(os.path.join(out, "root"))

    for f in failures:
        print("FAIL:", f)
    print(f"{len(figures_of(FIXTURE)[0]) + 8 - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
