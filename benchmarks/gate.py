#!/usr/bin/env python3
"""The write gate's figures: how much it blocks, and how much it wrongly refuses.

    python benchmarks/gate.py                 # one table: dev and hold-out, each corpus
    python benchmarks/gate.py --misses dev    # list what the dev part gets wrong
    python benchmarks/gate.py --speed         # what gate.scan costs: ordinary and crafted texts

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


# Texts built to make a rule work hard (docs/security.md, "The gate's cost"): one unit
# repeated to the 16 KB limit. Each family is the worst found by fuzzing units and their
# mixtures against the rules (key words and separators, command lines, key blocks, words in
# other scripts); a replay pays this once per op from others.
CRAFTED = {
    "key word then space": "pw ",
    "key word then colon": "pw:",
    "password then space": "password ",
    "option then key word": "--password ",
    "curl -u user:": "curl -u a:",
    "option, key word, vendor prefix": "token -u sk-",
    "key block lines": "-----BEGIN RSA PRIVATE KEY-----\n",
    "key word in Cyrillic": "Ab-пароль ",
    "mixed scripts and symbols": "éPassword1! curl -u a:",
}
LIMIT = 16384


def _python_pass(n: int = 9) -> float:
    """Median wall time of ``python -c pass`` (this interpreter), seconds."""
    import statistics
    import subprocess

    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _ordinary(locomo: Path | None) -> dict[str, list[str]]:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from latency import synthetic

    out = {"notes (dev + hold-out)": [r["text"] for part in PARTS for r in load("notes", part)],
           "synthetic (benchmarks/latency.py)": [str(r["text"]) for r in synthetic(3000)]}
    if locomo is not None and locomo.is_dir():
        turns = []
        for path in sorted(locomo.glob("*.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            conv = data.get("conversation", data)
            turns += [t["text"] for k, v in conv.items() if k.startswith("session_") and isinstance(v, list)
                      for t in v]
        if turns:
            out["LoCoMo turns"] = turns
    return out


def speed(locomo: Path | None) -> None:
    """gate.scan per text (the median of each text's best of 3) and per KB of crafted text
    (the best of 3), against ``python -c pass`` measured in the same run."""
    import statistics

    ref = _python_pass()
    rows = []
    for name, texts in _ordinary(locomo).items():
        for t in texts:
            gate.scan(t)  # compiled, cached: what a process that scans many texts pays
        best = []
        for t in texts:
            one = []
            for _ in range(3):
                start = time.perf_counter()
                gate.scan(t)
                one.append(time.perf_counter() - start)
            best.append(min(one))
        size = statistics.median(len(t.encode()) for t in texts)
        med = statistics.median(best)
        rows.append([name, str(len(texts)), f"{size:.0f} B", f"{med * 1e6:.0f} us",
                     f"{med / ref:.4f}", f"{med / (size / 1024) * 1e3:.2f} ms/KB"])
    table(f"gate.scan, ordinary texts (python -c pass: {ref * 1e3:.1f} ms)",
          ["texts", "n", "median size", "median per text", "x python -c pass", "per KB"], rows)
    rows = []
    for name, unit in CRAFTED.items():
        text = (unit * (LIMIT // len(unit.encode()) + 1))[:LIMIT]
        while len(text.encode()) > LIMIT:
            text = text[:-1]
        gate.scan(text[:256])
        one = []
        for _ in range(3):
            start = time.process_time()
            gate.scan(text)
            one.append(time.process_time() - start)
        kb = len(text.encode()) / 1024
        rows.append([name, repr(unit), f"{min(one) * 1e3:.0f} ms", f"{min(one) / ref:.1f}",
                     f"{min(one) / kb * 1e3:.2f} ms/KB"])
    table("gate.scan, crafted 16 KB texts (one unit repeated)",
          ["family", "unit", "per text", "x python -c pass", "per KB"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--misses", choices=["dev"], help="list the dev part's misses and false positives")
    ap.add_argument("--speed", action="store_true", help="what gate.scan costs on ordinary and crafted texts")
    ap.add_argument("--locomo", type=Path, default=Path("/work/shared/data/locomo"),
                    help="LoCoMo's conversation files, for --speed (skipped when absent)")
    args = ap.parse_args()
    if args.speed:
        speed(args.locomo)
        return
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
    for corpus in ("secrets", "notes", "injection"):
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
                if not (folder / f"{corpus}.{part}.jsonl").exists():
                    continue
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
