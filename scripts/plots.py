"""Which figure each demo gets, and one generic renderer (matplotlib, no seaborn, PNG).

A spec names the run (CSV file label), what goes on each axis (a CSV column or a key of the `params`
column, e.g. "offset" from "offset=11"), how rows split into series, and the axis scales.

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
#   kind         "line" | "bar" | "scatter" | "table" (a fact demo's rows as a picture; "columns":
#                [(header, column or params key)], failed rows in red)
#   x, y         column or params key; y_fn: callable(row) -> value instead of y
#   series       column or params key that splits rows into series (default "variant")
#   where        {column-or-param: regex}: rows plotted (baselines are looked up in every row)
#   norm         y divided by a baseline of the same run: {"match": {key: regex} (the baseline row),
#                "col": the baseline's column (default y), "same_x": the baseline row with the same x,
#                "same_series": ... with the same series, "invert": baseline / y (speed-up from times)}
#   models       [{"col" or "fn": callable(row) or "fn_rows": callable(row, rows of the run), "label",
#                  "norm": apply norm too, "style": dash style}]
#   model_steps  draw the models as steps (a model that jumps between neighbouring x values)
#   model_points draw the models as a mark per point (a model of a discrete parameter, e.g. an offset)
#   link_model   pinned_bandwidth only: the PCIe link's theoretical rate as the model line
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
_CEIL = "bandwidth (\u00d7 the copy ceiling of this run)"


def _device_of(runs):
    """The device header of any run of the set (all runs of one set share the GPU), or {}."""
    for entry in (runs or {}).values():
        d = ((entry or {}).get("json") or {}).get("device")
        if d:
            return d
    return {}


def _cache_marks(rows, device):
    """latency_ladder: the largest working set the demo counts as an L1 hit, and the L2 size."""
    marks = []
    l1 = [as_float(value(r, "working_set_bytes")) for r in rows if value(r, "plateau_by_size") == "L1"]
    l1 = [x for x in l1 if x]
    if l1:
        marks.append((max(l1), f"largest L1-resident working set ({_bytes_label(max(l1), None)})"))
    if device.get("l2_bytes"):
        marks.append((float(device["l2_bytes"]), f"L2 size ({_bytes_label(float(device['l2_bytes']), None)})"))
    return marks


def _f(row, key):
    return as_float(value(row, key))


def _dram_model(row):
    """The DRAM-traffic model of a ratio to the copy ceiling: bytes the kernel asks for / bytes of the
    distinct sectors it touches (model_mb_moved, MB). Equals model_efficiency unless neighbouring warps
    share sectors, as misaligned ones do."""
    b, mb = _f(row, "bytes"), _f(row, "model_mb_moved")
    return b / (mb * 1e6) if b and mb else None


_SECTOR_MODEL = {"col": "model_efficiency", "label": "model: useful / touched sector bytes"}
_DRAM_MODEL = {"fn": _dram_model, "label": "model: bytes asked / bytes DRAM must move", "style": "-."}
_CEIL_REF = (1.0, "copy ceiling (1\u00d7)")


def _misaligned_mapped_model(row, rows):
    """zero_copy: a misaligned warp touches model_ld_sectors_per_req / 4 times the sectors, which over
    PCIe cost time: the aligned mapped kernel's time / model_efficiency, at the same size."""
    if value(row, "variant") != "mapped_offset":
        return None
    eff = _f(row, "model_efficiency")
    aligned = next((_f(r, "ns") for r in rows
                    if value(r, "variant") == "mapped" and value(r, "size") == value(row, "size")), None)
    return aligned / eff if aligned and eff else None


def _sectors(row):
    ld, st = value(row, "model_ld_sectors_per_req"), value(row, "model_st_sectors_per_req")
    return f"ld {ld} / st {st} sect." if ld and st else ""


def _smem_sectors(row):
    out = _sectors(row)
    sw, lw = value(row, "model_smem_st_wf_per_req"), value(row, "model_smem_ld_wf_per_req")
    return out + (f"\nsmem st {sw} / ld {lw} wf" if sw and lw else "")


SPECS = [
    # 01_memory_model
    dict(run="latency_ladder", name="latency_ladder",
         title="How long does one dependent load wait, by where its working set fits?",
         x="working_set_bytes", y="cycles_per_load", where={"params": "ws=.*"}, logx=True, log2x=True, x_bytes=True,
         vlines=_cache_marks,
         xlabel="working set (log scale)", ylabel="SM cycles per dependent load"),
    dict(run="cache_bandwidth", name="cache_bandwidth", kind="bar",
         title="How much faster do L2 and L1 serve reads than DRAM?",
         x="variant", y="gb_per_s", norm={"match": {"variant": "dram"}}, ref=(1.0, "DRAM read bandwidth (1\u00d7)"),
         annotate="{:.2f}\u00d7", tick_extra=lambda r: value(r, "params") or "",
         xlabel="level the working set fits", ylabel="read bandwidth (\u00d7 DRAM in this run)"),
    dict(run="bandwidth_ceiling(_repeat)?", name=None, kind="bar",
         title="Which copy kernel reaches the cudaMemcpy ceiling?",
         title_by_label={"bandwidth_ceiling": "", "bandwidth_ceiling_repeat": " (second run)"},
         x="variant", y="vs_memcpy", ref=(1.0, "cudaMemcpy D2D (1\u00d7)"), annotate="{:.2f}\u00d7",
         xlabel="copy", ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
    dict(run="stream_ordered_alloc", name="stream_ordered_alloc", logy=True, logx=True, log2x=True, x_bytes=True,
         title="What does an allocate-free cycle cost from a pool, against cudaMalloc + cudaFree?",
         x="size", y="us_per_cycle", where={"variant": "async_.*"},
         norm={"match": {"variant": "malloc_free"}, "same_x": True}, ref=(1.0, "cudaMalloc + cudaFree (1\u00d7)"),
         xlabel="allocation size (log2 scale)", ylabel="time per cycle (\u00d7 cudaMalloc + cudaFree, log scale)"),
    # Weak outcomes are counts that are often zero, which a log-scale bar cannot draw: a table instead.
    dict(run="weak_ordering", name="weak_ordering", kind="table",
         title="Between two blocks, which orderings break, and which does the memory model forbid to break?",
         columns=[("variant", "variant"), ("order", "order"), ("scope", "scope"),
                  ("model forbids weak", "model_forbids_weak"), ("trials", "trials"), ("weak outcomes", "weak"),
                  ("weak per million", "weak_per_million"), ("pairs on one SM", "pairs_same_sm"),
                  ("verified", "verified")]),
    dict(run="vmm_growth", name="vmm_growth", logy=True, logx=True, log2x=True, x_bytes=True,
         title="Does one growth step get dearer as the buffer grows, when it maps memory or when it copies?",
         x="size", y="us_per_step", norm={"match": {"variant": "vmm_grow"}},
         ref=(1.0, "the first mapping step (1\u00d7)"),
         xlabel="buffer size after the step (log2 scale)",
         ylabel="time per growth step (\u00d7 the first mapping step, log scale)"),
    dict(run="global_variable", name="global_variable", kind="table",
         title="Does the host reach each __device__ and __constant__ symbol the way the kernel sees it?",
         columns=[("route", "variant"), ("symbol", "params"), ("value", "value"), ("expected", "expected"),
                  ("size (bytes)", "symbol_size_bytes"), ("verified", "verified")]),
    dict(run="memory_hierarchy", name="memory_hierarchy", kind="bar", logy=True,
         title="How large is each memory space, per block, per SM and for the whole GPU?",
         x="params", y="value",
         where={"variant": "device_facts", "unit": "bytes",
                "params": "shared_per_block|shared_per_block_optin|shared_per_sm|unified_l1_shared_per_sm|"
                          "l1_at_max_l1_carveout|constant_memory|l2_bytes|global_memory"},
         xlabel="what cudaGetDeviceProperties and the tuning guide say", ylabel="bytes (log scale)"),
    dict(run="constant_memory", name="constant_memory", kind="bar", logy=True,
         title="When does constant memory serialize a warp?",
         x="variant", y="median_ms", norm={"match": {"variant": "constant_uniform"}},
         ref=(1.0, "__constant__, one address per warp (1\u00d7)"), annotate="{:.2g}\u00d7",
         xlabel="where the coefficients come from, and how many addresses a warp asks for",
         ylabel="time (\u00d7 the uniform constant read, log scale)"),
    dict(run="registers_local", name="registers_local", kind="bar", logy=True,
         title="What does it cost when an array leaves the registers?",
         x="variant", y="median_ms", norm={"match": {"variant": "registers"}},
         ref=(1.0, "the array in registers (1\u00d7)"), annotate="{:.3g}\u00d7",
         xlabel="how the array is kept", ylabel="time (\u00d7 the array in registers, log scale)"),
    dict(run="shared_carveout", name="shared_carveout", kind="bar",
         title="Does the carveout or the cache config change how fast L1 serves a 64 KiB working set?",
         x="params", y="gb_per_s", where={"variant": "carveout_l1_capacity|cache_config_legacy"},
         norm={"match": {"params": "carveout=0"}}, ref=(1.0, "carveout 0: the most L1 (1\u00d7)"),
         annotate="{:.2f}\u00d7", xlabel="setting", ylabel="read bandwidth (\u00d7 carveout 0)"),
    dict(run="pitched_memory", name="pitched_memory", kind="bar",
         title="What does cudaMallocPitch padding buy for rows of 4099 floats?",
         x="variant", y="gb_per_s", where={"variant": "pitched_2d|unpadded_2d|malloc3d"},
         norm={"match": {"variant": "pitched_2d"}}, ref=(1.0, "pitched rows (1\u00d7)"), annotate="{:.3f}\u00d7",
         xlabel="layout", ylabel="bandwidth (\u00d7 the pitched layout)"),
    dict(run="texture_path", name="texture_path", kind="bar",
         title="Does the texture path read a 2-D neighbourhood faster than plain loads?",
         x="variant", y="median_ms", norm={"match": {"variant": "global_pitched"}},
         ref=(1.0, "plain loads from pitched memory (1\u00d7)"), annotate="{:.2f}\u00d7",
         xlabel="path", ylabel="time (\u00d7 plain loads)"),
    # 02_global_memory
    dict(run="misaligned_read", name="misaligned_read",
         title="Does a misaligned read cost bandwidth?  C[i] = A[i+k] + B[i+k]",
         x="offset", y="vs_ceiling", where={"variant": "read_offset|read_offset_unroll4"},
         models=[_SECTOR_MODEL, _DRAM_MODEL], model_points=True, ref=_CEIL_REF,
         xlabel="offset k (elements of 4 bytes)", ylabel=_CEIL),
    dict(run="misaligned_write", name="misaligned_write",
         title="Does a misaligned write cost bandwidth?  C[i+k] = A[i] + B[i]",
         x="offset", y="vs_ceiling", where={"variant": "write_offset|write_offset_unroll4|read_write_offset_unroll4"},
         models=[_SECTOR_MODEL, _DRAM_MODEL], model_points=True, ref=_CEIL_REF,
         xlabel="offset k (elements of 4 bytes)", ylabel=_CEIL),
    dict(run="strided_copy", name="strided_copy", title="How fast does a strided copy fall with the stride?",
         x="stride", y="vs_ceiling", logx=True, log2x=True, logy=True, models=[_SECTOR_MODEL, _DRAM_MODEL],
         ref=_CEIL_REF, xlabel="stride (elements, log2 scale)", ylabel=_CEIL + ", log scale"),
    dict(run="load_caching_dlcm_c[ag]", name=None,
         title="Does a load caching hint change strided-read bandwidth?",
         title_by_label={"load_caching_dlcm_ca": " (-dlcm=ca)", "load_caching_dlcm_cg": " (-dlcm=cg)"},
         x="stride", y="vs_ceiling", where={"variant": "stride_.*"}, logx=True, log2x=True, logy=True,
         models=[_SECTOR_MODEL, _DRAM_MODEL], ref=_CEIL_REF,
         xlabel="stride (4-byte elements, log2 scale)", ylabel=_CEIL + ", log scale"),
    dict(run="vector_width", name="vector_width",
         title="How wide must each thread's access be to reach the copy ceiling?",
         x="width", y="vs_ceiling", logx=True, log2x=True, models=[_SECTOR_MODEL], ref=_CEIL_REF,
         xlabel="bytes per access (log2 scale)", ylabel=_CEIL),
    dict(run="aos_vs_soa", name="aos_vs_soa", kind="bar",
         title="Does an array of structs cost bandwidth against a struct of arrays?",
         x="variant", y="vs_ceiling", models=[_SECTOR_MODEL, _DRAM_MODEL], ref=_CEIL_REF, annotate="{:.2f}",
         xlabel="layout", ylabel="useful bandwidth (\u00d7 the copy ceiling of this run)"),
    dict(run="read_only_path", name="read_only_path", kind="bar",
         title="Does the read-only path (__ldg, const __restrict__) speed up a stream?",
         x="variant", series="per_thread", y="vs_ceiling", models=[_SECTOR_MODEL], ref=_CEIL_REF,
         annotate="{:.2f}", xlabel="loads / elements per thread", ylabel=_CEIL),
    dict(run="managed_vs_manual", name="managed_vs_manual", kind="bar", logy=True,
         title="What does the first kernel on managed memory pay for page faults?",
         x="phase", series="variant", y="median_ms", where={"params": "phase=kernel_(first|second)"},
         norm={"match": {"variant": "manual", "params": "phase=kernel"}},
         ref=(1.0, "kernel on explicitly copied data (1\u00d7)"), annotate="{:.3g}\u00d7",
         xlabel="launch / strategy", ylabel="kernel time (\u00d7 the explicit-copy kernel, log scale)"),
    dict(run="compressible_memory", name="compressible_memory", kind="bar",
         title="How much faster do zeros and constants move through compressible memory?",
         x="data", series="variant", y="vs_plain", where={"variant": "compressible_.*"},
         ref=(1.0, "the same kernel and data in plain memory (1\u00d7)"), annotate="{:.2f}\u00d7",
         xlabel="data in the buffers", ylabel="bandwidth (\u00d7 plain memory, same kernel and data)"),
    dict(run="transpose_global", name="transpose_global", kind="bar",
         title="How close does a global-memory transpose get to cudaMemcpy?",
         x="variant", y="vs_memcpy", where={"variant": "(?!block_sweep).*"}, ref=(1.0, "cudaMemcpy D2D (1\u00d7)"),
         tick_extra=_sectors, annotate="{:.2f}", xlabel="kernel (model sectors per load / store request)",
         ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
    # 03_shared_memory
    # The ladder a learner climbs, eight kernels; the performance variants get a panel of their own.
    dict(run="transpose_shared(_16384)?", name=None,
         title="How close does a shared-memory transpose get to cudaMemcpy?",
         title_by_label={"transpose_shared": " (8192 \u00d7 8192)", "transpose_shared_16384": " (16384 \u00d7 16384)"},
         kind="bar", x="variant", y="vs_memcpy", ref=(1.0, "cudaMemcpy D2D (1\u00d7)"), tick_extra=_smem_sectors,
         where={"variant": "naive_row|naive_col|tiled_unpadded|tiled_padded|tiled_multi|fast_64x8|"
                           "tile64_vec4_3pb_col_pf"},
         annotate="{:.2f}", xlabel="kernel (model sectors and shared-memory wavefronts per request)",
         ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
    dict(run="transpose_shared(_16384)?", name=None, name_suffix="_fast",
         title="How close do the fastest transposes get to cudaMemcpy?",
         title_by_label={"transpose_shared": " (8192 \u00d7 8192)", "transpose_shared_16384": " (16384 \u00d7 16384)"},
         kind="bar", x="variant", y="vs_memcpy", ref=(1.0, "cudaMemcpy D2D (1\u00d7)"),
         where={"variant": "fast_64x8_col|tile64_vec4|tile64_vec4_3pb|tile64_vec4_3pb_col|tile64_vec4_3pb_col_pf|"
                           "tile64_async|tma_64x64|tma_64x64_col"},
         annotate="{:.3f}", xlabel="kernel", ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
    dict(run="bank_conflicts", name="bank_conflicts", kind="scatter", title="How much do bank conflicts cost?",
         x="model_conflict_degree", y="vs_conflict_free", logx=True, log2x=True, logy=True, log2y=True,
         models=[{"col": "model_conflict_degree", "label": "model: time \u221d wavefronts (y = x)"}],
         label_off_model=True,
         fallback={"x": "stride", "y": "median_ms", "log2y": False, "kind": "line",
                   "xlabel": "stride (elements, log2 scale)", "ylabel": "kernel time (ms, log scale)"},
         xlabel="conflict degree the model predicts (wavefronts / conflict-free minimum, log2 scale)",
         ylabel="load time (\u00d7 stride 1 of the same width, log2 scale)"),
    dict(run="reduce_integer", name="reduce_integer", kind="bar",
         title="Which step of the reduction ladder reaches the copy ceiling?",
         x="variant", y="vs_ceiling", ref=_CEIL_REF, annotate="{:.2f}", xlabel="kernel",
         ylabel="bandwidth, bytes read once (\u00d7 the copy ceiling of this run)"),
    dict(run="smem_square", name="smem_square", kind="bar", logy=True,
         title="What does reading or writing a column of a 32x32 shared tile cost, and does one pad word fix it?",
         x="params", series="variant", y="vs_row_row", where={"variant": "static|static_pad"},
         ref=(1.0, "row write, row read (1\u00d7)"), annotate="{:.3g}\u00d7",
         xlabel="access order", ylabel="time (\u00d7 row write and row read, log scale)"),
    dict(run="smem_rectangle", name="smem_rectangle", kind="bar", logy=True,
         title="How many pad words does a 32x16 shared tile need?",
         x="params", y="vs_row_row", where={"variant": "static"},
         ref=(1.0, "row write, row read (1\u00d7)"), annotate="{:.3g}\u00d7",
         xlabel="access order and padding", ylabel="time (\u00d7 row write and row read, log scale)"),
    dict(run="bank_width", name="bank_width", kind="bar", logy=True,
         title="How many passes does a warp's shared-memory access take, by width and stride?",
         x="params", y="median_ms", where={"variant": "access_rules"},
         norm={"match": {"params": "w4 stride=1"}}, ref=(1.0, "4-byte words, stride 1 (1\u00d7)"),
         models=[{"col": "model_wavefronts_per_req", "label": "model: wavefronts per request"}],
         xlabel="access width and pattern", ylabel="time (\u00d7 4-byte stride 1, log scale)"),
    dict(run="smem_vs_global", name="smem_vs_global", kind="bar", logy=True,
         title="How far is each level from shared memory in latency?",
         x="params", y="cycles_vs_shared", where={"variant": "latency"},
         ref=(1.0, "shared memory (1\u00d7)"), annotate="{:.3g}\u00d7",
         xlabel="where the pointer chain lives", ylabel="cycles per dependent load (\u00d7 shared, log scale)"),
    dict(run="sync_fences", name="sync_fences", kind="table",
         title="Do barriers, votes and fences give every block the answer the rules promise?",
         columns=[("variant", "variant"), ("setting", "params"), ("blocks", "blocks"),
                  ("blocks: all pass", "blocks_all_pass"), ("blocks: any pass", "blocks_any_pass"),
                  ("runs", "runs"), ("wrong runs", "wrong_runs"), ("verified", "verified")]),
    dict(run="distributed_shared", name="distributed_shared", kind="bar",
         title="How much faster is a histogram in shared memory, split over a cluster, than global atomics?",
         x="params", y="vs_global", where={"variant": "histogram_(block|cluster)"},
         ref=(1.0, "global atomics, same bins (1\u00d7)"), annotate="{:.2f}\u00d7",
         xlabel="bins and blocks per cluster (65536 bins do not fit in one block)",
         ylabel="speed-up (\u00d7 global atomics on the same bins, this run)"),
    dict(run="async_pipeline", name="async_pipeline", kind="bar",
         title="Does a multi-stage memcpy_async pipeline beat the plain tile copy, at one block per SM and at many?",
         x="occupancy", series="variant", y="vs_sync", where={"variant": "async_.*"},
         ref=(1.0, "synchronous copy, same occupancy (1\u00d7)"), annotate="{:.2f}\u00d7",
         xlabel="occupancy (low: one block per SM; high: as many as four stages fit)",
         ylabel="bandwidth (\u00d7 the synchronous copy at the same occupancy, this run)"),
    dict(run="tma_copy", name="tma_copy", kind="bar",
         title="How large must a TMA bulk request be to copy as fast as cudaMemcpy?",
         x="variant", y="vs_memcpy", ref=(1.0, "cudaMemcpy D2D (1\u00d7)"), annotate="{:.2f}",
         xlabel="copy (bulk_N: 1D bulk requests of N bytes, the same 64 KiB ring per SM; _static: split in advance;\n"
                "cp_async_16k: bulk_16k's ring filled and emptied by 256 threads;\n"
                "bulk_16k_grid: one request per block, at most 3 blocks per SM, no ring; _full: as many as fit)",
         ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
    # 04_transfers
    dict(run="pinned_bandwidth", name="pinned_h2d",
         title="How big must a host-to-device copy be to fill the link? Does pinning matter?",
         x="size", y="vs_best_pinned", where={"dir": "h2d"}, logx=True,
         link_model=True,
         ref=(1.0, "best pinned copy of this run (1\u00d7)"), xlabel="transfer size (bytes, log scale)",
         ylabel="bandwidth (\u00d7 the best pinned H2D copy of this run)"),
    dict(run="pinned_bandwidth", name="pinned_d2h",
         title="How big must a device-to-host copy be to fill the link? Does pinning matter?",
         x="size", y="vs_best_pinned", where={"dir": "d2h"}, logx=True, link_model=True,
         ref=(1.0, "best pinned copy of this run (1\u00d7)"), xlabel="transfer size (bytes, log scale)",
         ylabel="bandwidth (\u00d7 the best pinned D2H copy of this run)"),
    dict(run="zero_copy", name="zero_copy",
         title="How much slower is reading mapped host memory than device memory, or copying first?",
         x="size", y="ns", where={"variant": "mapped|mapped_offset|copy_then_compute"}, logx=True, logy=True,
         norm={"match": {"variant": "device"}, "same_x": True}, ref=(1.0, "kernel on device memory (1\u00d7)"),
         models=[{"fn_rows": _misaligned_mapped_model, "norm": True,
                  "label": "model for mapped_offset: mapped / model_efficiency (5 sectors for 4)"}],
         xlabel="bytes per input array (log scale)",
         ylabel="time (\u00d7 the kernel reading device memory, log scale)"),
    dict(run="stream_overlap", name="stream_overlap",
         title="How much of the copy time do more streams hide?",
         x="streams", y="median_ms", where={"variant": "staged"},
         norm={"match": {"variant": "sequential", "params": "step=all"}, "invert": True},
         models=[{"col": "model_ms", "norm": True, "label": "Best Practices model: tE + tT/n"}],
         ref=(1.0, "copy, kernel, copy in one stream (1\u00d7)"),
         xlabel="streams (chunks)", ylabel="speed-up (\u00d7 the sequential time of this run)"),
    dict(run="managed_memory", name="managed_memory", kind="bar", logy=True,
         title="What does handing managed memory between CPU and GPU cost?",
         x="variant", y="median_ms", where={"variant": "(?!managed_variable).*"},
         norm={"match": {"variant": "explicit_copy"}}, ref=(1.0, "explicit cudaMemcpy round (1\u00d7)"),
         annotate="{:.2g}\u00d7", xlabel="strategy (resident: the GPU's kernel alone, the floor)",
         ylabel="round time (\u00d7 the explicit-copy round, log scale)"),
    dict(run="transfer_batching", name="transfer_batching",
         title="How much do many small copies cost against one copy of the same bytes?",
         x="chunk", y="median_ms", where={"variant": "(?!one_contiguous).*"}, logx=True, log2x=True, logy=True,
         norm={"match": {"variant": "one_contiguous"}}, ref=(1.0, "one contiguous cudaMemcpy (1\u00d7)"),
         x_bytes=True, xlabel="chunk size (log2 scale)", ylabel="time (\u00d7 one contiguous copy, log scale)"),
    dict(run="uva_pointers", name="uva_pointers", kind="table",
         title="What does cudaPointerGetAttributes say about each kind of pointer?",
         where={"variant": "pointer_attributes"},
         columns=[("allocated with", "params"), ("type", "type"), ("expected type", "expected_type"),
                  ("device pointer", "device_pointer"), ("host pointer", "host_pointer"), ("verified", "verified")]),
    dict(run="peer_to_peer", name="peer_to_peer", kind="bar", logy=True,
         title="How fast does one GPU reach the other's memory, against its own?",
         x="params", series="variant", y="gb_per_s", where={"variant": "memcpy_peer|kernel_peer_access"},
         norm={"match": {"params": "read=local write=local"}}, ref=(1.0, "a kernel on its own memory (1\u00d7)"),
         annotate="{:.2g}\u00d7", xlabel="copy or kernel, direction", ylabel="bandwidth (\u00d7 local memory, log scale)"),
    # 05_l2_persistence
    dict(run="l2_window_api", name="l2_window_api", kind="bar",
         title="Does it matter where you attach the L2 persistence window?",
         x="variant", y="speedup", where={"variant": "(?!no_window$).*"},
         ref=(1.0, "no window, no set-aside (1\u00d7)"), annotate="{:.2f}\u00d7",
         models=[{"col": "model_speedup", "label": "DRAM-traffic model (an upper bound)"}],
         xlabel="where the window is set (no_window_set_aside: the set-aside alone)",
         ylabel="speed-up (\u00d7 no window, no set-aside)"),
    dict(run="l2_reset", name="l2_reset", kind="bar",
         title="Do persisting lines left in L2 slow a later kernel until they are reset?",
         x="variant", y="vs_clean", where={"variant": "(?!state_restored).*"},
         ref=(1.0, "clean L2 (1\u00d7)"), annotate="{:.3f}\u00d7",
         xlabel="state of the L2 before the kernel", ylabel="bandwidth (\u00d7 a clean L2)"),
    dict(run="l2_facts", name="l2_facts", kind="bar",
         title="How much of the L2 may persist, and how large may one window be?",
         x="params", y="value_mib", where={"variant": "properties|set_aside_limit",
                                           "params": "l2CacheSize|persistingL2CacheMaxSize|accessPolicyMaxWindowSize|limit_at_start|limit_after_set_max"},
         annotate="{:.3g}", xlabel="property", ylabel="MiB"),
    dict(run="l2_set_aside_cost", name="l2_set_aside_cost",
         title="What does a persisting set-aside cost the accesses that never persist?",
         x="set_aside_per_max", y="vs_no_set_aside",
         ref=(1.0, "the same workload with no set-aside (1\u00d7)"),
         xlabel="set-aside granted (\u00d7 persistingL2CacheMaxSize)",
         ylabel="speed (\u00d7 the same workload with no set-aside)"),
    dict(run="l2_sliding_window", name="l2_sliding_window",
         title="When does an L2 persistence window pay off against no window and no set-aside?",
         x="persist_per_max", y="speedup", where={"variant": "(?!no_window$).*"},
         models=[{"col": "model_speedup", "label": "DRAM-traffic model (upper bound)"}],
         ref=(1.0, "no window, no set-aside (1\u00d7)"), vline=(1.0, "table = largest set-aside"),
         xlabel="persistent table (\u00d7 the largest set-aside; {ratio:.4g} MiB here)",
         xlabel_ratio=("persist_mib", "persist_per_max"),
         ylabel="speed-up (\u00d7 no window, no set-aside)",
         # A run made before the no-set-aside baseline: its speed-ups are against no window under the set-aside.
         fallback={"x": "persist_per_set_aside", "xlabel_ratio": ("persist_mib", "persist_per_set_aside"),
                   "xlabel": "persistent table (\u00d7 the L2 set-aside; {ratio:.4g} MiB here)",
                   "ylabel": "speed-up (\u00d7 no window under the same set-aside: an older baseline)"}),
    dict(run="l2_competing_streams", name="l2_competing_streams", kind="bar",
         title="Two streams' windows share one set-aside: what do they buy against no set-aside?",
         x="variant", y="speedup", where={"variant": "(?!no_window$).*"},
         models=[{"col": "model_speedup", "label": "model: DRAM bytes without / with (an upper bound)"}],
         ref=(1.0, "no window, no set-aside (1\u00d7)"), annotate="{:.2f}\u00d7",
         tick_extra=lambda r: f"hitRatio {value(r, 'hit_ratio')} each" if _f(r, "hit_ratio") else "set-aside, no window",
         xlabel="windows (both streams)", ylabel="speed-up (\u00d7 the pair with no window, no set-aside)"),
]


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


def _link_model(rows, all_rows):
    """pinned_bandwidth: the PCIe link's theoretical rate, in units of the best pinned copy of the same
    direction (gb_per_s / vs_best_pinned of any row): where a perfect link would put the curves."""
    link = next((as_float(value(r, "link_gb_per_s")) for r in all_rows
                 if as_float(value(r, "link_gb_per_s")) and value(r, "readable") not in ("0", "false")), None)
    best = next((as_float(value(r, "gb_per_s")) / as_float(value(r, "vs_best_pinned")) for r in rows
                 if as_float(value(r, "gb_per_s")) and as_float(value(r, "vs_best_pinned"))), None)
    if not link or not best:
        return None
    gen = next((value(r, "current_gt_per_s") for r in all_rows if value(r, "current_gt_per_s")), None)
    width = next((value(r, "current_width") for r in all_rows if value(r, "current_width")), None)
    what = f"{float(gen):g} GT/s x{width}, " if gen and width else ""
    return link / best, f"model: the PCIe link's theoretical rate ({what}{link:.0f} GB/s)"


def _plain_log_ticks(axis, base):
    """Log axes labelled 1, 2, 4 ... (or 0.5) instead of 2^n: easier to read for strides and widths."""
    axis.set_major_locator(LogLocator(base=base))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _bytes_label(v, _=None):
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if v >= size:
            return f"{v / size:g} {unit}"
    return f"{v:g} B"


def _plain_log10_ticks(axis):
    """Log10 axes labelled 0.05, 0.1, 0.2, 0.5, 1 ... when they span few decades, 10^n otherwise."""
    lo, hi = axis.get_view_interval()
    if lo > 0 and hi / lo < 1e4:
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


def _wrap(title, width=70):
    return "\n".join(textwrap.wrap(title, width)) if len(title) > width else title


def _render_table(spec, rows, outdir):
    """A fact demo's rows as a picture: the columns the lesson needs, a row per fact, failed checks in red."""
    cols = spec["columns"]
    cells = [[str(value(r, key) or "") for _, key in cols] for r in rows]
    if not cells:
        return None
    fig_h = 1.1 + 0.32 * (len(cells) + 1)
    fig, ax = plt.subplots(figsize=(max(8.0, 1.6 * len(cols)), fig_h), dpi=110)
    ax.axis("off")
    table = ax.table(cellText=cells, colLabels=[h for h, _ in cols], loc="center", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.auto_set_column_width(list(range(len(cols))))
    for (i, _), cell in table.get_celld().items():
        if i == 0:
            cell.set_facecolor("#e8e8e8")
            cell.set_text_props(weight="bold")
        elif value(rows[i - 1], "verified") not in ("true", True, "1"):
            cell.set_facecolor("#f4c7c3")
    ax.set_title(_wrap(spec["title"]), fontsize=10)
    fig.tight_layout()
    path = os.path.join(outdir, spec["name"] + ".png")
    fig.savefig(path + ".tmp.png", bbox_inches="tight", pad_inches=0.15)
    plt.close(fig)
    os.replace(path + ".tmp.png", path)
    return path


def render(spec, all_rows, runs, outdir):
    rows = [r for r in all_rows if selected(r, spec.get("where"))]
    kind = spec.get("kind", "line")
    if kind == "table":
        return _render_table(spec, rows, outdir)
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
        dropped = ("models", "ref", "norm", "annotate", "link_model", "fallback")
        retry = {k: v for k, v in spec.items() if k not in dropped}
        retry.update(fallback, fallback={})
        return render(retry, all_rows, runs, outdir)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    colour = {s: palette[i % len(palette)] for i, s in enumerate(groups)}
    n_bars = sum(len(p) for p in groups.values()) if kind == "bar" else 0
    # Bar charts, and plots with a long legend, keep their legend under the axes (bars fill the space a
    # legend would need inside): a constrained layout makes room for it.
    fig, ax = plt.subplots(figsize=(max(8.0, 0.62 * n_bars + 2.0), 5.0 if kind != "bar" else 5.6), dpi=110)
    handles, model_handles, ref_handles = [], [], []  # legend order: series, models, references
    models = spec.get("models") or []
    styles = ["--", "-.", ":"]
    all_y = [y for pts in groups.values() for _, y, _ in pts]

    if kind == "bar":
        labels, heights, colors, bar_rows = [], [], [], []
        by_colour = len(groups) > 1 and series_key != spec["x"]
        for s, pts in groups.items():
            for x, y, r in pts:
                extra = spec["tick_extra"](r) if spec.get("tick_extra") else ""
                labels.append(str(x) + (f"\n{extra}" if extra else ""))
                heights.append(y)
                colors.append(colour[s] if by_colour else palette[0])
                bar_rows.append(r)
            if by_colour:
                name = str(s) if series_key == "variant" else f"{series_key} {s}"
                handles.append(Patch(color=colour[s], label=name))
        xs = range(len(heights))
        ax.bar(xs, heights, color=colors, width=0.7)
        ax.set_xticks(list(xs))
        # Horizontal tick labels while they fit under their bars, else slanted (never overlapping).
        widest = max(len(line) for lab in labels for line in lab.split("\n"))
        if widest * 6.6 < fig.get_figwidth() * fig.dpi * 0.85 / len(labels) - 8:
            ax.set_xticklabels(labels, fontsize=8)
        elif any("\n" in lab for lab in labels):
            ax.set_xticklabels(labels, rotation=90, fontsize=7)  # several lines each: upright columns
        else:
            ax.set_xticklabels(labels, rotation=30, ha="right", rotation_mode="anchor", fontsize=8)
        for i, m in enumerate(models):
            vals = [_model_value(spec, m, r, normalise, all_rows) for r in bar_rows]
            if not any(v is not None for v in vals):
                continue
            style = m.get("style", styles[i % len(styles)])
            for j, v in enumerate(vals):
                if v is not None:
                    ax.plot([j - 0.42, j + 0.42], [v, v], linestyle=style, color="black", linewidth=1.6)
                    all_y.append(v)
            model_handles.append(Line2D([], [], linestyle=style, color="black", linewidth=1.6, label=m["label"]))
        if spec.get("annotate"):
            bar_values = (heights, spec["annotate"])
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
            draw = dict(linestyle=style, linewidth=1.3, zorder=4,
                        drawstyle="steps-mid" if spec.get("model_steps") else "default")
            if spec.get("model_points"):
                # A model of a discrete parameter (an offset) is a value per point, not a curve between them.
                draw = [dict(marker="_", markersize=9, markeredgewidth=1.6),
                        dict(marker="o", markersize=4, markerfacecolor="none", markeredgewidth=1.0)][len(drawn) % 2]
                draw.update(linestyle="none", zorder=4)
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
            handle = (Line2D([], [], color="black", **{k: v for k, v in draw.items() if k != "zorder"})
                      if spec.get("model_points") else
                      Line2D([], [], linestyle=style, color="black", linewidth=1.3))
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
        if spec.get("link_model"):
            lm = _link_model(rows, all_rows)
            if lm:
                model_handles.append(ax.axhline(lm[0], linestyle="--", color="black", linewidth=1.3, label=lm[1]))
                all_y.append(lm[0])
        if spec.get("logx"):
            base = 2 if spec.get("log2x") else 10
            ax.set_xscale("log", base=base)
            if base == 2:
                _plain_log_ticks(ax.xaxis, 2)
            if spec.get("x_bytes"):
                ax.xaxis.set_major_formatter(FuncFormatter(_bytes_label))
        if spec.get("vline"):
            ref_handles.append(ax.axvline(spec["vline"][0], color="grey", linestyle="-.", linewidth=1.0,
                                          label=spec["vline"][1]))
        # Marks where a cache size predicts a knee: (x, label) pairs computed from the run's rows and device.
        for i, (x_mark, text) in enumerate((spec["vlines"](rows, _device_of(runs)) if spec.get("vlines") else [])):
            ref_handles.append(ax.axvline(x_mark, color="grey", linestyle=["-.", "--", ":"][i % 3], linewidth=1.0,
                                          label=text))

    if spec.get("ref"):
        ref_handles.insert(0, ax.axhline(spec["ref"][0], color="grey", linestyle=":", linewidth=1.4,
                                         label=spec["ref"][1], zorder=1))
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
        # Values inside the top of their bar (model ticks and reference lines sit at the top edge),
        # above it where the bar is too short to hold them.
        heights, fmt = bar_values
        lo, hi = ax.get_ylim()
        scale = (lambda v: math.log(v)) if spec.get("logy") else (lambda v: v)
        for j, h in enumerate(heights):
            inside = (scale(h) - scale(lo)) > 0.14 * (scale(hi) - scale(lo))
            ax.annotate(fmt.format(h), (j, h), xytext=(0, -6 if inside else 2), textcoords="offset points",
                        ha="center", va="top" if inside else "bottom", fontsize=7.5,
                        color="white" if inside else "black", fontweight="bold" if inside else "normal")

    ax.set_title(_wrap(spec["title"], int(12 * fig.get_figwidth())), fontsize=11)
    xlabel = spec["xlabel"]
    if spec.get("xlabel_ratio"):
        num, den = spec["xlabel_ratio"]
        ratio = next((as_float(value(r, num)) / as_float(value(r, den)) for r in rows
                      if as_float(value(r, num)) and as_float(value(r, den))), None)
        xlabel = xlabel.format(ratio=ratio) if ratio else xlabel.split(";")[0] + ")"
    ax.set_xlabel(xlabel)
    ax.set_ylabel(spec["ylabel"])
    ax.grid(True, which="major", alpha=0.3)
    if kind != "bar":
        ax.grid(True, which="minor", alpha=0.12)
    else:
        ax.grid(False, axis="x")
    others = set(map(id, model_handles + ref_handles))
    series = [h for h, lab in zip(*ax.get_legend_handles_labels())
              if id(h) not in others and lab and not lab.startswith("_")]
    legend = handles + series + model_handles + ref_handles
    below = kind == "bar" or len(legend) > 5 or spec.get("legend_below")
    if below:
        fig.set_layout_engine("constrained")
    if legend and below:
        fig.legend(handles=legend, fontsize=8, loc="outside lower center", ncol=min(3, len(legend)) if len(legend) > 4
                   else min(2, len(legend)), frameon=False)
    elif legend:
        ax.legend(handles=legend, fontsize=8, framealpha=0.9)
    if not below:
        fig.tight_layout()
    path = os.path.join(outdir, spec["name"] + ".png")
    fig.savefig(path + ".tmp.png")
    plt.close(fig)
    os.replace(path + ".tmp.png", path)
    return path
