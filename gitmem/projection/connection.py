"""The projection file's connection, from its pragmas to how a process lets it go.

Why this exists: every other module of the package takes a connection that
this one made, so the pragmas that matter for correctness (WAL, busy timeout,
secure_delete) are set in one place. How a connection ends is decided here
too: a one-shot process parks its last one open until it exits (``release``),
so the write-ahead log outlives the process; ``empty_log`` checkpoints and
truncates it, and the log-scrub mark (``LOG_SCRUB``) has it emptied once
forgotten content may linger in it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from .damage import foreign_entries


def rollback(c: sqlite3.Connection) -> None:
    try:
        c.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the transaction is gone already (e.g. the file is corrupt)


def _busy_timeout_ms(default: int = 60_000) -> int:
    """How long a statement waits for another process's lock: 60 s, or
    ``GITMEM_BUSY_TIMEOUT`` seconds (0 to an hour) when set and valid (a test waits
    less; a slow shared machine may wait more). Past it SQLite says "database is
    locked", which the front ends report as ProjectionBusy (errors.busy_error)."""
    try:
        seconds = float(os.environ.get("GITMEM_BUSY_TIMEOUT", ""))
    except ValueError:
        return default
    return int(seconds * 1000) if 0 <= seconds <= 3600 else default


BUSY_TIMEOUT_MS = _busy_timeout_ms()
# The most of the write-ahead log a process leaves behind (release): a refresh that
# ends with more checkpoints it (refresh.py), and a checkpoint cuts the file to it.
WAL_KEEP_BYTES = 2 << 20


def connect(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode: every transaction is an explicit BEGIN.

    Raises ProjectionCorrupt, before SQLite opens anything, when a file of the
    projection is not a regular file (damage.foreign_entries)."""
    foreign_entries(path)
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        # The log may outlive a process (release): after a checkpoint it is cut back to
        # this size, so a first build of 100k memories does not leave 70 MB of it.
        conn.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
        # Forgotten text must not linger in free pages of the file.
        conn.execute("PRAGMA secure_delete = ON")
        if sqlite3.sqlite_version_info < (3, 41):
            # A text id to the bytes memories.digest holds: SQLite's own unhex() from 3.41.
            conn.create_function("unhex", 1, _unhex, deterministic=True)
        # The words the thesaurus adds to a memory (memories_text's concepts column):
        # computed where the full-text index reads them, never stored.
        conn.create_function("concepts", 4, _concepts, deterministic=True)
    except BaseException:
        conn.close()
        raise
    return conn


# Connections a one-shot process parks until its exit, by database path (see release).
_PARKED: dict[str, sqlite3.Connection] = {}

# A meta key set in the transaction that scrubs forgotten content and deleted once a
# checkpoint has emptied the write-ahead log: until then the log may still hold the
# content's old pages. No process closes the file at its exit any more (release), so a
# scrub whose checkpoint a reader held back, or that a kill cut short, is finished by
# the next process to open the file, not left until the log next grows past its limit.
LOG_SCRUB = "log_scrub"


def mark_log_scrub(c: sqlite3.Connection) -> None:
    """Inside the transaction that scrubs: the log must be emptied after it."""
    c.execute("INSERT INTO meta(key, value) VALUES (?, '1') "
              "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (LOG_SCRUB,))


def empty_log(c: sqlite3.Connection, *, scrub: bool, wait: bool = True) -> bool:
    """Checkpoint the write-ahead log into the file and truncate it (best effort: a
    reader on an older snapshot holds it, for up to BUSY_TIMEOUT_MS or, without
    ``wait``, not at all). Once it is empty, a ``scrub`` mark is deleted. True when
    the log was emptied."""
    if not wait:
        c.execute("PRAGMA busy_timeout = 0")
    try:
        row = c.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if row is None or row[0] != 0:
            return False  # SQLITE_BUSY comes back as a row, not an error
        if scrub:
            c.execute("DELETE FROM meta WHERE key = ?", (LOG_SCRUB,))
        return True
    except sqlite3.Error:
        return False
    finally:
        if not wait:
            c.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def release(conn: sqlite3.Connection, path: Path, *, one_shot: bool) -> None:
    """Close ``conn``; in a ``one_shot`` process (one that ends with ``os._exit``
    when its command is done: the git-mem program tells the api's ``Store``, which
    tells the projection), park it open until the process exits.

    Why: closing the last connection to a file in WAL mode checkpoints the log
    into the database and syncs both (~5-15 ms, most of a small write's cost).
    A process that ends with os._exit leaves the log as a crash would, which
    SQLite is built to recover: the next connection reads the log (~0.3 ms for
    2 MB), and a refresh that leaves more than WAL_KEEP_BYTES in it checkpoints
    it, so it stays bounded. A power cut may now roll back the projection's
    writes of several commands instead of one (synchronous=NORMAL syncs only at
    checkpoints): the next refresh replays them from the log, which is synced.
    One connection per file is parked: a process that opens the file again
    closes the older one when it parks the next."""
    if not one_shot:
        conn.close()
        return
    if conn.in_transaction:
        rollback(conn)
    older = _PARKED.pop(str(path), None)
    _PARKED[str(path)] = conn
    if older is not None and older is not conn:
        older.close()


def _concepts(text: object, key: object, tags: object, entities: object) -> str:
    """The thesaurus's words for a memory's text, key, tags and entities (as the
    memories table holds them). Never raises (an exception in a function would read
    as a damaged file): a value of another type adds nothing."""
    from .. import concepts

    if isinstance(key, str):
        # A key's dots separate words ("oncall.primary"), where in text they join a
        # name ("node.js"): the thesaurus then knows "oncall" is "on call".
        key = key.replace(".", " ")
    try:
        return concepts.expansion(*(v for v in (text, key, tags, entities)
                                    if isinstance(v, str)))
    except Exception:  # a bug here must not read as damage
        return ""


def _unhex(text: object) -> bytes | None:
    """SQLite's unhex(X) (3.41): the bytes of an even number of hex digits, else NULL.
    Never raises (an exception in a function would read as a damaged file)."""
    if not isinstance(text, str):
        return None
    try:
        data = bytes.fromhex(text)
    except ValueError:
        return None
    return data if len(data) * 2 == len(text) else None  # (fromhex skips white space)
