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
memory that replaced two others (it is one replacement of each), and a fork is
reported where it happened. Current: active, passed the gate (a quarantined add
replaces nothing), and no losing value of a keyed conflict (concurrent sets each
replace the key's old value: that is the key's conflict, said as one).

The walks are recursive queries (SQLite, in C: a key set 1,500 times is a chain of
1,500 replacements, and a walk step by step in Python cost a recall seconds); ids
are content hashes, so the links hold no cycle and every walk ends.
"""

from __future__ import annotations

import sqlite3

from .. import ops
from .tables import STATE_CODE

_LIVE = f"m.state = {STATE_CODE['active']} AND m.quarantine IS NULL AND m.shadowed_by IS NULL"
# Every memory reached down the replacements of ? (itself included), current ones kept.
_DOWN = f"""
WITH RECURSIVE down(id) AS (
    SELECT ? UNION SELECT l.op FROM links l JOIN down d ON l.target = d.id AND l.type = 'supersede'
)
SELECT d.id FROM down d JOIN memories m ON m.digest = unhex(d.id) WHERE {_LIVE}
"""
# The memories ? replaced, through any number of replacements, that two or more
# memories replaced directly: the fork points it may be a head of.
_UP = """
WITH RECURSIVE up(id) AS (
    SELECT ? UNION SELECT l.target FROM links l INDEXED BY links_op JOIN up u
        ON l.op = u.id AND l.type = 'supersede'
)
SELECT u.id FROM up u WHERE (SELECT count(*) FROM links l
    WHERE l.target = u.id AND l.type = 'supersede') > 1
"""
_POINTS = "SELECT target FROM links WHERE type = 'supersede' GROUP BY target HAVING count(*) > 1"


def _children(c: sqlite3.Connection, mid: str) -> list[str]:
    """The memories that replaced ``mid`` (links' primary key: target first)."""
    return [r[0] for r in c.execute(
        "SELECT op FROM links WHERE target = ? AND type = 'supersede' ORDER BY op", (mid,))]


def _hex64(s: str) -> bool:
    return len(s) == 64 and all(ch in "0123456789abcdef" for ch in s)


def fork_at(c: sqlite3.Connection, point: str) -> list[str] | None:
    """The heads of the fork at ``point``, sorted; None when it is no fork point."""
    children = _children(c, point)
    if len(children) < 2:
        return None
    branches = [h for h in ({r[0] for r in c.execute(_DOWN, (child,))} for child in children) if h]
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
    if c.execute(_POINTS + " LIMIT 1").fetchone() is None:
        return {}  # no memory was ever replaced twice: no fork anywhere
    out: dict[str, list[str]] = {}
    for mid in ids:
        others: set[str] = set()
        for (point,) in c.execute(_UP, (mid,)).fetchall():
            fork = fork_at(c, point)
            if fork is not None and mid in fork:
                says = _says(c, fork)  # a twin of it is no other side
                others.update(h for h in fork if says.get(h) != says.get(mid))
        if others:
            out[mid] = sorted(others)
    return out


def all_forks(c: sqlite3.Connection) -> list[tuple[str, list[str]]]:
    """Every fork: (its fork point, its heads), in order of the point."""
    out = []
    for (point,) in c.execute(_POINTS + " ORDER BY target").fetchall():
        fork = fork_at(c, point)
        if fork is not None:
            out.append((point, fork))
    return out
