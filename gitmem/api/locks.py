"""Advisory "only one of us at a time" locks for background work under .git/mem.

The background catch-up and session capture each run at most once at a time;
a second one sees the lock held and steps aside (its caller says so). On
Windows, and where the lock file cannot be created (a read-only .git), there
is no lock: the work may run twice, which costs time and breaks nothing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@contextmanager
def held(path: Path) -> Iterator[bool]:
    """Hold the lock at ``path`` if free; yields False when another process holds it."""
    if fcntl is None:
        yield True
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
