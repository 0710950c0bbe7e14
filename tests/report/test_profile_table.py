#!/usr/bin/env python3
"""scripts/profile_table.py on a small hand-made Nsight Compute CSV: a kernel that loads and stores through
load/store instructions gets its efficiencies and sectors per request; a kernel that made no such request
(its global traffic went through the TMA), or only a few bookkeeping ones next to its DRAM traffic, gets "-"
there, not the number ncu prints after dividing by (nearly) zero. Rows are joined with the profiled range they
name, so a baseline timed between a variant's rows takes no row's model; a demo that times no kernel is named as such;
shared-memory wavefronts are shown beside ncu's ideal count and the model is judged against that ideal, per
instruction with a lane at work; a prediction the demo marks as not applying is shown as such, with its reason,
and left out of the count."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

METRICS = [
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
    "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct",
    "dram__bytes_read.sum", "dram__bytes_write.sum",
]


HEADER = ",".join(f'"{c}"' for c in ["ID", "Kernel Name"] + METRICS) + "\n"


def profile_table(ncu_text, demo_text, markdown=False):
    """Runs scripts/profile_table.py on the two files; returns the run and the Markdown table's lines."""
    with tempfile.TemporaryDirectory() as d:
        ncu, demo, md = (os.path.join(d, name) for name in ("ncu.csv", "demo.csv", "table.md"))
        with open(ncu, "w") as f:
            f.write(ncu_text)
        with open(demo, "w") as f:
            f.write(demo_text)
        run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "profile_table.py"), "--ncu", ncu,
                              "--demo", demo] + (["--markdown", md] if markdown else []), capture_output=True, text=True)
        print(run.stdout, run.stderr, sep="")
        table = [l.strip().strip("|").split("|") for l in open(md) if l.startswith("|")] \
            if markdown and run.returncode == 0 else []
    return run, table


def main():
    run, _ = profile_table(
        "==PROF== Connected to process\n" + HEADER +
        # 1024 requests of 4 sectors each, fully used: 100 % efficiency, 4 sectors per request.
        '"0","lsu_copy#0|n=1","1024","4096","1024","4096","100","100","131072","131072"\n' +
        # No load/store requests at all; ncu's efficiencies are then meaningless.
        '"1","tma_copy#0|n=1","0","0","0","0","37.5","419430412","131072","131072"\n' +
        # A TMA kernel's ticket counter: one load and three stores beside 128 KB of DRAM traffic each way.
        '"2","tma_ticket#0|n=1","1","1","3","3","37.5","26214412","131072","131072"\n' +
        # Load/store traffic served from L2 (no DRAM bytes) is still the kernel's own: shown.
        '"3","lsu_l2#0|n=1","1024","4096","1024","4096","100","100","0","0"\n' +
        # The ticket counter again, the data in L2 (no DRAM bytes): judged against the row's bytes moved.
        '"4","tma_l2#0|n=1","1","1","3","3","37.5","20.8","0","0"\n',
        "variant,params,median_ms,bytes,model_ld_sectors_per_req,model_st_sectors_per_req\n"
        "lsu_copy,n=1,0.1,262144,4,4\n"
        "tma_copy,n=1,0.1,262144,,\n"
        "tma_ticket,n=1,0.1,,,\n"
        "lsu_l2,n=1,0.1,262144,4,4\n"
        "tma_l2,n=1,0.1,262144,,\n")
    if run.returncode != 0:
        print(f"FAIL: profile_table.py exited {run.returncode}")
        return 1
    lines = run.stdout.splitlines()
    head = lines[0].split("  ")
    head = [h.strip() for h in head if h.strip()]
    rows = {l.split()[0]: l.split() for l in lines[2:] if l.split()}
    failures = []
    for col in ("gld eff %", "gst eff %", "ld sect/req", "st sect/req"):
        if col not in head:
            failures.append(f"column {col!r} missing")
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    # Columns are separated by at least two spaces; params are empty-free here, so split() lines up with head.
    def cell(variant, col):
        return rows[variant][head.index(col)]
    expect = {("lsu_copy", "gld eff %"): "100", ("lsu_copy", "gst eff %"): "100",
              ("lsu_copy", "ld sect/req"): "4", ("lsu_copy", "st sect/req"): "4",
              ("tma_copy", "gld eff %"): "-", ("tma_copy", "gst eff %"): "-",
              ("tma_copy", "ld sect/req"): "-", ("tma_copy", "st sect/req"): "-"}
    for variant in ("tma_ticket", "tma_l2"):
        for col in ("gld eff %", "gst eff %", "ld sect/req", "st sect/req"):
            expect[(variant, col)] = "-"
    for col, want in (("gld eff %", "100"), ("gst eff %", "100"), ("ld sect/req", "4"), ("st sect/req", "4")):
        expect[("lsu_l2", col)] = want
    for (variant, col), want in expect.items():
        got = cell(variant, col)
        if got != want:
            failures.append(f"{variant} {col}: {got} (expected {want})")
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    print("ok: load/store columns shown only where load/store requests carry the traffic")
    return join_by_range()


def join_by_range():
    """A variant that times a baseline between its rows (zero_copy's mapped times the same size on device
    memory): each row is joined with the range it names, not with the k-th range of its variant."""
    run, lines = profile_table(
        HEADER +
        '"0","mapped#0|","8","32","8","32","100","100","0","0"\n'
        '"1","mapped#1|baseline device size=1024","8","32","8","32","100","100","4096","2048"\n'
        '"2","mapped#2|","8","40","8","32","80","100","0","0"\n',
        "variant,params,size,median_ms,bytes,model_ld_sectors_per_req,profile_range\n"
        "mapped,,1024,0.1,3072,4,mapped#0|\n"
        "mapped,,4096,0.1,12288,5,mapped#2|\n", markdown=True)
    if run.returncode != 0:
        print(f"FAIL: profile_table.py exited {run.returncode}")
        return 1
    head = [h.strip() for h in lines[0]]
    rows = [[c.strip() for c in l] for l in lines[2:]]
    missing = [c for c in ("params", "size", "ld sect/req", "model") if c not in head]
    if missing:
        print(f"FAIL: columns {missing} missing from {head}")
        return 1
    got = [(r[head.index("params")], r[head.index("size")], r[head.index("ld sect/req")], r[head.index("model")])
           for r in rows]
    want = [("", "1024", "4", "4"), ("baseline device size=1024", "-", "4", "-"), ("", "4096", "5", "5")]
    if got != want:
        print(f"FAIL: rows joined by range: {got}, expected {want}")
        return 1
    print("ok: each row joined with the range it names; the baseline shown with its label and no model")
    return no_kernel()


def no_kernel():
    """A demo that times no kernel (a facts demo): one line that says so, and a failed exit."""
    run, _ = profile_table("==PROF== Connected to process 1 (build/bin/global_variable)\n"
                           "==PROF== Disconnected from process 1\n==WARNING== No kernels were profiled.\n",
                           "variant,params,median_ms\n")
    if run.returncode == 0 or "times no kernel" not in run.stderr:
        print(f"FAIL: a run with no profiled kernel: exit {run.returncode}, {run.stderr.strip()!r}")
        return 1
    print("ok: a demo without kernels is named as such")
    return ideal_wavefronts()


SHARED = ["smsp__inst_executed_op_shared_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
IDEAL = ["smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]


def ideal_wavefronts():
    """Shared-memory wavefronts: the hardware's count (which includes passes lost to other warps) beside ncu's
    count from each instruction's own addresses. The model is judged against the second where ncu gives it,
    against the first where it does not, and the table says how far the hardware is beyond the ideal."""
    demo = ("variant,params,median_ms,model_ld_wavefronts_per_req,profile_range\n"
            "padded,n=1,0.1,1,padded#0|n=1\n"
            "unpadded,n=1,0.1,32,unpadded#0|n=1\n")
    # padded: 1000 requests, 1240 wavefronts counted, 1000 from the addresses alone; unpadded: a real conflict.
    head = ",".join(f'"{c}"' for c in ["ID", "Kernel Name"] + SHARED)
    body = '"0","padded#0|n=1","1000","1240"\n"1","unpadded#0|n=1","1000","32100"\n'
    with_ideal = ",".join(f'"{c}"' for c in ["ID", "Kernel Name"] + SHARED + IDEAL)
    body_ideal = '"0","padded#0|n=1","1000","1240","1000"\n"1","unpadded#0|n=1","1000","32100","32000"\n'
    failures = []
    for text, want_ideal, want_diff, want_extra in (
            (with_ideal + "\n" + body_ideal, {"padded": "1", "unpadded": "32"}, {"padded": "0", "unpadded": "0"},
             "up to 24.0%"),
            (head + "\n" + body, None, {"padded": "24", "unpadded": "0.313"}, None)):
        run, lines = profile_table(text, demo, markdown=True)
        if run.returncode != 0:
            print(f"FAIL: profile_table.py exited {run.returncode}")
            return 1
        heads = [h.strip() for h in lines[0]]
        rows = {r[0].strip(): [c.strip() for c in r] for r in lines[2:]}
        if ("ideal" in heads) != (want_ideal is not None):
            failures.append(f"ideal column {'missing' if want_ideal else 'shown without ncu ideal counts'}: {heads}")
            continue
        ld = heads.index("smem ld wf/req")
        for variant, meas in (("padded", "1.24"), ("unpadded", "32.1")):
            got = rows[variant][ld]
            if got != meas:
                failures.append(f"{variant} smem ld wf/req {got} (expected {meas})")
            if want_ideal and rows[variant][heads.index("ideal")] != want_ideal[variant]:
                failures.append(f"{variant} ideal {rows[variant][heads.index('ideal')]} (expected {want_ideal[variant]})")
            diff = heads.index("diff %", ld)
            if rows[variant][diff] != want_diff[variant]:
                failures.append(f"{variant} diff % {rows[variant][diff]} (expected {want_diff[variant]}, "
                                f"{'against the ideal' if want_ideal else 'against the hardware count'})")
        beyond = [l for l in run.stdout.splitlines() if "beyond ncu's ideal" in l]
        if want_extra and not (beyond and want_extra in beyond[0]):
            failures.append(f"no line with {want_extra!r} beyond the ideal: {beyond}")
        if not want_extra and beyond:
            failures.append(f"a line beyond the ideal without ideal counts: {beyond}")
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    print("ok: the model judged against ncu's ideal wavefronts where there are some, the excess named")
    return does_not_apply()


SHARED_ST = ["smsp__inst_executed_op_shared_st.sum", "smsp__sass_inst_executed_op_shared_st.sum",
             "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
             "smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_st.sum"]


def does_not_apply():
    """A demo marks a prediction as not applying (a column named like the model's + "_does_not_apply", with the
    reason): the table says "does not apply" in its difference cell, lists the reason under the table (and the
    Markdown), and counts only the other predictions. Shared requests are the SASS count of instructions with a
    lane at work: the idle warps of edge tiles, predicated off, are counted by the plain counter only."""
    reason = "cp.async writes every tile, and ncu counts no shared store instruction for it"
    demo = ("variant,params,median_ms,model_smem_st_wf_per_req,model_smem_st_wf_per_req_does_not_apply,"
            "profile_range\n"
            "edges,n=1,0.1,1,,edges#0|n=1\n"
            f'async,n=1,0.1,4,"{reason}",async#0|n=1\n')
    head = ",".join(f'"{c}"' for c in ["ID", "Kernel Name"] + SHARED_ST)
    # edges: 32768 shared stores counted, 32000 of them with a lane at work, one wavefront each.
    # async: 3840 counted, 3200 at work, 3217 wavefronts (3200 ideal): against the model's 4 a miss, if judged.
    body = '"0","edges#0|n=1","32768","32000","32000","32000"\n"1","async#0|n=1","3840","3200","3217","3200"\n'
    run, lines = profile_table(head + "\n" + body, demo, markdown=True)
    if run.returncode != 0:
        print(f"FAIL: profile_table.py exited {run.returncode}")
        return 1
    failures = []
    heads = [h.strip() for h in lines[0]]
    rows = {r[0].strip(): [c.strip() for c in r] for r in lines[2:]}
    st = heads.index("smem st wf/req")
    diff = heads.index("diff %", st)
    if rows["edges"][st] != "1" or rows["edges"][diff] != "0":
        failures.append(f"edges: wf/req {rows['edges'][st]}, diff {rows['edges'][diff]} (expected 1 and 0: "
                        "divided by the instructions with a lane at work)")
    if rows["async"][diff] != "does not apply":
        failures.append(f"async diff cell {rows['async'][diff]!r} (expected 'does not apply')")
    if rows["async"][heads.index("model", st)] != "4":
        failures.append("async: the model's value should still be shown")
    note = f"does not apply: async smem st wf/req: {reason}"
    if note not in run.stdout:
        failures.append(f"no line {note!r} under the table")
    summary = [l for l in run.stdout.splitlines() if l.startswith("model vs ncu")]
    if not summary or not summary[0].startswith("model vs ncu: 1 of 1 predictions within 2%") \
            or "left out: 1 that does not apply" not in summary[0]:
        failures.append(f"summary {summary}: expected 1 of 1 judged and 1 left out")
    with tempfile.TemporaryDirectory() as d:
        ncu, demo_csv, md = (os.path.join(d, n) for n in ("ncu.csv", "demo.csv", "table.md"))
        with open(ncu, "w") as f:
            f.write(head + "\n" + body)
        with open(demo_csv, "w") as f:
            f.write(demo)
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "profile_table.py"), "--ncu", ncu, "--demo",
                        demo_csv, "--markdown", md], capture_output=True, text=True)
        if f"- {note}" not in open(md).read():
            failures.append("the reason is missing from the Markdown table's notes")
    if failures:
        print("FAIL: " + "; ".join(failures))
        return 1
    print("ok: a prediction that does not apply is named with its reason and left out of the count")
    return 0


if __name__ == "__main__":
    sys.exit(main())
