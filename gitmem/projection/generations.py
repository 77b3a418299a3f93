"""Which vector file is current, and who may delete the others.

Why this exists: a reset (rebuild, new embedder, damage) starts a new
generation: a new ``vectors-<id>.i8`` written before the transaction that names
it in ``meta`` commits, so a reader holding the old mapping keeps the old inode
and a crash leaves the old generation in force. Because the new file exists
before its name commits, a process without the write lock cannot tell it from
a stale one: older generations are deleted only by a writer holding the lock
(``remove_stale``) or by the writer that retired one, after its commit
(``remove_retired``). (A writer that tidied right after its own commit read the
old name while another was filling the new file, deleted it, and the name
committed next named nothing: every process then found the vector file
"damaged" and embedded every memory again; tests/test_vector_races.py.)
"""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

from . import firstpass
from .damage import ProjectionCorrupt

VEC_NAME = "vectors.i8"
_GENERATION = re.compile(r"vectors(-[0-9a-f]{12})?\.i8")


def remove_file(path: Path) -> None:
    """Delete a file no longer to be used (an older generation's: readers keep the
    inode they opened). Tidying only: something in the way stays, and goes with the
    next rebuild (or settle finds it cannot write there)."""
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


class Generations:
    """The vector files of one projection directory, by generation."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._retired: Path | None = None  # the generation a reset in this transaction replaces
        # The last name meta held and its path (a recall asks ~8 times: the name is
        # read each time, checked and joined only when it changed).
        self._named: tuple[object, Path] | None = None

    def path(self, c: sqlite3.Connection) -> Path:
        """The vector file of the current generation (named in meta, so a reset
        and the slots that refer to it commit or roll back together). A name
        this module never writes (another directory, say) is damage."""
        row = c.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone()
        name = row[0] if row else VEC_NAME
        named = self._named
        if named is not None and type(name) is str and named[0] == name:
            return named[1]
        if not isinstance(name, str) or not _GENERATION.fullmatch(name):
            raise ProjectionCorrupt(f"meta names an unexpected vector file {name!r}")
        path = self.directory / name
        self._named = (name, path)
        return path

    def start(self, c: sqlite3.Connection) -> None:
        """A new, empty generation, named in meta inside the caller's transaction;
        the one it replaces is deleted once that commits (``remove_retired``)."""
        if self._retired is None:
            self._retired = self.path(c)
        name = f"vectors-{os.urandom(6).hex()}.i8"
        (self.directory / name).write_bytes(b"")
        c.execute(
            "INSERT INTO meta(key, value) VALUES ('vectors', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (name,),
        )

    def remove_stale(self, c: sqlite3.Connection) -> None:
        """A writer, under the write lock: delete the files of every generation but
        the one meta names (a reset's old one its writer did not get to delete, a
        new one whose transaction a crash cut short), and the HNSW index files that
        versions before 0.2 kept here (168 MB at 100k memories). Only under the lock:
        see the module's docstring."""
        assert c.in_transaction, "remove_stale runs under the write lock"
        keep = self.path(c).name
        try:
            names = os.listdir(self.directory)  # (glob would compile two patterns per refresh)
        except OSError:
            return
        stem = keep.rsplit(".", 1)[0]
        for name in names:
            if name != keep and name.startswith("vectors") and (
                    name.endswith(".i8") or name.startswith("vectors.hnsw") or (
                        name.endswith((".sign", ".moments"))
                        and name.rsplit(".", 1)[0] != stem)):
                remove_file(self.directory / name)

    def remove_retired(self, *, committed: bool) -> None:
        """After the transaction of a ``start``: delete the generation it replaced
        (committed: no writer names it again, and a reader keeps the inode it
        opened); rolled back, the old one stays in force and the new file is left
        to the next writer's remove_stale."""
        retired, self._retired = self._retired, None
        if retired is not None and committed:
            for path in (retired, firstpass.sign_path(retired), firstpass.moments_path(retired)):
                remove_file(path)
