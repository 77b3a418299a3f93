#!/usr/bin/env python3
"""LoCoMo retrieval benchmark, through the real write and read path.

    python benchmarks/locomo.py                       # ../shared/data/locomo
    python benchmarks/locomo.py --data DIR --k 10

For each conversation a throwaway repository is made; every turn becomes one
memory written as an op by ``git mem import`` (a real subprocess, real
commits), replayed into the projection, and queried with the same recall
function the CLI uses. Scoring follows the data set's README: a question is a
hit at k if ANY of its evidence turns is in the top k ("all" variants need
every evidence turn). Categories 1-4 are the headline; 5 (adversarial) is
reported separately. Session level stores one memory per whole session and
averages recall per conversation (all categories), the protocol other memory
products publish. Every ranking mode is measured in the same run, so gains
are ratios measured side by side; "random" is a seeded random ranking.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gitmem  # noqa: E402
from tables import table  # noqa: E402

GIT_MEM = shutil.which("git-mem", path=str(Path(sys.executable).parent)) or "git-mem"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo"
_DIA = re.compile(r"^D(\d+):(\d+)$")


def parse_when(text: str) -> str | None:
    """'1:56 pm on 8 May, 2023' -> ISO 8601 (UTC)."""
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y"):
        try:
            return datetime.strptime(text.strip(), fmt).strftime("%Y-%m-%dT%H:%M:00Z")
        except ValueError:
            continue
    return None


def sessions(conv: dict) -> list[tuple[int, str | None, list[dict]]]:  # type: ignore[type-arg]
    out = []
    n = 1
    while f"session_{n}_date_time" in conv:
        turns = conv.get(f"session_{n}") or []
        if turns:
            out.append((n, parse_when(conv[f"session_{n}_date_time"]), turns))
        n += 1
    return out


def turn_text(turn: dict) -> str:  # type: ignore[type-arg]
    text = turn.get("text", "").strip()
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def import_jsonl(repo: Path, records: list[dict], env: dict[str, str]) -> list[str]:  # type: ignore[type-arg]
    data = "\n".join(json.dumps(r) for r in records).encode()
    proc = subprocess.run([GIT_MEM, "import", "-", "--json"], cwd=repo, input=data,
                          capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"import failed: {proc.stderr.decode()}")
    # One memory id per record: a line that repeats another (dedup on write)
    # maps to the memory that holds its text.
    out = json.loads(proc.stdout)["data"]
    new = iter(out["ids"])
    dups = {d["line"]: d for d in out["duplicates"]}
    per_line: list[str] = []
    for n in range(1, len(records) + 1):
        d = dups.get(n)
        if d is None:
            per_line.append(next(new))
        else:
            per_line.append(d["id"] if "id" in d else per_line[d["line_of_first"] - 1])
    return per_line


DECAY = False
PINNED_NOW = "2026-01-01T00:00:00Z"  # the time every op is written at (see main)
CLONE_ID = "c10e0000be9c"  # the clone every repository here is (see main)


def make_repo(base: Path, name: str, env: dict[str, str]) -> Path:
    repo = base / name
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    if not DECAY:
        # The questions ask about any time in the conversations, so this measures
        # retrieval, not currency: no decay, and no local use record (which
        # would let earlier questions shape later answers).
        for name, value in (("gitmem.decay", "false"), ("gitmem.recordUse", "false")):
            subprocess.run(["git", "config", name, value], cwd=repo, check=True, env=env)
    (repo / ".git" / "mem").mkdir(parents=True, exist_ok=True)
    (repo / ".git" / "mem" / "clone-id").write_text(CLONE_ID + "\n")  # see main's env
    return repo


class Tally:
    def __init__(self) -> None:
        self.n = 0
        self.any5 = self.any10 = self.all5 = self.all10 = 0
        self.rr = 0.0

    def add(self, ranked: list[set[str]], evidence: set[str]) -> None:
        """``ranked``: for each result, the evidence keys it covers."""
        self.n += 1
        seen: set[str] = set()
        first = None
        for i, keys in enumerate(ranked):
            if keys & evidence and first is None:
                first = i
            seen |= keys & evidence
            if i == 4:
                self.any5 += bool(seen)
                self.all5 += seen == evidence
            if i == 9:
                self.any10 += bool(seen)
                self.all10 += seen == evidence
        if len(ranked) < 10:  # fewer results than k: count what there is
            if len(ranked) < 5:
                self.any5 += bool(seen)
                self.all5 += seen == evidence
            self.any10 += bool(seen)
            self.all10 += seen == evidence
        self.rr += 0.0 if first is None else 1.0 / (first + 1)

    def merge(self, other: Tally) -> None:
        for f in ("n", "any5", "any10", "all5", "all10", "rr"):
            setattr(self, f, getattr(self, f) + getattr(other, f))

    def row(self, label: str, mode: str) -> list[str]:
        d = max(self.n, 1)
        return [label, mode, str(self.n), f"{100 * self.any5 / d:.1f}", f"{100 * self.any10 / d:.1f}",
                f"{100 * self.all5 / d:.1f}", f"{100 * self.all10 / d:.1f}", f"{self.rr / d:.3f}"]


def rank_ids(store: gitmem.Store, query: str, mode: str, k: int, pool: list[str],
             rnd: random.Random) -> list[str]:
    if mode == "random":
        return rnd.sample(pool, min(k, len(pool)))
    # Every hit (min_score=0): this measures the ranking; the cutoff is measured by
    # benchmarks/coding.py, which has questions nothing answers.
    return [h.id for h in store.recall(query, k=k, mode=mode, min_score=0.0, record_use=False)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder of LoCoMo conv-*.json")
    ap.add_argument("--modes", default="hybrid,lexical,vector,random",
                    help="ranking modes to compare (hybrid is the default recall)")
    ap.add_argument("--k", type=int, default=100, help="results fetched per query (for MRR)")
    ap.add_argument("--no-sessions", action="store_true", help="skip the session-level protocol")
    ap.add_argument("--decay", action="store_true",
                    help="keep salience decay on (by default off: see make_repo)")
    args = ap.parse_args()
    global DECAY
    DECAY = args.decay
    modes = args.modes.split(",")
    files = sorted(args.data.glob("*.json"))
    if not files:
        raise SystemExit(f"no LoCoMo conversations in {args.data}")
    base = Path(tempfile.mkdtemp(prefix="gitmem-locomo-"))
    # A memory's id hashes its op, which holds the time written and the partition
    # (named by a random clone id): both are pinned, so every run holds the same ids
    # and breaks exact ties alike (unpinned, R@10 moved 0.1-0.2 between runs).
    env = dict(os.environ, HOME=str(base), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="LoCoMo",
               GIT_AUTHOR_EMAIL="locomo@example.com", GIT_COMMITTER_NAME="LoCoMo",
               GIT_COMMITTER_EMAIL="locomo@example.com", GIT_COMMITTER_DATE=PINNED_NOW,
               GITMEM_NOW=PINNED_NOW)
    os.environ.update({k: env[k] for k in ("HOME", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME",
                                           "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_DATE",
                                           "GITMEM_NOW")})
    turn_tallies: dict[tuple[str, str], Tally] = defaultdict(Tally)  # (mode, category)
    session_scores: dict[str, list[tuple[float, float]]] = defaultdict(list)
    timings: dict[str, list[float]] = defaultdict(list)
    rnd = random.Random(1234)
    t_import = 0.0
    n_memories = 0
    try:
        for f in files:
            conv = json.loads(f.read_text())
            ss = sessions(conv)
            # Turn level: one memory per turn.
            records, keys = [], []
            for n, when, turns in ss:
                for t in turns:
                    text = turn_text(t)
                    if not text:
                        continue
                    rec = {"text": text, "kind": "note", "about": [t.get("speaker", "")],
                           "session": f"session_{n}", "source": "chat"}
                    if when:
                        rec["recorded_at"] = when
                    records.append(rec)
                    keys.append(t["dia_id"])
            repo = make_repo(base, f.stem, env)
            t0 = time.perf_counter()
            ids = import_jsonl(repo, records, env)
            t_import += time.perf_counter() - t0
            n_memories += len(ids)
            key_of: dict[str, set[str]] = {}
            for mid, key in zip(ids, keys):
                key_of.setdefault(mid, set()).add(key)
            ids = list(dict.fromkeys(ids))
            with gitmem.open(repo) as store:
                store.refresh()
                for qa in conv["qa"]:
                    evidence = {e.strip() for e in qa.get("evidence", []) if _DIA.match(e.strip())}
                    if not evidence:
                        continue
                    cat = str(qa["category"])
                    for mode in modes:
                        t0 = time.perf_counter()
                        ranked = rank_ids(store, qa["question"], mode, args.k, ids, rnd)
                        timings[mode].append(time.perf_counter() - t0)
                        turn_tallies[(mode, cat)].add([key_of[i] for i in ranked], evidence)
            if args.no_sessions:
                continue
            # Session level: one memory per whole session.
            srecords, skeys = [], []
            for n, when, turns in ss:
                text = "\n".join(f"{t.get('speaker', '')}: {turn_text(t)}" for t in turns)
                rec = {"text": text[:15000], "kind": "note", "session": f"session_{n}"}
                if when:
                    rec["recorded_at"] = when
                srecords.append(rec)
                skeys.append(n)
            srepo = make_repo(base, f.stem + "-sessions", env)
            sids = import_jsonl(srepo, srecords, env)
            skey_of = dict(zip(sids, skeys))  # whole sessions never repeat
            with gitmem.open(srepo) as store:
                store.refresh()
                for mode in modes:
                    hit5 = hit10 = total = 0
                    for qa in conv["qa"]:
                        ev = {int(m.group(1)) for e in qa.get("evidence", [])
                              if (m := _DIA.match(e.strip()))}
                        if not ev:
                            continue
                        ranked = rank_ids(store, qa["question"], mode, 10, sids, rnd)
                        got = [skey_of[i] for i in ranked]
                        total += 1
                        hit5 += bool(set(got[:5]) & ev)
                        hit10 += bool(set(got[:10]) & ev)
                    session_scores[mode].append((hit5 / max(total, 1), hit10 / max(total, 1)))
    finally:
        shutil.rmtree(base, ignore_errors=True)

    print(f"LoCoMo: {len(files)} conversations from {args.data}, {n_memories} turn memories, "
          f"imported at {n_memories / max(t_import, 1e-9):,.0f} memories/s (incl. process start)")
    rows = []
    for mode in modes:
        overall14, overall15 = Tally(), Tally()
        for cat in "1234":
            overall14.merge(turn_tallies[(mode, cat)])
        overall15.merge(overall14)
        overall15.merge(turn_tallies[(mode, "5")])
        rows.append(overall14.row("cat 1-4", mode))
        rows.append(overall15.row("cat 1-5", mode))
    table("Turn level (one memory per turn)",
          ["questions", "mode", "n", "R@5 any", "R@10 any", "R@5 all", "R@10 all", "MRR"], rows)
    rows = [turn_tallies[(mode, cat)].row(f"cat {cat}", mode) for cat in "12345" for mode in modes]
    table("Turn level by category",
          ["category", "mode", "n", "R@5 any", "R@10 any", "R@5 all", "R@10 all", "MRR"], rows)
    if session_scores:
        rows = []
        for mode in modes:
            sc = session_scores[mode]
            rows.append([mode, str(len(sc)), f"{100 * sum(a for a, _ in sc) / len(sc):.1f}",
                         f"{100 * sum(b for _, b in sc) / len(sc):.1f}"])
        table("Session level (one memory per session, all categories, mean over conversations)",
              ["mode", "conversations", "R@5", "R@10"], rows)
    rows = []
    for mode in modes:
        t = sorted(timings[mode])
        rows.append([mode, f"{1000 * t[len(t) // 2]:.2f}", f"{1000 * t[int(len(t) * 0.95)]:.2f}"])
    table("In-process query time (ms)", ["mode", "p50", "p95"], rows)


if __name__ == "__main__":
    main()
