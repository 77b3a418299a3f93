"""Advisory "only one of us at a time" locks for background work under .git/mem.

The background catch-up and session capture each run at most once at a time;
a second one sees the lock held and steps aside (its caller says so). The lock
is ``flock`` on POSIX, ``msvcrt.locking`` on Windows (filelock.py). Where the lock file cannot be opened (a read-only
.git, a folder put at its name) the caller chooses: the catch-up and the
capture run unlocked (twice at worst, which costs time and breaks nothing);
the remote probe does not run (each would ask the network, and a read-only
.git cannot keep the answer either: every hook would ask again).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .. import filelock


@contextmanager
def held(path: Path, *, unopened: bool = True) -> Iterator[bool]:
    """Hold the lock at ``path`` if free; yields False when another process holds it,
    and ``unopened`` when the lock file cannot be opened (True: go on unlocked)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_BINARY", 0), 0o644)
    except OSError:
        yield unopened
        return
    try:
        try:
            taken = filelock.try_lock(fd)
        except OSError:
            taken = False  # a file system without locks: as if held
        if not taken:
            yield False
            return
        try:
            yield True
        finally:
            filelock.unlock(fd)
    finally:
        os.close(fd)
