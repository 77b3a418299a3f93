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

from .schema import rollback


class Usage:
    """This clone's record of which memories recall handed out: a salience signal.

    Local and never pushed (what one agent looked at is nobody else's
    business), and kept beside the projection rather than in it, so deleting
    the projection and replaying still gives identical answers. Failures
    never break a read: they leave ``error`` set and the signal out.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=0.5, isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            # A weak, local signal: losing the last uses to a power cut is fine,
            # paying an fsync on every recall is not.
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute("CREATE TABLE IF NOT EXISTS uses(memory TEXT PRIMARY KEY, "
                         "count INTEGER NOT NULL, last INTEGER NOT NULL) WITHOUT ROWID")
            self._conn = conn
        return self._conn

    def read(self, ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """memory id -> (times returned, last time)."""
        if not self.path.exists():
            return {}
        out: dict[str, tuple[int, int]] = {}
        try:
            ids = list(ids)
            for i in range(0, len(ids), 400):
                chunk = ids[i : i + 400]
                for mid, n, last in self._db().execute(
                    f"SELECT memory, count, last FROM uses WHERE memory IN "
                    f"({','.join('?' * len(chunk))})", chunk,
                ):
                    out[mid] = (int(n), int(last))
        except sqlite3.Error as exc:
            self.error = f"usage record unreadable ({exc}); ranked without it"
            return {}
        return out

    def record(self, ids: Iterable[str], at: int) -> None:
        rows = [(mid, at) for mid in dict.fromkeys(ids)]
        if not rows:
            return
        try:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO uses(memory, count, last) VALUES (?, 1, ?) ON CONFLICT(memory) "
                    "DO UPDATE SET count = count + 1, last = max(last, excluded.last)", rows)
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise
        except sqlite3.Error as exc:
            self.error = f"could not record use ({exc})"

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
