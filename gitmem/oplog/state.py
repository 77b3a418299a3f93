"""This clone's own small files under ``.git/mem/``: never shared, never pushed.

The clone id names this clone's partitions; the memos (``tip-clocks``,
``facts``) spare later commands loading libgit2; the purge record lives in
purge.py. The folder sits in the common git dir, so linked worktrees share
it (one clone, one id). Every file is replaced whole through a temp file and
a rename: a crash leaves the old content or the new, never half of either.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

STATE_DIR = "mem"
CLONE_ID_FILE = "clone-id"


class State:
    """The state folder of one clone (``<commondir>/mem``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def replace(self, name: str, text: str) -> None:
        """Write the file ``name`` whole: a temp file renamed over it (atomic)."""
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / f".{name}.{os.getpid()}.{os.urandom(16).hex()}"
        tmp.write_text(text)
        os.replace(tmp, self.path / name)

    def write_memo(self, name: str, data: object) -> None:
        """Store a memo; failing to is harmless (it is recomputed next time)."""
        try:
            self.replace(name, json.dumps(data, sort_keys=True))
        except OSError:
            pass  # only a cache

    def clone_id(self, create: bool = True) -> str:
        """This clone's random id, created once, race-free.

        Written to a temp file and hard-linked into place: link() fails if the
        file exists, so concurrent first writers all end up reading one id.
        With ``create=False`` an absent id is returned as "".
        """
        path = self.path / CLONE_ID_FILE
        try:
            value = path.read_text().strip()
            if value or not create:
                return value
        except FileNotFoundError:
            if not create:
                return ""
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / f".{CLONE_ID_FILE}.{os.getpid()}.{os.urandom(16).hex()}"
        tmp.write_text(os.urandom(6).hex() + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        return path.read_text().strip()

    def set_clone_id(self, value: str) -> None:
        """Replace this clone's id (rekey). Atomic: write a temp file, rename it."""
        self.replace(CLONE_ID_FILE, value + "\n")
