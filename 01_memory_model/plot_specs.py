"""The figures of chapter 01: one spec per figure, read by scripts/plots.py (its comment lists the keys).
A demo with no spec here shows its table instead of a figure."""
from plots import as_float, bytes_label, value


def _cache_marks(rows, device):
    """latency_ladder: the largest working set the demo counts as an L1 hit, and the L2 size."""
    marks = []
    l1 = [as_float(value(r, "working_set_bytes")) for r in rows if value(r, "plateau_by_size") == "L1"]
    l1 = [x for x in l1 if x]
    if l1:
        marks.append((max(l1), f"largest L1-resident working set ({bytes_label(max(l1))})"))
    if device.get("l2_bytes"):
        marks.append((float(device["l2_bytes"]), f"L2 size ({bytes_label(float(device['l2_bytes']))})"))
    return marks


SPECS = [
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
    dict(run="vmm_growth", name="vmm_growth", logy=True, logx=True, log2x=True, x_bytes=True,
         title="Does one growth step get dearer as the buffer grows, when it maps memory or when it copies?",
         x="size", y="us_per_step", norm={"match": {"variant": "vmm_grow"}},
         ref=(1.0, "the first mapping step (1\u00d7)"),
         xlabel="buffer size after the step (log2 scale)",
         ylabel="time per growth step (\u00d7 the first mapping step, log scale)"),
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
         panels=lambda r: ("carveout (% of the unified storage asked for shared memory)"
                           if value(r, "variant") == "carveout_l1_capacity" else "cudaFuncSetCacheConfig"),
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
]
