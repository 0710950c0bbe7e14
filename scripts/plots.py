"""Which figure each demo gets, and one generic renderer (matplotlib, no seaborn, PNG).

The specs live with their chapters, one file each (NN_*/plot_specs.py, a list SPECS read when this module
is imported); a demo without a spec shows its table instead of a figure. A spec names the run (CSV file
label), what goes on each axis (a CSV column or a key of the `params` column, e.g. "offset" from
"offset=11"), how rows split into series, and the axis scales.

The figures are meant to carry a demo's lesson on any GPU, so:
  - every title is the question the figure answers;
  - where the lesson is a ratio, y is normalised by a baseline measured in the same run (the copy ceiling,
    cudaMemcpy, the conflict-free pattern, no window, DRAM, one contiguous copy ...), and the axis label
    says what 1 means ("x the copy ceiling"); a dotted grey line marks 1;
  - where the CSV carries a model of that ratio (model_efficiency, model_speedup, model_ms ...), the model
    is drawn dashed: one black line when every series shares it, else one per series in its colour, and a
    dashed tick over each bar in bar charts;
  - log axes where the values span decades, axis labels with units, a legend whenever there is a series
    or a reference line to name.
Then the picture looks the same on any GPU where the lesson holds, and the absolute numbers stay in the
tables of REPORT.md."""
import glob
import importlib.util
import math
import os
import re
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

# Spec keys (all optional except run, name, title, x, xlabel, ylabel):
#   run          regex on the run label; name: png file stem (None: the run label, plus "name_suffix" if
#                given, for a spec serving several runs; "title_by_label" then gives each run's title suffix,
#                else " (label)")
#   kind         "line" | "bar" | "scatter" (a fact demo without a figure shows its table, never a picture of it)
#   x, y         column or params key; y_fn: callable(row) -> value instead of y
#   series       column or params key that splits rows into series (default "variant")
#   where        {column-or-param: regex}: rows plotted (baselines are looked up in every row)
#   panels       bars only: column or params key, or callable(row) -> panel title; the bars split into panels
#                side by side on one y axis (at most eight bars a panel reads at a glance)
#   norm         y divided by a baseline of the same run: {"match": {key: regex} (the baseline row),
#                "col": the baseline's column (default y), "same_x": the baseline row with the same x,
#                "same_series": ... with the same series, "invert": baseline / y (speed-up from times)}
#   models       [{"col" or "fn": callable(row) or "fn_rows": callable(row, rows of the run), "label",
#                  "norm": apply norm too, "style": dash style}]
#   hline_model  callable(rows plotted, all rows of the run) -> (y, label) or None: a model that is one value
#                for the whole panel (a link's theoretical rate), drawn as a dashed horizontal line
#   label_off_model  scatter: name (params) the points more than 25 % off the model
#   ref          (y, label): a dotted grey reference line (1 = the baseline); vline: (x, label)
#   vlines       callable(rows, device header) -> [(x, label)]: marks where a cache size predicts a knee
#   logx, log2x, logy, log2y: log axes; x_bytes: label a log x axis in B / KiB / MiB / GiB
#   ylim         (lo, hi) overrides the automatic range (normalised linear axes start at 0)
#   annotate     format of the value printed on each bar, e.g. "{:.2f}x"
#   tick_extra   callable(row) -> text added under a bar's x tick label
#   xlabel_ratio two columns whose quotient (first row that has both) fills "{ratio}" in xlabel
#   legend_below put the legend under the axes (always for bars and for more than 5 entries)
#   fallback     overrides used when no row has the y column (a run older than it); y columns "vs_*"
#                fall back to gb_per_s by default
# The vocabulary the chapters' spec files share (NN_*/plot_specs.py import it from here).
CEIL = "bandwidth (\u00d7 the copy ceiling of this run)"
CEIL_REF = (1.0, "copy ceiling (1\u00d7)")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _device_of(runs):
    """The device header of any run of the set (all runs of one set share the GPU), or {}."""
    for entry in (runs or {}).values():
        d = ((entry or {}).get("json") or {}).get("device")
        if d:
            return d
    return {}


def number(row, key):
    """A column or params key of a row as a finite float, or None."""
    return as_float(value(row, key))


def sectors(row):
    """A bar's tick text: the model's sectors per load and per store request."""
    ld, st = value(row, "model_ld_sectors_per_req"), value(row, "model_st_sectors_per_req")
    return f"ld {ld} / st {st} sect." if ld and st else ""


def _chapter_specs():
    """Every chapter's specs (the list SPECS of NN_*/plot_specs.py), in chapter order: a demo's figures are
    declared in its chapter, beside its add_demo()."""
    specs = []
    for path in sorted(glob.glob(os.path.join(ROOT, "[0-9][0-9]_*", "plot_specs.py"))):
        chapter = os.path.basename(os.path.dirname(path))
        loader = importlib.util.spec_from_file_location(f"plot_specs_{chapter}", path)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
        specs += module.SPECS
    return specs


def specs_for(label):
    """Specs that apply to a run. A spec with name=None serves several runs (e.g. the 8192 and 16384
    transposes): its file takes the run's label and its title a suffix naming the run."""
    out = []
    for s in SPECS:
        if re.fullmatch(s["run"], label):
            spec = dict(s)
            if spec.get("name") is None:
                spec["name"] = label + spec.get("name_suffix", "")
                suffix = (spec.get("title_by_label") or {}).get(label)
                spec["title"] = spec["title"] + (suffix if suffix is not None else f" ({label})")
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


def _y_raw(spec, row, col=None):
    if col is None and spec.get("y_fn"):
        return as_float(spec["y_fn"](row))
    return as_float(value(row, col or spec["y"]))


def _x_of(spec, row):
    v = value(row, spec["x"])
    return v if spec.get("kind", "line") == "bar" else size_value(v)


def _normaliser(spec, all_rows):
    """A function (row, raw value) -> normalised value, or None where the baseline is missing."""
    norm = spec.get("norm")
    if not norm:
        return lambda row, v: v
    col = norm.get("col") or spec["y"]
    candidates = [r for r in all_rows if selected(r, norm["match"]) and _y_raw(spec, r, col)]
    series_key = spec.get("series", "variant")

    def base_for(row):
        for r in candidates:
            if norm.get("same_x") and _x_of(spec, r) != _x_of(spec, row):
                continue
            if norm.get("same_series") and value(r, series_key) != value(row, series_key):
                continue
            return _y_raw(spec, r, col)
        return None

    def apply(row, v):
        b = base_for(row)
        if v is None or not b:
            return None
        return b / v if norm.get("invert") else v / b
    return apply


def _model_value(spec, model, row, normalise, all_rows=()):
    if model.get("fn_rows"):
        v = as_float(model["fn_rows"](row, all_rows))
    elif model.get("fn"):
        v = as_float(model["fn"](row))
    else:
        v = as_float(value(row, model["col"]))
    return normalise(row, v) if model.get("norm") else v


def _plain_log_ticks(axis, base):
    """Log axes labelled 1, 2, 4 ... (or 0.5) instead of 2^n: easier to read for strides and widths."""
    axis.set_major_locator(LogLocator(base=base))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def bytes_label(v, _=None):
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if v >= size:
            return f"{v / size:.4g} {unit}"
    return f"{v:.4g} B"


def _plain_log10_ticks(axis):
    """Log10 axes labelled 0.05, 0.1, 0.2, 0.5, 1 ... when they span few decades, 10^n otherwise."""
    lo, hi = axis.get_view_interval()
    if lo > 0 and hi / lo < 1e4:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


def _wrap(title, width=70):
    """A title in as few lines as `width` allows, the lines about equally long (no word left alone)."""
    if len(title) <= width:
        return title
    lines = len(textwrap.wrap(title, width))
    even = next(w for w in range(-(-len(title) // lines), width + 1) if len(textwrap.wrap(title, w)) <= lines)
    return "\n".join(textwrap.wrap(title, even))


def _panel_of(spec, row):
    """The panel a bar goes to: spec "panels" is a column or params key, or callable(row) -> panel title."""
    key = spec.get("panels")
    if key is None:
        return None
    return key(row) if callable(key) else value(row, key)


def _draw_bars(spec, fig, axes, panels, bars, colour_of, model_of, model_handles, all_y):
    """Bars (panel, series, x, y, row) on their panels' axes, a dashed model tick over each bar that has one.
    Returns what _annotate_bars needs: per panel, its axes, heights and the models' values over each bar."""
    models = spec.get("models") or []
    styles = ["--", "-.", ":"]
    labels = []
    for b in bars:
        extra = spec["tick_extra"](b[4]) if spec.get("tick_extra") else ""
        labels.append(str(b[2]) + (f"\n{extra}" if extra else ""))
    # Horizontal tick labels while they fit under their bars, else slanted (never overlapping); one rule for
    # every panel.
    widest = max(len(line) for lab in labels for line in lab.split("\n"))
    if widest * 6.6 < fig.get_figwidth() * fig.dpi * 0.85 / len(bars) - 8:
        tick_style = dict(fontsize=8)
    elif any("\n" in lab for lab in labels):
        tick_style = dict(rotation=90, fontsize=7)  # several lines each: upright columns
    else:
        tick_style = dict(rotation=30, ha="right", rotation_mode="anchor", fontsize=8)
    drawn, out = set(), []
    for ax, panel in zip(axes, panels):
        mine = [i for i, b in enumerate(bars) if b[0] == panel]
        ax.bar(range(len(mine)), [bars[i][3] for i in mine], color=[colour_of[bars[i][1]] for i in mine], width=0.7)
        ax.set_xticks(range(len(mine)))
        ax.set_xticklabels([labels[i] for i in mine], **tick_style)
        if len(panels) > 1:
            ax.set_title(str(panel), fontsize=9)
        over = [[] for _ in mine]
        for k, m in enumerate(models):
            style = m.get("style", styles[k % len(styles)])
            for j, i in enumerate(mine):
                v = model_of(m, bars[i][4])
                if v is not None:
                    ax.plot([j - 0.42, j + 0.42], [v, v], linestyle=style, color="black", linewidth=1.6)
                    all_y.append(v)
                    over[j].append(v)
                    drawn.add(k)
        out.append((ax, [bars[i][3] for i in mine], over))
    model_handles += [Line2D([], [], linestyle=m.get("style", styles[k % len(styles)]), color="black", linewidth=1.6,
                             label=m["label"]) for k, m in enumerate(models) if k in drawn]
    return out


def _annotate_bars(spec, bar_values):
    """Values inside the top of their bar (reference lines sit at the top edge), above it where the bar is too
    short to hold them; under a model tick that would cross the value."""
    fmt = spec["annotate"]
    scale = (lambda v: math.log(v)) if spec.get("logy") else (lambda v: v)
    for ax, heights, over in bar_values:
        lo, hi = ax.get_ylim()
        span = scale(hi) - scale(lo)
        for j, h in enumerate(heights):
            inside = (scale(h) - scale(lo)) > 0.14 * span
            crossing = [v for v in over[j] if 0 < v < h and scale(h) - scale(v) < 0.07 * span] if inside else []
            ax.annotate(fmt.format(h), (j, min(crossing + [h])), xytext=(0, -6 if inside else 2),
                        textcoords="offset points", ha="center", va="top" if inside else "bottom", fontsize=7.5,
                        color="white" if inside else "black", fontweight="bold" if inside else "normal")


def render(spec, all_rows, runs, outdir):
    rows = [r for r in all_rows if selected(r, spec.get("where"))]
    kind = spec.get("kind", "line")
    series_key = spec.get("series", "variant")
    normalise = _normaliser(spec, all_rows)
    groups = {}  # series -> [(x, y, row)]
    for r in rows:
        y = normalise(r, _y_raw(spec, r))
        x = _x_of(spec, r)
        if y is None or x is None:
            continue
        groups.setdefault(value(r, series_key) or "", []).append((x, y, r))
    if not groups:
        # A run from before a ratio column existed: plot the absolute figure rather than nothing.
        fallback = spec.get("fallback")
        if fallback is None and str(spec.get("y", "")).startswith("vs_"):
            fallback = {"y": "gb_per_s", "ylabel": f"bandwidth (GB/s; this run has no {spec['y']} column)"}
        if not fallback:
            return None
        dropped = ("models", "ref", "norm", "annotate", "hline_model", "fallback")
        retry = {k: v for k, v in spec.items() if k not in dropped}
        retry.update(fallback, fallback={})
        return render(retry, all_rows, runs, outdir)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {s: palette[i % len(palette)] for i, s in enumerate(groups)}
    # Bars may be split into panels (spec "panels"): side by side, one y axis, each bar as wide as elsewhere.
    bars = [(_panel_of(spec, r), s, x, y, r) for s, pts in groups.items() for x, y, r in pts] if kind == "bar" else []
    panels = list(dict.fromkeys(b[0] for b in bars)) or [None]
    # Bar charts, and plots with a long legend, keep their legend under the axes (bars fill the space a
    # legend would need inside): a constrained layout makes room for it.
    fig, axes = plt.subplots(1, len(panels), sharey=True, squeeze=False, dpi=110,
                             figsize=(max(8.0, 0.62 * len(bars) + 2.0 + 0.5 * (len(panels) - 1)),
                                      5.0 if kind != "bar" else 5.6),
                             gridspec_kw={"width_ratios": [sum(b[0] == p for b in bars) or 1 for p in panels]})
    axes = list(axes[0])
    ax = axes[0]
    handles, model_handles, ref_handles = [], [], []  # legend order: series, models, references
    models = spec.get("models") or []
    styles = ["--", "-.", ":"]
    all_y = [y for pts in groups.values() for _, y, _ in pts]

    if kind == "bar":
        # Colour tells series apart where a panel holds several (a panel per series is named by its title).
        by_colour = series_key != spec["x"] and any(len({b[1] for b in bars if b[0] == p}) > 1 for p in panels)
        if by_colour:
            handles = [Patch(color=colour[s], label=str(s) if series_key == "variant" else f"{series_key} {s}")
                       for s in groups]
        colour_of = {s: colour[s] if by_colour else palette[0] for s in groups}
        bar_values = _draw_bars(spec, fig, axes, panels, bars, colour_of,
                                lambda m, r: _model_value(spec, m, r, normalise, all_rows), model_handles, all_y)
    else:
        for s, pts in groups.items():
            pts.sort(key=lambda p: p[0])
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            label = str(s) or spec.get("y")
            if kind == "scatter":
                i = list(groups).index(s)
                # Hollow large, filled medium, filled small: coinciding points of several series stay visible.
                ax.scatter(xs, ys, s=[60, 32, 12][i % 3], marker="osD^v"[i % 5], edgecolors=colour[s],
                           facecolors="none" if i % 3 == 0 else colour[s], label=label, zorder=3)
            else:
                ax.plot(xs, ys, marker="o", markersize=3, color=colour[s], label=label, zorder=3)
        drawn = []  # (curves, label list, line) of the models drawn so far
        for i, m in enumerate(models):
            style = m.get("style", styles[i % len(styles)])
            curves = {}
            for s, pts in groups.items():
                c = sorted({(x, _model_value(spec, m, r, normalise, all_rows)) for x, _, r in pts}, key=lambda p: p[0])
                c = [(x, round(v, 6)) for x, v in c if v is not None]
                if c:
                    curves[s] = tuple(c)
            if not curves:
                continue
            # A model that predicts exactly what an earlier one does (the DRAM model of a strided copy is
            # its sector model) is not drawn twice.
            if any(d[0] == curves for d in drawn):
                continue
            labels = [m["label"]]
            distinct = {}
            for s, c in curves.items():
                distinct.setdefault(c, []).append(s)
            draw = dict(linestyle=style, linewidth=1.3, zorder=4)
            if kind == "scatter" or len(distinct) == 1:
                by_x = {}
                for x, v in sorted({p for c in curves.values() for p in c}, key=lambda p: p[0]):
                    by_x.setdefault(x, v)
                ax.plot(list(by_x), list(by_x.values()), color="black", **draw)
                all_y.extend(by_x.values())
                suffix = ""
            else:
                for key, members in distinct.items():
                    ax.plot([p[0] for p in key], [p[1] for p in key], color=colour[members[0]], alpha=0.9, **draw)
                    all_y.extend(p[1] for p in key)
                suffix = " (colour: series)"
            handle = Line2D([], [], linestyle=style, color="black", linewidth=1.3)
            drawn.append((curves, labels, handle, suffix))
            if kind == "scatter" and spec.get("label_off_model"):
                # Name the patterns the model gets wrong (more than 25 % off), once per spot.
                spots = {}
                for s_, pts in groups.items():
                    for x, y, r in pts:
                        mv = _model_value(spec, m, r, normalise, all_rows)
                        if mv and abs(y / mv - 1) > 0.25:
                            spots.setdefault((x, round(math.log2(y), 1)), (x, y, set()))[2].add(value(r, "params"))
                merged = []
                for x, y, names in sorted(spots.values(), key=lambda t: (t[0], t[1])):
                    if merged and merged[-1][0] == x and abs(math.log2(y / merged[-1][1])) < 0.4:
                        merged[-1][2].update(names)
                    else:
                        merged.append((x, y, set(names)))
                for x, y, names in merged:
                    ax.annotate(", ".join(sorted(n for n in names if n)), (x, y), xytext=(8, 0),
                                textcoords="offset points", va="center", fontsize=8)
        for _, labels, line, suffix in drawn:
            line.set_label(labels[0] + suffix)
            model_handles.append(line)
        if spec.get("hline_model"):
            lm = spec["hline_model"](rows, all_rows)
            if lm:
                model_handles.append(ax.axhline(lm[0], linestyle="--", color="black", linewidth=1.3, label=lm[1]))
                all_y.append(lm[0])
        if spec.get("logx"):
            base = 2 if spec.get("log2x") else 10
            ax.set_xscale("log", base=base)
            if base == 2:
                _plain_log_ticks(ax.xaxis, 2)
            if spec.get("x_bytes"):
                ax.xaxis.set_major_formatter(FuncFormatter(bytes_label))
                # A few sizes, each a power of two (4 KiB, 16 KiB ...): a tick under every point.
                sizes = sorted({x for pts in groups.values() for x, _, _ in pts})
                if len(sizes) <= 12 and all(x > 0 and math.log2(x).is_integer() for x in sizes):
                    ax.set_xticks(sizes)
        if spec.get("vline"):
            ref_handles.append(ax.axvline(spec["vline"][0], color="grey", linestyle="-.", linewidth=1.0,
                                          label=spec["vline"][1]))
        # Marks where a cache size predicts a knee: (x, label) pairs computed from the run's rows and device.
        for i, (x_mark, text) in enumerate((spec["vlines"](rows, _device_of(runs)) if spec.get("vlines") else [])):
            ref_handles.append(ax.axvline(x_mark, color="grey", linestyle=["-.", "--", ":"][i % 3], linewidth=1.0,
                                          label=text))

    if spec.get("ref"):
        ref_lines = [a.axhline(spec["ref"][0], color="grey", linestyle=":", linewidth=1.4,
                               label=spec["ref"][1] if i == 0 else "_nolegend_", zorder=1) for i, a in enumerate(axes)]
        ref_handles.insert(0, ref_lines[0])
        all_y.append(spec["ref"][0])
    if spec.get("logy"):
        ax.set_yscale("log", base=2 if spec.get("log2y") else 10)
        if spec.get("log2y"):
            _plain_log_ticks(ax.yaxis, 2)
        pos = [y for y in all_y if y and y > 0]
        if pos and kind == "bar":
            ax.set_ylim(min(pos) / 1.6, max(pos) * 2.2)
    elif spec.get("ref") or spec.get("norm") or spec["y"].startswith("vs_") or spec.get("models"):
        # Normalised: start at 0 so that "flat near 1" reads as no cost, and leave room for labels.
        ax.set_ylim(0, max(all_y) * (1.18 if kind == "bar" else 1.12))
    if spec.get("ylim"):
        ax.set_ylim(*spec["ylim"])
    if spec.get("logy") and not spec.get("log2y"):
        _plain_log10_ticks(ax.yaxis)
    if kind == "bar" and spec.get("annotate"):
        _annotate_bars(spec, bar_values)

    title = _wrap(spec["title"], int(12 * fig.get_figwidth()))
    if len(axes) > 1:
        fig.suptitle(title, fontsize=11)
    else:
        ax.set_title(title, fontsize=11)
    xlabel = spec["xlabel"]
    if spec.get("xlabel_ratio"):
        num, den = spec["xlabel_ratio"]
        ratio = next((as_float(value(r, num)) / as_float(value(r, den)) for r in rows
                      if as_float(value(r, num)) and as_float(value(r, den))), None)
        xlabel = xlabel.format(ratio=ratio) if ratio else xlabel.split(";")[0] + ")"
    if len(axes) == 1:
        ax.set_xlabel(xlabel)
    ax.set_ylabel(spec["ylabel"])
    for a in axes:
        a.grid(True, which="major", alpha=0.3)
        if kind != "bar":
            a.grid(True, which="minor", alpha=0.12)
        else:
            a.grid(False, axis="x")
    others = set(map(id, model_handles + ref_handles))
    series = [h for h, lab in zip(*ax.get_legend_handles_labels())
              if id(h) not in others and lab and not lab.startswith("_")]
    legend = handles + series + model_handles + ref_handles
    below = kind == "bar" or len(legend) > 5 or spec.get("legend_below")
    if below:
        fig.set_layout_engine("constrained")
    if len(axes) > 1 and not legend:
        fig.supxlabel(xlabel, fontsize=plt.rcParams["axes.labelsize"])
    if legend and below:
        # Under panels the x label heads the legend: a figure's x label and its legend would share one place.
        fig.legend(handles=legend, fontsize=8, loc="outside lower center", ncol=min(3, len(legend)) if len(legend) > 4
                   else min(2, len(legend)), frameon=False, title=xlabel if len(axes) > 1 else None,
                   title_fontsize=plt.rcParams["axes.labelsize"])
    elif legend:
        ax.legend(handles=legend, fontsize=8, framealpha=0.9)
    if not below:
        fig.tight_layout()
    path = os.path.join(outdir, spec["name"] + ".png")
    fig.savefig(path + ".tmp.png")
    plt.close(fig)
    os.replace(path + ".tmp.png", path)
    return path


# Last, so that every name the chapters' spec files import from here exists when they are read.
SPECS = _chapter_specs()
