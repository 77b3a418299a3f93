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

from .queries import Kept, by_ids
from .rows import digests
from .scope import Scope, filters
from .tables import KIND_CODE, KINDS

PROCEDURE = KIND_CODE["procedure"]  # (kind_code: memories_top holds it)


# A partition's first session counts as a brain dump (trusted like an agent's
# memories) when it wrote at least this many memories.
BRAIN_DUMP = 10


def unvouched(c: sqlite3.Connection, ids: Iterable[str], kept: Kept | None = None) -> set[str]:
    """Those of ``ids`` an agent wrote, or that a clone's first session poured in
    (BRAIN_DUMP memories or more), that no person and no second author has
    confirmed since: ranking trusts them less (docs/growth.md, Trust). ``kept``:
    each partition's first session, and whether it was a brain dump, kept while
    the tables are unchanged (two statements a partition, then a session, each recall)."""
    out: set[str] = set()
    values = kept.values(c) if kept is not None else {}
    # (A memory neither an agent wrote nor a session holds is never doubted: not read.)
    for mid, by, session, part, vouched in by_ids(
            c, "SELECT m.id, m.by, m.session, m.part, EXISTS(SELECT 1 FROM ops o "
               "WHERE o.target = m.id AND o.type = 'confirm' AND o.outcome IS NOT 'failed' "
               "AND (o.by IS NULL OR (SELECT lower(a.email) FROM authors a WHERE a.id = o.author)"
               " != (SELECT lower(a.email) FROM authors a WHERE a.id = m.author))) "
               "FROM memories m WHERE (m.by IS NOT NULL OR m.session IS NOT NULL) "
               "AND m.digest IN", digests(ids)):
        if vouched:
            continue
        if by is not None:
            out.add(mid)
            continue
        if session is None:
            continue
        first = ("first session", part)
        if first not in values:
            row = c.execute("SELECT session FROM memories WHERE part = ? AND session IS NOT NULL "
                            "ORDER BY clock, id LIMIT 1", (part,)).fetchone()
            values[first] = row[0] if row else None
        if values[first] != session:
            continue
        dump = ("brain dump", part, session)
        if dump not in values:
            n = c.execute("SELECT count(*) FROM memories WHERE session = ? AND part = ?",
                          (session, part)).fetchone()[0]
            values[dump] = n >= BRAIN_DUMP
        if values[dump]:
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
    when = "" if until is None else " AND at <= ?"
    extra = [] if until is None else [until]
    out: dict[str, tuple[str, float, int, int, int | None]] = {}
    ids = list(ids)
    for i in range(0, len(ids), 400):
        chunk = ids[i : i + 400]
        keys = digests(chunk)
        names = dict(zip(keys, chunk))  # (an id is its digest spelled: spell(key))
        marks = ",".join("?" * len(chunk))
        # The rows, then the confirmations of those found: a join looked ops up by
        # each row's id, which SQL spelled in hex for every row (most have none).
        found: list[str] = []
        for key, kind, imp, at in c.execute(
                f"SELECT digest, kind_code, importance, at FROM memories WHERE digest IN ({marks}) "
                "ORDER BY digest", keys):
            found.append(names[key])
            # (the row's numbers: the kind's, twice the importance; see tables.py)
            out[found[-1]] = (KINDS[kind], float(imp) / 2, int(at), 0, None)
        if found:
            for mid, n, last in c.execute(
                    "SELECT target, count(*), max(at) FROM ops WHERE type = 'confirm' "
                    f"AND outcome IS NOT 'failed'{when} "
                    f"AND target IN ({','.join('?' * len(found))}) GROUP BY target",
                    [*extra, *found]):
                kind, imp, at, _, _ = out[mid]
                out[mid] = (kind, imp, at, int(n), last)
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
    # Every memory's session and clock in one statement (most have none: a statement
    # each was ~20 a recall), then both neighbours of each in one.
    keys = digests(ids)
    place = {key: (session, clock) for key, session, clock in by_ids(
        c, "SELECT digest, session, clock FROM memories WHERE session IS NOT NULL AND digest IN",
        keys)}
    for mid, key in zip(ids, keys):
        if key not in place:
            continue
        session, clock = place[key]
        parts: list[str] = []
        args: list[object] = []
        for cmp, order in ((">", "ASC"), ("<", "DESC")):
            sql, more = filters(
                "SELECT m.id FROM memories m WHERE m.session = ? AND "
                f"(m.clock {cmp} ? OR (m.clock = ? AND m.digest {cmp} ?))",
                [session, clock, clock, key], scope)
            parts.append(f"{sql} ORDER BY m.clock {order}, m.digest {order} LIMIT 1")
            args += more
        found: list[str | None] = [None, None]
        for side, other in c.execute(f"SELECT 0, * FROM ({parts[0]}) UNION ALL "
                                     f"SELECT 1, * FROM ({parts[1]})", args):
            found[side] = other
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


def doc_counts(c: sqlite3.Connection, matches: Iterable[str], cap: int,
               kept: Kept | None = None) -> list[int]:
    """How many memories each FTS5 MATCH expression of ``matches`` finds, counted up
    to ``cap``. With ``kept``, each count is kept while the tables are unchanged: a
    recall counts its words twice (the lexical channel's plan, then relevance's
    weights: lexical.BROAD and DF_CAP are one cap), and an agent's questions share
    their words."""
    values = kept.values(c) if kept is not None else {}
    out = []
    for match in matches:
        n = values.get(("df", match, cap))
        if n is None:
            n = values[("df", match, cap)] = int(c.execute(
                "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts "
                "MATCH ? LIMIT ?)", (match, cap)).fetchone()[0])
        out.append(n)
    return out


def term_frequencies(c: sqlite3.Connection, matches: dict[str, str],
                     kept: Kept | None = None) -> tuple[int, dict[str, int]]:
    """(how many memory rows there are, word -> how many memories hold it), from FTS5.

    ``matches``: word -> its FTS5 MATCH expression (stemmed by the index, as the
    lexical channel sees it). Document frequencies are counted up to DF_CAP, so
    a word in a quarter of 100k memories costs what one in a thousand does; 0
    means no memory holds the word. ``kept``: see doc_counts.
    """
    top = c.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0
    return int(top), dict(zip(matches, doc_counts(c, matches.values(), DF_CAP, kept)))


def term_presence(c: sqlite3.Connection, ids: list[str],
                  matches: dict[str, str]) -> dict[str, set[str]]:
    """memory id -> which of ``matches``' words its indexed columns hold (text, key, tags,
    entities, and the words the thesaurus adds: concepts.py)."""
    out: dict[str, set[str]] = {mid: set() for mid in ids}
    rows = {row: mid for mid, row in by_ids(
        c, "SELECT id, fts FROM memories WHERE digest IN", digests(ids)) if row is not None}
    if not rows:
        return out
    # One statement a word, over every row (FTS5 looks each rowid up as it would
    # alone: a statement a row and word was ~22 a recall, each paying its own setup).
    for word, match in matches.items():
        for (row,) in by_ids(c, "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
                                "AND rowid IN", rows, [match]):
            out[rows[row]].add(word)
    return out
