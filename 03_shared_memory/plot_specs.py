"""The figures of chapter 03: one spec per figure, read by scripts/plots.py (its comment lists the keys).
A demo with no spec here shows its table instead of a figure."""
from plots import CEIL_REF, sectors, value


def _smem_sectors(row):
    """A ladder bar's tick text: the launch shape of a kernel run at two (naive_col), then the model's sectors
    and shared-memory wavefronts per request."""
    block = value(row, "block")
    out = (f"block {block}\n" if block else "") + sectors(row)
    sw, lw = value(row, "model_smem_st_wf_per_req"), value(row, "model_smem_ld_wf_per_req")
    return out + (f"\nsmem st {sw} / ld {lw} wf" if sw and lw else "")


def _width(row):
    """bank_width: the panel of a row, by the bytes each lane loads (params "w8 stride=2")."""
    w = (value(row, "params") or "").split(" ")[0]
    return f"{w[1:]}-byte loads" if w.startswith("w") else ""


SPECS = [
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
         where={"variant": "fast_64x8_col|tile64_vec4|tile64_vec4_3pb_col|tile64_vec4_3pb_col_pf|tile_move_vec4_col_pf|"
                           "tile64_async|tma_64x64|tma_64x64_col"},
         annotate="{:.3f}", xlabel="kernel (tile_move_vec4_col_pf: not a transpose, the best one's access pattern)",
         ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
    # The large matrices: the fastest transpose beside the copy with its access pattern, its own ceiling.
    dict(run="transpose_shared_(30000|32768)", name=None,
         title="Is the fastest transpose at its access pattern's ceiling?",
         title_by_label={"transpose_shared_30000": " (30000 \u00d7 30000)",
                         "transpose_shared_32768": " (32768 \u00d7 32768)"},
         kind="bar", x="variant", y="vs_memcpy", ref=(1.0, "cudaMemcpy D2D (1\u00d7)"),
         where={"variant": "tile64_vec4_3pb_col_pf|tile_move_vec4_col_pf"},
         annotate="{:.3f}", xlabel="kernel (tile_move_vec4_col_pf: the same accesses, untransposed)",
         ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
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
         x="variant", y="vs_ceiling", where={"variant": "(?!smem_unroll4_dyn$).*"}, ref=CEIL_REF,
         annotate="{:.2f}", xlabel="kernel",
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
         x="params", y="median_ms", where={"variant": "access_rules"}, panels=_width,
         norm={"match": {"params": "w4 stride=1"}}, ref=(1.0, "4-byte words, stride 1 (1\u00d7)"),
         models=[{"col": "model_wavefronts_per_req", "label": "model: wavefronts per request"}],
         xlabel="access width and pattern", ylabel="time (\u00d7 4-byte stride 1, log scale)"),
    dict(run="smem_vs_global", name="smem_vs_global", kind="bar", logy=True,
         title="How far is each level from shared memory in latency?",
         x="params", y="cycles_vs_shared", where={"variant": "latency"},
         ref=(1.0, "shared memory (1\u00d7)"), annotate="{:.3g}\u00d7",
         xlabel="where the pointer chain lives", ylabel="cycles per dependent load (\u00d7 shared, log scale)"),
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
         # The request sizes and the two other ways to fill the same ring; the grid launches are studied in
         # the chapter's going-further page and stay in the table.
         where={"variant": "bulk_(256|1k|4k|16k|32k|16k_static)|tensor_64x64|cp_async_16k"},
         xlabel="copy (bulk_N: 1D bulk requests of N bytes, the same 64 KiB ring per SM; _static: split in advance;\n"
                "tensor_64x64: 2D boxes through a tensor map; cp_async_16k: bulk_16k's ring filled by 256 threads)",
         ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
]
