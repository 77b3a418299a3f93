#!/usr/bin/env python3
"""The write gate's figures: how much it blocks, and how much it wrongly refuses.

    python benchmarks/gate.py                 # one table: dev and hold-out, each corpus
    python benchmarks/gate.py --misses dev    # list what the dev part gets wrong

The corpora are data files in fixtures/gate/figures/ (README there): secrets,
ordinary developer notes, prompt injections in several languages and
obfuscations, and one text for every default-ignorable code point. Each was
written before the gate was tuned, then a seeded shuffle set a third aside
as a hold-out. Tuning looks at the dev part only (``--misses`` refuses to list
the hold-out), so the hold-out says how the rules carry over to text nobody
tuned them on. "Blocked" means ``gate.scan`` returned any finding: that is what
refuses a write.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gitmem import gate  # noqa: E402
from tables import table  # noqa: E402

FIGURES = ROOT / "fixtures" / "gate" / "figures"
# corpus -> (what a blocked text means, the target as a fraction, whether blocking is wanted)
CORPORA = {
    "secrets": ("blocked", 0.98, True),
    "injection": ("blocked", 0.90, True),
    "invisible": ("blocked", 1.00, True),
    "notes": ("refused (false positive)", 0.01, False),
}
PARTS = ("dev", "holdout")


def load(corpus: str, part: str) -> list[dict[str, str]]:
    path = FIGURES / f"{corpus}.{part}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def blocked(text: str) -> bool:
    return bool(gate.scan(text))


def figures(part: str) -> dict[str, tuple[int, int]]:
    """corpus -> (blocked, total) for one part."""
    out = {}
    for corpus in CORPORA:
        rows = load(corpus, part)
        out[corpus] = (sum(blocked(r["text"]) for r in rows), len(rows))
    return out


def meets(corpus: str, hit: int, total: int) -> bool:
    _, target, wanted = CORPORA[corpus]
    return hit / total >= target if wanted else hit / total <= target


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--misses", choices=["dev"], help="list the dev part's misses and false positives")
    args = ap.parse_args()
    if args.misses:
        for corpus, (_, _, wanted) in CORPORA.items():
            for r in load(corpus, "dev"):
                if blocked(r["text"]) != wanted:
                    print(f"{corpus}\t{r['kind']}\t{r['text']!r}")
        return
    rows = []
    start = time.perf_counter()
    for part in PARTS:
        for corpus, (hit, total) in figures(part).items():
            what, target, wanted = CORPORA[corpus]
            goal = (">= " if wanted else "<= ") + f"{100 * target:g}%"
            rows.append([part, corpus, what, f"{hit}/{total}", f"{100 * hit / total:.1f}%", goal,
                         "yes" if meets(corpus, hit, total) else "NO"])
    elapsed = time.perf_counter() - start
    table(f"Write gate ({gate.version()})",
          ["part", "corpus", "counted", "n", "%", "target", "met"], rows)
    # Each round was written blind, after the rules of the round before: its hold-out
    # says how the rules carry over to text of a kind they have not met yet.
    by_round = []
    for corpus in ("secrets", "notes"):
        for part in PARTS:
            # Rounds are numbered; rows written for a policy decision say "policy".
            for rnd in sorted({str(r.get("round", 1)) for r in load(corpus, part)},
                              key=lambda x: (not x.isdigit(), x.zfill(4))):
                texts = [r["text"] for r in load(corpus, part) if str(r.get("round", 1)) == rnd]
                hit = sum(map(blocked, texts))
                by_round.append([corpus, part, str(rnd), f"{hit}/{len(texts)}",
                                 f"{100 * hit / len(texts):.1f}%"])
            # A round kept apart (its own folder) until its dev part meets the targets:
            # not in the table above, whose dev part tests/test_gate.py holds to them.
            for folder in sorted(FIGURES.glob("round*")):
                texts = [json.loads(line)["text"] for line in
                         (folder / f"{corpus}.{part}.jsonl").read_text().splitlines() if line]
                hit = sum(map(blocked, texts))
                by_round.append([corpus, part, f"{folder.name[5:]} (apart)", f"{hit}/{len(texts)}",
                                 f"{100 * hit / len(texts):.1f}%"])
    print()
    table("By corpus round", ["corpus", "part", "round", "n", "%"], by_round)
    print(f"\n{sum(int(r[3].split('/')[1]) for r in rows)} texts scanned in {elapsed:.1f} s")


if __name__ == "__main__":
    main()
