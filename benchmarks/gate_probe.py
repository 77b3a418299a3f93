#!/usr/bin/env python3
"""The write gate on the probe set (fixtures/gate/probe, README there).

    python benchmarks/gate_probe.py               # dev and hold-out, secrets and notes
    python benchmarks/gate_probe.py --misses dev  # what the dev part gets wrong

A second, smaller blind check beside benchmarks/gate.py: written in one sitting
before any rule was changed for it, a seeded third set aside. ``--misses``
lists the dev part only, so the hold-out stays a measurement.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gitmem import gate  # noqa: E402
from tables import table  # noqa: E402

PROBE = ROOT / "fixtures" / "gate" / "probe"
CORPORA = {"secrets": ("blocked", True), "notes": ("refused (false positive)", False),
           "stress": ("refused (false positive)", False), "stress2": ("refused (false positive)", False)}


def load(corpus: str, part: str) -> list[dict[str, str]]:
    path = PROBE / f"{corpus}.{part}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--misses", choices=["dev"], help="list the dev part's misses and false positives")
    args = ap.parse_args()
    if args.misses:
        for corpus, (_, wanted) in CORPORA.items():
            for r in load(corpus, "dev"):
                if bool(gate.scan(r["text"])) != wanted:
                    print(f"{corpus}\t{r['kind']}\t{r['text']!r}")
        return
    rows = []
    for part in ("dev", "holdout"):
        for corpus, (what, _) in CORPORA.items():
            texts = [r["text"] for r in load(corpus, part)]
            hit = sum(bool(gate.scan(t)) for t in texts)
            rows.append([part, corpus, what, f"{hit}/{len(texts)}", f"{100 * hit / len(texts):.1f}%"])
    table(f"Write gate on the probe set ({gate.version()})", ["part", "corpus", "counted", "n", "%"], rows)
    # Written after the last rule change: a measurement only, never tuned on (no dev part).
    fresh = []
    for corpus, (what, _) in list(CORPORA.items())[:2]:
        path = PROBE / f"fresh-{corpus}.jsonl"
        if path.exists():
            texts = [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line]
            hit = sum(bool(gate.scan(t)) for t in texts)
            fresh.append([f"fresh-{corpus}", what, f"{hit}/{len(texts)}", f"{100 * hit / len(texts):.1f}%"])
    table("Fresh probe, measurement only", ["corpus", "counted", "n", "%"], fresh)


if __name__ == "__main__":
    main()
