"""What a failure to use the projection means: damage, or a directory that cannot be written.

Why this exists: the answer to a failure differs by its cause, so it is
decided here, once (``damage``), for every method of the package (the
``guarded`` decorators apply it): anything that says the files cannot be read
as they are (any SQLite error about the database, text that is not UTF-8, a
missing table or column, a cache path that is not a directory, a file of
ours that is not a regular file: ``foreign_entries``) is ``ProjectionCorrupt``, which the api answers by deleting the files and
replaying the log; a directory that cannot be written (read-only file system,
permissions) or a full disk is ``ProjectionUnwritable``, which rebuilding
would not fix (``probe`` tells which). Anything else (a bug, a lock held too
long, an error of the op-log) is raised as it is.
"""

from __future__ import annotations

import errno
import functools
import json
import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, Literal, ParamSpec, Protocol, TypeVar

# SQLite primary result codes (https://sqlite.org/rescode.html).
_PERM, _BUSY, _LOCKED, _NOMEM, _READONLY, _INTERRUPT, _IOERR = 3, 5, 6, 7, 8, 9, 10
_FULL, _CANTOPEN, _AUTH = 13, 14, 23
# Not about the file at all: waited too long for a lock, out of memory, interrupted.
_NOT_DAMAGE = {_BUSY, _LOCKED, _NOMEM, _INTERRUPT}
# The file or a companion (-wal, -shm) could not be opened or written: the directory
# is read-only, the disk is full, or one of our files is in the way (damage).
_UNWRITABLE = {_PERM, _READONLY, _IOERR, _CANTOPEN, _AUTH}
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT}
_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}

P = ParamSpec("P")
R = TypeVar("R")
Why = Literal["full", "read-only", "io"]


class ProjectionCorrupt(Exception):
    """The projection cannot be used as it is; the caller deletes it and rebuilds."""


class ProjectionUnwritable(Exception):
    """The projection's directory cannot be written: rebuilding would not help.

    ``why``: "full" (no space left or quota exceeded), "read-only" (a read-only
    file system or no permission) or "io" (the device reported an I/O error).
    """

    def __init__(self, message: str, why: Why, directory: Path) -> None:
        super().__init__(message)
        self.why: Why = why
        self.directory = directory


def _inside(name: object, directory: Path) -> bool:
    """``name`` (an OSError's filename) is the projection directory or in it."""
    if not isinstance(name, (str, bytes, os.PathLike)):
        return False
    try:
        path = Path(os.fsdecode(name)).absolute()
    except (TypeError, ValueError):
        return False
    d = directory.absolute()
    return path == d or d in path.parents


def foreign_entries(database: Path) -> None:
    """Raise ProjectionCorrupt when the projection's directory holds something no
    git mem process makes there: the database or its write-ahead log or shared
    memory (``-wal``, ``-shm``) as anything but a regular file, or any entry that
    is a symbolic link, a FIFO, a device or a socket.

    Checked before SQLite opens the file, without opening anything (lstat only):
    SQLite reads a FIFO forever and a device or a link's target as if it were
    ours (a link to /dev/null read as "disk I/O error" on every command,
    rebuild included). A directory other than the database's own names is left
    to the reader that wants a file there (the vector file's check). One
    directory listing (no stat per entry on Linux): a few microseconds."""
    names = {database.name, database.name + "-wal", database.name + "-shm"}
    try:
        with os.scandir(database.parent) as listing:
            for entry in listing:
                if entry.is_file(follow_symlinks=False):
                    continue
                if entry.name not in names and entry.is_dir(follow_symlinks=False):
                    continue
                what = _kind(entry.path)
                raise ProjectionCorrupt(f"{entry.path} is {what}, not a file git mem wrote")
    except (FileNotFoundError, NotADirectoryError):
        return  # no directory yet (created next), or a file in its place (damage, found next)
    except PermissionError:
        return  # an unreadable directory: the open that follows says what it means


def _kind(path: str) -> str:
    """What the entry at ``path`` is, in words (lstat: a link is not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return "gone"
    for test, word in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return word
    return "not a regular file"


def probe(directory: Path) -> ProjectionUnwritable | None:
    """Why ``directory`` cannot take a new file of a few kilobytes, or None."""
    import shutil  # rare: a failed write

    try:
        free = shutil.disk_usage(directory).free
    except OSError:
        free = None
    if free is not None and free < 1 << 20:
        return ProjectionUnwritable("no space left on device", "full", directory)
    test = directory / f".probe-{os.getpid()}-{os.urandom(4).hex()}"
    try:
        with open(test, "xb") as fh:
            fh.write(b"\0" * 8192)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        if exc.errno in _FULL_ERRNOS:
            return ProjectionUnwritable(os.strerror(exc.errno), "full", directory)
        if exc.errno in _READ_ONLY_ERRNOS:
            return ProjectionUnwritable(os.strerror(exc.errno), "read-only", directory)
        return None  # not a directory, or something else in the way: damage
    finally:
        try:
            test.unlink()
        except OSError:
            pass
    return None


def damage(exc: BaseException, directory: Path, *, reading: bool = False) -> Exception | None:
    """What ``exc``, raised while using the projection in ``directory``, means:
    ProjectionCorrupt, ProjectionUnwritable, or None (not about our files: a
    bug, a lock held too long, an error of the op-log; raise it as it is).

    ``reading``: the failure came from reading rows back (a query), where any
    value of an unexpected type or shape is damage too."""
    if isinstance(exc, (ProjectionCorrupt, ProjectionUnwritable)):
        return exc
    if isinstance(exc, (sqlite3.ProgrammingError, sqlite3.InterfaceError)):
        return None  # our own misuse of the API: a bug, not the file
    if isinstance(exc, sqlite3.DatabaseError):
        code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
        if code in _NOT_DAMAGE:
            return None
        if code == _FULL:
            return ProjectionUnwritable(str(exc), "full", directory)
        if code in _UNWRITABLE:
            found = probe(directory) if directory.is_dir() else None
            if found is not None:
                return found
            if code == _IOERR:
                return ProjectionUnwritable(str(exc), "io", directory)
        return ProjectionCorrupt(str(exc))  # anything else the file says is damage
    if isinstance(exc, OSError):
        if exc.errno in _FULL_ERRNOS:
            return ProjectionUnwritable(os.strerror(exc.errno or 0), "full", directory)
        if exc.errno == errno.EROFS:
            return ProjectionUnwritable(os.strerror(exc.errno), "read-only", directory)
        if exc.errno == errno.EIO:
            return ProjectionUnwritable(os.strerror(exc.errno), "io", directory)
        if not (_inside(exc.filename, directory) or _inside(exc.filename2, directory)):
            return None  # not one of our files (the op-log's, say)
        if exc.errno in _READ_ONLY_ERRNOS:
            return probe(directory) or ProjectionCorrupt(str(exc))
        return ProjectionCorrupt(str(exc))  # not a directory, a directory, gone, ...
    if isinstance(exc, UnicodeEncodeError):
        return None  # a str of ours (an argument) SQLite could not bind: not the file
    if isinstance(exc, (UnicodeError, json.JSONDecodeError)):
        return ProjectionCorrupt(f"{type(exc).__name__}: {exc}")
    if reading and isinstance(exc, (ValueError, TypeError, KeyError, IndexError,
                                    AttributeError, OverflowError)):
        return ProjectionCorrupt(f"{type(exc).__name__}: {exc}")
    return None


class HasDirectory(Protocol):
    directory: Path


H = TypeVar("H", bound=HasDirectory)


def guarded(fn: Callable[Concatenate[H, P], R]) -> Callable[Concatenate[H, P], R]:
    """A method of an object with a ``directory``: its failures mapped by ``damage``."""
    return _guard(fn, reading=False)


def guarded_read(fn: Callable[Concatenate[H, P], R]) -> Callable[Concatenate[H, P], R]:
    """A query method: as ``guarded``, and a row of an unexpected shape is damage."""
    return _guard(fn, reading=True)


def _guard(fn: Callable[Concatenate[H, P], R], *, reading: bool) -> Callable[Concatenate[H, P], R]:
    @functools.wraps(fn)
    def wrapper(self: H, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(self, *args, **kwargs)
        except Exception as exc:
            found = damage(exc, self.directory, reading=reading)
            if found is None or found is exc:
                raise
            try:
                raise found from exc
            finally:
                del found  # no cycle through this frame: the failed query's
                # cursors are freed with the exception, before the caller closes

    return wrapper
