#!/usr/bin/env python3
"""The end of a run: demos ok / waived / failed, and the claims judged on this GPU.

    python3 scripts/claims_summary.py RUN_DIR

Reads RUN_DIR/status.txt (written by run_all.sh) and RUN_DIR/*.claims.csv (one row per claim, written by every
demo with --claims-csv), through scripts/lib/run_folder.py. Exit status: 0 every device-side claim held,
1 some did not, 3 a claim could not find its rows (a defect of the demo), 2 bad input."""
import os
import sys

# status.txt and the claims CSVs are read where the run folder's formats live (report.py reads the claims here).
from lib.run_folder import read_claims, read_status  # noqa: F401


def tally(claims):
    t = {"device_held": 0, "device_judged": 0, "host_held": 0, "host_judged": 0, "not_applicable": 0, "error": 0}
    for rows in claims.values():
        for r in rows:
            judged = r["status"] in ("held", "not_held")
            if r["status"] == "not_applicable":
                t["not_applicable"] += 1
            if r["status"] == "error":
                t["error"] += 1
            side = "device" if r["kind"] == "device" else "host"
            t[side + "_judged"] += judged
            t[side + "_held"] += r["status"] == "held"
    return t


def fmt_value(v):
    try:
        return f"{float(v):.4g}"
    except ValueError:
        return v or "-"


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        print("usage: claims_summary.py RUN_DIR", file=sys.stderr)
        return 2
    run_dir = sys.argv[1]
    status = read_status(run_dir)
    claims = read_claims(run_dir)
    states = {s: [r for r in status if r["state"] == s] for s in ("ok", "waived", "failed")}
    print("================ summary ================")
    print(f"demos: {len(states['ok'])} ok, {len(states['waived'])} waived, {len(states['failed'])} failed")
    for r in states["waived"]:
        print(f"  waived  {r['label']}: {r['reason']}")
    for r in states["failed"]:
        print(f"  FAILED  {r['label']} (exit {r['exit']})")
    t = tally(claims)
    pct = 100.0 * t["device_held"] / t["device_judged"] if t["device_judged"] else 0.0
    print(f"claims held {t['device_held']} of {t['device_judged']} on this GPU ({pct:.1f}%, device-side)")
    for label, rows in claims.items():
        for r in rows:
            if r["kind"] == "device" and r["status"] == "not_held":
                print(f"  NOT HELD  {label}.{r['claim']}: {r['measure']} = {fmt_value(r['value'])}, bound {r['bound']}")
                print(f"            {r['text']}")
    print(f"host-dependent claims held {t['host_held']} of {t['host_judged']} (reported, not counted)")
    for label, rows in claims.items():
        for r in rows:
            if r["kind"] == "host" and r["status"] == "not_held":
                print(f"  not held  {label}.{r['claim']}: {r['measure']} = {fmt_value(r['value'])}, bound {r['bound']}")
    if t["not_applicable"]:
        print(f"not applicable here: {t['not_applicable']} claim(s) (the report lists why)")
    for label, rows in claims.items():
        for r in rows:
            if r["status"] == "error":
                print(f"  ERROR  {label}.{r['claim']}: {r['detail']}")
    if t["error"]:
        return 3
    return 0 if t["device_held"] == t["device_judged"] else 1


if __name__ == "__main__":
    sys.exit(main())
