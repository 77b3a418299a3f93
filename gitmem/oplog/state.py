"""This clone's own small files under ``.git/mem/``: never shared, never pushed.

The clone id names this clone's partitions; the memos (``tip-clocks``,
``facts``) spare later commands loading libgit2; the purge record lives in
purge.py. The folder sits in the common git dir, so linked worktrees share
it (one clone, one id). Every file is replaced whole through a temp file and
a rename: a crash leaves the old content or the new, never half of either.

Nothing here trusts what it finds: a file is read only when it is a regular
file (``read_regular``: opened without blocking, so a FIFO put in its place
cannot hang a command), and a folder or clone id of the wrong kind is an
``InvalidInput`` with a hint, never an internal error.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from ..errors import InvalidInput

STATE_DIR = "mem"
CLONE_ID_FILE = "clone-id"
# Exactly what creation and rekey write: 6 random bytes in lowercase hex.
CLONE_ID = re.compile(r"^[0-9a-f]{12}\Z")
CLONE_ID_BYTES = 64  # far more than an id and its newline: the rest is not read
MEMO_BYTES = 16 << 20  # far above any memo we write (facts: 4,096 ids, ~330 KB)
T = TypeVar("T")


def new_clone_id() -> str:
    return os.urandom(6).hex()


class NotRegular(OSError):
    """The path names something other than a regular file (``what`` says which)."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(errno.EINVAL, f"{path} is {what}, not a regular file", str(path))
        self.what = what


def kind(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words."""
    for test, word in ((stat.S_ISREG, "a regular file"),
                       (stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return word
    return "of an unknown kind"


def read_regular(path: Path, limit: int, *, follow: bool = True) -> bytes:
    """At most ``limit`` bytes of the regular file at ``path``.

    Opened with O_NONBLOCK, so a FIFO in its place returns at once instead of
    waiting for a writer that never comes, and checked with fstat on what was
    opened (no race between a check and the open): a FIFO, a device, a socket
    or a directory raises ``NotRegular``. ``follow=False``: a symbolic link is
    refused too (O_NOFOLLOW; a cache never holds one). A missing file raises
    FileNotFoundError as open() does."""
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_BINARY", 0))  # (Windows: no O_NONBLOCK; text mode ends at a Ctrl-Z)
    if not follow:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow:
            raise NotRegular(path, "a symbolic link") from None
        if exc.errno == errno.ENXIO:  # a socket (or a FIFO opened for writing)
            raise NotRegular(path, "a socket") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(path, kind(mode))
        chunks: list[bytes] = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def discard(path: Path) -> bool:
    """Remove whatever is at ``path`` (a file, a link, a FIFO; an empty directory),
    best effort; whether it is gone. A directory with something in it is left: not
    ours to empty."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return True
    except IsADirectoryError:
        try:
            os.rmdir(path)
        except OSError:
            return False
    except OSError:
        return False
    return True


def load_json(path: Path, kind: type[T], *, limit: int, follow: bool = True,
              remove: Callable[[Path], object] | None = None) -> T | None:
    """The JSON file at ``path`` decoded as ``kind``, or None when it is absent or
    cannot be used: not a regular file (never opened in a way that blocks), a
    link with ``follow=False``, over ``limit`` bytes, not JSON of that type, or
    nested too deep to decode (a RecursionError, which json.loads raises as no
    ValueError). A file found damaged is given to ``remove`` (the next write
    starts it again), when given."""
    try:
        data = read_regular(path, limit + 1, follow=follow)
        if len(data) > limit:
            raise ValueError(f"{path} is over {limit} bytes")
        return msgspec.json.decode(data, type=kind)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError, msgspec.DecodeError, msgspec.ValidationError):
        if remove is not None:
            remove(path)
        return None


def _unlink(path: Path) -> None:
    """Remove the file at ``path``; a directory (a memo is never one: not ours to
    remove) or a read-only ``.git`` leaves it, only ignored."""
    try:
        os.unlink(path)
    except OSError:
        pass


class State:
    """The state folder of one clone (``<commondir>/mem``)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def check_folder(self) -> None:
        """Raise InvalidInput when ``.git/mem`` exists and is not a directory (a
        link to one is fine): nothing of this clone's state can be kept there,
        and the clone id that named its partitions was in it."""
        try:
            mode = os.stat(self.path).st_mode
        except FileNotFoundError:
            if not os.path.lexists(self.path):
                return  # created on the first write
            mode = 0  # a link to nothing
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            mode = 0  # a path through a file, or a loop of links
        if stat.S_ISDIR(mode):
            return
        try:
            what = kind(os.lstat(self.path).st_mode)
        except OSError:
            what = "not a directory"
        if what == "a symbolic link":
            what = "a symbolic link that does not lead to a directory"
        aside = self.path.with_name(self.path.name + ".bad")
        raise InvalidInput(
            f"{self.path} is {what}, not git mem's state directory",
            f"move it aside (mv {self.path} {aside}); it held this clone's id: write it "
            f"back to {self.path / CLONE_ID_FILE} if you know it (the end of this clone's "
            "partition names in 'git for-each-ref refs/memory'), else the next write "
            "starts a new partition",
        )

    def replace(self, name: str, text: str) -> None:
        """Write the file ``name`` whole: a temp file renamed over it (atomic)."""
        self.path.mkdir(parents=True, exist_ok=True)
        tmp = self.path / f".{name}.{os.getpid()}.{os.urandom(16).hex()}"
        tmp.write_text(text)
        os.replace(tmp, self.path / name)

    def read_json(self, name: str, *, limit: int = MEMO_BYTES,
                  disposable: bool = True) -> Any:
        """The JSON file ``name`` decoded (any JSON value: the caller checks its
        shape, as after json.loads), or None when it is absent or cannot be
        used: not a regular file (never opened in a way that blocks: a FIFO there
        hung every command), over ``limit`` bytes, not JSON, or nested too deep
        to decode (a RecursionError, which json.loads raises as no ValueError).
        A ``disposable`` memo found damaged is removed (the next write starts
        it again); other files (the purge record) are left for the user."""
        return load_json(self.path / name, Any, limit=limit,
                         remove=_unlink if disposable else None)

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
            return self._checked(self._read_id(path))
        except FileNotFoundError:
            if not create:
                return ""
        self.check_folder()
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
        return self._checked(self._read_id(path))

    def _read_id(self, path: Path) -> bytes:
        """The clone-id file's bytes; never blocks, never follows it into a
        directory: anything but a regular file there is InvalidInput."""
        try:
            return read_regular(path, CLONE_ID_BYTES)
        except NotRegular as exc:
            raise InvalidInput(
                f"{path} is {exc.what}, not a file holding a clone id",
                self._fix(path),
            ) from None
        except FileNotFoundError:
            # A dangling link, not a file another first writer linked into place
            # since the open (lexists alone took that race for a dangling link).
            if os.path.islink(path) and not os.path.exists(path):
                raise InvalidInput(f"{path} is a symbolic link to nothing, not a file "
                                   "holding a clone id", self._fix(path)) from None
            raise
        except OSError as exc:
            if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                self.check_folder()  # .git/mem itself is a file: says so
            raise InvalidInput(f"cannot read {path}: {exc.strerror}", self._fix(path)) from None

    @staticmethod
    def _fix(path: Path) -> str:
        return (f"run 'git mem rekey', or delete {path}: this clone gets a new id, and so "
                "a new partition, on its next write")

    def _checked(self, raw: bytes) -> str:
        value = raw.decode("ascii", "replace").strip()
        if CLONE_ID.match(value):
            return value
        path = self.path / CLONE_ID_FILE
        shown = repr(value[:40]) if value else "nothing"
        raise InvalidInput(
            f"{path} holds {shown}, not a clone id (12 lowercase hex digits)",
            self._fix(path),
        )

    def set_clone_id(self, value: str) -> None:
        """Replace this clone's id (rekey). Atomic: write a temp file, rename it."""
        if not CLONE_ID.match(value):
            raise ValueError(f"not a clone id: {value!r}")
        self.check_folder()
        path = self.path / CLONE_ID_FILE
        if path.is_dir() and not path.is_symlink():
            # Not ours (we only ever write a file): a rename cannot replace it, so it
            # is kept beside, under a name that says what it was, never deleted.
            os.replace(path, self.path / f"{CLONE_ID_FILE}.not-a-file.{os.urandom(4).hex()}")
        self.replace(CLONE_ID_FILE, value + "\n")
