"""The read queries: functions of a connection, returning the library's records.

Why this exists: reads never write, so they need nothing of the projection but
its connection; keeping them apart from the fold shows at a glance which SQL
can change state. ``Projection`` exposes each one as a method (guarded against
corruption). Queries that must see the vector file too live in ``vectors``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Hashable, Iterable, Iterator
from typing import Any

import msgspec
import msgspec.structs

from .. import ops
from ..model import OpInfo, Record, Skipped
from .rows import (ADD_COLS, MEMORY_COLS, OP_COLS, digest, digests, norm, opinfo, partition,
                   record as _record, spell)
from .tables import KIND_CODE
from .scope import Scope, filters


def by_ids(c: sqlite3.Connection, sql: str, ids: Iterable[object],
           prefix_args: list[object] | None = None) -> Iterator[tuple[Any, ...]]:
    """Rows of ``sql + (?, ?, ...)`` over ids, in chunks SQLite accepts."""
    ids = list(ids)
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        yield from c.execute(f"{sql} ({','.join('?' * len(chunk))})",
                             [*(prefix_args or []), *chunk])


def tables_state(c: sqlite3.Connection) -> tuple[int, int]:
    """What changes when the tables do, as ``c`` sees them: its data_version (another
    connection committed) and its total_changes (it wrote). With the connection, the
    key of what is kept between reads (Kept, vectors.Unseen)."""
    return int(c.execute("PRAGMA data_version").fetchone()[0]), c.total_changes


class Kept:
    """Values read from the tables, kept while the tables are unchanged: the same
    connection, its data_version (another connection committed) and its
    total_changes (it wrote), as vectors.Unseen keeps the unseen rows. Worth it
    for what costs more than that look (~4 us): a word's document count (two
    FTS5 walks of up to a thousand rows each recall asked for), a partition's first
    session. At most ``most`` values: past them it starts over."""

    def __init__(self, most: int = 4096) -> None:
        self._most = most
        self._key: tuple[object, int, int] | None = None
        self._values: dict[Hashable, Any] = {}

    def values(self, c: sqlite3.Connection) -> dict[Hashable, Any]:
        """The values kept for the tables as ``c`` sees them now (empty once they changed).
        Inside a transaction nothing is kept (its writes may yet roll back, and a
        rollback leaves total_changes as it was): a fresh dict, dropped after use."""
        if c.in_transaction:
            return {}
        key = (c, *tables_state(c))
        kept = self._key
        if (kept is None or kept[0] is not c or kept[1:] != key[1:]
                or len(self._values) >= self._most):
            self._key, self._values = key, {}
        return self._values


def watermarks(c: sqlite3.Connection, refs: list[str] | None = None) -> dict[str, str]:
    """Each partition ref (of ``refs``, when given) and the tip the projection has replayed."""
    if refs is None:
        return dict(c.execute("SELECT ref, tip FROM partitions WHERE tip IS NOT NULL").fetchall())
    return dict(by_ids(c, "SELECT ref, tip FROM partitions WHERE tip IS NOT NULL AND ref IN",
                       refs))


def clock_bounds(c: sqlite3.Connection, ref: str) -> tuple[int, int]:
    """(the greatest Lamport clock replay accepted on any partition, the greatest
    it accepted on ``ref``): all a writer may take its next clock from."""
    top = c.execute("SELECT max(last_clock) FROM partitions").fetchone()[0]
    own = c.execute("SELECT last_clock FROM partitions WHERE ref = ?", (ref,)).fetchone()
    return int(top or 0), int(own[0]) if own else 0


def meta(c: sqlite3.Connection) -> dict[str, str]:
    return dict(c.execute("SELECT key, value FROM meta").fetchall())


def resolve_prefix(c: sqlite3.Connection, prefix: str) -> list[str]:
    """Memory ids starting with ``prefix`` (at most 11, enough to report)."""
    if len(prefix) > 64 or not set(prefix) <= _HEX:
        return []  # no id starts so
    # The ids from the prefix's first to its last (an odd digit is half a byte).
    lo, hi = (digest(prefix + fill * (64 - len(prefix))) for fill in "0f")
    return [
        r[0]
        for r in c.execute(
            "SELECT id FROM memories WHERE digest BETWEEN ? AND ? ORDER BY digest LIMIT 11",
            (lo, hi),
        )
    ]


_HEX = set("0123456789abcdef")


def record(c: sqlite3.Connection, memory_id: str) -> Record | None:
    row = c.execute(
        f"SELECT {MEMORY_COLS} FROM memories m WHERE m.digest = ?", (digest(memory_id),)
    ).fetchone()
    return _record(row) if row else None


def records(c: sqlite3.Connection, ids: Iterable[str]) -> dict[str, Record]:
    found = (_record(row) for row in by_ids(
        c, f"SELECT {MEMORY_COLS} FROM memories m WHERE m.digest IN", digests(ids)))
    return {r.id: r for r in found}


def ops_touching(c: sqlite3.Connection, memory_id: str) -> list[OpInfo]:
    """The add op of a memory and every op that targets it, in replay order (the
    adds among them, its own and any that supersede it, are memories' rows)."""
    rows = c.execute(
        f"SELECT {ADD_COLS}, {_ADD_MORE} FROM memories m WHERE m.digest = ? "
        "OR m.digest IN (SELECT unhex(op) FROM links WHERE target = ?) UNION ALL "
        f"SELECT {OP_COLS}, NULL, NULL FROM ops o WHERE o.target = ? "
        "OR o.id IN (SELECT op FROM links WHERE target = ?) ORDER BY 5, 1",
        (digest(memory_id), memory_id, memory_id, memory_id),
    ).fetchall()
    return [_opinfo(r) for r in rows]


# What an add's summary says beside its text's first line: the key of a keyed fact
# ("db.engine: mysql", as list prints it: a value means little alone) and the
# memories it supersedes.
_ADD_MORE = "m.key, m.supersedes"


def _opinfo(row: tuple[Any, ...]) -> OpInfo:
    """``opinfo`` of a row with ``_ADD_MORE`` (NULL, NULL for other ops) after its columns."""
    *cols, key, supersedes = row
    info = opinfo(tuple(cols))
    if info.summary is None:  # forgotten: nothing more to say
        return info
    if key:
        info.summary = f"{key}: {info.summary}"
    replaced = json.loads(supersedes) if supersedes and supersedes != "[]" else []
    if replaced:
        info.summary += f" (supersedes {', '.join(r[:12] for r in replaced)})"
    return info


def log(c: sqlite3.Connection, limit: int | None = None,
        author: str | None = None) -> list[OpInfo]:
    """Ops in replay order; with ``limit``, the last ``limit`` of them."""
    rows: list[tuple[Any, ...]] = []
    for cols, table, a in ((f"{ADD_COLS}, {_ADD_MORE}", "memories", "m"),
                           (f"{OP_COLS}, NULL, NULL", "ops", "o")):
        sql, args = f"SELECT {cols} FROM {table} {a}", list[object]()
        if author:
            sql += (f" WHERE {a}.author IN (SELECT au.id FROM authors au "
                    "WHERE au.name LIKE ? OR au.email LIKE ?)")
            args += [f"%{author}%", f"%{author}%"]
        if limit is not None:  # the last ``limit`` of each (an index walk), merged below
            # (A memory's fts follows its id: memories_clock orders ties of clock.)
            tie = "m.fts" if a == "m" else "o.id"
            sql += f" ORDER BY {a}.clock DESC, {tie} DESC LIMIT ?"
            args.append(limit)
        rows += c.execute(sql, args).fetchall()
    rows.sort(key=lambda r: (r[4], r[0]))
    return [_opinfo(r) for r in (rows if limit is None else rows[max(len(rows) - limit, 0):])]


def best_per_memory(
    c: sqlite3.Connection,
    slots: list[int],
    distance: Callable[[int], float],
    scope: Scope,
) -> list[tuple[float, str]]:
    """Candidate vector rows -> (best distance, memory id) per memory passing the filters."""
    marks = ",".join("?" * len(slots))
    # CROSS JOIN fixes the order: look rows up by slot, then their memory (a planner
    # without statistics once walked every active memory through an index on status).
    sql = (f"SELECT r.slot, m.digest FROM vec_rows r CROSS JOIN memories m "
           f"ON m.rowid = r.memory WHERE r.slot IN ({marks})")
    sql, args = filters(sql, list(slots), scope)
    best: dict[bytes, float] = {}  # by the id's bytes (in the ids' order)
    for slot, key in c.execute(sql, args):
        d = distance(slot)
        if d < best.get(key, 2.0):
            best[key] = d
    # Rounded once a memory, not once a row: the least rounded distance is the least
    # distance rounded (round is monotone), and one rounding to 2.0 is left out, as
    # rows rounded to 2.0 each were.
    ranked = sorted((d, key) for key, d in ((k, round(v, 6)) for k, v in best.items())
                    if d < 2.0)
    return [(d, spell(key)) for d, key in ranked]


def keyed(c: sqlite3.Connection, scope: Scope, key: str | None = None) -> list[Record]:
    """Keyed memories under ``scope`` (one key, or every key), by key, newest first."""
    # INDEXED BY: without statistics the planner once walked every active memory
    # through an index on status (113 ms at 100k) rather than the few keyed ones.
    sql = f"SELECT {MEMORY_COLS} FROM memories m INDEXED BY memories_key WHERE m.key IS NOT NULL"
    args: list[object] = []
    if key is not None:
        sql += " AND m.key = ?"
        args.append(ops.folded(key))
    sql, args = filters(sql, args, scope)
    sql += " ORDER BY m.key, m.clock DESC, m.id DESC"
    return [_record(r) for r in c.execute(sql, args)]


def top(c: sqlite3.Connection, scope: Scope, *, keyed: bool | None = None,
        limit: int = 200) -> list[Record]:
    """Memories under ``scope``, most important first, then newest (candidates
    for the context profile; the caller ranks them by salience)."""
    if len(scope.kinds) > 1:  # one indexed walk per kind, then merged
        rows = [r for kind in scope.kinds for r in top(
            c, msgspec.structs.replace(scope, kinds=(kind,)), keyed=keyed, limit=limit)]
        rows.sort(key=lambda r: (-r.importance, -r.clock, r.id))
        return rows[:limit]
    if scope.not_by:
        others = authors(c, MAX_AUTHORS + 1)
        if len(others) <= MAX_AUTHORS:  # each other author's best, merged
            crowd = set(scope.not_by)
            rows = [r for number, email in others if email not in crowd
                    for r in _top(c, scope, keyed, limit, number)]
            rows.sort(key=lambda r: (-r.importance, -r.clock, r.id))
            return rows[:limit]
    return _top(c, scope, keyed, limit)


# Past a crowd (see api.profile.candidates) the context profile looks author by
# author, up to this many authors; beyond it, one walk that skips the crowd's rows.
MAX_AUTHORS = 64


def _top(c: sqlite3.Connection, scope: Scope, keyed: bool | None, limit: int,
         author: int | None = None) -> list[Record]:
    sql = f"SELECT {MEMORY_COLS} FROM memories m"
    if author is not None:
        # INDEXED BY: one author's rows of the kind, in importance order. (Walking
        # memories_top past a crowd reads every row the crowd wrote: 37 ms a kind
        # at 100k for the few memories anyone else wrote.)
        sql += " INDEXED BY memories_author WHERE m.author = ?"
        args: list[object] = [author]
    else:
        sql += " WHERE 1 = 1"
        args = []
    if keyed is not None:
        sql += " AND m.key IS NOT NULL" if keyed else " AND m.key IS NULL"
    sql, args = filters(sql, args, scope)
    # m.fts follows m.id, and the indexes hold it: ties need no sort (tables.py).
    sql += " ORDER BY m.importance DESC, m.clock DESC, m.fts LIMIT ?"
    return [_record(r) for r in c.execute(sql, [*args, limit])]


def authors(c: sqlite3.Connection, limit: int) -> list[tuple[int, str]]:
    """Up to ``limit`` authors of memories (an authors row and its email; one
    person under two names is two), in order of email: an index seek each."""
    return [(int(n), str(e)) for n, e in c.execute(
        "SELECT a.id, a.email FROM authors a WHERE EXISTS "
        "(SELECT 1 FROM memories m WHERE m.author = a.id) ORDER BY a.email, a.name LIMIT ?",
        (limit,))]


def future_dated(c: sqlite3.Connection, after: int, limit: int = 20) -> tuple[int, list[str]]:
    """How many current memories claim to be recorded after ``after``, and the
    first ids (a skewed or forged clock: recall ranks them as if recorded then)."""
    where = "FROM memories WHERE at > ? AND status != 'forgotten'"
    n = c.execute(f"SELECT count(*) {where}", (after,)).fetchone()[0]
    ids = [r[0] for r in c.execute(f"SELECT id {where} ORDER BY at DESC, id LIMIT ?",
                                   (after, limit))]
    return int(n), ids


def standing(c: sqlite3.Connection, ids: Iterable[str]) -> dict[str, bool]:
    """For each id: is it current truth (active and not a conflict's loser)?"""
    return {mid: st == "active" and sh is None for mid, st, sh in by_ids(
        c, "SELECT id, status, shadowed_by FROM memories WHERE digest IN", digests(ids))}


def live_ids(c: sqlite3.Connection, ids: list[str], scope: Scope) -> list[str]:
    """Those of ``ids`` that are current under ``scope``."""
    sql, args = filters("SELECT m.id FROM memories m WHERE m.digest IN "
                        f"({','.join('?' * len(ids))})", list[object](digests(ids)), scope)
    return [r[0] for r in c.execute(sql, args)] if ids else []


def key_history(c: sqlite3.Connection, key: str) -> list[Record]:
    """Every memory ever recorded under ``key`` (forgotten ones have lost it), oldest first."""
    return [_record(r) for r in c.execute(
        f"SELECT {MEMORY_COLS} FROM memories m WHERE m.key = ? ORDER BY m.clock, m.id",
        (ops.folded(key),))]


def conflicted_keys(c: sqlite3.Connection) -> list[str]:
    """Keys that have more than one current value (a recorded conflict)."""
    return [r[0] for r in c.execute(
        "SELECT DISTINCT key FROM memories "
        "WHERE shadowed_by IS NOT NULL AND key IS NOT NULL ORDER BY key")]


def duplicate_of(c: sqlite3.Connection, text: str, kind: str, key: str | None) -> str | None:
    """The oldest current memory with the same normalised text, kind and key."""
    same = ops.normalize_text(text)
    for mid, other in c.execute(
        "SELECT id, text FROM memories INDEXED BY memories_norm WHERE norm = ? "
        "AND kind_code = ? AND key IS ? AND status = 'active' AND quarantine IS NULL "
        "ORDER BY clock, id", (norm(text), KIND_CODE.get(kind, -1), key),
    ):
        if ops.normalize_text(other) == same:  # (norm is 32 bits of the text's hash)
            return str(mid)
    return None


def unembedded(
    c: sqlite3.Connection, kind: str, limit: int
) -> list[tuple[str, str | None, str, list[str], list[str]]] | None:
    """Current memories of ``kind`` without a vector yet: (id, key, text,
    entities, tags); None when there are more than ``limit``."""
    # INDEXED BY: the planner would rather walk every memory of the kind through
    # memories_top (15 ms at 100k) than the few waiting ones.
    rows = c.execute(
        "SELECT id, key, text, entities, tags FROM memories INDEXED BY memories_unembedded "
        "WHERE vec_slot IS NULL AND text IS NOT NULL AND kind_code = ? AND status = 'active' "
        "AND quarantine IS NULL ORDER BY id LIMIT ?", (KIND_CODE.get(kind, -1), limit + 1)
    ).fetchall()
    if len(rows) > limit:
        return None
    return [(mid, key, text, json.loads(ents), json.loads(tags))
            for mid, key, text, ents, tags in rows]


def embedding_pending(c: sqlite3.Connection) -> int:
    """How many memories with text have no vector yet."""
    return int(c.execute(
        "SELECT count(*) FROM memories INDEXED BY memories_unembedded "
        "WHERE vec_slot IS NULL AND text IS NOT NULL").fetchone()[0])


def partition_page(c: sqlite3.Connection, first: str | None, limit: int
                   ) -> tuple[dict[str, str], int]:
    """(ref -> replayed tip of at most ``limit`` partitions: ``first`` (this
    clone's), then the others by name; how many there are in all)."""
    total = c.execute("SELECT count(*) FROM partitions WHERE tip IS NOT NULL").fetchone()[0]
    rows = c.execute("SELECT ref, tip FROM partitions WHERE tip IS NOT NULL AND ref = ?",
                     (first or "",)).fetchall()
    rows += c.execute("SELECT ref, tip FROM partitions WHERE tip IS NOT NULL AND ref != ? "
                      "ORDER BY ref LIMIT ?", (first or "", limit - len(rows))).fetchall()
    return dict(rows), int(total)


def counts(c: sqlite3.Connection, refs: list[str] | None = None) -> dict[str, object]:
    """Ops by type, memories by status, and ops and authors per partition (of
    ``refs`` only, when given)."""
    adds = c.execute("SELECT count(*) FROM memories").fetchone()[0]
    by_type = {**({"add": adds} if adds else {}),
               **dict(c.execute("SELECT type, count(*) FROM ops GROUP BY type").fetchall())}
    by_status = dict(
        c.execute("SELECT status, count(*) FROM memories GROUP BY status").fetchall()
    )
    quarantined = c.execute(
        "SELECT count(*) FROM memories WHERE quarantine IS NOT NULL").fetchone()[0]
    if quarantined:
        by_status["quarantined"] = quarantined
    per_ref: dict[str, dict[str, Any]] = {}
    if refs is None:
        only, args = "", []
    else:
        ids = [r[0] for r in by_ids(c, "SELECT id FROM partitions WHERE ref IN", refs)]
        only, args = f" WHERE part IN ({','.join('?' * len(ids))})", ids
    for ref, name, email, n in c.execute(
        "SELECT p.ref, a.name, a.email, sum(n) FROM (SELECT part, author, count(*) AS n "
        f"FROM memories{only} GROUP BY part, author UNION ALL SELECT part, author, count(*) "
        f"FROM ops{only} GROUP BY part, author) JOIN partitions p ON p.id = part "
        "JOIN authors a ON a.id = author "
        "GROUP BY p.ref, a.name, a.email ORDER BY p.ref, a.name, a.email", args * 2
    ):
        entry = per_ref.setdefault(partition(ref), {"ops": 0, "authors": []})
        entry["ops"] = int(entry["ops"]) + n
        entry["authors"].append(f"{name} <{email}>")
    return {"ops": by_type, "memories": by_status, "per_partition": per_ref}


def skipped(c: sqlite3.Connection, limit: int | None = None, *, refs: Iterable[str] = (),
            reason: str = "") -> list[Skipped]:
    """The op lines replay refused, and why: the first ``limit`` (None: every one), of
    the partitions at ``refs`` only when given, whose reason starts with ``reason``.
    (A teammate's pack of five million junk lines is five million rows: a write that
    looks for its own skipped ops, or a status, must not read them all.)"""
    where: list[str] = []
    args: list[object] = []
    refs = list(refs)
    if refs:
        where.append(f"ref IN ({','.join('?' * len(refs))})")
        args += refs
    if reason:
        where.append("substr(reason, 1, ?) = ?")  # (LIKE would read % and _ in it)
        args += [len(reason), reason]
    sql = ("SELECT ref, commit_id, line, op_id, reason FROM skipped"
           + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY ref, commit_id, line")
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    return [Skipped(partition=partition(ref), commit=commit, line=line, id=oid, reason=why)
            for ref, commit, line, oid, why in c.execute(sql, args)]


def skipped_count(c: sqlite3.Connection) -> int:
    """How many op lines replay refused."""
    return int(c.execute("SELECT count(*) FROM skipped").fetchone()[0])


def dump(c: sqlite3.Connection) -> str:
    """Every row that carries meaning, in a canonical order (for tests)."""
    out: list[str] = []
    c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.memories_fts_words "
              "USING fts5vocab(main, memories_fts, instance)")
    queries = [
        ("partitions", "SELECT ref, tip, last_clock FROM partitions WHERE tip IS NOT NULL "
                       "ORDER BY ref"),
        ("ops", f"SELECT {ADD_COLS}, m.by, NULL FROM memories m UNION ALL "
                f"SELECT {OP_COLS}, o.by, o.outcome FROM ops o ORDER BY 1"),
        ("links", "SELECT target, op, type, at, closes FROM links ORDER BY target, op"),
        ("memories", f"SELECT {MEMORY_COLS}, m.norm FROM memories m ORDER BY m.digest"),
        # What the full-text index holds (it stores no text: its words, where they are).
        ("fts", "SELECT m.id, v.col, v.offset, v.term FROM temp.memories_fts_words v "
                "JOIN memories m ON m.fts = v.doc ORDER BY m.id, v.col, v.offset"),
        ("skipped", "SELECT * FROM skipped ORDER BY ref, commit_id, line"),
        ("code_anchor_sets", "SELECT * FROM code_anchor_sets ORDER BY memory, clock, op"),
        ("code_anchors", "SELECT op, path, type, oid, commit_id, first_line, last_line, symbol "
                         "FROM code_anchors ORDER BY op, path, first_line"),
        ("memory_paths", "SELECT * FROM memory_paths ORDER BY path, memory, op"),
        ("edges", "SELECT * FROM edges ORDER BY memory"),
    ]
    for name, sql in queries:
        for row in c.execute(sql):
            values = [v.hex() if isinstance(v, bytes) else v for v in row]  # (ids' bytes)
            out.append(name + " " + json.dumps(values, ensure_ascii=False))
    return "\n".join(out) + "\n"


def size(c: sqlite3.Connection) -> int:
    """About how many memories there are (every one ever replayed; O(1))."""
    return int(c.execute("SELECT max(rowid) FROM memories").fetchone()[0] or 0)


def browse(c: sqlite3.Connection, scope: Scope, *, retired_only: bool = False,
           limit: int = 50, offset: int = 0) -> tuple[list[Record], int]:
    """Memories under ``scope``, newest recorded first (within a second, by Lamport
    clock: a clone's adds in one second kept their order; then by id), one page of
    them, and how many there are in all."""
    # INDEXED BY where the scope is the live view memories_listed holds: without
    # statistics, a kind filter walked memories_top and sorted every memory of it.
    listed = (not scope.retired and not scope.quarantined and scope.shadow
              and scope.as_of is None and scope.valid_at is None)
    source = "memories m INDEXED BY memories_listed" if listed else "memories m"
    sql, args = filters(f"FROM {source} WHERE m.text IS NOT NULL", [], scope)
    if retired_only:
        sql += " AND (m.status != 'active' OR m.shadowed_by IS NOT NULL)"
    total = c.execute(f"SELECT count(*) {sql}", args).fetchone()[0]
    # (fts follows the id: see ftsrows.py.)
    rows = c.execute(f"SELECT {MEMORY_COLS} {sql} ORDER BY m.at DESC, m.clock DESC, m.fts DESC "
                     "LIMIT ? OFFSET ?", [*args, limit, offset])
    return [_record(r) for r in rows], int(total)
