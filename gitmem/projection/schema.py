"""The projection's SQLite file: its tables, how it is opened, and how damage is reported.

Why this exists: every other module of the package takes a connection that
this one made, so the pragmas that matter for correctness (WAL, busy timeout,
secure_delete) are set in one place. The projection is disposable: the file
carries a schema version and the op format it was replayed with, and on a
mismatch every table is dropped and recreated empty (the next refresh replays
the log), never migrated. A damaged file surfaces as ``ProjectionCorrupt``,
which the api answers by deleting the file and rebuilding.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

from .. import ops

# Bump when the tables change: a mismatch rebuilds from the log, never migrates.
SCHEMA_VERSION = 8
DB_NAME = "projection.sqlite3"
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB

P = ParamSpec("P")
R = TypeVar("R")


class ProjectionCorrupt(Exception):
    """The SQLite file is damaged; the caller resets and rebuilds it."""


def is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in _CORRUPT_CODES:
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def guarded(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn SQLite's corruption errors into ProjectionCorrupt for the caller."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if is_corrupt(exc):
                raise ProjectionCorrupt(str(exc)) from exc
            raise

    return wrapper


def rollback(c: sqlite3.Connection) -> None:
    try:
        c.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the transaction is gone already (e.g. the file is corrupt)


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode: every transaction is an explicit BEGIN."""
    conn = sqlite3.connect(path, timeout=60.0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout = 60000")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    # Forgotten text must not linger in free pages of the file.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


def wanted_meta() -> dict[str, str]:
    """What ``meta`` must say for the file to be used as it is."""
    return {"schema": str(SCHEMA_VERSION), "format": str(ops.FORMAT_VERSION)}


def reset(c: sqlite3.Connection, meta: dict[str, str]) -> bool:
    """Drop every table and create the schema empty, stamped with ``meta``.

    False when another process did it while we waited for the lock (nothing
    was dropped then)."""
    c.execute("BEGIN IMMEDIATE")
    try:
        try:
            have = dict(c.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError:
            have = {}
        if {k: have.get(k) for k in meta} == meta:
            c.execute("COMMIT")  # another process set it up while we waited
            return False
        tables = [
            r[0]
            for r in c.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%'"
            )
        ]
        for t in tables:
            c.execute(f'DROP TABLE IF EXISTS "{t}"')
        for stmt in SCHEMA.split(";\n"):  # statements end a line, comments never do
            if stmt.strip():
                c.execute(stmt)
        c.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(meta.items()))
        c.execute("COMMIT")
        return True
    except BaseException:
        c.execute("ROLLBACK")
        raise


SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE partitions(
    ref TEXT PRIMARY KEY, tip TEXT NOT NULL, last_clock INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE ops(
    id TEXT PRIMARY KEY, type TEXT NOT NULL, ref TEXT NOT NULL,
    commit_id TEXT NOT NULL, clock INTEGER NOT NULL, at INTEGER NOT NULL,
    tz INTEGER NOT NULL, author_name TEXT NOT NULL, author_email TEXT NOT NULL,
    target TEXT, reason TEXT
) WITHOUT ROWID;
CREATE INDEX ops_order ON ops(clock, id);
CREATE INDEX ops_ref ON ops(ref);
CREATE INDEX ops_target ON ops(target);
-- One row per (retired memory, op retiring it): invalidate, forget, supersede.
-- at: when the log learned of the retirement (the op's time; transaction
-- time, for --as-of); closes: when the memory stopped being true in the world
-- (valid time, for --valid-at): the replacement's valid_from for a supersede,
-- the op's time otherwise.
CREATE TABLE links(
    target TEXT NOT NULL, op TEXT NOT NULL, type TEXT NOT NULL,
    at INTEGER NOT NULL, closes INTEGER NOT NULL,
    PRIMARY KEY(target, op)
) WITHOUT ROWID;
CREATE INDEX links_op ON links(op);
CREATE TABLE memories(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, text TEXT, key TEXT,
    tags TEXT NOT NULL, entities TEXT NOT NULL, importance REAL NOT NULL,
    valid_from INTEGER, valid_until INTEGER, source TEXT, session TEXT,
    anchor_commit TEXT, paths TEXT NOT NULL, supersedes TEXT NOT NULL,
    ref TEXT NOT NULL, commit_id TEXT NOT NULL, clock INTEGER NOT NULL,
    at INTEGER NOT NULL, tz INTEGER NOT NULL,
    author_name TEXT NOT NULL, author_email TEXT NOT NULL,
    status TEXT NOT NULL, retired_by TEXT, retired_at INTEGER,
    retired_tz INTEGER, retired_reason TEXT,
    vec_slot INTEGER,  -- first row in vectors.i8, NULL until embedded
    quarantine TEXT,  -- why the write gate would refuse it, NULL when it passes
    -- A keyed value that loses a conflict: the id of the current winner (the
    -- greatest (clock, id) among the key's active values), NULL otherwise.
    shadowed_by TEXT,
    norm TEXT  -- ops.text_hash(text): finds exact duplicates on write
);
CREATE INDEX memories_key ON memories(key) WHERE key IS NOT NULL;
CREATE INDEX memories_top ON memories(kind, importance DESC, clock DESC, id);
CREATE INDEX memories_shadowed ON memories(shadowed_by) WHERE shadowed_by IS NOT NULL;
CREATE INDEX memories_norm ON memories(norm);
CREATE UNIQUE INDEX memories_vec ON memories(vec_slot);
-- Every vector row and the memory it belongs to: a long memory has a row for
-- the whole and one per chunk, its similarity is the best of them.
CREATE TABLE vec_rows(slot INTEGER PRIMARY KEY, memory INTEGER NOT NULL);
CREATE INDEX vec_rows_memory ON vec_rows(memory);
CREATE INDEX memories_ref ON memories(ref);
CREATE INDEX memories_status ON memories(status, kind);
CREATE INDEX memories_session ON memories(session, clock, id);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, key, tags, entities, tokenize = 'porter unicode61 remove_diacritics 2'
);
-- The write gate's verdict per op id: a pure function of the op's bytes and the
-- gate's version, so it survives rebuilds (only deleting the cache clears it).
CREATE TABLE gate_verdicts(
    op_id TEXT PRIMARY KEY, version TEXT NOT NULL, reason TEXT
) WITHOUT ROWID;
CREATE TABLE skipped(
    ref TEXT NOT NULL, commit_id TEXT NOT NULL, line INTEGER NOT NULL,
    op_id TEXT, reason TEXT NOT NULL, PRIMARY KEY(ref, commit_id, line)
) WITHOUT ROWID;
"""
