"""Stamps of the vector files: what their writer left on disk, and whether it is
still there.

Why: every file read from disk is hostile until checked, and checking must not
cost a fresh recall a read of 100+ MB. A writer records, in the same transaction
as the rows, each file's stat (size, mtime_ns, ctime_ns, inode) in ``meta`` 'vector
stamps' and a CRC-32 of every 256 kB block in 'vector sums' (recomputed only for the
blocks it wrote). A reader compares the stat (a few microseconds): anything that
wrote the file since, even with its mtime put back, moved its ctime. On a mismatch
the next writer, under the write lock, compares the blocks (``changed``): the same
bytes (a copied or touched file, a crash's unnamed rows past the end) are stamped
again; other bytes are damage, which sidecars.py acts on. (A CRC finds damage, a
disk's or a careless tool's, not a forgery: whoever can write .git can also write
the stamps. A projection made before stamps has none, and its files are used as
they are.)
"""

from __future__ import annotations

import os
import sqlite3
import zlib
from pathlib import Path
from typing import Any

_BLOCK = 1 << 18  # bytes a checksum covers (stamps): 256 kB, ~0.1 ms to hash
_STAMPS, _SUMS = "vector stamps", "vector sums"  # the meta keys
KINDS = ("i8", "sign", "moments")


def _stamp(path: Path) -> str:
    """A file's identity and last change, as recorded ("-": none there)."""
    try:
        st = os.stat(path)
    except OSError:
        return f"{path.name} -"
    return f"{path.name} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}"


def _block_sums(path: Path, size: int, keep: list[int], start: int) -> list[int] | None:
    """CRC-32 of each _BLOCK bytes of the first ``size`` bytes of ``path``: ``keep``'s
    for the blocks before block ``start``, read for the rest (None: unreadable or
    shorter)."""
    out = keep[:start]
    try:
        with open(path, "rb") as fh:
            for at in range(len(out) * _BLOCK, size, _BLOCK):
                chunk = os.pread(fh.fileno(), min(_BLOCK, size - at), at)
                if len(chunk) < min(_BLOCK, size - at):
                    return None
                out.append(zlib.crc32(chunk))
    except OSError:
        return None
    return out


def _meta(c: sqlite3.Connection, key: str) -> Any:
    """The row of ``meta`` under ``key`` (a 1-tuple), None when there is none."""
    return c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()


class Stamps:
    """The stamps of one projection's vector files (``paths``: kind -> file, for the
    current generation), and the blocks this process wrote in place since the
    last ``record``."""

    def __init__(self) -> None:
        # Blocks this process wrote in place since the last stamp, per kind (a
        # failed transaction leaves them written: the next check expects them).
        self._dirty: dict[str, set[int]] = {}

    def dirty(self, kind: str, at: int, length: int) -> None:
        """This process writes ``length`` bytes at ``at`` of a file in place."""
        self._dirty.setdefault(kind, set()).update(
            range(at // _BLOCK, (at + length - 1) // _BLOCK + 1))

    def stamped(self, c: sqlite3.Connection, paths: dict[str, Path],
                kinds: tuple[str, ...] = KINDS) -> bool | None:
        """The files of ``kinds`` are as the last writer left them (their stat, a few
        microseconds); None when no stamp names this generation (a projection made
        before stamps, or a writer that has not finished one yet)."""
        row = _meta(c, _STAMPS)
        if row is None or not isinstance(row[0], str):
            return None
        recorded = dict(zip(KINDS, row[0].split("\n")))
        if recorded.get("i8", "").split(" ", 1)[0] != paths["i8"].name:
            return None
        return all(recorded.get(kind) == _stamp(paths[kind]) for kind in kinds)

    def changed(self, c: sqlite3.Connection,
                paths: dict[str, Path]) -> tuple[list[str], list[str]]:
        """A writer, under the write lock, before it writes any of the files: each
        file changed since its stamp is compared with its block sums. The kinds
        whose bytes differ (damage), and the sign or moments files there although
        the last writer stamped them absent (not ours to use). The same bytes (a
        copy, a touch, a crash's unnamed rows past the end) are neither: stamped
        again at ``record``."""
        stamps = _meta(c, _STAMPS)
        sums = _meta(c, _SUMS)
        if stamps is None or sums is None:
            return [], []  # never stamped: what is there now is stamped at record
        recorded = dict(zip(KINDS, str(stamps[0]).split("\n")))
        blocks = dict(zip(KINDS, str(sums[0]).split("\n")))
        if recorded.get("i8", "").split(" ", 1)[0] != paths["i8"].name:
            return [], []  # another generation's: the current one is stamped at record
        bad: list[str] = []
        unvouched: list[str] = []
        for kind in KINDS:
            stamp = recorded.get(kind, "")
            if stamp == _stamp(paths[kind]):
                continue
            if stamp.endswith(" -"):
                if kind != "i8":  # not written by a writer that committed: not ours to use
                    unvouched.append(kind)
                continue
            fields = stamp.split(" ")
            if len(fields) != 5 or not paths[kind].exists():
                continue  # gone: a missing file is made again (or, the vector file, cut)
            want = [int(x, 16) for x in blocks.get(kind, "").split()]
            have = _block_sums(paths[kind], int(fields[1]), [], 0)
            expected = self._dirty.get(kind, set())
            if have is None or len(have) != len(want) or any(
                    a != b for i, (a, b) in enumerate(zip(have, want)) if i not in expected):
                bad.append(kind)
        return bad, unvouched

    def record(self, c: sqlite3.Connection, paths: dict[str, Path], *, garbled: bool) -> None:
        """Stamp the files as this writer leaves them (at the end of ``settle``, in
        the refresh's transaction): their stat, and the block sums, read again only
        for the blocks past the old end or written in place. ``garbled``: the vector
        file was found changed and is not embedded again yet: its old stamp stays."""
        old_stamps = _meta(c, _STAMPS)
        old_sums = _meta(c, _SUMS)
        before = dict(zip(KINDS, str(old_stamps[0]).split("\n"))) if old_stamps else {}
        kept = dict(zip(KINDS, str(old_sums[0]).split("\n"))) if old_sums else {}
        stamps, sums = [], []
        for kind in KINDS:
            if kind == "i8" and garbled and kind in before:
                # Found changed and not embedded again yet (a refresh without
                # embedding): the old stamp stays, so every process finds it so.
                stamps.append(before[kind])
                sums.append(kept.get(kind, ""))
                continue
            stamp = _stamp(paths[kind])
            fields = stamp.split(" ")
            have: list[int] | None = None
            if len(fields) == 5:
                old = before.get(kind, "").split(" ")
                keep: list[int] = []
                start = 0
                if len(old) == 5 and old[0] == fields[0] and old[4] == fields[4]:
                    # The same file: its blocks before the old end's are kept, but for
                    # those written in place (check compared them all if anything else
                    # had written since).
                    keep = [int(x, 16) for x in kept.get(kind, "").split()]
                    start = min(int(old[1]) // _BLOCK, len(keep))
                have = _block_sums(paths[kind], int(fields[1]), keep, start)
                dirty = sorted(i for i in self._dirty.get(kind, set()) if i < start)
                if have is not None and dirty:
                    have = self._resum(paths[kind], int(fields[1]), have, dirty)
            if have is None:
                stamps.append(f"{paths[kind].name} -")  # unreadable: nothing to vouch for
                sums.append("")
            else:
                stamps.append(stamp)
                sums.append(" ".join(f"{x:08x}" for x in have))
        self._dirty.clear()
        if (old_stamps, old_sums) == (("\n".join(stamps),), ("\n".join(sums),)):
            return  # unchanged: no write
        for key, value in ((_STAMPS, "\n".join(stamps)), (_SUMS, "\n".join(sums))):
            c.execute("INSERT INTO meta(key, value) VALUES (?, ?) "
                      "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))

    @staticmethod
    def _resum(path: Path, size: int, have: list[int], blocks: list[int]) -> list[int] | None:
        """``have`` with ``blocks`` read and summed again."""
        try:
            with open(path, "rb") as fh:
                for i in blocks:
                    have[i] = zlib.crc32(os.pread(fh.fileno(), min(_BLOCK, size - i * _BLOCK),
                                                  i * _BLOCK))
        except OSError:
            return None
        return have
