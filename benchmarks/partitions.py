#!/usr/bin/env python3
"""Partition flood benchmark: what N pushed partitions cost every later command.

    python benchmarks/partitions.py                          # N = 1, 1k, 5k, 20k
    python benchmarks/partitions.py --partitions 1,20000 --reps 9
    python benchmarks/partitions.py --tree /path/to/old/checkout --tree .   # compare

A teammate (hostile, or a buggy script) pushes N partitions, each one commit
holding one valid op, as git mem writes them. A victim clone runs ``git mem
sync`` (timed: fetch, integration and the first replay), then every figure is
a fresh process, as an agent's shell runs it: ``recall``, ``add`` (a new text
each time), ``status``, ``context`` and the prompt hook (``git mem hook
user-prompt``, a JSON payload on stdin). Each is the median of ``--reps`` runs,
next to ``python -c pass`` measured in the same rounds, and as a multiple of it.

Partitions are made with ``git fast-import`` in a pusher clone (a few seconds
for 20k) and pushed through a real bare remote. ``--tree`` runs the same
commands with another checkout's ``gitmem`` (each tree gets its own victim
clone; runs are interleaved, tree by tree, inside every round).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gitmem import ops  # noqa: E402
from tables import table  # noqa: E402

HOSTILE = ops.Author(name="Mallory", email="mallory@example.com")
AT = 1_780_000_000


def env_for(home: Path, tree: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what users run: cached bytecode
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME="Victim",
               GIT_AUTHOR_EMAIL="victim@example.com", GIT_COMMITTER_NAME="Victim",
               GIT_COMMITTER_EMAIL="victim@example.com",
               PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""))
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def git(args: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True,
                          check=False)
    if proc.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {proc.stderr.decode()[-500:]}")
    return proc.stdout


def flood_stream(n: int, start: int = 0) -> bytes:
    """A ``git fast-import`` stream: n partitions, each one commit holding one add op
    (the commit message and trailers as oplog/append.py writes them)."""
    out: list[bytes] = []
    ident = f"{HOSTILE.name} <{HOSTILE.email}> {AT} +0000"
    for i in range(start, start + n):
        partition = ops.partition_name(HOSTILE.email, f"{i:012x}")
        op = ops.AddOp(v=ops.FORMAT_VERSION, author=HOSTILE, partition=partition, clock=1,
                       at=AT, memory=ops.MemoryBody(text=f"flood note {i} about the widget cache"))
        pack = ops.encode_pack([ops.encode(op)])
        msg = (f"add {i}\n\nGitmem-Format: {ops.FORMAT_VERSION}\nGitmem-Ops: 1\n"
               "Gitmem-Clock: 1\n").encode()
        out += [b"blob\nmark :1\ndata %d\n" % len(pack), pack, b"\n",
                b"commit refs/memory/%s\n" % partition.encode(),
                f"author {ident}\ncommitter {ident}\n".encode(),
                b"data %d\n" % len(msg), msg, b"M 100644 :1 ops.jsonl\n\n"]
    return b"".join(out)


def one_partition_stream(n: int) -> bytes:
    """A ``git fast-import`` stream: one partition, one commit holding n add ops (the
    same ops a flood of n partitions carries, for telling the two costs apart)."""
    partition = ops.partition_name(HOSTILE.email, f"{0:012x}")
    lines = [ops.encode(ops.AddOp(
        v=ops.FORMAT_VERSION, author=HOSTILE, partition=partition, clock=i + 1, at=AT,
        memory=ops.MemoryBody(text=f"flood note {i} about the widget cache"))) for i in range(n)]
    pack = ops.encode_pack(lines)
    ident = f"{HOSTILE.name} <{HOSTILE.email}> {AT} +0000"
    msg = (f"add {n}\n\nGitmem-Format: {ops.FORMAT_VERSION}\nGitmem-Ops: {n}\n"
           f"Gitmem-Clock: {n}\n").encode()
    return b"".join([b"blob\nmark :1\ndata %d\n" % len(pack), pack, b"\n",
                     b"commit refs/memory/%s\n" % partition.encode(),
                     f"author {ident}\ncommitter {ident}\n".encode(),
                     b"data %d\n" % len(msg), msg, b"M 100644 :1 ops.jsonl\n\n"])


def make_remote(base: Path, n: int, env: dict[str, str], single: bool = False) -> Path:
    """A bare remote holding main and n hostile partitions (``single``: n ops in one
    partition), pushed from a pusher clone."""
    tag = f"{n}{'-single' if single else ''}"
    bare = base / f"team-{tag}.git"
    git(["init", "-q", "--bare", "-b", "main", str(bare)], base, env)
    pusher = base / f"pusher-{tag}"
    git(["init", "-q", "-b", "main", str(pusher)], base, env)
    git(["commit", "-q", "--allow-empty", "-m", "init"], pusher, env)
    git(["remote", "add", "origin", str(bare)], pusher, env)
    git(["fast-import", "--quiet"], pusher, env,
        stdin=one_partition_stream(n) if single else flood_stream(n))
    git(["push", "-q", "origin", "main", "refs/memory/*:refs/memory/*"], pusher, env)
    return bare


def timed(args: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None,
          check_out: bytes | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0 or (check_out is not None and check_out not in proc.stdout):
        raise SystemExit(f"{' '.join(args)} failed ({proc.returncode}): "
                         f"{proc.stderr.decode()[-500:]} {proc.stdout.decode()[-300:]}")
    return elapsed


def hook_payload(repo: Path, i: int) -> bytes:
    return json.dumps({"session_id": f"bench-{i}", "cwd": str(repo),
                       "hook_event_name": "UserPromptSubmit",
                       "prompt": "how is the widget cache flushed"}).encode()


COMMANDS = ("recall", "add", "status", "context", "prompt hook")


def bench(base: Path, n: int, trees: list[Path], reps: int,
          single: bool = False) -> list[list[str]]:
    tag = f"{n}{'-single' if single else ''}"
    home = base / f"home-{tag}"
    home.mkdir()
    plain = env_for(home)
    bare = make_remote(base, n, plain, single)
    victims: list[tuple[Path, dict[str, str], float]] = []
    for k, tree in enumerate(trees):
        env = env_for(home, tree)
        victim = base / f"victim-{tag}-{k}"
        git(["clone", "-q", str(bare), str(victim)], base, env)
        sync_s = timed(["git", "mem", "sync"], victim, env)
        timed(["git", "mem", "add", "the victim's own first note", "--force"], victim, env)
        victims.append((victim, env, sync_s))
    py: list[float] = []
    figures: dict[tuple[int, str], list[float]] = {}
    for r in range(reps):
        py.append(timed([sys.executable, "-c", "pass"], base, plain))
        for k, (victim, env, _) in enumerate(victims):
            runs = {
                "recall": (["git-mem", "recall", "widget cache"], None, None),
                "add": (["git-mem", "add", f"victim note {r} about the frobnicator {k}",
                         "--force"], None, None),
                "status": (["git-mem", "status"], None, None),
                "context": (["git-mem", "context"], None, None),
                "prompt hook": (["git-mem", "hook", "user-prompt"], hook_payload(victim, r),
                                None),
            }
            for name in COMMANDS:
                args, stdin, want = runs[name]
                figures.setdefault((k, name), []).append(timed(args, victim, env, stdin, want))
        py.append(timed([sys.executable, "-c", "pass"], base, plain))
    ref = statistics.median(py)
    rows = []
    for k, tree in enumerate(trees):
        row = [f"{n:,} ops in 1" if single else f"{n:,}", tree.name if len(trees) > 1 else "",
               f"{ref * 1000:.1f}",
               f"{victims[k][2]:.2f}"]
        for name in COMMANDS:
            med = statistics.median(figures[(k, name)])
            row.append(f"{med * 1000:.1f} ({med / ref:.1f}x)")
        rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--partitions", default="1,1000,5000,20000",
                    help="numbers of pushed partitions, comma separated")
    ap.add_argument("--reps", type=int, default=7, help="fresh-process runs per figure")
    ap.add_argument("--single", action="store_true",
                    help="also measure the same number of ops in one partition (what the "
                         "ops cost, apart from the partitions)")
    ap.add_argument("--tree", action="append", default=[], type=Path,
                    help="a checkout whose gitmem runs the commands (repeatable; "
                         "default: this one)")
    args = ap.parse_args()
    trees = [t.resolve() for t in args.tree] or [ROOT]
    base = Path(tempfile.mkdtemp(prefix="gitmem-parts-"))
    try:
        for tree in trees:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "gitmem")],
                           check=False, env=env_for(base))
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, trees: "
              + ", ".join(str(t) for t in trees))
        rows: list[list[str]] = []
        for n in (int(x) for x in args.partitions.split(",")):
            rows += bench(base, n, trees, args.reps)
            if args.single and n > 1:
                rows += bench(base, n, trees, args.reps, single=True)
        table(f"N pushed partitions (one op each): first sync s, then fresh-process ms, "
              f"median of {args.reps}; (Nx) = multiple of python -c pass",
              ["partitions", "tree", "python -c pass", "first sync s", *COMMANDS], rows)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
