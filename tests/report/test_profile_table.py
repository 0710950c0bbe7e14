#!/usr/bin/env python3
"""scripts/profile_table.py on a small hand-made Nsight Compute CSV: a kernel that loads and stores through
load/store instructions gets its efficiencies and sectors per request; a kernel that made no such request
(its global traffic went through the TMA), or only a few bookkeeping ones next to its DRAM traffic, gets "-"
there, not the number ncu prints after dividing by (nearly) zero."""
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


def main():
    with tempfile.TemporaryDirectory() as d:
        ncu = os.path.join(d, "ncu.csv")
        with open(ncu, "w") as f:
            f.write("==PROF== Connected to process\n")
            f.write(",".join(f'"{c}"' for c in ["ID", "Kernel Name"] + METRICS) + "\n")
            # 1024 requests of 4 sectors each, fully used: 100 % efficiency, 4 sectors per request.
            f.write('"0","lsu_copy#0|n=1","1024","4096","1024","4096","100","100","131072","131072"\n')
            # No load/store requests at all; ncu's efficiencies are then meaningless.
            f.write('"1","tma_copy#0|n=1","0","0","0","0","37.5","419430412","131072","131072"\n')
            # A TMA kernel's ticket counter: one load and three stores beside 128 KB of DRAM traffic each way.
            f.write('"2","tma_ticket#0|n=1","1","1","3","3","37.5","26214412","131072","131072"\n')
            # Load/store traffic served from L2 (no DRAM bytes) is still the kernel's own: shown.
            f.write('"3","lsu_l2#0|n=1","1024","4096","1024","4096","100","100","0","0"\n')
            # The ticket counter again, the data in L2 (no DRAM bytes): judged against the row's bytes moved.
            f.write('"4","tma_l2#0|n=1","1","1","3","3","37.5","20.8","0","0"\n')
        demo = os.path.join(d, "demo.csv")
        with open(demo, "w") as f:
            f.write("variant,params,median_ms,bytes,model_ld_sectors_per_req,model_st_sectors_per_req\n")
            f.write("lsu_copy,n=1,0.1,262144,4,4\n")
            f.write("tma_copy,n=1,0.1,262144,,\n")
            f.write("tma_ticket,n=1,0.1,,,\n")
            f.write("lsu_l2,n=1,0.1,262144,4,4\n")
            f.write("tma_l2,n=1,0.1,262144,,\n")
        run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "profile_table.py"), "--ncu", ncu,
                              "--demo", demo], capture_output=True, text=True)
        print(run.stdout, run.stderr, sep="")
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
