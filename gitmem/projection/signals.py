"""What ranking and growth read beyond the channels: salience, sessions, word
evidence, trust, paths, procedure outcomes.

Why a module of its own: these queries feed recall's fusion and factors
(salience's inputs, a session's neighbours, the word counts relevance weighs,
the ``trust`` and ``path`` factors), capture (a procedure naming a command)
and skills (outcomes per procedure); queries.py keeps the reads every command
makes.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable

from .queries import by_ids
from .rows import digest, digests, spell
from .scope import Scope, filters
from .tables import KIND_CODE, KINDS

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


def salience_inputs(
    c: sqlite3.Connection, ids: Iterable[str], until: int | None = None,
    horizon: int | None = None,
) -> dict[str, tuple[str, float, int, int, int | None]]:
    """What salience needs of each memory: (kind, importance, recorded at,
    confirmations, time of the last one), counting confirm ops up to ``until``.

    Times are the writers' claims. With ``horizon`` (now plus a small skew), a
    memory recorded after it is given the latest believable time among the ops
    its writer could have seen (Lamport clock not above its own, time not after
    the horizon): a clock set to 9999 buys no freshness, and the memory decays
    like any other. A confirmation dated after the horizon renews nothing."""
    when = "" if until is None else " AND c.at <= ?"
    extra = [] if until is None else [until]
    out: dict[str, tuple[str, float, int, int, int | None]] = {}
    ids = list(ids)
    for i in range(0, len(ids), 400):
        chunk = ids[i : i + 400]
        marks = ",".join("?" * len(chunk))
        for key, kind, imp, at, n, last in c.execute(
            "SELECT m.digest, m.kind_code, m.importance, m.at, count(c.id), max(c.at) "
            "FROM memories m LEFT JOIN ops c ON c.target = m.id AND c.type = 'confirm' "
            f"AND c.outcome IS NOT 'failed'{when} "
            f"WHERE m.digest IN ({marks}) GROUP BY m.digest",
            [*extra, *digests(chunk)],
        ):
            # (the row's numbers: the kind's, twice the importance; see tables.py)
            out[spell(key)] = (KINDS[kind], float(imp) / 2, int(at), int(n), last)
    if horizon is not None:
        late = [mid for mid, v in out.items() if v[2] > horizon]
        bound = _believable_times(c, late, horizon) if late else {}
        for mid, (kind, imp, at, n, last) in out.items():
            if last is not None and last > horizon:
                last = None
            out[mid] = (kind, imp, bound.get(mid, at), n, last)
    return out


def _believable_times(c: sqlite3.Connection, ids: list[str], horizon: int) -> dict[str, int]:
    """For each memory, the latest op time not after ``horizon`` among ops whose
    Lamport clock is not above the memory's: one walk of the ops in clock order,
    however many memories ask (a flood stays linear). When none comes before it,
    the oldest believable time in the log (it claims a place before everything
    we can date), or ``horizon`` when nothing in the log can be dated."""
    clocks = sorted((clock, mid) for mid, clock in by_ids(
        c, "SELECT id, clock FROM memories WHERE digest IN", digests(ids)))
    out: dict[str, int] = {}
    if not clocks:
        return out
    best, i = 0, 0
    for clock, at in c.execute("SELECT clock, at FROM memories WHERE clock <= ? UNION ALL "
                               "SELECT clock, at FROM ops WHERE clock <= ? ORDER BY clock",
                               (clocks[-1][0], clocks[-1][0])):
        while i < len(clocks) and clocks[i][0] < clock:
            out[clocks[i][1]] = best
            i += 1
        if at <= horizon:
            best = max(best, at)
    for _, mid in clocks[i:]:
        out[mid] = best
    if any(v == 0 for v in out.values()):
        oldest = c.execute("SELECT min(at) FROM (SELECT at FROM memories WHERE at <= ? "
                           "UNION ALL SELECT at FROM ops WHERE at <= ?)",
                           (horizon, horizon)).fetchone()[0]
        fallback = horizon if oldest is None else int(oldest)
        out = {mid: v or fallback for mid, v in out.items()}
    return out


def neighbours(c: sqlite3.Connection, ids: list[str], *,
               scope: Scope) -> dict[str, tuple[str | None, str | None]]:
    """For each memory with a session: (the next, the previous) memory of that
    session in log order (clock, id) that pass the filters, None where there is
    none (with filters, the next one visible: not always the very next)."""
    out: dict[str, tuple[str | None, str | None]] = {}
    for mid in ids:
        row = c.execute("SELECT session, clock FROM memories WHERE digest = ?",
                        (digest(mid),)).fetchone()
        if row is None or row[0] is None:
            continue
        session, clock = row
        found: list[str | None] = []
        for cmp, order in ((">", "ASC"), ("<", "DESC")):
            sql = (
                "SELECT m.id FROM memories m WHERE m.session = ? AND "
                f"(m.clock {cmp} ? OR (m.clock = ? AND m.digest {cmp} ?))"
            )
            sql, args = filters(sql, [session, clock, clock, digest(mid)], scope)
            sql += f" ORDER BY m.clock {order}, m.digest {order} LIMIT 1"
            r = c.execute(sql, args).fetchone()
            found.append(r[0] if r else None)
        out[mid] = (found[0], found[1])
    return out


# A question mark that ends a sentence (then space, the end, or a closing quote
# or bracket), in Latin, CJK or Arabic script: not the one in a URL's query
# string ("?orgId=1") or Rust's "foo()?;".
# (Compiled by re on first use, and cached there: a command that never asks pays nothing.)
_ASKS = r"[?\uff1f\u061f](?=\s|$|[\"')\]}\u201d\u2019])"


def questions(c: sqlite3.Connection, ids: list[str]) -> set[str]:
    """Which of ``ids`` ask something: a sentence of their text ends with a question mark."""
    return {mid for mid, text in by_ids(c, "SELECT id, text FROM memories WHERE digest IN",
                                        digests(ids))
            if text and re.search(_ASKS, text)}


DF_CAP = 1000  # counting past this is wasted work: the weight barely moves


def term_frequencies(c: sqlite3.Connection,
                     matches: dict[str, str]) -> tuple[int, dict[str, int]]:
    """(how many memory rows there are, word -> how many memories hold it), from FTS5.

    ``matches``: word -> its FTS5 MATCH expression (stemmed by the index, as the
    lexical channel sees it). Document frequencies are counted up to DF_CAP, so
    a word in a quarter of 100k memories costs what one in a thousand does; 0
    means no memory holds the word.
    """
    top = c.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0
    return int(top), {word: int(c.execute(
        "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)",
        (match, DF_CAP)).fetchone()[0]) for word, match in matches.items()}


def term_presence(c: sqlite3.Connection, ids: list[str],
                  matches: dict[str, str]) -> dict[str, set[str]]:
    """memory id -> which of ``matches``' words its indexed columns hold (text, key, tags,
    entities, and the words the thesaurus adds: concepts.py)."""
    rows = dict(by_ids(c, "SELECT id, fts FROM memories WHERE digest IN", digests(ids)))
    out: dict[str, set[str]] = {mid: set() for mid in ids}
    for mid, row in rows.items():
        if row is None:
            continue
        for word, match in matches.items():
            if c.execute("SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? AND rowid = ?",
                         (match, row)).fetchone():
                out[mid].add(word)
    return out
