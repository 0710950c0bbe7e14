#!/usr/bin/env python3
"""Draws the Chrome-trace timeline that `stream_overlap --timeline FILE.json` writes as a PNG: one panel
per traced run (sequential, then staged), one row per stream and one per engine (H2D copies, kernels,
D2H copies), on one time axis, so the time the streams save is the gap between the two panels' ends.

  scripts/timeline_plot.py TIMELINE.json [OUT.png]     (default: the JSON's name with .png)
"""
import json
import os
import sys

COLOURS = {"H2D": "#4C72B0", "kernel": "#DD8452", "D2H": "#55A868"}
ENGINE_LANE_BASE = 100  # as in 04_transfers/kernels/timeline.hpp


def load(path):
    """The runs of a trace: [{label, streams:{tid: name}, spans:[(tid, cat, chunk, start_ms, end_ms)]}]."""
    with open(path) as f:
        trace = json.load(f)
    runs = {}
    for e in trace.get("traceEvents", []):
        pid = e.get("pid")
        run = runs.setdefault(pid, {"label": "", "lanes": {}, "spans": []})
        if e.get("ph") == "M" and e.get("name") == "process_name":
            run["label"] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            run["lanes"][e["tid"]] = e["args"]["name"]
        elif e.get("ph") == "X":
            start = e["ts"] / 1e3
            run["spans"].append((e["tid"], e.get("cat", ""), e.get("args", {}).get("chunk", 0), start,
                                 start + e["dur"] / 1e3))
    if not runs or not any(r["spans"] for r in runs.values()):
        raise ValueError(f"{path}: no timeline spans (is it a stream_overlap --timeline file?)")
    return [runs[k] for k in sorted(runs)], trace.get("otherData", {})


def end_of(run):
    return max(s[4] for s in run["spans"])


def render(json_path, png_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    runs, about = load(json_path)
    heights = [len(r["lanes"]) for r in runs]
    fig, axes = plt.subplots(len(runs), 1, sharex=True, figsize=(10, 1.2 + 0.42 * sum(heights)),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    longest = max(end_of(r) for r in runs)
    first_total = end_of(runs[0])
    for ax, run in zip(axes[:, 0], runs):
        # Streams on top, then the engines, each in its own row.
        lanes = sorted(run["lanes"])
        row = {tid: len(lanes) - 1 - i for i, tid in enumerate(lanes)}
        for tid, cat, chunk, start, end in run["spans"]:
            if tid not in row:
                continue
            y = row[tid]
            ax.broken_barh([(start, end - start)], (y - 0.38, 0.76), facecolors=COLOURS.get(cat, "grey"),
                           edgecolor="white", linewidth=0.6)
            if end - start > 0.035 * longest:
                ax.text((start + end) / 2, y, str(chunk), ha="center", va="center", fontsize=7, color="white")
        ax.set_yticks([row[t] for t in lanes])
        ax.set_yticklabels([run["lanes"][t] for t in lanes], fontsize=8)
        engines = [row[t] for t in lanes if t >= ENGINE_LANE_BASE]
        if engines and len(engines) < len(lanes):
            ax.axhline(max(engines) + 0.5, color="0.6", linewidth=0.8)
        total = end_of(run)
        label = run["label"].split(" (")[0]
        speedup = f", {first_total / total:.2f}\u00d7 faster" if run is not runs[0] and total > 0 else ""
        ax.set_title(f"{label}: {total:.2f} ms{speedup}", fontsize=9, loc="left")
        ax.axvline(total, color="0.3", linestyle="--", linewidth=0.8)
        ax.set_ylim(-0.6, len(lanes) - 0.4)
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlim(0, longest * 1.02)
    axes[-1, 0].set_xlabel("time (ms) from the first event; numbers are chunks")
    device = about.get("device", "")
    mb = int(about.get("bytes_each_way", 0)) / 1e6
    fig.suptitle("Where does the time go when copies overlap the kernel?"
                 + (f"\n{device}, {mb:.0f} MB each way" if device else ""), fontsize=10)
    fig.legend(handles=[Patch(color=c, label=k) for k, c in COLOURS.items()], loc="upper right", fontsize=8,
               ncol=3, frameon=False)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(png_path)), exist_ok=True)
    tmp = png_path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, png_path)
    return png_path


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) > 1 and argv[1] in ("-h", "--help") else 2
    src = argv[1]
    out = argv[2] if len(argv) == 3 else os.path.splitext(src)[0] + ".png"
    try:
        print(render(src, out))
    except (OSError, ValueError, KeyError) as e:
        print(f"timeline_plot.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
