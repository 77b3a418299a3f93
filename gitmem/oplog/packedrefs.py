"""packed-refs, git's file of refs that are not loose, read and looked up in place.

Why a module of its own: with tens of thousands of partition refs packed (a read
packs them once past 1,000 loose ones), every read looks a few names up in it;
parsing every line cost ~20 ms, a binary search over the sorted bytes costs
microseconds. looserefs.py reads loose refs, refs.py moves them; this reads packed ones.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path


# How long packed-refs must have stood unchanged before its identity (inode, size,
# times) is trusted to name its content: a file replaced twice within one tick of
# the file system's clock (up to 2 s on some) could otherwise keep all four.
SETTLED_SECONDS = 3.0
Identity = tuple[int, int, int, int]


_UNREADABLE: Identity = (-1, -1, -1, -1)


def file_identity(path: str | os.PathLike[str]) -> Identity | None:
    """(inode, size, mtime, ctime) of a file git replaces by rename (packed-refs,
    shallow), None when there is none; _UNREADABLE when it cannot be looked at."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError:
        return _UNREADABLE
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def packed_identity(commondir: Path) -> tuple[Identity | None, bool]:
    """packed-refs' file_identity, and whether it is settled (unchanged for
    SETTLED_SECONDS: see there). git never edits packed-refs in place: it writes
    ``packed-refs.lock`` and renames it."""
    ident = file_identity(os.path.join(commondir, "packed-refs"))
    if ident is None:
        return None, True
    if ident == _UNREADABLE:
        return ident, False
    age = time.time_ns() - max(ident[2], ident[3])
    return ident, age > SETTLED_SECONDS * 1e9


class Packed:
    """One packed-refs file's bytes, looked up in place.

    git writes packed-refs sorted by name (the ``sorted`` trait in its header),
    so a name, or the first name under a prefix, is found by binary search over
    the bytes: a partition's tip among 40,000 packed refs costs microseconds,
    not the ~20 ms of parsing every line. A file without the trait is parsed
    once into a dict instead."""

    def __init__(self, data: bytes, identity: Identity | None) -> None:
        self.data = data
        self.identity = identity
        self._start = 0
        head = b""
        if data.startswith(b"#"):
            end = data.find(b"\n")
            self._start = len(data) if end < 0 else end + 1
            head = data[:self._start]
        self._parsed: list[tuple[bytes, bytes]] | None = None
        if b" sorted" not in head:
            pairs = []
            for raw in data[self._start:].split(b"\n"):
                if raw[:1] in (b"#", b"^") or b" " not in raw:
                    continue
                oid, name = raw.split(b" ", 1)
                pairs.append((name, oid))
            pairs.sort()
            self._parsed = pairs

    def _line(self, pos: int) -> tuple[int, bytes | None, bytes]:
        """(where the next line starts, the ref name on the line at ``pos`` or None
        for a peeled or comment line, its id)."""
        data = self.data
        end = data.find(b"\n", pos)
        if end < 0:
            end = len(data)
        line = data[pos:end]
        if line[:1] in (b"#", b"^") or b" " not in line:
            return end + 1, None, b""
        oid, name = line.split(b" ", 1)
        return end + 1, name, oid

    def _lower_bound(self, key: bytes) -> int:
        """A position from which reading on finds the first name >= ``key`` first."""
        data = self.data
        lo, hi = self._start, len(data)
        while lo < hi:
            mid = lo + (hi - lo) // 2
            nl = data.rfind(b"\n", lo, mid)
            s = lo if nl < 0 else nl + 1
            pos, name = s, None
            while pos < hi:  # peeled lines belong to the ref before them
                nxt, name, _ = self._line(pos)
                if name is not None:
                    break
                pos = nxt
            if name is None or pos >= hi:
                hi = s
            elif name < key:
                lo = nxt
            else:
                hi = s
        return lo

    def items(self, prefix: bytes) -> list[tuple[bytes, bytes]]:
        """(name, id) of every packed ref whose name starts with ``prefix``, in order."""
        if self._parsed is not None:
            import bisect

            i = bisect.bisect_left(self._parsed, (prefix, b""))
            out = []
            while i < len(self._parsed) and self._parsed[i][0].startswith(prefix):
                out.append(self._parsed[i])
                i += 1
            return out
        lo = self._lower_bound(prefix)
        # Past the last name under the prefix: the first one >= the prefix with its
        # last byte raised ("refs/memory0" for "refs/memory/").
        hi = (self._lower_bound(prefix[:-1] + bytes([prefix[-1] + 1]))
              if prefix and prefix[-1] < 255 else len(self.data))
        found = []
        for raw in self.data[lo:hi].split(b"\n"):
            if raw[:1] in (b"#", b"^") or b" " not in raw:
                continue
            oid, name = raw.split(b" ", 1)
            if name.startswith(prefix):
                found.append((name, oid))
        return found

    def get(self, name: bytes) -> bytes | None:
        """The id of the packed ref ``name``, or None."""
        if self._parsed is not None:
            import bisect

            i = bisect.bisect_left(self._parsed, (name, b""))
            hit = i < len(self._parsed) and self._parsed[i][0] == name
            return self._parsed[i][1] if hit else None
        pos, end = self._lower_bound(name), len(self.data)
        while pos < end:
            pos, found, oid = self._line(pos)
            if found is not None:
                return oid if found == name else None
        return None

    def first_after(self, key: bytes, prefix: bytes) -> bytes | None:
        """The first packed name >= ``key`` that starts with ``prefix``, or None."""
        if self._parsed is not None:
            import bisect

            i = bisect.bisect_left(self._parsed, (key, b""))
            if i < len(self._parsed) and self._parsed[i][0].startswith(prefix):
                return self._parsed[i][0]
            return None
        pos, end = self._lower_bound(key), len(self.data)
        while pos < end:
            pos, name, _ = self._line(pos)
            if name is not None:
                return name if name.startswith(prefix) else None
        return None

    def ending(self, prefix: bytes, suffix: bytes) -> list[tuple[bytes, bytes]]:
        """(name, id) of the packed refs under ``prefix`` whose name ends in
        ``suffix`` (found by a search of the bytes, not a parse of every line)."""
        if self._parsed is not None:
            return [(n, o) for n, o in self.items(prefix) if n.endswith(suffix)]
        data, out = self.data, []
        at = data.find(suffix + b"\n")
        while at >= 0:
            start = data.rfind(b"\n", 0, at) + 1
            _, name, oid = self._line(start)
            if name is not None and name.startswith(prefix) and name.endswith(suffix):
                out.append((name, oid))
            at = data.find(suffix + b"\n", at + 1)
        if data.endswith(suffix):  # the last line, without its newline
            start = data.rfind(b"\n") + 1
            _, name, oid = self._line(start)
            if name is not None and name.startswith(prefix) and (name, oid) not in out:
                out.append((name, oid))
        return sorted(out)


def read_packed(commondir: Path) -> Packed | None:
    """packed-refs (an empty one when there is none), or None when it cannot be read."""
    try:
        fd = os.open(os.path.join(commondir, "packed-refs"),
                     os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return Packed(b"", None)
    except OSError:
        return None
    try:
        st = os.fstat(fd)  # the identity of what is read, not of a later replacement
        if not stat.S_ISREG(st.st_mode):
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return Packed(b"".join(chunks), (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
