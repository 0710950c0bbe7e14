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
from matplotlib.patches import Patch  # noqa: E402

# Filled in per demo; see specs_for(). Keys:
#   run (regex on the run label), name (png file stem), title, x, y, xlabel, ylabel,
#   series: "variant" or a params key (default "variant"); kind: "line" | "bar";
#   logx / logy: bool; where: {column-or-param: regex} row filter; hline: column holding a reference
#   value (its first non-empty value is drawn as a dashed line), hline_label; xlabel_ratio: two columns
#   whose quotient (first row that has both) fills "{ratio}" in xlabel, so device facts come from the data.
_GB = "effective bandwidth (GB/s, read + written)"
SPECS = [
    # 01_memory_model
    dict(run="latency_ladder", name="latency_ladder", title="Latency ladder: one thread chasing pointers",
         x="working_set_bytes", y="cycles_per_load", where={"params": "ws=.*"}, logx=True,
         xlabel="working set (bytes, log scale)", ylabel="cycles per dependent load"),
    dict(run="cache_bandwidth", name="cache_bandwidth", kind="bar", title="Read bandwidth by working set",
         x="variant", y="gb_per_s", xlabel="level the working set fits", ylabel="read bandwidth (GB/s)"),
    dict(run="bandwidth_ceiling(_repeat)?", name=None, kind="bar",
         title="Copy ceilings at 16x L2", x="variant", y="gb_per_s", xlabel="variant", ylabel=_GB),
    # 02_global_memory
    dict(run="misaligned_read", name="misaligned_read", title="Misaligned reads: C[i] = A[i+k] + B[i+k]",
         x="offset", y="gb_per_s", where={"variant": "read_offset|read_offset_unroll4"},
         xlabel="offset k (elements of 4 bytes)", ylabel=_GB),
    dict(run="misaligned_write", name="misaligned_write", title="Misaligned writes: C[i+k] = A[i] + B[i]",
         x="offset", y="gb_per_s", where={"variant": "write_offset|write_offset_unroll4|read_write_offset_unroll4"},
         xlabel="offset k (elements of 4 bytes)", ylabel=_GB),
    dict(run="strided_copy", name="strided_copy", title="Strided copy: bandwidth vs stride", x="stride",
         y="gb_per_s", logx=True, log2x=True, logy=True, xlabel="stride (elements, log2 scale)",
         ylabel=_GB + ", log scale"),
    dict(run="load_caching_dlcm_c[ag]", name=None, title="Load caching hints vs stride", x="stride",
         y="gb_per_s", where={"variant": "stride_.*"}, logx=True, log2x=True, logy=True,
         xlabel="stride (elements, log2 scale)", ylabel=_GB + ", log scale"),
    dict(run="vector_width", name="vector_width", title="Copy with 1- to 16-byte accesses per thread",
         x="width", y="gb_per_s", logx=True, log2x=True, xlabel="bytes per access (log2 scale)", ylabel=_GB),
    dict(run="aos_vs_soa", name="aos_vs_soa", kind="bar", title="Array of structs vs struct of arrays",
         x="variant", y="gb_per_s", xlabel="layout", ylabel="useful bandwidth (GB/s)"),
    dict(run="read_only_path", name="read_only_path", kind="bar", title="Read-only path", x="variant",
         series="per_thread", y="gb_per_s", xlabel="variant / elements per thread", ylabel=_GB),
    dict(run="managed_vs_manual", name="managed_vs_manual", kind="bar", logy=True,
         title="Matrix sum kernel: first vs second launch", x="phase", series="variant", y="median_ms",
         where={"params": "phase=kernel_(first|second)"}, xlabel="launch / strategy",
         ylabel="kernel time (ms, log scale)"),
    dict(run="transpose_global", name="transpose_global", kind="bar", title="Global-memory transposes, 8192 x 8192",
         x="variant", y="gb_per_s", where={"variant": "(?!block_sweep).*"}, hline_ratio=("gb_per_s", "vs_memcpy"),
         hline_label="cudaMemcpy D2D", xlabel="kernel", ylabel=_GB),
    # 03_shared_memory
    dict(run="transpose_shared(_16384)?", name=None, kind="bar", title="Shared-memory transposes",
         x="variant", y="gb_per_s", hline_ratio=("gb_per_s", "vs_memcpy"), hline_label="cudaMemcpy D2D",
         xlabel="kernel", ylabel=_GB),
    dict(run="bank_conflicts", name="bank_conflicts", kind="scatter",
         title="Shared-memory loads: time vs predicted wavefronts per request", x="model_wavefronts_per_req",
         y="median_ms", logx=True, log2x=True, logy=True, xlabel="predicted wavefronts per request (log2 scale)",
         ylabel="kernel time (ms, log scale)"),
    dict(run="reduce_integer", name="reduce_integer", kind="bar", title="Reduction ladder (bytes read once)",
         x="variant", y="gb_per_s", xlabel="kernel", ylabel="bandwidth (GB/s, bytes read)"),
    # 04_transfers
    dict(run="pinned_bandwidth", name="pinned_h2d", title="Host to device bandwidth vs transfer size",
         x="size", y="gb_per_s", where={"dir": "h2d"}, logx=True, xlabel="transfer size (bytes, log scale)",
         ylabel="bandwidth (GB/s, payload)"),
    dict(run="pinned_bandwidth", name="pinned_d2h", title="Device to host bandwidth vs transfer size",
         x="size", y="gb_per_s", where={"dir": "d2h"}, logx=True, xlabel="transfer size (bytes, log scale)",
         ylabel="bandwidth (GB/s, payload)"),
    dict(run="zero_copy", name="zero_copy", title="Zero-copy: mapped host memory vs device memory",
         x="size", y="slowdown", where={"variant": "mapped"}, logx=True, logy=True,
         xlabel="bytes per input array (log scale)", ylabel="mapped / device kernel time (log scale)"),
    dict(run="stream_overlap", name="stream_overlap", title="Copy/compute overlap vs number of streams",
         x="streams", y="median_ms", y_also={"model_ms": "Best Practices model"}, where={"variant": "staged"},
         xlabel="streams", ylabel="total time (ms)"),
    dict(run="managed_memory", name="managed_memory", kind="bar", logy=True,
         title="Managed memory: faults vs prefetch vs advice", x="variant", y="median_ms",
         where={"variant": "(?!managed_variable).*"}, xlabel="strategy", ylabel="round time (ms, log scale)"),
    dict(run="transfer_batching", name="transfer_batching", kind="bar", logy=True,
         title="Many small transfers vs one packed transfer", x="params", series="variant", y="median_ms",
         xlabel="chunk / strategy", ylabel="time (ms, log scale)"),
    # 05_l2_persistence
    dict(run="l2_sliding_window", name="l2_sliding_window", title="L2 access-policy window: speed-up vs persistent size",
         x="persist_mib", y="speedup", xlabel="persistent region (MiB); set-aside {ratio:.4g} MiB",
         xlabel_ratio=("persist_mib", "persist_per_set_aside"),
         ylabel="speed-up over no window"),
    dict(run="l2_competing_streams", name="l2_competing_streams", kind="bar", title="Two streams, each with a window",
         x="variant", y="speedup", xlabel="setting", ylabel="speed-up over no window"),
]


def specs_for(label):
    """Specs that apply to a run. A spec with name=None serves several runs (e.g. the 8192 and 16384
    transposes): its file and title take the run's label."""
    out = []
    for s in SPECS:
        if re.fullmatch(s["run"], label):
            spec = dict(s)
            if spec.get("name") is None:
                spec["name"] = label
                spec["title"] = f"{spec['title']} ({label})"
            out.append(spec)
    return out


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
    kind = spec.get("kind", "line")
    for r in rows:
        y = as_float(value(r, y_key))
        if y is None:
            continue
        s = value(r, series_key) or ""
        x = value(r, x_key) if kind == "bar" else size_value(value(r, x_key))
        if x is None:
            continue
        groups.setdefault(s, []).append((x, y))
    extra = {}
    for col, label in (spec.get("y_also") or {}).items():
        pts = [(size_value(value(r, x_key)), as_float(value(r, col))) for r in rows]
        extra[label] = sorted(p for p in pts if p[0] is not None and p[1] is not None)
    if not groups:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.8), dpi=110)
    series_handles = []
    if spec.get("kind", "line") == "bar":
        labels, heights, colors = [], [], []
        palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        # Several series: the colour says which one (legend), the tick only the x value, so that rotated
        # two-part labels never run into each other.
        by_colour = len(groups) > 1 and series_key != x_key
        for i, (s, pts) in enumerate(groups.items()):
            for x, y in pts:
                labels.append(str(x))
                heights.append(y)
                colors.append(palette[i % len(palette)])
            if by_colour:
                name = str(s) if series_key == "variant" else f"{series_key} {s}"
                series_handles.append(Patch(color=palette[i % len(palette)], label=name))
        ax.bar(range(len(heights)), heights, color=colors)
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    else:
        for s, pts in groups.items():
            pts.sort()
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            if kind == "scatter":
                ax.scatter(xs, ys, s=14, label=str(s) or None)
            else:
                ax.plot(xs, ys, marker="o", markersize=3, label=str(s) or None)
        for label, pts in extra.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="--", color="black", label=label)
        if spec.get("logx"):
            ax.set_xscale("log", base=2 if spec.get("log2x") else 10)
    if spec.get("logy"):
        ax.set_yscale("log")
    ref = None
    if spec.get("hline"):
        ref = next((as_float(value(r, spec["hline"])) for r in rows if as_float(value(r, spec["hline"]))), None)
    if spec.get("hline_ratio"):
        num, den = spec["hline_ratio"]
        ref = next((as_float(value(r, num)) / as_float(value(r, den)) for r in rows
                    if as_float(value(r, num)) and as_float(value(r, den))), None)
    if ref:
        ax.axhline(ref, linestyle="--", color="black", linewidth=1,
                   label=f"{spec.get('hline_label', spec.get('hline', 'reference'))} ({ref:.0f})")
    ax.set_title(spec["title"])
    xlabel = spec["xlabel"]
    if spec.get("xlabel_ratio"):
        num, den = spec["xlabel_ratio"]
        ratio = next((as_float(value(r, num)) / as_float(value(r, den)) for r in rows
                      if as_float(value(r, num)) and as_float(value(r, den))), None)
        xlabel = xlabel.format(ratio=ratio) if ratio else xlabel.split(";")[0]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(spec["ylabel"])
    ax.grid(True, which="both", alpha=0.3)
    handles = series_handles + ax.get_legend_handles_labels()[0]
    if handles:
        ax.legend(handles=handles, fontsize=8)
    fig.tight_layout()
    path = os.path.join(outdir, spec["name"] + ".png")
    fig.savefig(path + ".tmp.png")
    plt.close(fig)
    os.replace(path + ".tmp.png", path)
    return path
