"""Appending one pack commit to a partition: the write path's last step.

Crash and race safety of an append:
1. appenders of one clone queue on an advisory flock (``.git/mem/append.lock``,
   released by the kernel if the process dies);
2. blob, tree and commit are written first, as loose objects (objects.py:
   temp file, fsync, rename; libgit2 for sha256 or reftable repositories),
   so a crash leaves at most unreferenced objects that ``git gc`` removes;
3. the ref moves last, by compare-and-swap against the tip read in step 2
   (refs.py, git's ``<ref>.lock`` protocol), so a crash leaves the ref on a
   complete commit. The swap, not the flock, is what makes the append
   correct: if anything moved the ref first, the commit is rebuilt on the
   new tip with a fresh clock and the swap retried.
The four fsyncs (three objects, the ref's lock file holding the new id) run
side by side, once the lock is taken: a wait for the disk, not four. The
order that matters is kept: nothing is renamed into place before all four
are on disk, the objects are in place before the ref is renamed.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

from .. import filelock, ops
from ..errors import InvalidInput, LogBusy
from .history import History
from .libgit2 import Libgit2, pygit2
from .objects import PACK_FILE, Objects
from .state import discard
from .records import Appended
from .refs import REF_PREFIX, Refs

APPEND_LOCK_FILE = "append.lock"


class Signature(msgspec.Struct, frozen=True):
    """A commit signature: who and when (unix seconds, UTC offset in minutes)."""

    name: str
    email: str
    time: int
    offset: int

    def ident(self) -> str:
        """The ``Name <email> time +hhmm`` line of a commit header."""
        sign = "-" if self.offset < 0 else "+"
        hours, minutes = divmod(abs(self.offset), 60)

        def clean(v: str) -> str:
            return v.replace("<", "").replace(">", "").replace("\n", " ")

        return f"{clean(self.name)} <{clean(self.email)}> {self.time} {sign}{hours:02d}{minutes:02d}"


@contextmanager
def append_lock(state_dir: Path, ref_name: str, deadline: float) -> Iterator[None]:
    """Serialise appenders of this clone (an flock, released if we crash).

    Correctness does not depend on it (the ref update is a compare-and-swap
    and also guards against writers that do not take this lock); it stops
    many concurrent writers from rebuilding commits they then throw away.
    Purges take it too, and a stale ``<ref>.lock`` is only cleared under it.
    """
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = _lock_file(state_dir / APPEND_LOCK_FILE)
    try:
        while True:
            if filelock.try_lock(fd):
                break
            if time.monotonic() > deadline:
                raise LogBusy(f"another git mem process kept {ref_name} locked")
            time.sleep(_jitter(0.002, 0.01))
        try:
            yield
        finally:
            filelock.unlock(fd)
    finally:
        os.close(fd)


def _lock_file(path: Path) -> int:
    """The lock file, opened without blocking and without following a link. It
    holds nothing but the lock, so anything else found in its place (a FIFO, a
    link, a device: an add failed on one as "not seekable") is removed and the
    file made again, once; what still is not a regular file is an error."""
    flags = (os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    for attempt in range(2):
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as exc:  # ELOOP: a link; EISDIR: a directory
            if attempt or exc.errno not in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
                raise
        else:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                return fd
            os.close(fd)
            if attempt:
                break
        if not discard(path):
            break  # a directory with something in it: not ours to empty
    raise InvalidInput(f"{path} is not a regular file, and could not be replaced",
                       "move it aside: it only ever holds a lock, and git mem makes it again")


def _jitter(low: float, high: float) -> float:
    """A random pause length, for a writer that lost a race (random is imported
    here: an append without contention never needs it)."""
    import random

    return random.uniform(low, high)


def _message(summary: str, lines: list[bytes], clock: int) -> str:
    """The commit message: a summary, then the trailers replay and appends read.

    Op i of the pack has clock ``clock + i``; Gitmem-Clock records the last
    (for people reading ``git log``: writers never trust it, see Oplog.append).
    """
    last_clock = clock + len(lines) - 1
    return (
        f"{summary}\n\n"
        f"Gitmem-Format: {ops.FORMAT_VERSION}\n"
        f"Gitmem-Ops: {len(lines)}\n"
        f"Gitmem-Clock: {last_clock}\n"
    )


class Appender:
    """Writes pack commits onto partition refs."""

    def __init__(self, objects: Objects, refs: Refs, libgit2: Libgit2, history: History,
                 state_dir: Path) -> None:
        self._objects = objects
        self._refs = refs
        self._libgit2 = libgit2
        self._history = history
        self._state_dir = state_dir

    def append(
        self,
        partition: str,
        author: ops.Author,
        at: int,
        tz: int,
        summary: str,
        make_lines: Callable[[int], list[bytes]],
        *,
        next_clock: Callable[[], int],
        timeout: float = 60.0,
    ) -> Appended:
        """Append one commit holding the pack ``make_lines(first_clock)`` returns.

        Op i of the pack must carry clock ``first_clock + i``. ``make_lines`` is
        called again on every retry with a fresh clock, so the clocks along a
        partition's chain only ever increase.
        """
        ref_name = REF_PREFIX + partition
        sig = Signature(author.name, author.email, at, tz)
        deadline = time.monotonic() + timeout
        with append_lock(self._state_dir, ref_name, deadline):
            if self._objects.plain_writes_ok():
                return self._append_plain(ref_name, sig, summary, make_lines, next_clock,
                                          deadline)
            return self._append_libgit2(ref_name, sig, summary, make_lines, next_clock,
                                        deadline)

    def _append_plain(
        self,
        ref_name: str,
        sig: Signature,
        summary: str,
        make_lines: Callable[[int], list[bytes]],
        next_clock: Callable[[], int],
        deadline: float,
    ) -> Appended:
        attempt = 0
        while True:
            attempt += 1
            parent = self._refs.current(ref_name)
            self._history.check_own_tip(ref_name, parent)
            clock = next_clock()
            lines = make_lines(clock)
            pack = ops.encode_pack(lines)
            tree_data = (b"100644 " + PACK_FILE.encode() + b"\0"
                         + bytes.fromhex(Objects.oid(b"blob", pack)))
            ident = sig.ident()
            body = f"tree {Objects.oid(b'tree', tree_data)}\n"
            if parent:
                body += f"parent {parent}\n"
            body += f"author {ident}\ncommitter {ident}\n\n{_message(summary, lines, clock)}"
            staged = self._objects.stage(
                [(b"blob", pack), (b"tree", tree_data), (b"commit", body.encode("utf-8"))])
            commit = staged.oids[2]
            try:
                # Compare-and-swap: the ref's lock taken only if it still holds ``parent``.
                held = self._refs.lock(ref_name, parent, commit)
            except BaseException:
                staged.discard()
                raise
            if held is not None:
                try:
                    # The three objects and the ref's new value flushed side by side
                    # (one wait for the disk, not four), then the objects put in place...
                    staged.flush_and_publish([held.fd])
                except BaseException:
                    held.release()
                    raise
                held.publish()  # ...and the ref moved last: a crash before leaves it as it was
                return Appended(commit, ref_name, lines)
            staged.discard()  # lost the race: built again on the new tip
            if time.monotonic() > deadline:
                raise self._refs.busy(ref_name, attempt)
            time.sleep(_jitter(0.001, 0.004) * min(attempt, 10))

    def _append_libgit2(
        self,
        ref_name: str,
        sig: Signature,
        summary: str,
        make_lines: Callable[[int], list[bytes]],
        next_clock: Callable[[], int],
        deadline: float,
    ) -> Appended:
        repo = self._libgit2.repo
        attempt = 0
        while True:
            attempt += 1
            ref = repo.references.get(ref_name)
            parent = ref.target if ref is not None else None
            self._history.check_own_tip(ref_name, str(parent) if parent is not None else None)
            clock = next_clock()
            lines = make_lines(clock)
            blob = repo.create_blob(ops.encode_pack(lines))
            builder = repo.TreeBuilder()
            builder.insert(PACK_FILE, blob, pygit2.enums.FileMode.BLOB)
            tree = builder.write()
            psig = pygit2.Signature(sig.name, sig.email, sig.time, sig.offset)
            commit = repo.create_commit(
                None, psig, psig, _message(summary, lines, clock), tree,
                [parent] if parent is not None else [],
            )
            try:
                if ref is None:
                    repo.references.create(ref_name, commit)
                else:
                    ref.set_target(commit)  # compare-and-swap on the tip we read
                return Appended(str(commit), ref_name, lines)
            except (pygit2.GitError, pygit2.AlreadyExistsError, OSError) as exc:
                if type(exc) is OSError and "lock" not in str(exc):
                    raise  # a real I/O failure, not a lost race
                # Lost the race (ref moved, or another writer holds <ref>.lock):
                # rebuild on the new tip.
                if time.monotonic() > deadline:
                    raise self._refs.busy(ref_name, attempt) from None
                time.sleep(_jitter(0.001, 0.004) * min(attempt, 10))
