#!/usr/bin/env python3
"""How close the first pass (gitmem/projection/firstpass.py) stays to the exact scan.

    python benchmarks/firstpass.py REPO [--candidates 1024,2048,4096,8192]

On a store built already (``benchmarks/latency.py`` makes them; from 100k vector
rows the first pass is on), for realistic queries (the coding benchmark's 196
queries and the first 300 LoCoMo questions): the share of the exact scan's best
10 and best 100 memories (the vector channel's depth in recall) that the first
pass returns too, at each candidate count, and the time of the vector channel
in-process (p50, numpy loaded as in a long-lived process), with the difference
of the spread (mean and standard deviation of the cosines) from the moments.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gitmem  # noqa: E402
from gitmem.api.embedding import query_vector  # noqa: E402
from gitmem.projection import Scope, firstpass  # noqa: E402
from tables import table  # noqa: E402

LOCOMO = ROOT.parent / "shared" / "data" / "locomo"


def queries(locomo: int) -> list[str]:
    coding = [json.loads(line)["query"] for line in
              (ROOT / "fixtures" / "recall" / "coding.queries.jsonl").read_text().splitlines() if line]
    asked: list[str] = []
    for f in sorted(LOCOMO.glob("*.json")):
        asked += [qa["question"] for qa in json.loads(f.read_text()).get("qa", [])]
    return coding + asked[:locomo]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("repo", type=Path)
    ap.add_argument("--candidates", default="1024,2048,4096,8192")
    ap.add_argument("--locomo", type=int, default=300, help="LoCoMo questions to ask")
    args = ap.parse_args()
    import numpy  # noqa: F401  (a long-lived process, as the MCP server)

    texts = queries(args.locomo)
    vecs = [v for v in (query_vector(t) for t in texts) if v is not None]
    scope = Scope()
    rows = []
    with gitmem.open(args.repo) as store:
        p = store.projection
        store.refresh()
        p.vector(vecs[0], scope=scope, limit=100)
        keep = firstpass.FIRST_PASS_FROM
        firstpass.FIRST_PASS_FROM = 10**12
        exact, spreads, took = [], [], []
        for v in vecs:
            t = time.perf_counter()
            hits, stats = p.vector(v, scope=scope, limit=100)
            took.append(time.perf_counter() - t)
            exact.append([mid for mid, _ in hits])
            spreads.append(stats)
        rows.append(["exact scan", "-", "100.0", "100.0", f"{sorted(took)[len(took) // 2] * 1000:.1f}",
                     "-", "-", "0"])
        firstpass.FIRST_PASS_FROM = keep
        for m in [int(x) for x in args.candidates.split(",")]:
            firstpass.CANDIDATES = firstpass.FEWER = m
            ten = hundred = 0.0
            took, dmean, dstd, fell = [], 0.0, 0.0, 0
            for v, want, (mean, std, _) in zip(vecs, exact, spreads):
                t = time.perf_counter()
                hits, stats = p.vector(v, scope=scope, limit=100)
                took.append(time.perf_counter() - t)
                got = [mid for mid, _ in hits]
                ten += len(set(got[:10]) & set(want[:10])) / max(len(want[:10]), 1)
                hundred += len(set(got) & set(want)) / max(len(want), 1)
                dmean = max(dmean, abs(stats[0] - mean))
                dstd = max(dstd, abs(stats[1] - std))
                rows_now = p._c.execute("SELECT max(slot) + 1 FROM vec_rows").fetchone()[0]
                found = p._vectors._sidecars.first_pass(p._c, __import__("simsimd"), v, rows_now)
                fell += found is None
            k = len(vecs)
            rows.append([f"first pass, M = {m}", str(m), f"{100 * ten / k:.1f}",
                         f"{100 * hundred / k:.1f}", f"{sorted(took)[k // 2] * 1000:.1f}",
                         f"{dmean:.4f}", f"{dstd:.4f}", str(fell)])
    table(f"First pass against the exact scan, {len(vecs)} queries ({args.repo})",
          ["scan", "candidates", "top-10 overlap %", "top-100 overlap %",
           "vector channel p50 ms", "max |mean diff|", "max |std diff|", "scanned exactly"],
          rows)


if __name__ == "__main__":
    main()
