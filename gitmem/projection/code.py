"""Code anchors in the projection: each memory's current anchors, and how each
compares with HEAD.

A memory's anchors are those of the latest op that anchored it, in (clock,
op id) order: its add, or a confirm that re-anchored it at the code as it was
then. That choice depends on the set of ops only, never on their arrival order.
How an anchor compares with HEAD comes from git (``api.anchoring``): it is
stored per distinct anchor with the HEAD it was computed for, and replaced
when HEAD moves. Both tables are derived, like every other table here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

import msgspec

from .. import ops

SCHEMA = """
-- One row per op that anchored a memory (its add, or a re-anchoring confirm).
CREATE TABLE code_anchor_sets(
    memory TEXT NOT NULL, op TEXT NOT NULL, clock INTEGER NOT NULL,
    PRIMARY KEY(memory, clock, op)
) WITHOUT ROWID;
CREATE INDEX code_anchor_sets_op ON code_anchor_sets(op);
CREATE TABLE code_anchors(
    op TEXT NOT NULL, path TEXT NOT NULL, type TEXT NOT NULL, oid TEXT NOT NULL,
    commit_id TEXT, first_line INTEGER, last_line INTEGER, symbol TEXT
);
CREATE INDEX code_anchors_op ON code_anchors(op);
-- Every path an op tied a memory to (anchored at HEAD or not), for 'about' and
-- the pre-tool hook: found by the path, a folder above it or below it.
CREATE TABLE memory_paths(
    path TEXT NOT NULL, memory TEXT NOT NULL, op TEXT NOT NULL,
    PRIMARY KEY(path, memory, op)
) WITHOUT ROWID;
CREATE INDEX memory_paths_op ON memory_paths(op);
-- How each distinct anchor compares with HEAD (meta 'code_head'): a Change as JSON.
CREATE TABLE code_states(
    path TEXT NOT NULL, oid TEXT NOT NULL, commit_id TEXT NOT NULL,
    first_line INTEGER NOT NULL, last_line INTEGER NOT NULL, change TEXT NOT NULL,
    PRIMARY KEY(path, oid, commit_id, first_line, last_line)
) WITHOUT ROWID;
"""

# The current set of each memory: its latest anchoring op. As a condition on
# ``code_anchor_sets s`` (so a filter on s.memory narrows it first), and as a table.
_LATEST = ("s.op = (SELECT t.op FROM code_anchor_sets t WHERE t.memory = s.memory "
           "ORDER BY t.clock DESC, t.op DESC LIMIT 1)")
_CURRENT = f"SELECT s.memory, s.op FROM code_anchor_sets s WHERE {_LATEST}"


def record(c: sqlite3.Connection, memory: str, op_id: str, clock: int,
           anchors: ops.Anchors, *, reanchor: bool = False) -> None:
    """Fold: ``op_id`` ties ``memory`` to paths; with code anchors (or as a
    re-anchoring confirm) it becomes a candidate for the memory's current set."""
    c.executemany("INSERT OR IGNORE INTO memory_paths(path, memory, op) VALUES (?, ?, ?)",
                  [(p.rstrip("/") or ".", memory, op_id)
                   for p in {*anchors.paths, *(a.path for a in anchors.code)}])
    if not anchors.code and not reanchor:
        return
    c.execute("INSERT OR IGNORE INTO code_anchor_sets(memory, op, clock) VALUES (?, ?, ?)",
              (memory, op_id, clock))
    c.execute("DELETE FROM code_anchors WHERE op = ?", (op_id,))
    c.executemany(
        "INSERT INTO code_anchors(op, path, type, oid, commit_id, first_line, last_line, symbol) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(op_id, a.path, a.type, a.oid, anchors.commit, a.start, a.end, a.symbol)
         for a in anchors.code])


def drop_memory(c: sqlite3.Connection, memory: str) -> None:
    """Fold: a forgotten memory keeps no anchors (paths are content)."""
    c.execute("DELETE FROM code_anchors WHERE op IN "
              "(SELECT op FROM code_anchor_sets WHERE memory = ?)", (memory,))
    c.execute("DELETE FROM code_anchor_sets WHERE memory = ?", (memory,))
    c.execute("DELETE FROM memory_paths WHERE memory = ?", (memory,))


def drop_ops_of(c: sqlite3.Connection, part: int | None) -> None:
    """Fold: a partition's ops are going (rewritten or removed)."""
    for table in ("code_anchors", "code_anchor_sets", "memory_paths"):
        # An add's op id is its memory's id (its row is in memories, not ops).
        c.execute(f"DELETE FROM {table} WHERE op IN (SELECT id FROM ops WHERE part = ?) "
                  "OR op IN (SELECT id FROM memories WHERE part = ?)", (part, part))


# -- queries -------------------------------------------------------------------------


def code_head(c: sqlite3.Connection) -> str | None:
    """The HEAD ``code_states`` were computed for, or None."""
    row = c.execute("SELECT value FROM meta WHERE key = 'code_head'").fetchone()
    return str(row[0]) if row else None


def code_anchor_rows(c: sqlite3.Connection) -> list[tuple[str, str, str, str, str | None,
                                                          int | None, int | None]]:
    """(memory, path, type, oid, commit, first line, last line) of every current anchor
    of a memory that is not forgotten."""
    return c.execute(
        f"SELECT cur.memory, a.path, a.type, a.oid, a.commit_id, a.first_line, a.last_line "
        f"FROM ({_CURRENT}) cur JOIN code_anchors a ON a.op = cur.op "
        "JOIN memories m ON m.digest = unhex(cur.memory) WHERE m.status != 'forgotten' "
        "ORDER BY cur.memory, a.path").fetchall()


def code_states(c: sqlite3.Connection, ids: Iterable[str]) -> list[tuple[str, str, dict[str, object]]]:
    """(memory, path, change as a dict) for each current anchor of ``ids`` with a
    computed state (see ``set_code_states``)."""
    wanted = list(dict.fromkeys(ids))
    out: list[tuple[str, str, dict[str, object]]] = []
    for lo in range(0, len(wanted), 500):
        chunk = wanted[lo: lo + 500]
        marks = ",".join("?" * len(chunk))
        for mid, path, change in c.execute(
            "SELECT s.memory, a.path, st.change FROM code_anchor_sets s "
            "JOIN code_anchors a ON a.op = s.op "
            "JOIN code_states st ON st.path = a.path AND st.oid = a.oid "
            "AND st.commit_id = coalesce(a.commit_id, '') "
            "AND st.first_line = coalesce(a.first_line, 0) AND st.last_line = coalesce(a.last_line, 0) "
            f"WHERE s.memory IN ({marks}) AND {_LATEST} ORDER BY s.memory, a.path", chunk):
            out.append((mid, path, json.loads(change)))
    return out


def anchored_to(c: sqlite3.Connection, paths: Iterable[str]) -> list[str]:
    """Ids of memories tied to any of ``paths``: to the path itself, to a folder
    above it, or (for a folder) to anything inside it. Index lookups only."""
    return list(dict.fromkeys(mid for mid, _, _ in ties(c, paths)))


def ties(c: sqlite3.Connection, paths: Iterable[str]) -> list[tuple[str, str, str]]:
    """(memory, the path asked for, the path the memory is tied to) for ``anchored_to``."""
    out: list[tuple[str, str, str]] = []
    for path in paths:
        p = path.strip("/") or "."
        parts = p.split("/") if p != "." else []
        above = [".", *("/".join(parts[:i]) for i in range(1, len(parts) + 1))]
        # Inside p: every path in [p + "/", p + "0"): '0' follows '/' in byte order.
        inside = ("", "\U0010ffff") if p == "." else (p + "/", p + "0")
        marks = ",".join("?" * len(above))
        out += [(mid, p, tied) for mid, tied in c.execute(
            f"SELECT memory, path FROM memory_paths WHERE path IN ({marks}) "
            "UNION SELECT memory, path FROM memory_paths WHERE path >= ? AND path < ? "
            "ORDER BY 1, 2", (*above, *inside))]
    return out


def set_code_states(c: sqlite3.Connection, head: str,
                    states: dict[tuple[str, str, str | None, int | None, int | None], object],
                    *, complete: bool = True) -> None:
    """Replace every anchor's state with those computed for ``head``; not
    ``complete``: some anchors are still to compare (a front end's budget ran out),
    so ``code_head`` is left unset and ``partial_code_states`` gives these back to
    the next read, which goes on from there."""
    c.execute("DELETE FROM code_states")
    c.executemany(
        "INSERT OR REPLACE INTO code_states(path, oid, commit_id, first_line, last_line, change) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(path, oid, commit or "", first or 0, last or 0, msgspec.json.encode(change).decode())
         for (path, oid, commit, first, last), change in states.items()])
    c.execute("DELETE FROM meta WHERE key IN ('code_head', 'code_partial')")
    c.execute("INSERT INTO meta(key, value) VALUES (?, ?)",
              ("code_head" if complete else "code_partial", head))


def partial_code_states(c: sqlite3.Connection, head: str,
                        ) -> dict[tuple[str, str, str | None, int | None, int | None], object]:
    """The states an earlier read computed for ``head`` before its budget ran out
    (``set_code_states(complete=False)``), by anchor; empty for any other HEAD."""
    row = c.execute("SELECT value FROM meta WHERE key = 'code_partial'").fetchone()
    if row is None or row[0] != head:
        return {}
    return {(path, oid, commit or None, first or None, last or None): json.loads(change)
            for path, oid, commit, first, last, change in c.execute(
                "SELECT path, oid, commit_id, first_line, last_line, change FROM code_states")}


def current_anchors(c: sqlite3.Connection, memory: str) -> ops.Anchors | None:
    """A memory's current code anchors (of its latest anchoring op), or None."""
    rows = c.execute(
        "SELECT a.path, a.type, a.oid, a.commit_id, a.first_line, a.last_line, a.symbol "
        f"FROM code_anchor_sets s JOIN code_anchors a ON a.op = s.op "
        f"WHERE s.memory = ? AND {_LATEST} ORDER BY a.rowid", (memory,)).fetchall()
    if not rows:
        return None
    code = [ops.CodeAnchor(path=p, type=t, oid=o, start=f, end=last, symbol=s)
            for p, t, o, _, f, last, s in rows]
    return ops.Anchors(commit=rows[0][3], paths=[a.path for a in code], code=code)


def bootstrapped(c: sqlite3.Connection) -> list[tuple[str, str, str, int, int]]:
    """(memory, file, text, first line, last line) of current memories ``git mem
    bootstrap`` wrote, from their line-range anchors."""
    return c.execute(
        "SELECT m.id, a.path, m.text, a.first_line, a.last_line FROM code_anchor_sets s "
        "JOIN code_anchors a ON a.op = s.op JOIN memories m ON m.digest = unhex(s.memory) "
        "WHERE m.source = 'bootstrap' AND m.status = 'active' AND m.text IS NOT NULL "
        f"AND a.first_line IS NOT NULL AND {_LATEST} ORDER BY a.path, a.first_line").fetchall()
