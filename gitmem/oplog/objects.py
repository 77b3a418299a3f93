"""Git objects as loose files, read and written without libgit2.

``git mem add`` writes one blob, one tree and one commit, and the read that
follows sees mostly what this clone just wrote: loose objects. Handling them
with zlib spares both commands the ~70 ms of loading libgit2. The format is
git's own, so git, libgit2 and we can write side by side. Anything else
(packed objects, sha256 or reftable repositories) goes to libgit2, which
stays the reference.
"""

from __future__ import annotations

import os
import re
import zlib
from pathlib import Path
from collections.abc import Sequence
from typing import BinaryIO

from .. import hashes, ops

PACK_FILE = "ops.jsonl"
HEX_OID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?\Z")
# Loose objects larger than this are left to libgit2: a small file may inflate
# to gigabytes, and nothing we write comes near (packs stop at 64 MiB).
MAX_LOOSE_BYTES = 80 * 1024 * 1024


class Objects:
    """The loose objects of one repository (``<commondir>/objects``)."""

    def __init__(self, commondir: Path) -> None:
        self._commondir = commondir
        self._plain: bool | None = None

    def plain_writes_ok(self) -> bool:
        """True for a sha1 repository with the files ref backend: the layout
        our own writers (objects here, refs in refs.py) know. Anything else
        is written through libgit2."""
        if self._plain is None:
            try:
                config = (self._commondir / "config").read_text(errors="replace").lower()
            except OSError:
                config = ""
            self._plain = (
                "objectformat" not in config
                and "refstorage" not in config
                and not (self._commondir / "reftable").exists()
                and (self._commondir / "objects").is_dir()
            )
        return self._plain

    @staticmethod
    def oid(kind: bytes, data: bytes) -> str:
        """The id an object is stored under, without storing it."""
        return hashes.sha1(_raw(kind, data)).hexdigest()

    def stage(self, objects: list[tuple[bytes, bytes]]) -> Staged:
        """Objects (kind, data) compressed to temp files, not yet flushed nor in place.

        Crash-safe once published (``Staged``): each temp file is fsynced, then
        renamed into place, so a reader sees all of an object or nothing.
        Content-addressed: an object already there is left alone.
        """
        staged = Staged()
        try:
            for kind, data in objects:
                raw = _raw(kind, data)
                oid = hashes.sha1(raw).hexdigest()
                staged.oids.append(oid)
                folder = self._commondir / "objects" / oid[:2]
                path = folder / oid[2:]
                if path.exists() or path in staged.paths:
                    continue
                folder.mkdir(exist_ok=True)
                tmp = folder / f"tmp_obj_{os.getpid()}_{os.urandom(16).hex()}"
                fh = open(tmp, "wb")  # noqa: SIM115 - Staged closes it
                staged.files.append(fh)
                staged.temps.append(tmp)
                staged.paths.append(path)
                fh.write(zlib.compress(raw, 1))
                fh.flush()
        except BaseException:
            staged.discard()
            raise
        return staged

    def header(self, oid: str) -> tuple[bytes, int] | None:
        """(type, size) of a loose object, inflating only its header; or None."""
        if not HEX_OID.match(oid):
            return None
        try:
            with open(self._commondir / "objects" / oid[:2] / oid[2:], "rb") as fh:
                start = fh.read(4096)
            head = zlib.decompressobj().decompress(start, 64)
        except (OSError, zlib.error):
            return None
        header, nul, _ = head.partition(b"\0")
        kind, _, size = header.partition(b" ")
        if not nul or not size.isdigit() or len(size) > 20:
            return None
        return kind, int(size)

    def _prefix(self, oid: str, limit: int) -> tuple[bytes, int, bytes] | None:
        """(type, size, body) of a loose object, inflating at most ``limit`` bytes of
        its body: the whole body when it is no larger (checked against its size), else
        its first ``limit`` bytes or more; None when it is not a loose object."""
        if not HEX_OID.match(oid):
            return None
        want = limit + 64  # (a header is at most 27 bytes)
        inflate = zlib.decompressobj()
        out: list[bytes] = []
        got = 0
        try:
            with open(self._commondir / "objects" / oid[:2] / oid[2:], "rb") as fh:
                while got < want and not inflate.eof:
                    chunk = inflate.unconsumed_tail or fh.read(65536)
                    if not chunk:
                        break
                    piece = inflate.decompress(chunk, want - got)
                    out.append(piece)
                    got += len(piece)
        except (OSError, zlib.error):
            return None
        header, nul, body = b"".join(out).partition(b"\0")
        kind, _, size = header.partition(b" ")
        if not nul or not size.isdigit() or len(size) > 20:
            return None
        n = int(size)
        if n <= limit and (n != len(body) or not inflate.eof):
            return None  # read whole, it is not the size it says
        if n > limit and len(body) < limit:
            return None  # it ends before the size it says
        return kind, n, body

    def loose(self, oid: str) -> tuple[bytes, bytes] | None:
        """(type, body) of a loose object, or None (also for one over MAX_LOOSE_BYTES)."""
        if not HEX_OID.match(oid):
            return None
        try:
            inflate = zlib.decompressobj()
            data = (self._commondir / "objects" / oid[:2] / oid[2:]).read_bytes()
            raw = inflate.decompress(data, MAX_LOOSE_BYTES + 64)
        except (OSError, zlib.error):
            return None
        if inflate.unconsumed_tail:
            return None  # inflates beyond the bound: let libgit2 answer
        header, _, body = raw.partition(b"\0")
        kind, _, size = header.partition(b" ")
        if not size.isdigit() or int(size) != len(body):
            return None
        return kind, body

    def commit(self, oid: str) -> tuple[str, list[str]] | None:
        """(tree, parents) of a loose commit, or None."""
        head = self.commit_head(oid)
        return (head[0], head[1]) if head is not None else None

    def commit_head(self, oid: str) -> tuple[str, list[str], int] | None:
        """(tree, parents, size) of a loose commit, or None. Inflates at most
        MAX_COMMIT_BYTES of it: a larger one (a 50 MiB message: the reader skips it)
        is still walked through, its tree and parents read from its first lines."""
        got = self._prefix(oid, ops.MAX_COMMIT_BYTES)
        if got is None or got[0] != b"commit":
            return None
        body, size = got[2], got[1]
        if size > len(body) and b"\n\n" not in body:
            return None  # its header runs past what was read: let libgit2 answer
        tree, parents = "", []
        for line in body.split(b"\n"):
            if not line:
                break
            name, _, value = line.partition(b" ")
            if name == b"tree":
                tree = value.decode("ascii", "replace")
            elif name == b"parent":
                parents.append(value.decode("ascii", "replace"))
        return (tree, parents, size) if tree else None

    def commit_message(self, oid: str) -> bytes | None:
        """The message of a loose commit (trailers included), or None."""
        obj = self.loose(oid)
        if obj is None or obj[0] != b"commit":
            return None
        return obj[1].partition(b"\n\n")[2]


class Staged:
    """Objects written to temp files by ``Objects.stage``: flushed, then published.

    ``flush_and_publish`` fsyncs them, with any other file that must be on disk
    before they are in place (an append's ref lock), all side by side
    (``fsync_all``): an append's blob, tree and commit then wait for the disk
    about once instead of three times (ext4 commits the files' metadata in one
    journal transaction); then renames them into place, only once all are
    flushed. ``discard`` drops them, leaving nothing behind.
    """

    def __init__(self) -> None:
        self.oids: list[str] = []
        self.files: list[BinaryIO] = []
        self.temps: list[Path] = []
        self.paths: list[Path] = []

    @property
    def fds(self) -> list[int]:
        return [fh.fileno() for fh in self.files]

    def publish(self) -> None:
        """Rename every (flushed) object into place."""
        for fh in self.files:
            fh.close()
        for tmp, path in zip(self.temps, self.paths):
            os.chmod(tmp, 0o444)
            os.replace(tmp, path)
        self.files, self.temps, self.paths = [], [], []

    def flush_and_publish(self, others: Sequence[int] = ()) -> None:
        """fsync the objects and the files ``others`` side by side, then rename the
        objects into place; on a failure, discard them and raise."""
        try:
            fsync_all([*self.fds, *others])
            self.publish()
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        """Close and delete the temp files (none of them is in place)."""
        for fh in self.files:
            fh.close()
        for tmp in self.temps:
            tmp.unlink(missing_ok=True)
        self.files, self.temps, self.paths = [], [], []


def _raw(kind: bytes, data: bytes) -> bytes:
    """An object as git hashes and stores it: a header, then the data."""
    return kind + b" " + str(len(data)).encode() + b"\0" + data


def fsync_all(fds: list[int]) -> None:
    """fsync every file, side by side: the first here, each other in a thread of
    its own (os.fsync lets go of the GIL), all done when this returns. Raises the
    first failure. ``_thread``, not ``threading``: a one-line add would otherwise
    import threading for this alone."""
    import _thread

    failures: list[BaseException] = []
    waits = []
    for fd in fds[1:]:
        done = _thread.allocate_lock()
        done.acquire()

        def flush(fd: int = fd, done: _thread.LockType = done) -> None:
            try:
                os.fsync(fd)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                failures.append(exc)
            finally:
                done.release()

        try:
            _thread.start_new_thread(flush, ())
        except RuntimeError:  # no thread to be had: flush it here
            done.release()
            os.fsync(fd)
            continue
        waits.append(done)
    try:
        if fds:
            os.fsync(fds[0])
    finally:
        for done in waits:
            done.acquire()
    if failures:
        raise failures[0]
