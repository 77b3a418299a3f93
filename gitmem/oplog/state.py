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
import re
from pathlib import Path

from ..errors import InvalidInput

STATE_DIR = "mem"
CLONE_ID_FILE = "clone-id"
# Exactly what creation and rekey write: 6 random bytes in lowercase hex.
CLONE_ID = re.compile(r"^[0-9a-f]{12}$")


def new_clone_id() -> str:
    return os.urandom(6).hex()


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
        With ``create=False`` an absent id is returned as "". The id names
        our partition refs, so a file that does not hold exactly what we
        write (``../../heads/main``, blanks) is an error, never used.
        """
        path = self.path / CLONE_ID_FILE
        try:
            return self._checked(path.read_bytes())
        except FileNotFoundError:
            if not create:
                return ""
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / f".{CLONE_ID_FILE}.{os.getpid()}.{os.urandom(16).hex()}"
        with open(tmp, "w") as fh:
            fh.write(new_clone_id() + "\n")
            fh.flush()
            os.fsync(fh.fileno())  # never link an empty file into place
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        return self._checked(path.read_bytes())

    def _checked(self, raw: bytes) -> str:
        value = raw.decode("ascii", "replace").strip()
        if CLONE_ID.match(value):
            return value
        path = self.path / CLONE_ID_FILE
        shown = repr(value[:40]) if value else "nothing"
        raise InvalidInput(
            f"{path} holds {shown}, not a clone id (12 lowercase hex digits)",
            f"run 'git mem rekey', or delete {path}: this clone gets a new id, and so a "
            "new partition, on its next write",
        )

    def set_clone_id(self, value: str) -> None:
        """Replace this clone's id (rekey). Atomic: write a temp file, rename it."""
        if not CLONE_ID.match(value):
            raise ValueError(f"not a clone id: {value!r}")
        self.replace(CLONE_ID_FILE, value + "\n")
