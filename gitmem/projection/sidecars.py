"""The first pass's files beside the vector file: making them, keeping them current
as rows come and are blanked, and the first pass that reads them (what they hold
and the codes and moments math: firstpass.py).

Why apart from vectors.py: the vector file (vectors.py) is appended, zeroed and
scanned; these files are derived from it by a writer at the end of a refresh
(``settle``) and used by a reader only when they cover exactly the rows its
snapshot knows. VectorFile owns one FirstPassFiles and calls it; the kept maps
stay VectorFile's.

Every file read from disk is hostile until checked, and checking must not cost a
fresh recall a read of 100+ MB: the writer stamps the three files (stamps.py), a
reader that finds a stamp off scans exactly, and the next writer compares the
blocks: other bytes are damage, so the sign and moments files are made again, the
vector file re-embedded, with a one-line warning. A directory that cannot be
written is noticed once per process; reads then scan exactly instead of trying to
make the files each time.
"""

from __future__ import annotations

import mmap
import os
import sqlite3
import sys
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import firstpass, queries
from .generations import remove_file
from .stamps import KINDS, Stamps
from .distances import cdist_into, smallest
from .scope import Scope

if TYPE_CHECKING:
    from .vectors import VectorFile


class FirstPassFiles:
    """The sign and moments files of one VectorFile's current generation, and the
    stamps of all three files (see the module docstring)."""

    def __init__(self, vectors: VectorFile) -> None:
        self._vectors = vectors
        self._files: tuple[tuple[Any, ...], tuple[Any, bytes, Path]] | None = None
        self._stamps = Stamps()
        self.unwritable = False  # a write here failed: scan exactly, do not retry
        self._said = False  # ... and that was said
        self.garbled = False  # check found the vector file changed: re-embed
        self.notices: list[str] = []  # one-line warnings for the front end
        # A writer's blanked rows, for the moments (see blanking and settle):
        # (vector file, the sums before, the rows' old contents).
        self._blanked: tuple[Path, firstpass.Moments | None, list[bytes]] | None = None

    @property
    def dim(self) -> int:
        return self._vectors.dim  # (the store may change it: read it each time)

    def path(self, c: sqlite3.Connection) -> Path:
        return self._vectors.path(c)

    def _mapping(self, c: sqlite3.Connection, need: int,
                 path: Path | None = None) -> mmap.mmap | None:
        return self._vectors._mapping(c, need, path)  # (the maps are kept there)

    def blanking(self, path: Path, slot: int) -> list[bytes] | None:
        """Before zero_row blanks ``slot`` of ``path``: where to keep its old content
        for ``settle`` (None: the moments do not cover it). The first blank of a
        transaction marks the moments file dirty."""
        moments = firstpass.moments_path(path)
        if self._blanked is None or self._blanked[0] != path:
            before = firstpass.Moments.read(moments, self.dim) if moments.exists() else None
            if before is not None:
                self.dirty("moments", 0, firstpass.DIRTY_END)
                firstpass.mark_dirty(moments)
            self._blanked = (path, before, [])
        self.dirty("i8", slot * self.dim, self.dim)
        before = self._blanked[1]
        if before is not None and slot < before.covered:
            return self._blanked[2]
        return None

    def zero_sign(self, path: Path, slot: int) -> None:
        """Blank ``slot``'s code row in the sign file of ``path``, if it has one."""
        wide, off = firstpass.width(self.dim), firstpass.sign_offset(self.dim)
        try:
            with open(firstpass.sign_path(path), "r+b") as fh:
                if os.fstat(fh.fileno()).st_size >= off + (slot + 1) * wide:
                    self.dirty("sign", off + slot * wide, wide)
                    os.pwrite(fh.fileno(), b"\0" * wide, off + slot * wide)
        except FileNotFoundError:
            pass

    def drop_blanked(self) -> None:
        """Forget what zero_row kept for ``settle`` (the transaction failed: the
        moments file, marked dirty, is computed again by the next settle; the blocks
        written stay expected by the next check)."""
        self._blanked = None

    def take_notices(self) -> list[str]:
        out, self.notices = self.notices, []
        return out

    def dirty(self, kind: str, at: int, length: int) -> None:
        """This process writes ``length`` bytes at ``at`` of a file in place."""
        self._stamps.dirty(kind, at, length)

    def _paths(self, c: sqlite3.Connection) -> dict[str, Path]:
        path = self.path(c)
        return {"i8": path, "sign": firstpass.sign_path(path),
                "moments": firstpass.moments_path(path)}

    def stamped(self, c: sqlite3.Connection, kinds: tuple[str, ...] = KINDS) -> bool | None:
        """The files of ``kinds`` are as the last writer left them (stamps.py)."""
        return self._stamps.stamped(c, self._paths(c), kinds)

    def writable(self) -> bool:
        """This process may make the files here (not a read-only directory, and no
        write here has failed in this process: one failure is not retried)."""
        if not self.unwritable and not os.access(self._vectors.directory, os.W_OK):
            self.unwritable = True
        return not self.unwritable

    def _cannot_write(self, why: str) -> None:
        """Say once in this process that the files cannot be made here."""
        self.unwritable = True
        if not self._said:
            self._said = True
            self.notices.append(f"cannot write the vector search files ({why}); "
                                "recall compares every vector instead")

    def check(self, c: sqlite3.Connection) -> None:
        """A writer, under the write lock, before it writes any of the files: a file
        whose bytes changed since its stamp (stamps.py) is damage. A vector file is
        ``garbled`` (re-embedded, see vectors.damaged); the sign and moments files are
        removed (made again by ``settle``), with a warning; those there although
        stamped absent are removed without one."""
        paths = self._paths(c)
        bad, unvouched = self._stamps.changed(c, paths)
        for kind in unvouched:
            remove_file(paths[kind])
            self._files = None
        if "i8" in bad:
            self.garbled = True  # vectors.damaged: reset and re-embed (its own warning)
        if "sign" in bad or "moments" in bad:
            for kind in ("sign", "moments"):
                remove_file(paths[kind])
            self._files = None
            self.notices.append("the vector search files were changed on disk since "
                                "they were written; made them again")

    def record(self, c: sqlite3.Connection) -> None:
        """Stamp the files as this writer leaves them (stamps.py)."""
        self._stamps.record(c, self._paths(c), garbled=self.garbled)

    def current(self, c: sqlite3.Connection, top: int | None) -> bool:
        """Nothing for a writer to do here: the files are as stamped, and the sign
        and moments files cover every row and agree (or none are needed); or this
        process cannot write them (reads scan exactly). ``top``: the highest vector
        row (vectors.top_slot)."""
        if not self.dim:
            return True
        if self.stamped(c) is not True and self.writable():
            return False  # changed since written (or never stamped): a writer checks them
        if top is None or top + 1 < firstpass.FIRST_PASS_FROM:
            return True
        if self.files(c, top + 1) is not None:
            return True
        if self.writable():
            return False
        self._cannot_write("the directory cannot be written")
        return True

    def files(self, c: sqlite3.Connection, n: int) -> tuple[Any, bytes, Path] | None:
        """(the parsed moments, the code levels, the sign file) when both files cover
        the ``n`` rows and the codes were made with the levels the moments give."""
        path = self.path(c)
        signs, moments = firstpass.sign_path(path), firstpass.moments_path(path)
        if self.stamped(c, ("sign", "moments")) is False:
            return None  # written since the stamp (by another writer now, or damage)
        try:
            ms, ss = os.stat(moments), os.stat(signs)
        except OSError:
            return None
        # The files as they were when last read (a long-lived reader asks per recall).
        ident = (n, str(path), ms.st_ino, ms.st_mtime_ns, ms.st_size,
                 ss.st_ino, ss.st_mtime_ns, ss.st_size)
        if self._files is not None and self._files[0] == ident:
            return self._files[1]
        try:
            raw = moments.read_bytes()
            with open(signs, "rb") as fh:
                head = fh.read(firstpass.sign_offset(self.dim))
                size = os.fstat(fh.fileno()).st_size
        except OSError:
            return None
        parsed = firstpass.parse(raw, self.dim)
        if parsed is None or parsed[0] != n:
            return None
        levels = firstpass.view_levels(parsed, self.dim)
        if (levels is None or firstpass.sign_levels(head, self.dim) != levels
                or size < len(head) + n * firstpass.width(self.dim)):
            return None
        self._files = (ident, (parsed, levels, signs))
        return parsed, levels, signs

    def settle(self, c: sqlite3.Connection, top: int | None, *, quick: bool,
               quick_rows: int) -> None:
        """Bring the files up to the committed rows (``_settle``) and stamp them. A
        write refused here (a read-only directory, a file in the way) is said once;
        readers scan exactly and this process does not try again."""
        try:
            if self.writable():
                self._settle(c, top, quick=quick, quick_rows=quick_rows)
        except OSError as exc:
            self._cannot_write(exc.strerror or type(exc).__name__)
        self.record(c)

    def _settle(self, c: sqlite3.Connection, top: int | None, *, quick: bool,
                quick_rows: int) -> None:
        """Bring the moments and sign files up to the rows committed slots name (a
        writer, under the write lock, at the end of a refresh). Below
        FIRST_PASS_FROM rows there are none. ``quick`` (a refresh under a deadline:
        a hook): only a few rows' worth of work, else leave them for the next
        refresh without one (readers scan exactly meanwhile; making them for 1M
        rows takes ~11 s). ``top``: the highest vector row (vectors.top_slot; None
        when none, or no dimension); ``quick_rows``: the few rows (vectors._QUICK_ROWS)."""
        blanked, self._blanked = self._blanked, None
        path = self.path(c)
        signs, moments = firstpass.sign_path(path), firstpass.moments_path(path)
        if top is None or top + 1 < firstpass.FIRST_PASS_FROM:
            if blanked is not None and blanked[1] is not None:
                moments.unlink(missing_ok=True)  # dirty, and not needed
            return
        n = top + 1
        if blanked is None and self.files(c, n) is not None:
            return  # the common case: both files cover every row (~1 ms at 1M rows)
        d, wide, off = self.dim, firstpass.width(self.dim), firstpass.sign_offset(self.dim)
        block = 65536
        with open(path, "rb") as src:
            def rows(lo: int, hi: int) -> bytes:
                return os.pread(src.fileno(), (hi - lo) * d, lo * d)

            if blanked is not None and blanked[0] == path and blanked[1] is not None:
                m: firstpass.Moments | None = blanked[1]
                assert m is not None
                m.add(b"".join(blanked[2]), -1)
                changed = True
            else:
                m = firstpass.Moments.read(moments, d)
                changed = False
            if m is None or m.covered > n:
                if quick:
                    return
                m, changed = firstpass.Moments(d), True
            if quick and n - m.covered > quick_rows:
                return
            if m.covered < n:
                for lo in range(m.covered, n, block):
                    m.add(rows(lo, min(n, lo + block)))
                m.covered, changed = n, True
            if changed:
                m.write(moments)
            levels = m.levels()
            if levels is None:
                signs.unlink(missing_ok=True)
                return
            try:
                with open(signs, "rb") as fh:
                    same = firstpass.sign_levels(fh.read(off), d) == levels
                    have = max(os.fstat(fh.fileno()).st_size - off, 0) // wide
            except OSError:
                same, have = False, 0
            if same and have >= n:
                return
            if quick and (not same or n - have > quick_rows):
                return
            # New levels (one row in LEVELS_SAMPLE came or went): every code again,
            # into a new file (a reader keeps the old one it mapped).
            target = signs if same else signs.with_name(f".{signs.name}.{os.getpid()}")
            if not same and (signs.is_dir() or signs.is_symlink()):
                raise IsADirectoryError(21, "something else is in the way", str(signs))
            out = os.open(target, os.O_WRONLY | os.O_CREAT | (0 if same else os.O_TRUNC)
                          | getattr(os, "O_BINARY", 0), 0o644)
            try:
                if not same:
                    os.pwrite(out, firstpass.sign_header(d, levels), 0)
                    have = 0
                for lo in range(have, n, block):  # (pwrite, not O_APPEND: at each row's place)
                    hi = min(n, lo + block)
                    os.pwrite(out, firstpass.codes(rows(lo, hi), d, levels), off + lo * wide)
                closing, out = out, -1
                os.close(closing)
                if not same:
                    os.replace(target, signs)
            except BaseException:
                if out >= 0:
                    try:
                        os.close(out)
                    except OSError:
                        pass
                if not same:
                    target.unlink(missing_ok=True)
                raise

    def first_pass(self, c: sqlite3.Connection, simsimd: Any, query: bytes, n: int,
                   ) -> tuple[list[int], array[float], tuple[float, float, int]] | None:
        """The first pass (firstpass.py) over ``n`` rows: (candidate rows, their exact
        cosine distances, the spread from the moments); None when the sign or
        moments files do not cover the rows, or the cut reaches the zeroed rows'
        distance: the caller then scans every row."""
        files = self.files(c, n)
        if files is None:
            return None
        parsed, levels, signs = files
        stats = firstpass.spread(parsed, self.dim, query)
        if stats is None:
            return None
        wide, off = firstpass.width(self.dim), firstpass.sign_offset(self.dim)
        sm = self._mapping(c, off + n * wide, signs)
        if sm is None:
            return None
        qbits = firstpass.codes(query, self.dim, levels)
        whole = memoryview(sm)
        # (A bytearray: candidates slices it without a copy to bytes.)
        out = bytearray(2 * n)
        try:
            matrix = whole[off : off + n * wide].cast("B", shape=[n, wide])
            with memoryview(out) as dest:
                cdist_into(simsimd, memoryview(qbits).cast("B"), matrix, metric="hamming",
                           dtype="bin8", out=dest.cast("H", shape=[1, n]))
            matrix.release()
        finally:
            whole.release()
        rows = firstpass.candidates(out, n, firstpass.candidate_count(n),
                                    int.from_bytes(qbits, "big").bit_count())
        if rows is None:
            return None
        # The rows: from the kept map in a process that has numpy (a long-lived one,
        # whose map is touched already), else read (firstpass.gather).
        mm = self._mapping(c, n * self.dim) if "numpy" in sys.modules else None
        try:
            fd = os.open(self.path(c), os.O_RDONLY | getattr(os, "O_BINARY", 0)) if mm is None else -1
        except OSError:
            return None
        try:
            if mm is None and os.fstat(fd).st_size < n * self.dim:
                return None
            view = memoryview(mm) if mm is not None else None
            try:
                dist = firstpass.rescore(
                    simsimd, lambda want: firstpass.gather(view, fd, self.dim, want),
                    self.dim, query, rows)
            finally:
                if view is not None:
                    view.release()
        finally:
            if fd >= 0:
                os.close(fd)
        return rows, dist, stats

    def first_pass_hits(self, c: sqlite3.Connection, simsimd: Any, query: bytes, n: int,
                        scope: Scope, limit: int,
                        ) -> tuple[list[tuple[str, float]], tuple[float, float, int]] | None:
        """As vectors.exact_hits and the spread, from the first pass; None: scan every row
        (no first pass here, or the filters left too few of its candidates)."""
        found = self.first_pass(c, simsimd, query, n)
        if found is None:
            return None
        rows, dist, stats = found
        want = 2 * limit + 16
        while True:
            by_row = {rows[i]: dist[i] for i in smallest(dist, min(want, len(rows)))}
            cand = list(by_row)
            hits = queries.best_per_memory(c, cand, by_row.__getitem__, scope)
            if len(hits) >= limit:
                return [(mid, 1.0 - d) for d, mid in hits[:limit] if d < 1.0], stats
            if len(cand) >= len(rows):
                return None
            want *= 8
