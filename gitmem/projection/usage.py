"""This clone's record of which memories recall handed out (a salience signal).

Why this exists: usage is local state that the log must never carry and a
rebuild must never touch, so it lives in its own small SQLite file beside the
projection, with its own relaxed durability. The projection package is the
only one that talks to SQLite, so it lives here too.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path

from .connection import rollback
from .damage import ProjectionCorrupt, ProjectionUnwritable, damage


def _busy(exc: BaseException) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: contention, not damage."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class Usage:
    """This clone's record of which memories recall handed out: a salience signal.

    Local and never pushed (what one agent looked at is nobody else's
    business), and kept beside the projection rather than in it, so deleting
    the projection and replaying still gives identical answers. Failures
    never break a read: they leave ``error`` set and the signal out, except
    contention with another process, which only skips the signal this once.
    ``read_only`` (a read-only ``.git``): the record is read as it is on disk
    and nothing is recorded.
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self.error: str | None = None
        self._conn: sqlite3.Connection | None = None

    def _start_over(self, exc: BaseException) -> bool:
        """``exc`` says the file is damaged: delete it, so the next use starts a
        new record (a weak signal is cheaper to lose than to warn about forever)."""
        if not isinstance(damage(exc, self.path.parent), ProjectionCorrupt):
            return False
        self.close()
        try:
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
        except OSError:
            return False
        self.error = "usage record was damaged; started a new one"
        return True

    def _read_only_now(self, exc: BaseException) -> bool:
        """``exc`` says the directory cannot be written: from now on the record
        is only read (a read-only .git), and that is not an error."""
        found = damage(exc, self.path.parent)
        if isinstance(found, ProjectionUnwritable) and found.why == "read-only":
            self.read_only = True
            self.close()
            return True
        return False

    def _reader(self) -> sqlite3.Connection:
        if self._conn is None and not self.read_only:
            try:
                self._conn = self._open()
            except (sqlite3.Error, OSError) as exc:
                if not self._read_only_now(exc):
                    raise
        if self._conn is None:
            # immutable: no lock, no -shm to create (uses still in the write-ahead
            # log are missed: a weak signal, read as it stands)
            uri = self.path.absolute().as_uri() + "?immutable=1"
            self._conn = sqlite3.connect(uri, uri=True, isolation_level=None)
        return self._conn

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=0.5, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            # A weak, local signal: losing the last uses to a power cut is fine,
            # paying an fsync on every recall is not.
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute("CREATE TABLE IF NOT EXISTS uses(memory TEXT PRIMARY KEY, "
                         "count INTEGER NOT NULL, last INTEGER NOT NULL) WITHOUT ROWID")
        except BaseException:
            conn.close()
            raise
        return conn

    def read(self, ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """memory id -> (times returned, last time)."""
        if not self.path.exists():
            return {}
        out: dict[str, tuple[int, int]] = {}
        try:
            db = self._reader()
            ids = list(ids)
            for i in range(0, len(ids), 400):
                chunk = ids[i : i + 400]
                for mid, n, last in db.execute(
                    f"SELECT memory, count, last FROM uses WHERE memory IN "
                    f"({','.join('?' * len(chunk))})", chunk,
                ):
                    out[mid] = (int(n), int(last))
        except (sqlite3.Error, OSError, TypeError, ValueError) as exc:
            if _busy(exc):
                return {}  # ranked without the signal this once
            if not self._start_over(exc):
                self.error = f"usage record unreadable ({exc}); ranked without it"
            return {}
        return out

    def record(self, ids: Iterable[str], at: int) -> None:
        rows = [(mid, at) for mid in dict.fromkeys(ids)]
        if rows and not self.read_only:
            self._record(rows, again=True)

    def _record(self, rows: list[tuple[str, int]], *, again: bool) -> None:
        try:
            if self._conn is None:
                self._conn = self._open()
            db = self._conn
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO uses(memory, count, last) VALUES (?, 1, ?) ON CONFLICT(memory) "
                    "DO UPDATE SET count = count + 1, last = max(last, excluded.last)", rows)
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise
        except (sqlite3.Error, OSError) as exc:
            if self._read_only_now(exc) or _busy(exc):
                return  # busy: another process holds the record past our timeout; this
                # use goes unrecorded (a weak signal, not worth a warning on a read)
            if again and self._start_over(exc):
                self._record(rows, again=False)
                return
            self.error = f"could not record use ({exc})"

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
