"""The reads a recall makes around its channels, batched and kept (perf39): the same
answers as the statement-a-row forms they replace, and nothing kept past a write."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

import gitmem
from gitmem.projection import queries, signals
from gitmem.projection.rows import digest, digests, spell
from gitmem.projection.scope import Scope, filters
from gitmem.projection.tables import KINDS


# -- the forms replaced, as they were (one statement per memory, per word) ---------

def _neighbours(c: sqlite3.Connection, ids: list[str], *,
                scope: Scope) -> dict[str, tuple[str | None, str | None]]:
    out: dict[str, tuple[str | None, str | None]] = {}
    for mid in ids:
        row = c.execute("SELECT session, clock FROM memories WHERE digest = ?",
                        (digest(mid),)).fetchone()
        if row is None or row[0] is None:
            continue
        session, clock = row
        found: list[str | None] = []
        for cmp, order in ((">", "ASC"), ("<", "DESC")):
            sql = ("SELECT m.id FROM memories m WHERE m.session = ? AND "
                   f"(m.clock {cmp} ? OR (m.clock = ? AND m.digest {cmp} ?))")
            sql, args = filters(sql, [session, clock, clock, digest(mid)], scope)
            sql += f" ORDER BY m.clock {order}, m.digest {order} LIMIT 1"
            r = c.execute(sql, args).fetchone()
            found.append(r[0] if r else None)
        out[mid] = (found[0], found[1])
    return out


def _unvouched(c: sqlite3.Connection, ids: list[str]) -> set[str]:
    out: set[str] = set()
    firsts: dict[int, str | None] = {}
    dumps: dict[tuple[int, str], bool] = {}
    for mid, by, session, part, vouched in queries.by_ids(
            c, "SELECT m.id, m.by, m.session, m.part, EXISTS(SELECT 1 FROM ops o "
               "WHERE o.target = m.id AND o.type = 'confirm' AND o.outcome IS NOT 'failed' "
               "AND (o.by IS NULL OR (SELECT lower(a.email) FROM authors a WHERE a.id = o.author)"
               " != (SELECT lower(a.email) FROM authors a WHERE a.id = m.author))) "
               "FROM memories m WHERE m.digest IN", digests(ids)):
        if vouched or (by is None and session is None):
            continue
        if by is not None:
            out.add(mid)
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
            dumps[(part, session)] = n >= signals.BRAIN_DUMP
        if dumps[(part, session)]:
            out.add(mid)
    return out


def _term_presence(c: sqlite3.Connection, ids: list[str],
                   matches: dict[str, str]) -> dict[str, set[str]]:
    rows = dict(queries.by_ids(c, "SELECT id, fts FROM memories WHERE digest IN", digests(ids)))
    out: dict[str, set[str]] = {mid: set() for mid in ids}
    for mid, row in rows.items():
        for word, match in matches.items():
            if row is not None and c.execute(
                    "SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? AND rowid = ?",
                    (match, row)).fetchone():
                out[mid].add(word)
    return out


def _salience_rows(c: sqlite3.Connection, ids: list[str],
                   until: int | None) -> list[tuple[str, tuple[Any, ...]]]:
    when = "" if until is None else " AND c.at <= ?"
    marks = ",".join("?" * len(ids))
    return [(spell(key), (KINDS[kind], float(imp) / 2, int(at), int(n), last))
            for key, kind, imp, at, n, last in c.execute(
                "SELECT m.digest, m.kind_code, m.importance, m.at, count(c.id), max(c.at) "
                "FROM memories m LEFT JOIN ops c ON c.target = m.id AND c.type = 'confirm' "
                f"AND c.outcome IS NOT 'failed'{when} WHERE m.digest IN ({marks}) "
                "GROUP BY m.digest", [*([] if until is None else [until]), *digests(ids)])]


def _best_per_memory(c: sqlite3.Connection, slots: list[int], distance: Any,
                     scope: Scope) -> list[tuple[float, str]]:
    sql = (f"SELECT r.slot, m.digest FROM vec_rows r CROSS JOIN memories m "
           f"ON m.rowid = r.memory WHERE r.slot IN ({','.join('?' * len(slots))})")
    sql, args = filters(sql, list(slots), scope)
    best: dict[bytes, float] = {}
    for slot, key in c.execute(sql, args):
        d = round(distance(slot), 6)
        if d < best.get(key, 2.0):
            best[key] = d
    return [(d, spell(key)) for d, key in sorted((d, key) for key, d in best.items())]


# -- a small store with what these reads tell apart --------------------------------

WORDS = ["gateway", "deploy", "cache", "postgres", "unknownword", "tests"]


def _store(repo: Path) -> list[str]:
    """Two sessions (the first a brain dump), an agent's memories, confirmations by
    the author and by its agent, a retired memory and an expired one."""
    ids: list[str] = []
    with gitmem.open(repo) as s:
        for n in range(12):
            ids.append(s.add(f"the api gateway fact {n}: deploy step {n} uses the cache",
                             session="dump", force=True).id)
        for n in range(6):
            ids.append(s.add(f"why does deploy {n} need postgres? the tests said so",
                             kind="procedure" if n == 3 else None, session="later",
                             force=True).id)
        ids.append(s.add("the agent thinks the gateway caches tokens", by="agent:claude-code",
                         force=True).id)
        ids.append(s.add("the agent says deploys run the tests first", by="agent:claude-code",
                         force=True).id)
        ids.append(s.add("postgres 15 holds the invoices", force=True).id)
        ids.append(s.add("the gateway expired long ago", valid_until="2001-01-01",
                         force=True).id)
        s.confirm(ids[-3])
        s.confirm(ids[-4], by="agent:claude-code")
        s.confirm(ids[15], outcome="failed")
        s.confirm(ids[14])
        retired = s.add("the old gateway memory", force=True).id
        s.invalidate(retired)
        ids.append(retired)
        s.recall("warm up")  # builds the projection and the vectors
    return ids


def test_the_batched_reads_answer_as_a_statement_a_row_did(repo: Path) -> None:
    ids = _store(repo)
    with gitmem.open(repo) as s:
        s.recall("open the projection")
        p = s.projection
        c = p._c
        matches = {w: f'"{w}"' for w in WORDS}
        unknown = ["0" * 64, "not an id", ids[0].upper()]
        asked = [*ids, *unknown]
        for scope in (Scope(), Scope(now=2_000_000_000), Scope(retired=True),
                      Scope(kinds=("fact",)), Scope(as_of=2_000_000_000)):
            assert p.neighbours(asked, scope=scope) == _neighbours(c, asked, scope=scope)
        assert p.unvouched(asked) == _unvouched(c, asked) != set()
        assert p.unvouched(asked) == _unvouched(c, asked)  # (kept: the same again)
        assert signals.unvouched(c, asked) == _unvouched(c, asked)  # (nothing kept)
        assert p.term_presence(asked, matches) == _term_presence(c, asked, matches)
        assert any(p.term_presence(asked, matches).values())
        for until in (None, 0, 2_000_000_000):
            got = p.salience_inputs(asked, until)
            assert list(got.items()) == _salience_rows(c, asked, until)
        assert any(v[3] for v in p.salience_inputs(ids).values())  # (a confirmation counted)
        slots = [r[0] for r in c.execute("SELECT slot FROM vec_rows ORDER BY slot")]
        far = {slot: [0.3, 1.9999996, 2.0, 0.3, 1.0 - 1e-9, float("nan")][slot % 6]
               for slot in slots}
        for scope in (Scope(), Scope(retired=True)):
            assert (queries.best_per_memory(c, slots, far.__getitem__, scope)
                    == _best_per_memory(c, slots, far.__getitem__, scope))


def _hits(store: Any, query: str, **kw: Any) -> list[tuple[str, float, float]]:
    return [(h.id, h.score, h.rank_score) for h in store.recall(query, min_score=0, **kw)]


def test_what_a_recall_keeps_goes_with_a_write_by_anyone(repo: Path) -> None:
    """Word counts and first sessions are kept while the tables are unchanged: a
    write by another connection (data_version) or by this one (total_changes) lets
    them go, so a long-lived store answers as a store opened afresh."""
    _store(repo)
    question = "zebra gateway"
    with gitmem.open(repo) as warm:
        before = _hits(warm, question, mode="lexical")
        assert before and _hits(warm, question) == _hits(warm, question)
        with gitmem.open(repo) as other:  # another connection writes
            zebra = other.add("zebra crossings near the office", force=True).id
            other.recall("zebra")
        after = _hits(warm, question, mode="lexical")
        assert zebra in [h[0] for h in after]
        with gitmem.open(repo) as fresh:
            for mode in ("lexical", "hybrid"):
                assert _hits(warm, question, mode=mode) == _hits(fresh, question, mode=mode)
        mine = warm.add("a second zebra, this one striped", session="dump", force=True).id
        with gitmem.open(repo) as fresh:
            for mode in ("lexical", "hybrid"):
                got = _hits(warm, question, mode=mode)
                assert got == _hits(fresh, question, mode=mode)
            assert mine in [h[0] for h in got]
            assert warm.projection.unvouched([mine]) == fresh.projection.unvouched([mine])


def test_a_word_count_is_counted_once_a_recall(repo: Path) -> None:
    _store(repo)
    with gitmem.open(repo) as s:
        s.recall("gateway deploy")
        counted: list[str] = []
        s.projection._c.set_trace_callback(counted.append)
        s.recall("postgres tests cache")
        s.projection._c.set_trace_callback(None)
    fts = [sql for sql in counted if re.search(r"SELECT count\(\*\) FROM \(SELECT 1 FROM memories_fts", sql)]
    assert len(fts) == 3  # each word once, though the plan and the weights both ask


def test_nothing_is_kept_inside_a_transaction(repo: Path) -> None:
    """Its writes may yet roll back, and a rollback leaves total_changes as it was."""
    _store(repo)
    with gitmem.open(repo) as s:
        s.recall("open the projection")
        c, kept = s.projection._c, queries.Kept()
        kept.values(c)["x"] = 1
        assert kept.values(c) == {"x": 1}
        c.execute("BEGIN")
        try:
            inside = kept.values(c)
            assert inside == {}
            inside["y"] = 2
            assert kept.values(c) == {}
        finally:
            c.execute("ROLLBACK")
        assert kept.values(c) == {"x": 1}
