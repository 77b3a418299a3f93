"""What ranking and growth read beyond the text: trust, paths, procedure outcomes.

Why a module of its own: these queries feed the factors recall multiplies in
(the ``trust`` and ``path`` factors), capture (a procedure naming a command)
and skills (outcomes per procedure); queries.py keeps the reads every command
makes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from .queries import by_ids
from .rows import digests
from .tables import KIND_CODE

PROCEDURE = KIND_CODE["procedure"]  # (kind_code: memories_top holds it)


# A partition's first session counts as a brain dump (trusted like an agent's
# memories) when it wrote at least this many memories.
BRAIN_DUMP = 10


def unvouched(c: sqlite3.Connection, ids: Iterable[str]) -> set[str]:
    """Those of ``ids`` an agent wrote, or that a clone's first session poured in
    (BRAIN_DUMP memories or more), that no person and no second author has
    confirmed since: ranking trusts them less (docs/growth.md, Trust)."""
    out: set[str] = set()
    firsts: dict[int, str | None] = {}
    dumps: dict[tuple[int, str], bool] = {}
    for mid, by, session, part, vouched in by_ids(
            c, "SELECT m.id, m.by, m.session, m.part, EXISTS(SELECT 1 FROM ops o "
               "WHERE o.target = m.id AND o.type = 'confirm' AND o.outcome IS NOT 'failed' "
               "AND (o.by IS NULL OR (SELECT lower(a.email) FROM authors a WHERE a.id = o.author)"
               " != (SELECT lower(a.email) FROM authors a WHERE a.id = m.author))) "
               "FROM memories m WHERE m.digest IN", digests(ids)):
        if vouched:
            continue
        if by is not None:
            out.add(mid)
            continue
        if session is None:
            continue
        if part not in firsts:
            row = c.execute("SELECT session FROM memories WHERE part = ? AND session IS NOT NULL "
                            "ORDER BY clock, id LIMIT 1", (part,)).fetchone()
            firsts[part] = row[0] if row else None
        if firsts[part] != session:
            continue
        if (part, session) not in dumps:
            n = c.execute("SELECT count(*) FROM memories WHERE session = ? AND part = ?",
                          (session, part)).fetchone()[0]
            dumps[(part, session)] = n >= BRAIN_DUMP
        if dumps[(part, session)]:
            out.add(mid)
    return out


def procedures_naming(c: sqlite3.Connection, command: str, limit: int = 5) -> list[str]:
    """Current procedures whose text holds ``command`` verbatim, newest first."""
    return [r[0] for r in c.execute(
        f"SELECT id FROM memories WHERE status = 'active' AND kind_code = {PROCEDURE} "
        "AND quarantine IS NULL AND shadowed_by IS NULL AND instr(text, ?) > 0 "
        "ORDER BY clock DESC, id LIMIT ?", (command, limit))]


def procedure_outcomes(c: sqlite3.Connection) -> list[tuple[str, str, str | None, list[str],
                                                          int, int, int | None, int]]:
    """Current procedures with recorded outcomes, and skill references with or
    without: (id, text, key, tags, worked, failed, time of the last outcome,
    time recorded)."""
    rows = c.execute(
        "SELECT m.id, m.text, m.key, m.tags, count(o.id), sum(o.outcome = 'worked'), "
        "sum(o.outcome = 'failed'), max(o.at), m.at FROM memories m LEFT JOIN ops o "
        "ON o.target = m.id AND o.type = 'confirm' AND o.outcome IS NOT NULL "
        f"WHERE m.kind_code = {PROCEDURE} AND m.status = 'active' AND m.quarantine IS NULL "
        "AND m.shadowed_by IS NULL GROUP BY m.id "
        "HAVING count(o.id) > 0 OR EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = 'skill') "
        "ORDER BY m.id")
    return [(mid, text, key, json.loads(tags), int(w or 0), int(f or 0), last, at)
            for mid, text, key, tags, _, w, f, last, at in rows]


def paths_of(c: sqlite3.Connection, ids: Iterable[str]) -> dict[str, list[str]]:
    """The paths each memory is tied to (its anchors and the paths its text names)."""
    out: dict[str, list[str]] = {}
    for mid, raw in by_ids(c, "SELECT id, paths FROM memories WHERE digest IN", digests(ids)):
        try:
            paths = json.loads(raw or "[]")
        except ValueError:
            paths = []
        out[mid] = [p for p in paths if isinstance(p, str)]
    return out
