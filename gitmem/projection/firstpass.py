"""A first pass over short codes and the spread from stored moments: how a big store
answers without reading every int8 row.

Why this exists: at 1M memories the exact scan reads 384 MB of int8 rows a query
(24 ms warm; a fresh process faults every page in), and the spread of the query's
cosines (distances.spread: the relevance floor and the z evidence) needs every one
of them too. From FIRST_PASS_FROM rows on, two files derived from the vector file
of the current generation answer instead:

- ``<generation>.moments``: of the non-zero rows among the first ``covered`` rows,
  how many there are, and over those a hash of their bytes samples (one in
  SAMPLE), each row scaled to unit length and rounded to a grid of 1/SCALE: the
  sum S of those vectors and the sum C of their outer products, as integers
  (stored as float64, exact). The mean cosine of a unit query q is then
  q.S / (SCALE k) and the mean square q'Cq / (SCALE^2 k): the spread in ~0.1 ms.
  Over the rows the same hash picks one in LEVELS_SAMPLE, the sums and sums of
  squares of each component set the code's levels (below). Integer sums do not
  depend on the order of the rows: all of this is a function of the memories.
- ``<generation>.sign``: the levels, then one code row of WIDTH bytes per vector
  row: for each dimension of the unit row, a bit for "above its mean - SPREAD
  standard deviations" and one for "above its mean + SPREAD standard deviations"
  (a three-level code; one sign bit a dimension kept only 38% of the exact top
  10 among 4,096 candidates of 1M, these codes 97.3%). The Hamming distance of
  the query's code to every row (simsimd, ~6 ms for 1M rows) picks the candidates:
  every row at distance <= t, t the smallest distance with at least
  candidate_count(rows) rows within it (ties at the cut all in, so the set does
  not depend on the order of the rows); their int8 rows are then compared exactly. A zeroed row
  (forgotten memory) has an all-zero code, at the query's own count of set bits:
  when t reaches that, zeroed rows would count, and the caller scans exactly.
  When a row setting the levels comes or goes (one in LEVELS_SAMPLE), every code
  is made again (~5 s at 1M rows), so the codes too stay a function of the
  memories.

Both files are written only by a writer holding the projection's write lock
(sidecars.py: ``settle``, at the end of every refresh; ``zero_row`` when a row is
blanked); a reader uses them only when they cover exactly the rows its snapshot
knows and agree on the levels, and scans exactly otherwise. Below FIRST_PASS_FROM
rows nothing here runs and every answer is the exact scan's.
"""

from __future__ import annotations

import itertools
import math
import operator
import os
import struct
import zlib
from array import array
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .distances import cdist_into

# From this many vector rows on, a scan takes the first pass (measured: see docs/recall.md).
FIRST_PASS_FROM = 100_000
# Candidates the first pass hands to the exact rescoring (ties at the cut included):
# CANDIDATES from MANY_FROM rows, FEWER below (candidate_count). At 100k rows, 12,288
# candidates took twice the exact scan to rescore; 4,096 kept 99.5% of its top 10.
CANDIDATES = 12288
FEWER = 4096
MANY_FROM = 250_000
# A near-duplicate check (similar.nearest, in every add) takes the first pass from here:
# its exact scan only keeps the rows within a cut (distances.within), and in a fresh add
# at 100k rows that took 16-26 ms where the first pass took 25-44 ms.
NEAREST_FROM = 250_000
SAMPLE = 8  # one row in SAMPLE (by a hash of its bytes) enters the moments
LEVELS_SAMPLE = 1024  # one row in LEVELS_SAMPLE (same hash) sets the code's levels
SPREAD = 0.5  # the levels: each dimension's mean -/+ SPREAD standard deviations
SCALE = 8192  # the grid of a unit vector's components in the moments
_MAGIC = b"gmmoment"
# magic, dim, covered rows, non-zero rows, sampled rows, rows setting the levels
_HEADER = struct.Struct("<8sqqqqq")
_DIRTY = -1  # covered, while a writer has blanked rows and not yet written the new sums
_SIGN_MAGIC = b"gmsigns1"


def candidate_count(n: int) -> int:
    """Candidates for a first pass over ``n`` rows (at most CANDIDATES)."""
    return CANDIDATES if n >= MANY_FROM else min(FEWER, CANDIDATES)


def width(dim: int) -> int:
    """Bytes of a code row: two bits a dimension, padded to more than 64 bytes (simsimd's
    Hamming kernel takes ~3x longer a row for rows of 64 bytes or fewer), 8-byte steps."""
    return (max((2 * dim + 7) // 8, 65) + 7) // 8 * 8


def sign_offset(dim: int) -> int:
    """Where the code rows start in the sign file: after its magic, and the levels."""
    return (8 + 16 * dim + 4095) // 4096 * 4096


def sign_path(vectors: Path) -> Path:
    return vectors.with_suffix(".sign")


def moments_path(vectors: Path) -> Path:
    return vectors.with_suffix(".moments")


_NUMPY_FROM = 256  # rows: from here, numpy computes codes and sums (the same bytes)


def codes(rows: bytes, dim: int, levels: bytes) -> bytes:
    """The code rows of ``rows`` (int8, ``dim`` a row): the row scaled to unit length,
    then a bit per dimension for "above its low level" and one for "above its high
    level" (``levels``: dim low then dim high, float64); all zero for a zeroed row.
    numpy and Python compute the same floats (int / float, then a comparison)."""
    wide = width(dim)
    k = len(rows) // dim if dim else 0
    lv = array("d", levels)
    if k >= _NUMPY_FROM:
        import numpy as np

        m = np.frombuffer(rows, dtype=np.int8, count=k * dim).reshape(k, dim).astype(np.float64)
        norm = np.sqrt((m * m).sum(axis=1))
        live = norm > 0
        u = m / np.where(live, norm, 1.0)[:, None]
        bounds = np.frombuffer(lv, dtype=np.float64)
        bits = np.concatenate([u > bounds[:dim], u > bounds[dim:]], axis=1) & live[:, None]
        table = np.zeros((k, wide), dtype=np.uint8)
        packed = np.packbits(bits, axis=1)
        table[:, : packed.shape[1]] = packed
        return bytes(table.tobytes())
    nb = (2 * dim + 7) // 8
    shift, pad = nb * 8 - 2 * dim, b"\0" * (wide - nb)
    lows, highs = lv[:dim], lv[dim:]
    out = []
    for at in range(0, k * dim, dim):
        v = array("b", rows[at:at + dim]).tolist()
        ss = sum(x * x for x in v)
        if not ss:
            out.append(b"\0" * wide)
            continue
        length = math.sqrt(ss)
        unit = [x / length for x in v]
        word = "".join(["1" if a > b else "0" for a, b in zip(unit, lows)]
                       + ["1" if a > b else "0" for a, b in zip(unit, highs)])
        out.append((int(word, 2) << shift).to_bytes(nb, "big") + pad)
    return b"".join(out)


def sign_header(dim: int, levels: bytes) -> bytes:
    head = _SIGN_MAGIC + levels
    return head + b"\0" * (sign_offset(dim) - len(head))


def sign_levels(head: bytes, dim: int) -> bytes | None:
    """The levels a sign file's codes were made with (None: not a sign file)."""
    if len(head) < 8 + 16 * dim or head[:8] != _SIGN_MAGIC:
        return None
    return head[8:8 + 16 * dim]


def _hash(row: bytes) -> int:
    return zlib.crc32(row)


class _Sums:
    """One of Moments' sums, made Python integers from the file's bytes the first time
    it is read or set (Moments._ints)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.attr = "_" + name

    def __get__(self, obj: Any, owner: Any = None) -> list[int]:
        obj._ints()
        return getattr(obj, self.attr)  # type: ignore[no-any-return]

    def __set__(self, obj: Any, value: list[int]) -> None:
        obj._ints()
        setattr(obj, self.attr, value)


class Moments:
    """The sums of one vector file (see the module docstring), as Python integers.

    Read from disk, the sums stay the file's float64 bytes until something asks for
    them: 7 rows in 8 enter no sum (SAMPLE), so a refresh that adds one such row
    changes only the counts, and making 148k integers of the file and floats of them
    again took ~10-20 ms of every add from 100k rows."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.covered = 0
        self.live = 0
        self.sampled = 0
        self.leveled = 0
        self._s = [0] * dim
        self._c = [0] * (dim * dim)
        self._ps = [0] * dim  # over the rows setting the levels: sums, sums of squares
        self._pd = [0] * dim
        self._raw: memoryview | None = None  # the sums as read, until asked for (_ints)

    s = _Sums()
    c = _Sums()
    ps = _Sums()
    pd = _Sums()

    def _ints(self) -> None:
        """The sums read from disk as Python integers (exact: whole float64 values)."""
        if self._raw is None:
            return
        d, ints = self.dim, [int(x) for x in self._raw]
        self._raw = None
        self._s, self._c = ints[:d], ints[d:d + d * d]
        self._ps, self._pd = ints[d + d * d:2 * d + d * d], ints[2 * d + d * d:]

    @classmethod
    def read(cls, path: Path, dim: int) -> Moments | None:
        """The sums on disk; None when missing, of another shape, or left dirty."""
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        parsed = parse(raw, dim)
        if parsed is None:
            return None
        m = cls(dim)
        m.covered, m.live, m.sampled, m.leveled, m._raw = parsed
        return m

    def write(self, path: Path) -> None:
        """Replace the file (a reader sees the old sums or the new, never a mix)."""
        body = (self._raw.tobytes() if self._raw is not None
                else array("d", self._s + self._c + self._ps + self._pd).tobytes())
        data = _HEADER.pack(_MAGIC, self.dim, self.covered, self.live, self.sampled,
                            self.leveled) + body
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)

    def levels(self) -> bytes | None:
        if self._raw is not None:  # (the same values, read where they lie)
            base = self.dim + self.dim * self.dim
            return levels(self.leveled, self._raw[base:base + self.dim],
                          self._raw[base + self.dim:base + 2 * self.dim], self.dim)
        return levels(self.leveled, self.ps, self.pd, self.dim)

    def add(self, rows: bytes, sign: int = 1) -> None:
        """Count ``rows`` in (``sign`` -1: out again) the sums."""
        d = self.dim
        k = len(rows) // d
        live = [rows[at:at + d] for at in range(0, k * d, d)]
        live = [r for r in live if any(r)]
        self.live += sign * len(live)
        hashes = [_hash(r) for r in live]
        picked = [r for r, h in zip(live, hashes) if h % SAMPLE == 0]
        leveled = [r for r, h in zip(live, hashes) if h % LEVELS_SAMPLE == 0]
        self.sampled += sign * len(picked)
        self.leveled += sign * len(leveled)
        for rs, full in ((picked, True), (leveled, False)):
            if not rs:
                continue
            if len(rs) >= _NUMPY_FROM // SAMPLE:
                self._add_numpy(b"".join(rs), len(rs), sign, full)
                continue
            for r in rs:
                u = _unit(r)
                if not full:
                    for i, ui in enumerate(u):
                        self.ps[i] += sign * ui
                        self.pd[i] += sign * ui * ui
                    continue
                s, c = self.s, self.c
                for i, ui in enumerate(u):
                    if not ui:
                        continue
                    s[i] += sign * ui
                    base = i * d
                    w = sign * ui
                    for j, uj in enumerate(u):
                        c[base + j] += w * uj

    def _add_numpy(self, rows: bytes, k: int, sign: int, full: bool) -> None:
        """As ``add``, in blocks: a float64 matrix product of integers this small is
        exact whatever the order of its sums (every partial sum < 2^53)."""
        import numpy as np

        d = self.dim
        m = np.frombuffer(rows, dtype=np.int8).reshape(k, d)
        s = np.zeros(d, dtype=np.float64)
        c = np.zeros((d, d), dtype=np.float64) if full else np.zeros(d, dtype=np.float64)
        for lo in range(0, k, 16384):
            r = m[lo:lo + 16384].astype(np.float64)
            norm = np.sqrt((r * r).sum(axis=1))
            u = np.rint(r * SCALE / norm[:, None])
            s += u.sum(axis=0)
            c += (u.T @ u) if full else (u * u).sum(axis=0)
        if full:
            self.s = [a + sign * int(b) for a, b in zip(self.s, s.tolist())]
            self.c = [a + sign * int(b) for a, b in zip(self.c, c.ravel().tolist())]
        else:
            self.ps = [a + sign * int(b) for a, b in zip(self.ps, s.tolist())]
            self.pd = [a + sign * int(b) for a, b in zip(self.pd, c.ravel().tolist())]


def _unit(row: bytes) -> list[int]:
    """The row scaled to unit length, on the grid of 1/SCALE, as integers (the same
    as numpy's np.rint(r * SCALE / norm): both round half to even)."""
    v = array("b", row).tolist()
    norm = math.sqrt(sum(x * x for x in v))
    return [round(x * SCALE / norm) for x in v]


def levels(count: int, sums: Sequence[float], squares: Sequence[float], dim: int) -> bytes | None:
    """Each dimension's mean -/+ SPREAD standard deviations over ``count`` rows (their
    sums and sums of squares on the 1/SCALE grid): the code's levels, as float64
    bytes (low then high); None for no rows. Exact sums give the same bytes anywhere."""
    if count <= 0:
        return None
    lows, highs = [], []
    for a, b in zip(sums[:dim], squares[:dim]):
        mean = int(a) / (SCALE * count)
        sd = max(int(b) / (SCALE * SCALE * count) - mean * mean, 0.0) ** 0.5
        lows.append(mean - SPREAD * sd)
        highs.append(mean + SPREAD * sd)
    return array("d", lows + highs).tobytes()


def parse(raw: bytes, dim: int) -> tuple[int, int, int, int, Any] | None:
    """(covered rows, non-zero rows, sampled rows, rows setting the levels, S, C, PS
    and PD as float64) of a moments file's bytes; None when it is not one of ``dim``
    or was left dirty."""
    if len(raw) != _HEADER.size + 8 * (3 * dim + dim * dim):
        return None
    magic, d, covered, live, sampled, leveled = _HEADER.unpack_from(raw)
    if magic != _MAGIC or d != dim or covered < 0:
        return None
    return covered, live, sampled, leveled, memoryview(raw)[_HEADER.size:].cast("d")


def covers(head: bytes, dim: int) -> int | None:
    """The rows a moments file covers, from its first bytes (None: not a clean one)."""
    if len(head) < _HEADER.size:
        return None
    magic, d, covered, _, _, _ = _HEADER.unpack_from(head)
    return covered if magic == _MAGIC and d == dim and covered >= 0 else None


DIRTY_END = 24  # mark_dirty writes the bytes before this


def mark_dirty(path: Path) -> None:
    """Say on disk that the sums no longer match the file (a writer is blanking
    rows): readers scan exactly and the next ``settle`` starts over, unless this
    writer writes the new sums first."""
    try:
        with open(path, "r+b") as fh:
            fh.seek(16)
            fh.write(struct.pack("<q", _DIRTY))
    except OSError:
        pass


def spread(parsed: tuple[int, int, int, int, Any], dim: int, query: bytes,
           leave_out: bytes = b"") -> tuple[float, float, int] | None:
    """(mean cosine, standard deviation, non-zero rows) of ``query`` over the rows a
    moments file (``parse``) covers, but ``leave_out`` (int8 rows, ``dim`` a row:
    those of memories not current, see vectors.unseen_slots); None without
    sampled rows, or when most sampled rows are left out (then scan every row).

    A row left out leaves the count if it is not zeroed, and the sums if the hash
    sampled it: its unit row on the grid, as ``Moments.add`` counted it."""
    import simsimd as _simsimd

    simsimd: Any = _simsimd  # (its stubs do not take float64 buffers)
    _, live, sampled, _, view = parsed
    if not live or not sampled:
        return None
    norm = math.sqrt(sum(x * x for x in array("b", query)))
    if not norm:
        return None
    q = array("d", [x / norm for x in array("b", query)])
    qv = memoryview(q)
    cq: Any = simsimd.cdist(qv.cast("B").cast("d", shape=[1, dim]),
                            view[dim:dim + dim * dim].cast("B").cast("d", shape=[dim, dim]),
                            metric="dot")
    first = float(simsimd.dot(qv, view[:dim]))
    second = float(simsimd.dot(qv, memoryview(cq).cast("B").cast("d")))
    if leave_out:
        rows = [leave_out[at:at + dim] for at in range(0, len(leave_out) - dim + 1, dim)]
        rows = [r for r in rows if any(r)]  # (a zeroed row is out of every sum already)
        live -= len(rows)
        picked = [r for r in rows if _hash(r) % SAMPLE == 0]
        sampled -= len(picked)
        if len(picked) > sampled:
            # The sums of the rows kept would be mostly rounding (see distances.spread):
            # the caller scans every row instead.
            return None
        for dot in _unit_dots(picked, dim, q):
            first -= dot
            second -= dot * dot
        if live <= 0 or sampled <= 0:
            return None
    first /= SCALE * sampled
    second /= SCALE * SCALE * sampled
    std = max(second - first * first, 0.0) ** 0.5
    return (round(first, 9), round(std, 9), live)


def _unit_dots(rows: list[bytes], dim: int, q: array[float]) -> list[float]:
    """q . (each row as ``_unit`` scales it to the grid): numpy for many rows (its
    np.rint rounds as ``_unit`` does)."""
    if len(rows) < _NUMPY_FROM // SAMPLE:
        return [math.fsum(a * b for a, b in zip(q, _unit(r))) for r in rows]
    import numpy as np

    m = np.frombuffer(b"".join(rows), dtype=np.int8).reshape(len(rows), dim).astype(np.float64)
    u = np.rint(m * SCALE / np.sqrt((m * m).sum(axis=1))[:, None])
    return [float(x) for x in (u @ np.frombuffer(q, dtype=np.float64)).tolist()]


def view_levels(parsed: tuple[int, int, int, int, Any], dim: int) -> bytes | None:
    """The levels from a parsed moments file (as Moments.levels gives them)."""
    _, _, _, leveled, view = parsed
    base = dim + dim * dim
    return levels(leveled, view[base:base + dim], view[base + dim:base + 2 * dim], dim)


def candidates(hamming: Any, n: int, limit: int, zero_at: int) -> list[int] | None:
    """Rows at Hamming distance <= t (``hamming``: n uint16 distances, an array or a
    bytearray), t the smallest with at least ``limit`` rows within it; None when t reaches
    ``zero_at`` (the distance of a zeroed row): then the caller scans exactly.
    The same rows with numpy (a long-lived process has it loaded) or without."""
    import sys

    np = sys.modules.get("numpy")
    if np is not None:
        arr = np.frombuffer(hamming, dtype=np.uint16, count=n)
        cum = np.cumsum(np.bincount(arr))
        t = int(np.searchsorted(cum, limit))
        if t >= len(cum) or t >= zero_at:
            return None
        return list(np.flatnonzero(arr <= t).tolist())
    # Without numpy: every step in C, over a byte a row, a block of rows at a time
    # (the temporaries of one block are reused by the next instead of being fresh
    # memory: a one-shot process pays a page fault for every 4 kB it first touches,
    # ~2,700 of them at 1M rows when whole-length buffers were made).
    raw = hamming if isinstance(hamming, (bytes, bytearray)) else bytes(hamming)
    first_byte = 0 if sys.byteorder == "little" else 1
    spans = [(lo, min(n, lo + _ROWS)) for lo in range(0, n, _ROWS)]
    keys: dict[int, list[bytes]] = {}

    def key(top: int) -> list[bytes]:
        """A byte a row, for distances whose high byte is ``top``: 0 for a row below,
        its low byte for a row at it, 255 for a row above (big ints, a block at a
        time; the rows above are marked only when a block has some)."""
        if top not in keys:
            at_table, above_table = _mark(lambda b: b == top, 0xFF), _mark(lambda b: b > top, 0xFF)
            below = range(top + 1)
            out = []
            for lo, hi in spans:
                block = raw[2 * lo : 2 * hi]
                low, high = block[first_byte::2], block[1 - first_byte::2]
                word = (int.from_bytes(low, "big")
                        & int.from_bytes(high.translate(at_table), "big"))
                if hi - lo - sum(map(high.count, below)):
                    word |= int.from_bytes(high.translate(above_table), "big")
                out.append(word.to_bytes(hi - lo, "big"))
            keys[top] = out
        return keys[top]

    def within(t: int) -> list[bytes | bytearray]:
        """A byte a row, a block at a time: 1 where its distance is <= t."""
        top, low = t >> 8, t & 255
        if low == 255:  # every row whose high byte is at most top's (255 is "above")
            table = _mark(lambda b: b <= top, 1)
            return [raw[2 * lo + 1 - first_byte : 2 * hi : 2].translate(table)
                    for lo, hi in spans]
        table = _mark(lambda b: b <= low, 1)
        return [block.translate(table) for block in key(top)]

    def count(t: int) -> int:
        """How many rows are at distance <= t."""
        return sum(marks.count(1) for marks in within(t))

    def exactly(t: int) -> int:
        """How many rows are at distance exactly t."""
        top, low = t >> 8, t & 255
        if 0 < low < 255:
            return sum(block.count(low) for block in key(top))
        return count(t) - (count(t - 1) if t else 0)

    # The cut estimated from every 256th row, then stepped to the exact one (a step
    # is a count in C; sorting 4x the sample cost more than the steps it saved).
    stride = 256 if n >= 256 * 64 else 16
    with memoryview(raw) as whole, whole[: 2 * n].cast("H") as dist:
        sample = sorted(dist[::stride].tolist())
    t = sample[min(len(sample) - 1, max(limit // stride - 1, 0))]
    have = count(t)
    while have < limit:
        t += 1
        if t >= zero_at:
            return None
        have += exactly(t)
    while t > 0 and have - exactly(t) >= limit:
        have -= exactly(t)
        t -= 1
    if t >= zero_at:
        return None
    # Where the marks are: the lengths between them, summed (every step in C).
    rows: list[int] = []
    for (lo, _), marks in zip(spans, within(t)):
        gaps = marks.split(b"\1")[:-1]
        rows += map(operator.add, itertools.accumulate(map(len, gaps)), itertools.count(lo))
    return rows


_ROWS = 32768  # rows a block (candidates): 64 kB of distances, below malloc's mmap threshold (128 kB)


def _mark(test: Callable[[int], bool], value: int) -> bytes:
    """A translation table: ``value`` for the bytes that pass ``test``, else 0."""
    return bytes(value if test(b) else 0 for b in range(256))


def rescore(simsimd: Any, rows_of: Callable[[Sequence[int]], bytes], dim: int, query: bytes,
            rows: Sequence[int]) -> array[float]:
    """Exact cosine distances of ``query`` to the int8 rows ``rows``, fetched as one
    buffer by ``rows_of`` (gather, below)."""
    if not rows:
        return array("d")
    picked = rows_of(rows)
    out = array("d", [0.0]) * len(rows)
    cdist_into(simsimd, memoryview(query).cast("b"),
               memoryview(picked).cast("b", shape=[len(rows), dim]), metric="cosine",
               out=memoryview(out).cast("B").cast("d", shape=[1, len(rows)]))
    return out


def gather(matrix: memoryview | None, fd: int, dim: int, rows: Sequence[int]) -> bytes:
    """The int8 rows ``rows`` (ascending) of a vector file, as one buffer (bytes, or a
    1-D numpy array where numpy gathered them): from its
    kept map ``matrix`` (the whole file) when this process has mapped it before,
    else read with one pread a row from ``fd``.

    Why two ways: in a map made for this query every row touched is a page fault
    (12,288 rows of 1M: ~16 ms, the largest part of a fresh recall's first pass);
    a pread a row reads the same pages from the page cache without mapping them
    (~11 ms). Once a map has been used its pages stay mapped and slicing it is
    ~3x faster than the reads (a long-lived process: the MCP server)."""
    import sys

    if matrix is None:
        return b"".join(map(os.pread, itertools.repeat(fd), itertools.repeat(dim),
                            map(operator.mul, rows, itertools.repeat(dim))))
    np = sys.modules.get("numpy")
    if np is not None:  # loaded already: one gather in C
        whole = np.frombuffer(matrix, dtype=np.int8, count=(max(rows) + 1) * dim)
        # (the gathered array itself, a buffer of the same bytes: tobytes copied it into
        # a fresh 1.5 MB for 4,096 rows, 0.16 -> 2.1 ms with its page faults, load ~6)
        picked: Any = whole.reshape(-1, dim)[np.asarray(rows, dtype=np.int64)]
        return picked.reshape(-1)  # type: ignore[no-any-return]
    # Slices made and taken in C.
    starts = list(map(operator.mul, rows, itertools.repeat(dim)))
    return b"".join(map(matrix.__getitem__, map(
        slice, starts, map(operator.add, starts, itertools.repeat(dim)))))
