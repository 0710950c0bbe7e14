"""Which figure each demo gets, and one generic renderer (matplotlib, no seaborn, PNG).

A spec names the run (CSV file label), what goes on each axis (a CSV column or a key of the `params`
column, e.g. "offset" from "offset=11"), how rows split into series, and the axis scales. Readability
rules: every plot has a title, axis labels with units, and log axes where the values span decades."""
import math
import os
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Filled in per demo; see specs_for(). Keys:
#   run (regex on the run label), name (png file stem), title, x, y, xlabel, ylabel,
#   series: "variant" or a params key (default "variant"); kind: "line" | "bar";
#   logx / logy: bool; where: {column-or-param: regex} row filter; hline: column holding a reference
#   value (its first non-empty value is drawn as a dashed line), hline_label.
SPECS = []


def specs_for(label):
    return [s for s in SPECS if re.fullmatch(s["run"], label)]


def parse_params(text):
    out = {}
    for part in re.split(r"[,;\s]+", text or ""):
        if "=" in part:
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def value(row, key):
    if key in row and row[key] not in ("", None):
        return row[key]
    return parse_params(row.get("params", "")).get(key)


def as_float(v):
    try:
        x = float(v)
        return x if math.isfinite(x) else None
    except (TypeError, ValueError):
        return None


def size_value(v):
    """Numbers with k/M/G suffixes (binary) or plain numbers."""
    if v is None:
        return None
    m = re.fullmatch(r"([0-9.]+)\s*([kKmMgG]?)i?B?", str(v))
    if not m:
        return as_float(v)
    mult = {"": 1, "k": 2**10, "K": 2**10, "m": 2**20, "M": 2**20, "g": 2**30, "G": 2**30}[m.group(2)]
    return float(m.group(1)) * mult


def selected(row, where):
    for k, pattern in (where or {}).items():
        v = value(row, k)
        if v is None or not re.fullmatch(pattern, str(v)):
            return False
    return True


def render(spec, rows, runs, outdir):
    rows = [r for r in rows if selected(r, spec.get("where"))]
    x_key, y_key = spec["x"], spec["y"]
    series_key = spec.get("series", "variant")
    groups = {}
    for r in rows:
        y = as_float(value(r, y_key))
        if y is None:
            continue
        s = value(r, series_key) or ""
        x = value(r, x_key) if spec.get("kind", "line") == "bar" else size_value(value(r, x_key))
        if x is None:
            continue
        groups.setdefault(s, []).append((x, y))
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110)
    if spec.get("kind", "line") == "bar":
        labels, heights, colors = [], [], []
        palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, (s, pts) in enumerate(groups.items()):
            for x, y in pts:
                labels.append(str(x) if len(groups) == 1 else f"{x}\n{s}")
                heights.append(y)
                colors.append(palette[i % len(palette)])
        ax.bar(range(len(heights)), heights, color=colors)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    else:
        for s, pts in groups.items():
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3, label=str(s) or None)
        if spec.get("logx"):
            ax.set_xscale("log", base=2 if spec.get("log2x") else 10)
    if spec.get("logy"):
        ax.set_yscale("log")
    if spec.get("hline"):
        ref = next((as_float(value(r, spec["hline"])) for r in rows if as_float(value(r, spec["hline"]))), None)
        if ref:
            ax.axhline(ref, linestyle="--", color="black", linewidth=1,
                       label=f"{spec.get('hline_label', spec['hline'])} ({ref:.0f})")
    ax.set_title(spec["title"])
    ax.set_xlabel(spec["xlabel"])
    ax.set_ylabel(spec["ylabel"])
    ax.grid(True, which="both", alpha=0.3)
    if any(groups.keys()) or spec.get("hline"):
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(outdir, spec["name"] + ".png")
    fig.savefig(path + ".tmp.png")
    plt.close(fig)
    os.replace(path + ".tmp.png", path)
    return path
