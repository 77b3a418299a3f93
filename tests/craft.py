"""Hand-made op-log content for tests: ops, packs and partition commits.

Tests need ops that the CLI would never write (other authors, chosen clocks,
broken bytes), so this module builds them with pygit2 directly.
"""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from gitmem import ops


def partition(email: str, clone: str = "c10e0000c10e") -> str:
    return ops.partition_name(email, clone)


def author(name: str) -> ops.Author:
    return ops.Author(name=name.title(), email=f"{name}@example.com")


def add_op(who: str, clock: int, text: str, *, at: int = 1768471200, clone: str = "c10e0000c10e",
           **memory: object) -> bytes:
    a = author(who)
    body = ops.MemoryBody(text=text, **memory)  # type: ignore[arg-type]
    return ops.encode(ops.AddOp(v=1, author=a, partition=partition(a.email, clone),
                                clock=clock, at=at, memory=body))


def retire_op(kind: str, who: str, clock: int, target: str, *, reason: str | None = None,
              at: int = 1768471200, clone: str = "c10e0000c10e") -> bytes:
    a = author(who)
    cls = ops.ForgetOp if kind == "forget" else ops.InvalidateOp
    return ops.encode(cls(v=1, author=a, partition=partition(a.email, clone), clock=clock,
                          at=at, target=target, reason=reason))


def commit_packs(repo_path: Path, packs: list[bytes], parent: str | None = None,
                 name: str = "Test", email: str = "test@example.com") -> list[str]:
    """Write a chain of commits, one per pack (raw pack bytes); refs untouched."""
    repo = pygit2.Repository(str(repo_path))
    sig = pygit2.Signature(name, email, 1768471200, 0)
    out: list[str] = []
    prev = pygit2.Oid(hex=parent) if parent else None
    for data in packs:
        blob = repo.create_blob(data)
        tb = repo.TreeBuilder()
        tb.insert("ops.jsonl", blob, FileMode.BLOB)
        cid = repo.create_commit(None, sig, sig, "test pack\n", tb.write(),
                                 [prev] if prev is not None else [])
        out.append(str(cid))
        prev = cid
    return out


def set_ref(repo_path: Path, ref: str, commit: str) -> None:
    repo = pygit2.Repository(str(repo_path))
    repo.references.create(ref, pygit2.Oid(hex=commit), force=True)


def push_flood(clone: Path, lines: list[bytes], *, name: str = "Mallory",
               email: str = "mallory@example.com") -> None:
    """Push ``lines`` (op lines) as one teammate's partition, 500 ops a commit,
    from ``clone`` to its origin: what a hostile teammate's push looks like."""
    import subprocess

    packs = [b"\n".join(lines[i:i + 500]) + b"\n" for i in range(0, len(lines), 500)]
    tip = commit_packs(clone, packs, name=name, email=email)[-1]
    ref = f"refs/memory/{partition(email)}"
    set_ref(clone, ref, tip)
    subprocess.run(["git", "push", "-q", "origin", f"{ref}:{ref}"], cwd=clone, check=True)


def varied_records(n: int) -> str:
    """``n`` import lines of every shape a vector is made from: keys (a key set twice:
    the later line replaces the earlier), tags, entities (about), long texts embedded
    whole and in chunks, and the same text twice (one row shared by two memories)."""
    out = []
    for i in range(n):
        text = f"the worker {i} retries the queue after {i % 7} seconds; see lib/q{i}.py"
        if i % 25 == 0:
            text = "\n".join(f"step {j}: run tools/deploy-{i}-{j}.sh and check the logs"
                             for j in range(40))  # long: embedded whole and in chunks
        rec: dict[str, object] = {"text": text, "tags": [f"t{i % 5}"], "about": [f"svc{i % 3}"]}
        if i % 10 == 0:
            rec["key"] = f"setting.{i % 30}"
        out.append(json.dumps(rec))
    out.append(json.dumps({"text": "the worker 1 retries the queue after 1 seconds; see lib/q1.py"}))
    return "\n".join(out) + "\n"
