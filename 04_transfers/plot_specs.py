"""The figures of chapter 04: one spec per figure, read by scripts/plots.py (its comment lists the keys).
A demo with no spec here shows its table instead of a figure."""
from plots import as_float, number, value


def _misaligned_mapped_model(row, rows):
    """zero_copy: a misaligned warp touches model_ld_sectors_per_req / 4 times the sectors, which over
    PCIe cost time: the aligned mapped kernel's time / model_efficiency, at the same size."""
    if value(row, "variant") != "mapped_offset":
        return None
    eff = number(row, "model_efficiency")
    aligned = next((number(r, "ns") for r in rows
                    if value(r, "variant") == "mapped" and value(r, "size") == value(row, "size")), None)
    return aligned / eff if aligned and eff else None


def pinned_link_model(rows, all_rows):
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


SPECS = [
    dict(run="pinned_bandwidth", name="pinned_h2d",
         title="How big must a host-to-device copy be to fill the link? Does pinning matter?",
         x="size", y="vs_best_pinned", where={"dir": "h2d"}, logx=True, log2x=True, x_bytes=True,
         hline_model=pinned_link_model,
         ref=(1.0, "best pinned copy of this run (1\u00d7)"), xlabel="transfer size (log2 scale)",
         ylabel="bandwidth (\u00d7 the best pinned H2D copy of this run)"),
    dict(run="pinned_bandwidth", name="pinned_d2h",
         title="How big must a device-to-host copy be to fill the link? Does pinning matter?",
         x="size", y="vs_best_pinned", where={"dir": "d2h"}, logx=True, log2x=True, x_bytes=True,
         hline_model=pinned_link_model,
         ref=(1.0, "best pinned copy of this run (1\u00d7)"), xlabel="transfer size (log2 scale)",
         ylabel="bandwidth (\u00d7 the best pinned D2H copy of this run)"),
    dict(run="zero_copy", name="zero_copy",
         title="How much slower is reading mapped host memory than device memory, or copying first?",
         x="size", y="ns", where={"variant": "mapped|mapped_offset|copy_then_compute"}, logx=True, log2x=True,
         x_bytes=True, logy=True,
         norm={"match": {"variant": "device"}, "same_x": True}, ref=(1.0, "kernel on device memory (1\u00d7)"),
         models=[{"fn_rows": _misaligned_mapped_model, "norm": True,
                  "label": "model for mapped_offset: mapped / model_efficiency (5 sectors for 4)"}],
         xlabel="bytes per input array (log2 scale)",
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
    dict(run="peer_to_peer", name="peer_to_peer", kind="bar", logy=True,
         title="How fast does one GPU reach the other's memory, against its own?",
         x="params", series="variant", y="gb_per_s", where={"variant": "memcpy_peer|kernel_peer_access"},
         norm={"match": {"params": "read=local write=local"}}, ref=(1.0, "a kernel on its own memory (1\u00d7)"),
         annotate="{:.2g}\u00d7", xlabel="copy or kernel, direction", ylabel="bandwidth (\u00d7 local memory, log scale)"),
]
