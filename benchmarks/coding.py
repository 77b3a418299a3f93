#!/usr/bin/env python3
"""Coding-memory recall benchmark: does recall find the memory a developer means?

    python benchmarks/coding.py               # every mode, dev and hold-out side by side
    python benchmarks/coding.py --misses dev  # the dev queries each mode gets wrong
    python benchmarks/coding.py --distractors 100000  # the same among 100k other memories
    python benchmarks/coding.py --suite coding2  # the second suite (another codebase)

The store (fixtures/recall/coding.memories.jsonl) is 156 memories about an
invented logistics codebase, written as developers and agents write them:
commands, conventions, decisions, gotchas, people and on-call, keyed facts.
The queries (coding.queries.jsonl) are phrased the way a person asks, most of
them sharing few words with their answer ("who do I page when something is
down"); 40 of them are about things the store does not hold. All were written
before any ranking was tuned against them, and a seeded shuffle set a fifth of
each kind aside as the hold-out, which ``--misses`` refuses to list.

A second suite (``--suite coding2``: coding2.memories.jsonl, coding2.queries.jsonl,
its README in coding2.README.md) was written later by another author, blind to
the tool, its code and the first suite: 180 memories about a Rails marketplace,
180 answerable and 48 unanswerable queries, a fifth of each set aside by a
seeded shuffle. It measures what tuning on the first suite carried over.

A third suite (``--suite coding3``) was written blind by a third author with the
query lengths the first two lack: 1-2 word queries as typed into a search box or a
tool call, and 20-80 word prompts that happen to need one memory. Its queries carry
a length band (``"len"``: short, mid, long); each band is also reported apart, dev
and hold-out, since the relevance cutoff must hold for a one-word query as for a
pasted task.

Figures: hit@k on answerable queries (any listed answer among the top k
results), MRR, and for unanswerable queries the share that return nothing
(every hit below the relevance cutoff). "cut hit@3" is hit@3 counting only
hits that clear the cutoff: the price of the cutoff on answerable queries.
Memories go in through ``git mem import`` (real commits), queries through the
library's recall, exactly what the CLI calls.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gitmem  # noqa: E402
from gitmem.relevance import MIN_SCORE  # noqa: E402
from tables import table  # noqa: E402

GIT_MEM = shutil.which("git-mem", path=str(Path(sys.executable).parent)) or "git-mem"
DATA = ROOT / "fixtures" / "recall"
PARTS = ("dev", "holdout")


def load(name: str) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line]


def build(base: Path, memories: list[dict],  # type: ignore[type-arg]
          distractors: int = 0) -> tuple[Path, dict[str, str]]:
    """A throwaway repository holding the store (after ``distractors`` synthetic
    developer notes, latency.py's, if asked); returns it and memory id -> fixture id."""
    repo = base / "repo"
    # A pinned clock and a pinned clone id: an op's id hashes its time and its
    # partition (named by the clone id, random unless written first), so every run
    # holds the same ids and breaks exact ties alike (unpinned, hit@1 moved by a query
    # or two between runs).
    env = dict(os.environ, HOME=str(base), GIT_CONFIG_NOSYSTEM="1",
               GIT_COMMITTER_DATE="2026-01-15T10:00:00Z", GIT_AUTHOR_DATE="2026-01-15T10:00:00Z")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    for name, value in (("user.name", "Bench"), ("user.email", "bench@example.com"),
                        ("gitmem.decay", "false"), ("gitmem.recordUse", "false")):
        subprocess.run(["git", "config", name, value], cwd=repo, check=True, env=env)
    (repo / ".git" / "mem").mkdir(parents=True, exist_ok=True)
    (repo / ".git" / "mem" / "clone-id").write_text("c10e0000be9c\n")
    if distractors:
        from latency import synthetic

        noise = "\n".join(json.dumps(r) for r in synthetic(distractors)).encode()
        if subprocess.run([GIT_MEM, "import", "-"], cwd=repo, input=noise, capture_output=True,
                          env=env, check=False).returncode != 0:
            raise SystemExit("import of the distractors failed")
    # The store's own kinds; the finer category a developer would tag it with. (--redact:
    # the second suite holds a dev seed password, which the gate refuses; masked, the
    # memory still says what it is about.)
    data = "\n".join(json.dumps({"text": m["text"], "tags": [m["kind"]],
                                 "kind": m["kind"] if m["kind"] in ("fact", "procedure") else "note"})
                     for m in memories)
    proc = subprocess.run([GIT_MEM, "import", "-", "--json", "--redact"], cwd=repo, input=data.encode(),
                          capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"import failed: {proc.stderr.decode()}")
    out = json.loads(proc.stdout)["data"]
    if out["duplicates"] or len(out["ids"]) != len(memories):
        raise SystemExit(f"import merged memories: {out['duplicates']}")
    return repo, {mid: m["id"] for mid, m in zip(out["ids"], memories)}


class Tally:
    def __init__(self) -> None:
        self.n = self.h1 = self.h3 = self.h5 = self.cut3 = 0
        self.rr = 0.0
        self.none = self.quiet = 0  # unanswerable: asked, and nothing cleared the cutoff
        self.misses: list[str] = []

    def answerable(self, query: str, ranked: list[tuple[str, bool]], answers: set[str]) -> None:
        self.n += 1
        first = next((i for i, (f, _) in enumerate(ranked) if f in answers), None)
        self.h1 += first is not None and first < 1
        self.h3 += first is not None and first < 3
        self.h5 += first is not None and first < 5
        kept = [f for f, clears in ranked if clears]
        self.cut3 += bool(set(kept[:3]) & answers)
        self.rr += 0.0 if first is None else 1.0 / (first + 1)
        if first is None or first >= 3:
            self.misses.append(f"{query!r}: wanted {sorted(answers)}, got "
                               f"{[f for f, _ in ranked[:3]]}")

    def unanswerable(self, query: str, ranked: list[tuple[str, bool]]) -> None:
        self.none += 1
        quiet = not any(clears for _, clears in ranked)
        self.quiet += quiet
        if not quiet:
            self.misses.append(f"{query!r} (unanswerable): got "
                               f"{[f for f, c in ranked[:3] if c]}")

    def row(self, part: str, mode: str) -> list[str]:
        d, u = max(self.n, 1), max(self.none, 1)
        return [part, mode, str(self.n), f"{100 * self.h1 / d:.1f}", f"{100 * self.h3 / d:.1f}",
                f"{100 * self.h5 / d:.1f}", f"{self.rr / d:.3f}", f"{100 * self.cut3 / d:.1f}",
                str(self.none), f"{100 * self.quiet / u:.1f}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="hybrid,lexical,vector")
    ap.add_argument("--misses", choices=["dev"], help="list the dev queries missed at 3")
    ap.add_argument("--min-score", type=float, default=MIN_SCORE,
                    help="the relevance cutoff measured (default: recall's default)")
    ap.add_argument("--distractors", type=int, default=0, metavar="N",
                    help="first fill the store with N synthetic developer notes (recall at scale: "
                    "100000 takes about a minute)")
    ap.add_argument("--suite", default="coding", choices=["coding", "coding2", "coding3"],
                    help="which store and queries (default: coding)")
    args = ap.parse_args()
    modes = args.modes.split(",")
    memories = load(f"{args.suite}.memories.jsonl")
    queries = load(f"{args.suite}.queries.jsonl")
    base = Path(tempfile.mkdtemp(prefix="gitmem-coding-"))
    bands = sorted({q["len"] for q in queries if "len" in q}, key=["short", "mid", "long"].index)
    tallies = {(p, m): Tally() for p in PARTS for m in modes}
    by_band = {(p, m, b): Tally() for p in PARTS for m in modes for b in bands}
    times: list[float] = []
    cut = args.min_score
    try:
        repo, fixture_of = build(base, memories, args.distractors)
        with gitmem.open(repo) as store:
            store.refresh()
            for q in queries:
                for mode in modes:
                    t0 = time.perf_counter()
                    # Every hit, each marked by whether it clears the default cutoff.
                    hits = store.recall(q["query"], k=10, mode=mode, record_use=False,
                                        min_score=0.0)
                    times.append(time.perf_counter() - t0)
                    ranked = [(fixture_of.get(h.id, "distractor"), h.score >= cut) for h in hits]
                    for tally in [tallies[(q["part"], mode)]] + (
                            [by_band[(q["part"], mode, q["len"])]] if "len" in q else []):
                        if q["answers"]:
                            tally.answerable(q["query"], ranked, set(q["answers"]))
                        else:
                            tally.unanswerable(q["query"], ranked)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if args.misses:
        for mode in modes:
            print(f"## {mode}: dev misses")
            print("\n".join(tallies[("dev", mode)].misses) or "(none)")
        return
    print(f"{args.suite} memories: {len(memories)} memories, {len(queries)} queries "
          f"({sum(1 for q in queries if q['part'] == 'holdout')} in the hold-out)")
    if args.distractors:
        print(f"among {args.distractors:,} synthetic developer notes (benchmarks/latency.py)")
    print(f"relevance cutoff: {cut}")
    table("Coding-memory recall (hit@k and cut hit@3: % of answerable queries; quiet: % of "
          "unanswerable queries with nothing above the cutoff)",
          ["part", "mode", "answerable", "hit@1", "hit@3", "hit@5", "MRR", "cut hit@3",
           "unanswerable", "quiet"],
          [tallies[(p, m)].row(p, m) for p in PARTS for m in modes])
    if bands:
        print()
        table("By query length (short: 1-2 words, mid: 3-12, long: 20-80)",
              ["part", "mode", "length", "answerable", "hit@1", "hit@3", "hit@5", "MRR", "cut hit@3",
               "unanswerable", "quiet"],
              [[p, m, b, *by_band[(p, m, b)].row(p, m)[2:]] for p in PARTS for m in modes for b in bands])
    times.sort()
    print(f"\nin-process recall p50 {1000 * times[len(times) // 2]:.2f} ms")


if __name__ == "__main__":
    main()
