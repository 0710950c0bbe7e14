"""The figures of chapter 02: one spec per figure, read by scripts/plots.py (its comment lists the keys).
A demo with no spec here shows its table instead of a figure."""
from plots import CEIL, CEIL_REF, number, sectors, value


def _dram_model(row):
    """The DRAM-traffic model of a ratio to the copy ceiling: bytes the kernel asks for / bytes of the
    distinct sectors it touches (model_mb_moved, MB). Equals model_efficiency unless neighbouring warps
    share sectors, as misaligned ones do."""
    b, mb = number(row, "bytes"), number(row, "model_mb_moved")
    return b / (mb * 1e6) if b and mb else None


def _transpose_panel(row):
    """transpose_global: the two copies, the naive transposes, and the same with more per thread or another
    block order."""
    v = value(row, "variant") or ""
    return "copies" if v.startswith("copy") else "naive transposes" if v.startswith("naive") else \
        "4 per thread, diagonal order"


SECTOR_MODEL = {"col": "model_efficiency", "label": "model: useful / touched sector bytes"}
DRAM_MODEL = {"fn": _dram_model, "label": "model: bytes asked / bytes DRAM must move", "style": "-."}


SPECS = [
    dict(run="misaligned_read", name="misaligned_read",
         title="Does a misaligned read cost bandwidth?  C[i] = A[i+k] + B[i+k]",
         x="offset", y="vs_ceiling", where={"variant": "read_offset|read_offset_unroll4"},
         models=[SECTOR_MODEL, DRAM_MODEL], ref=CEIL_REF,
         xlabel="offset k (elements of 4 bytes)", ylabel=CEIL),
    dict(run="misaligned_write", name="misaligned_write",
         title="Does a misaligned write cost bandwidth?  C[i+k] = A[i] + B[i]",
         x="offset", y="vs_ceiling", where={"variant": "write_offset|write_offset_unroll4|read_write_offset_unroll4"},
         models=[SECTOR_MODEL, DRAM_MODEL], ref=CEIL_REF,
         xlabel="offset k (elements of 4 bytes)", ylabel=CEIL),
    dict(run="strided_copy", name="strided_copy", title="How fast does a strided copy fall with the stride?",
         x="stride", y="vs_ceiling", logx=True, log2x=True, logy=True, models=[SECTOR_MODEL, DRAM_MODEL],
         ref=CEIL_REF, xlabel="stride (elements, log2 scale)", ylabel=CEIL + ", log scale"),
    dict(run="load_caching_dlcm_c[ag]", name=None,
         title="Does a load caching hint change strided-read bandwidth?",
         title_by_label={"load_caching_dlcm_ca": " (-dlcm=ca)", "load_caching_dlcm_cg": " (-dlcm=cg)"},
         x="stride", y="vs_ceiling", where={"variant": "stride_.*"}, logx=True, log2x=True, logy=True,
         models=[SECTOR_MODEL, DRAM_MODEL], ref=CEIL_REF,
         xlabel="stride (4-byte elements, log2 scale)", ylabel=CEIL + ", log scale"),
    dict(run="vector_width", name="vector_width",
         title="How wide must each thread's access be to reach the copy ceiling?",
         x="width", y="vs_ceiling", logx=True, log2x=True, models=[SECTOR_MODEL], ref=CEIL_REF,
         xlabel="bytes per access (log2 scale)", ylabel=CEIL),
    dict(run="aos_vs_soa", name="aos_vs_soa", kind="bar",
         title="Does an array of structs cost bandwidth against a struct of arrays?",
         x="variant", y="vs_ceiling", models=[SECTOR_MODEL, DRAM_MODEL], ref=CEIL_REF, annotate="{:.2f}",
         xlabel="layout", ylabel="useful bandwidth (\u00d7 the copy ceiling of this run)"),
    dict(run="read_only_path", name="read_only_path", kind="bar",
         title="Does the read-only path (__ldg, const __restrict__) speed up a stream?",
         x="variant", series="per_thread", y="vs_ceiling", models=[SECTOR_MODEL], ref=CEIL_REF,
         annotate="{:.2f}", xlabel="loads / elements per thread", ylabel=CEIL),
    dict(run="managed_vs_manual", name="managed_vs_manual", kind="bar", logy=True,
         title="What does the first kernel on managed memory pay for page faults?",
         x="phase", series="variant", y="median_ms", where={"params": "phase=kernel_(first|second)"},
         norm={"match": {"variant": "manual", "params": "phase=kernel"}},
         ref=(1.0, "kernel on explicitly copied data (1\u00d7)"), annotate="{:.3g}\u00d7",
         xlabel="launch / strategy", ylabel="kernel time (\u00d7 the explicit-copy kernel, log scale)"),
    dict(run="compressible_memory", name="compressible_memory", kind="bar",
         title="How much faster do zeros and constants move through compressible memory?",
         x="data", series="variant", y="vs_plain", where={"variant": "compressible_.*"},
         panels=lambda r: value(r, "variant").replace("compressible_", "kernel: "),
         ref=(1.0, "the same kernel and data in plain memory (1\u00d7)"), annotate="{:.2f}\u00d7",
         xlabel="data in the buffers", ylabel="bandwidth (\u00d7 plain memory, same kernel and data)"),
    dict(run="transpose_global", name="transpose_global", kind="bar",
         title="How close does a global-memory transpose get to cudaMemcpy?",
         x="variant", y="vs_memcpy", where={"variant": "(?!block_sweep).*"}, ref=(1.0, "cudaMemcpy D2D (1\u00d7)"),
         panels=_transpose_panel,
         tick_extra=sectors, annotate="{:.2f}", xlabel="kernel (model sectors per load / store request)",
         ylabel="bandwidth (\u00d7 cudaMemcpy D2D of this run)"),
]
