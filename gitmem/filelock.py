"""An advisory lock on an open file, the same on POSIX and Windows.

POSIX: ``flock`` (the whole file). Windows has no ``fcntl``: ``msvcrt.locking``
locks the file's first byte (a lock may lie past the end of the file, so an
empty lock file works). Both are released by the system when the process dies,
so a crashed git mem never leaves a lock behind. Only non-blocking attempts are
offered: every caller either steps aside or retries on its own deadline.

Why a module of its own: ``import fcntl`` at the top of a module made every
write fail to import on Windows (the op-log's appender), and the background
jobs' locks were simply skipped there.
"""

from __future__ import annotations

import os

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


def try_lock(fd: int) -> bool:
    """Take the lock on ``fd`` if free: True when taken, False when another process
    holds it. Other failures (a file system without locks) raise OSError."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True
    import msvcrt

    os.lseek(fd, 0, os.SEEK_SET)  # msvcrt locks from the current position
    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except PermissionError:  # EACCES: locked by another process
        return False
    except OSError as exc:
        if exc.errno in (13, 36):  # EACCES, EDEADLOCK: what msvcrt says for "held"
            return False
        raise
    return True


def unlock(fd: int) -> None:
    """Release a lock taken with ``try_lock``; never raises (closing the file or
    ending the process releases it anyway)."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return
        import msvcrt

        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)
    except OSError:
        pass
