#!/usr/bin/env python3
"""Joins an Nsight Compute raw CSV (scripts/profile.sh) with the demo's own CSV and prints, per measured
launch, the profiler's values next to the access model's predictions and their difference.

Kernels are matched to the demo's rows through the NVTX range name "variant#k|label" that the harness
puts around each profiled launch (ncu --print-nvtx-rename kernel) and that each timed row records in its
`profile_range` column; a range no row names (a baseline the variant timed for a ratio) is shown with its
label and no model. Several kernels inside one range (a two-pass reduction, say) are summed.

A demo says where a prediction does not describe what ncu counts (the kernel executes instructions the model
leaves out, or moves its bytes with instructions ncu does not count there): beside the model column, a column
named like it with "_does_not_apply" holds the reason. The table then shows "does not apply" instead of a
difference, lists the reasons under it, and leaves those predictions out of the count."""
import argparse
import csv
import io
import os
import re
import sys
from collections import OrderedDict

MODEL_COLUMNS = {
    "ld_sectors": ["model_ld_sectors_per_req", "model_sectors_per_req"],
    "st_sectors": ["model_st_sectors_per_req"],
    "ld_wavefronts": ["model_ld_wavefronts_per_req", "model_wavefronts_per_req", "model_shared_ld_wavefronts_per_req", "model_smem_ld_wf_per_req"],
    "st_wavefronts": ["model_st_wavefronts_per_req", "model_shared_st_wavefronts_per_req", "model_smem_st_wf_per_req"],
}
NOT_APPLICABLE = "_does_not_apply"
LABELS = {"ld_sectors": "ld sect/req", "st_sectors": "st sect/req", "ld_wavefronts": "smem ld wf/req",
          "st_wavefronts": "smem st wf/req"}


def number(text):
    if text is None:
        return None
    t = text.replace(",", "").strip()
    if t in ("", "n/a", "N/A"):
        return None
    try:
        return float(t)
    except ValueError:
        return None


def read_ncu(path):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    # ncu may print ==PROF== lines before the CSV; the CSV starts at the header with "ID".
    start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
    if start is None:
        if any("No kernels were profiled" in l for l in lines):
            sys.exit("profile_table: ncu profiled no kernel: this demo times no kernel launch (its rows are facts, "
                     "API calls, copies or host-side times), so Nsight Compute has nothing to count")
        sys.exit(f"profile_table: no ncu CSV table in {path}")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = rows[0], rows[1:]
    # With --print-units base the second row holds units: skip it.
    if body and body[0] and body[0][0] == "":
        body = body[1:]
    return [dict(zip(header, r)) for r in body if len(r) == len(header)]


RANGE = re.compile(r"([A-Za-z0-9_]+#\d+\|[^:\"]*)")


def range_key(name):
    """A range name as ncu reports it: the label ends at the first ':' or '"'."""
    m = RANGE.search(name or "")
    return m.group(1) if m else None


def range_of(kernel):
    """The harness's NVTX range "variant#k|params": ncu reports it in its NVTX push/pop column (and, with
    --print-nvtx-rename kernel, in the kernel name on some pages)."""
    for col, val in kernel.items():
        if ("Push/Pop_Range" in col or col == "Kernel Name") and (key := range_key(val)):
            return key
    return None


def read_demo(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def first(row, names):
    for n in names:
        if n in row and row[n] not in ("", None):
            return number(row[n])
    return None


def not_applicable(row, names):
    """The demo's reason why the prediction in one of these model columns does not apply to the row, if any."""
    for n in names:
        reason = (row.get(n + NOT_APPLICABLE) or "").strip()
        if reason:
            return reason
    return None


def pct_diff(measured, model):
    if measured is None or model is None or model == 0:
        return None
    d = 100.0 * (measured - model) / model
    # A launch-wide model is a ratio of large counts, printed to a few digits in the demo's CSV: agreement to
    # the last digit reads 0, not -6e-09.
    return 0.0 if abs(d) < 1e-6 else d


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--ncu", required=True)
    ap.add_argument("--demo", required=True)
    ap.add_argument("--markdown", help="also write the table as Markdown here")
    a = ap.parse_args()
    for path in (a.ncu, a.demo):
        if not os.path.isfile(path):
            ap.error(f"{path} is not a file")

    kernels = read_ncu(a.ncu)
    demo_rows = [r for r in read_demo(a.demo) if r.get("median_ms")]
    by_variant = OrderedDict()
    for r in demo_rows:
        by_variant.setdefault(r["variant"], []).append(r)

    # Sum metrics per NVTX range.
    ranges = OrderedDict()
    for k in kernels:
        key = range_of(k)
        if key is None:
            continue
        agg = ranges.setdefault(key, {"kernels": 0})
        agg["kernels"] += 1
        for col, val in k.items():
            v = number(val)
            if v is not None and "__" in col:
                agg[col] = agg.get(col, 0.0) + v
    if not ranges:
        sys.exit("profile_table: no kernel carried the harness's NVTX range (was the demo run with --profile "
                 "and ncu with --nvtx?)")

    def g(agg, m):
        return agg.get(m)

    # Each timed row names its range; a CSV written before rows did so is matched by order (the k-th range
    # of a variant is its k-th timed row), which holds only when the variant timed nothing but its rows.
    by_range = {range_key(r["profile_range"]): r for r in demo_rows if r.get("profile_range")}
    table = []
    for key, agg in ranges.items():
        variant, rest = key.split("#", 1)
        seq, params = rest.split("|", 1)
        if by_range:
            row = by_range.get(key, {})
        else:
            rows = by_variant.get(variant, [])
            idx = sum(1 for kk in list(ranges)[: list(ranges).index(key)] if kk.split("#", 1)[0] == variant)
            row = rows[idx] if idx < len(rows) else {}
        ld_req, ld_sec = g(agg, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), g(agg, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
        st_req, st_sec = g(agg, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"), g(agg, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
        # Shared-memory requests: the SASS count where profile.sh could ask for it. The plain instruction counter
        # also counts instructions whose lanes are all predicated off, which move nothing: the fully idle warps
        # of a matrix's edge tiles (1000 x 1000: 32768 shared stores counted by a tiled transpose, 32000 with
        # a lane at work) and the "@!PT LDS RZ, [RZ]" that the compiler puts beside cp.async code. The access
        # model, like ncu's load/store requests, counts the instructions that have a lane at work.
        sh_ld_req = g(agg, "smsp__sass_inst_executed_op_shared_ld.sum")
        sh_st_req = g(agg, "smsp__sass_inst_executed_op_shared_st.sum")
        if sh_ld_req is None:
            sh_ld_req = g(agg, "smsp__inst_executed_op_shared_ld.sum")
        if sh_st_req is None:
            sh_st_req = g(agg, "smsp__inst_executed_op_shared_st.sum")
        sh_ld_wf = g(agg, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
        sh_st_wf = g(agg, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
        # The hardware counters above also count passes lost to other warps' accesses on the same SM (a few
        # blocks on an idle GPU show none); ncu's SASS-derived counts, where profile.sh could ask for them, take
        # each instruction's own addresses alone: the "ideal", which is what the access model predicts.
        ideal_ld_wf = g(agg, "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
        ideal_st_wf = g(agg, "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
        ratio = lambda a_, b_: (a_ / b_) if a_ is not None and b_ else None
        # Efficiency is an average over kernels; with one kernel per range (the usual case) it is exact.
        n = agg["kernels"]
        # The load/store columns describe the kernel's global traffic only when load/store instructions carry
        # it. A kernel that moves its bytes with the TMA (or cp.async, which these metrics do not count) makes
        # none or a few bookkeeping requests: ncu's efficiency is then a division by (nearly) zero, and the
        # sectors per request describe a ticket counter, not the data. Shown as "-" when there are none, or
        # when the requests' sectors come to less than 1 % of the bytes the row moves (the demo's `bytes`,
        # read + written; without it, the DRAM bytes of that direction).
        moved = number(row.get("bytes"))

        def carried(req, sec, dram):
            whole = moved or dram
            return bool(req) and not (whole and (sec or 0) * 32 < 0.01 * whole)
        lsu_ld = carried(ld_req, ld_sec, g(agg, "dram__bytes_read.sum"))
        lsu_st = carried(st_req, st_sec, g(agg, "dram__bytes_write.sum"))
        if not lsu_ld:
            ld_req = ld_sec = None
        if not lsu_st:
            st_req = st_sec = None
        eff_ld = g(agg, "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct") if lsu_ld else None
        eff_st = g(agg, "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct") if lsu_st else None
        meas = {
            "ld_sectors": ratio(ld_sec, ld_req),
            "st_sectors": ratio(st_sec, st_req),
            "ld_wavefronts": ratio(sh_ld_wf, sh_ld_req),
            "st_wavefronts": ratio(sh_st_wf, sh_st_req),
        }
        ideal = {"ld_wavefronts": ratio(ideal_ld_wf, sh_ld_req), "st_wavefronts": ratio(ideal_st_wf, sh_st_req)}
        model = {k: first(row, cols) for k, cols in MODEL_COLUMNS.items()}
        na = {k: not_applicable(row, cols) for k, cols in MODEL_COLUMNS.items()}
        # The model is per instruction: judge it against ncu's per-instruction count where there is one.
        judged = {k: ideal.get(k) if ideal.get(k) is not None else meas[k] for k in meas}
        table.append({
            "variant": variant,
            "params": params or row.get("params", ""),
            "size": row.get("size") or None,
            "kernels": n,
            "gld_eff_pct": eff_ld / n if eff_ld is not None else None,
            "gst_eff_pct": eff_st / n if eff_st is not None else None,
            "ld_sectors": ld_sec,
            **{f"{k}_meas": meas[k] for k in meas},
            **{f"{k}_ideal": v for k, v in ideal.items()},
            **{f"{k}_model": model[k] for k in model},
            **{f"{k}_diff_pct": None if na[k] else pct_diff(judged[k], model[k]) for k in meas},
            **{f"{k}_na": na[k] for k in meas},
            **{f"{k}_extra_pct": pct_diff(meas[k], v) for k, v in ideal.items()},
            "bank_conflicts": (g(agg, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum") or 0)
            + (g(agg, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum") or 0),
            "dram_read_mb": (g(agg, "dram__bytes_read.sum") or 0) / 1e6,
            "dram_write_mb": (g(agg, "dram__bytes_write.sum") or 0) / 1e6,
        })

    cols = [
        ("variant", "variant"), ("params", "params"), ("size", "size"),
        ("gld_eff_pct", "gld eff %"), ("gst_eff_pct", "gst eff %"),
        ("ld_sectors_meas", "ld sect/req"), ("ld_sectors_model", "model"), ("ld_sectors_diff_pct", "diff %"),
        ("st_sectors_meas", "st sect/req"), ("st_sectors_model", "model"), ("st_sectors_diff_pct", "diff %"),
        ("ld_wavefronts_meas", "smem ld wf/req"), ("ld_wavefronts_ideal", "ideal"), ("ld_wavefronts_model", "model"),
        ("ld_wavefronts_diff_pct", "diff %"),
        ("st_wavefronts_meas", "smem st wf/req"), ("st_wavefronts_ideal", "ideal"), ("st_wavefronts_model", "model"),
        ("st_wavefronts_diff_pct", "diff %"),
        ("bank_conflicts", "bank confl."), ("dram_read_mb", "DRAM rd MB"), ("dram_write_mb", "DRAM wr MB"),
    ]
    # Drop columns that are empty for every row (e.g. shared-memory columns of a global-memory demo).
    def cell(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
        return str(v)
    # A difference of 0 is a result (the model agrees), not an empty cell; so is a prediction that does not apply.
    na_of = lambda c: c[: -len("_diff_pct")] + "_na"
    keep = [c for c in cols if c[0] in ("variant", "params")
            or any(r.get(c[0]) not in (None, 0, 0.0) for r in table)
            or (c[0].endswith("_diff_pct") and any(r.get(c[0]) is not None or r.get(na_of(c[0])) for r in table))]
    # The size tells rows apart only where a run sweeps it.
    if len({r.get("size") for r in table}) < 2:
        keep = [c for c in keep if c[0] != "size"]
    # A model column is only useful with its measurement: keep the pair together.
    cells = [["does not apply" if k.endswith("_diff_pct") and r.get(na_of(k)) else cell(r.get(k)) for k, _ in keep]
             for r in table]
    heads = [h for _, h in keep]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(heads)]
    print("  ".join(h.ljust(w) for h, w in zip(heads, widths)))
    print("  ".join("-" * w for w in widths))
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c, widths)))
    # One line per reason, naming the rows and columns it covers.
    reasons = OrderedDict()
    for r in table:
        for k in MODEL_COLUMNS:
            if r.get(f"{k}_na"):
                reasons.setdefault(r[f"{k}_na"], []).append(f"{r['variant']} {LABELS[k]}")
    notes = [f"does not apply: {', '.join(OrderedDict.fromkeys(where))}: {reason}" for reason, where in reasons.items()]
    if notes:
        print()
        for n in notes:
            print(n)
    worst = [abs(r[k]) for r in table for k in r if k.endswith("_diff_pct") and r[k] is not None]
    if worst:
        within = sum(1 for w in worst if w <= 2.0)
        skipped = sum(len(w) for w in reasons.values())
        print(f"\nmodel vs ncu: {within} of {len(worst)} predictions within 2% (largest difference {max(worst):.1f}%)"
              + (f"; left out: {skipped} that {'does' if skipped == 1 else 'do'} not apply (listed above)"
                 if skipped else ""))
    extra = [r[k] for r in table for k in ("ld_wavefronts_extra_pct", "st_wavefronts_extra_pct") if r.get(k) is not None]
    if extra:
        print(f"shared-memory wavefronts beyond ncu's ideal: up to {max(extra):.1f}% (passes lost to other warps "
              "on the same SM, not to the access pattern: \"smem wf/req\" against \"ideal\")")
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("| " + " | ".join(heads) + " |\n|" + "---|" * len(heads) + "\n")
            for c in cells:
                f.write("| " + " | ".join(c) + " |\n")
            if notes:
                f.write("\n" + "".join(f"- {n}\n" for n in notes))


if __name__ == "__main__":
    main()
