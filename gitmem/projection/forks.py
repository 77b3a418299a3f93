"""Forks: one memory replaced twice at once, on two clones that had not synced.

Why this exists: ``--supersedes`` retires a memory in favour of a new one. Two
clones that each replace the same memory before either has synced write two
successors; merging is union, so both are current, and the memory they replaced
names only one of them (``retired_by``: replay's rule picks one). Nothing in the
log is wrong, but a reader that showed the two as if each were the truth would
hide a disagreement. So each current successor is told of the others, the way a
keyed value is told it is in conflict; ``git mem conflicts`` lists them, and a
later ``--supersedes`` of both ends the fork.

A memory's heads: the current memories reached from it by following its
replacements down (through replacements that are no longer current themselves).
A fork point: a memory two or more of whose direct replacements each lead to a
head. Its heads are the fork, unless they all say the same (twins: the same text
replaced it on two clones, which is agreement). So a chain is no fork, nor a
memory that replaced two others (it is one replacement of each), nor a fork's own
ancestors (the fork is reported where it happened, once). Current: active, passed
the gate (a quarantined add replaces nothing), and no losing value of a keyed
conflict (concurrent sets each replace the key's old value: that is the key's
conflict, said as one). Walks stop after WALK memories.
"""

from __future__ import annotations

import sqlite3

from .. import ops
from .tables import STATE_CODE

WALK = 256  # memories one walk may visit (a family of replacements is a handful)
_LIVE = f"m.state = {STATE_CODE['active']} AND m.quarantine IS NULL AND m.shadowed_by IS NULL"


def _children(c: sqlite3.Connection, mid: str) -> list[str]:
    """The memories that replaced ``mid`` (links' primary key: target first)."""
    return [r[0] for r in c.execute(
        "SELECT op FROM links WHERE target = ? AND type = 'supersede' ORDER BY op", (mid,))]


def _parents(c: sqlite3.Connection, mid: str) -> list[str]:
    return [r[0] for r in c.execute(
        "SELECT target FROM links INDEXED BY links_op WHERE op = ? AND type = 'supersede'",
        (mid,))]


def _live(c: sqlite3.Connection, ids: set[str]) -> set[str]:
    if not ids:
        return set()
    found: set[str] = set()
    items = sorted(ids)
    for i in range(0, len(items), 500):
        chunk = items[i:i + 500]
        marks = ",".join("?" * len(chunk))
        found.update(r[0] for r in c.execute(
            f"SELECT m.id FROM memories m WHERE m.digest IN ({marks}) AND {_LIVE}",
            [bytes.fromhex(x) for x in chunk if _hex64(x)]))
    return found


def _hex64(s: str) -> bool:
    return len(s) == 64 and all(ch in "0123456789abcdef" for ch in s)


def _heads(c: sqlite3.Connection, start: str) -> set[str]:
    """The current memories reached from ``start`` (itself included) down its
    replacements. (A current memory has no current replacement: it would be
    superseded. So every current one reached is an end.)"""
    seen, todo = {start}, [start]
    while todo and len(seen) < WALK:
        for child in _children(c, todo.pop()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return _live(c, seen)


def _fork_at(c: sqlite3.Connection, point: str) -> list[str] | None:
    """The heads of the fork at ``point``, sorted; None when it is no fork point."""
    branches = [h for h in (_heads(c, child) for child in _children(c, point)) if h]
    if len(branches) < 2:
        return None
    heads = sorted(set().union(*branches))
    if len(heads) < 2 or len(set(_says(c, heads).values())) < 2:
        return None  # they all say the same: twins, agreement
    return heads


def _says(c: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[int, str | None, str]]:
    """What each of ``ids`` says, as twins compare it (kind, key, normalised text)."""
    marks = ",".join("?" * len(ids))
    return {mid: (kind, key, ops.normalize_text(text or "")) for mid, kind, key, text in c.execute(
        f"SELECT id, kind_code, key, text FROM memories WHERE digest IN ({marks})",
        [bytes.fromhex(x) for x in ids if _hex64(x)])}


def heads(c: sqlite3.Connection, ids: list[str]) -> dict[str, list[str]]:
    """For each of ``ids`` that is a head of a fork: the fork's other heads (sorted)."""
    out: dict[str, list[str]] = {}
    for mid in ids:
        # Up from the memory to every fork point above it (through what it replaced).
        seen, todo = {mid}, [mid]
        others: set[str] = set()
        while todo and len(seen) < WALK:
            for parent in _parents(c, todo.pop()):
                if parent in seen:
                    continue
                seen.add(parent)
                todo.append(parent)
                fork = _fork_at(c, parent)
                if fork is not None and mid in fork:
                    says = _says(c, fork)  # a twin of it is no other side
                    others.update(h for h in fork if says.get(h) != says.get(mid))
        if others:
            out[mid] = sorted(others)
    return out


def all_forks(c: sqlite3.Connection) -> list[list[str]]:
    """Every fork: its heads (sorted), forks in order of their first head."""
    points = [r[0] for r in c.execute(
        "SELECT target FROM links WHERE type = 'supersede' GROUP BY target HAVING count(*) > 1")]
    found = {tuple(f) for f in (_fork_at(c, p) for p in points) if f is not None}
    return sorted(list(f) for f in found)
