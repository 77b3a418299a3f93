"""What one scan's distances say: the nearest rows, the rows within a cut, the
spread of every cosine; and cosines of a few rows not in the file.

Why apart from vectors.py: these are functions of an array of distances (or a
handful of rows), with no file, table or transaction; vectors.py owns the file
and the tables that name its rows. Every step runs in C (heapq, simsimd, bytes
methods), or in numpy where a long-lived process has it loaded already: a fresh
process never imports numpy for one query.
"""

from __future__ import annotations

import heapq
import math
import operator
import struct
import sys
from array import array
from collections.abc import Sequence
from typing import Any, cast


_STEALS: bool | None = None  # simsimd's cdist(out=...) loses a reference to None
# References to None held for those simsimd lost, until made permanent: a list frees
# its references when the interpreter finalizes, and that put the lost ones back
# on None's count at exit ("deallocating None" at a normal exit after ~6,000 scans).
_HELD: list[None] = []
_HOLD = 4096  # references held before they are made permanent
# This process ends with os._exit (a one-shot Projection: the git-mem program), so
# it never frees what it holds: no exit hook, which would also make the program's
# end wait for the interpreter's teardown (~5 ms of every command, see cli._end).
_NO_TEARDOWN = False


def ends_without_teardown() -> None:
    """Say this process ends with ``os._exit`` (see ``_NO_TEARDOWN``)."""
    global _NO_TEARDOWN
    _NO_TEARDOWN = True


def cdist_into(simsimd: Any, *args: Any, **kw: Any) -> None:
    """``simsimd.cdist`` writing into its ``out`` argument.

    simsimd 6.5 returns None from such a call without taking a reference to it:
    every scan lost one of None's references, and on Python 3.11 (where None is
    not immortal) a long-lived process aborted with "deallocating None" after
    ~7,000 scans, any process at its exit. Whether this simsimd does so is seen
    once, on a one-by-one call (None's count falls by one, twice over); from then
    on each lost reference is given back: held in a list, made permanent every
    ``_HOLD`` scans and at a normal exit (not in a process that ends with
    ``os._exit``: see ``_NO_TEARDOWN``)."""
    global _STEALS
    if _STEALS is None:
        one, out = array("b", [1]), array("d", [0.0])
        drops = []
        for _ in range(2):
            before = sys.getrefcount(None)
            simsimd.cdist(memoryview(one).cast("b", shape=[1, 1]), memoryview(one).cast(
                "b", shape=[1, 1]), metric="cosine", out=memoryview(out).cast(
                "B").cast("d", shape=[1, 1]))
            drops.append(before - sys.getrefcount(None))
        _STEALS = drops == [1, 1]
        if _STEALS:
            _HELD.extend([None, None])
            if not _NO_TEARDOWN:
                import atexit

                atexit.register(_make_permanent)
    simsimd.cdist(*args, **kw)
    if _STEALS:
        _HELD.append(None)
        if len(_HELD) >= _HOLD:
            _make_permanent()


def _make_permanent() -> None:
    """Turn the held references into increments of None's count that nothing undoes
    (ctypes, ~2 ms to import: once every ``_HOLD`` scans, and at exit). Without
    ctypes they stay held."""
    n = len(_HELD)
    if not n:
        return
    try:
        import ctypes

        inc = ctypes.pythonapi.Py_IncRef
    except (ImportError, AttributeError):
        return
    inc.argtypes, inc.restype = [ctypes.py_object], None
    for _ in range(n):
        inc(None)
    del _HELD[:n]  # (scans in other threads may have added more since)


def smallest(values: array[float], k: int) -> list[int]:
    """Indices of the k smallest values (all ties at the cut included), in C-speed steps.

    The same set either way: numpy's partition when a long-lived process has
    numpy loaded already (~1 ms for 100k rows), heapq otherwise (a fresh
    process must not pay numpy's import for one query).
    """
    n = len(values)
    if k >= n:
        return list(range(n))
    np = sys.modules.get("numpy")
    if np is not None:
        arr = np.frombuffer(values, dtype=np.float64)
        cut = float(np.partition(arr, k - 1)[k - 1])
        return cast(list[int], np.flatnonzero(arr <= cut).tolist())
    cut = heapq.nsmallest(k, values)[-1]  # floats compare in C: no key function
    return [i for i, v in enumerate(values) if v <= cut]


def within(dist: array[float], cut: float) -> list[tuple[float, int]]:
    """(distance, row) of the non-zero rows at distance <= ``cut``, nearest first.

    Usually only a few rows, or none, are this close: they are picked out by their
    bits in C (``_candidates``, ~0.3 ms at 100k rows) instead of walking every row
    in Python (~3 ms) or taking the 64 nearest with heapq (~1 ms). When many rows
    might be inside, they are taken from the nearest in growing batches
    (``smallest`` runs in C); once a batch holds a row beyond the cut (or a zeroed
    row), every row within it is in the batch, because a batch has every row up to
    its farthest one.
    """
    rows = _candidates(dist, cut) if len(dist) > 64 else None
    if rows is not None:
        return sorted((dist[i], i) for i in rows if dist[i] <= cut and dist[i] < 1.0)
    k = 64
    while True:
        batch = smallest(dist, min(k, len(dist)))
        close = sorted((dist[i], i) for i in batch if dist[i] <= cut and dist[i] < 1.0)
        if len(close) < len(batch) or len(batch) >= len(dist):
            return close
        k *= 8


FEW = 4096  # candidates checked one by one; more: the batches of the nearest


def _candidates(dist: array[float], cut: float) -> list[int] | None:
    """The rows whose distance may be <= ``cut`` (a superset: the caller checks
    each), or None when there are more than FEW or ``cut`` is negative.

    Doubles from +0.0 up order as their bit patterns do, so a row at or below
    ``cut`` has the top 16 bits of its pattern (sign, exponent, 4 bits of
    mantissa) at or below the cut's; a row with the sign bit set (-0.0, a
    rounding below zero) is below any cut >= 0. Each row's top two bytes are
    picked out with a strided slice, marked through a translation table and the
    marks combined as integers: every step in C. A block of rows at a time: the
    buffers are then reused from one block to the next instead of being fresh
    memory (a one-shot process pays a page fault for every 4 kB it touches first).
    """
    if not cut >= 0.0:
        return None
    first, second = (7, 6) if sys.byteorder == "little" else (0, 1)  # the top two bytes
    top = struct.pack("=d", cut)
    hi, lo = top[first], top[second]
    below_table = bytes(int(b < hi or b >= 0x80) for b in range(256))
    level_table = bytes(int(b == hi) for b in range(256))
    under_table = bytes(int(b <= lo) for b in range(256))
    view = memoryview(dist)
    rows: list[int] = []
    for start in range(0, len(dist), _BLOCK):
        # (Sliced as bytes: a strided memoryview copies ~10x slower.)
        raw = view[start : start + _BLOCK].tobytes()
        highs, lows = raw[first::8], raw[second::8]
        marks = (int.from_bytes(highs.translate(below_table), "big")
                 | int.from_bytes(highs.translate(level_table), "big")
                 & int.from_bytes(lows.translate(under_table), "big")
                 ).to_bytes(len(highs), "big")
        if len(rows) + marks.count(1) > FEW:
            return None
        at = marks.find(1)
        while at >= 0:
            rows.append(start + at)
            at = marks.find(1, at + 1)
    return rows


_BLOCK = 8192  # rows: 64 kB of distances, below the allocator's fresh-mapping threshold


def cosines(query: bytes, rows: list[bytes]) -> list[float]:
    """Cosine of ``query`` with each of ``rows`` (int8 vectors of its length), in one
    simsimd call, as ``nearest`` compares the stored rows: the same precision for a
    memory a writer compares before it is embedded (api.dedup) and after, ~1 us a
    row where Python's arithmetic took ~40 us."""
    if not rows:
        return []
    import simsimd

    matrix = memoryview(b"".join(rows)).cast("b", shape=[len(rows), len(query)])
    dist: Any = simsimd.cdist(memoryview(query).cast("b"), matrix, metric="cosine")  # a buffer
    return [1.0 - d for d in memoryview(dist).cast("B").cast("d")]


def spread(dist: array[float], n: int, leave_out: Sequence[int] = (),
           ) -> tuple[float, float, int] | None:
    """(mean cosine, standard deviation, count) over the non-zero rows but those of
    ``leave_out``; None if none.

    How unusual a similarity is for this query in this corpus: static
    embeddings give any two texts a sizeable cosine, so relevance is judged
    against the spread. Over every non-zero row (zeroed rows are forgotten or
    dropped memories, at distance exactly 1) of the memories current at the point
    asked about: ``leave_out`` names the others' rows (vectors.unseen_slots: a key's replaced
    values, 399 near-identical ones for a key set 400 times, would pull the mean
    up to its current value's cosine). A function of the set of memories, not of
    the order they arrived in (rounded, so that the order of a floating-point
    sum cannot show).
    """
    import simsimd

    np = sys.modules.get("numpy")
    if np is not None:  # loaded already (a long-lived process): ~0.05 ms for 100k rows
        arr = np.frombuffer(dist, dtype=np.float64)
        zero = int(np.count_nonzero(arr == 1.0))
        total = float(arr.sum())
    else:  # every step in C: ~1.5 ms for 100k rows
        zero = dist.count(1.0)
        total = sum(dist)
    # The squares by simsimd either way, not numpy's ``arr @ arr``: that is a BLAS
    # call whose worker threads, on a busy 2-core machine, took 0.005 to 12 ms.
    view = memoryview(dist)
    squares = cast(float, simsimd.dot(view, view))  # a float for two float64 buffers
    live = n - zero
    if leave_out:
        # Taken out again, in C (a few rows in an ordinary store); a zeroed row among
        # them is out already (counted in ``zero``).
        gone = [dist[i] for i in leave_out] if len(leave_out) == 1 else list(
            operator.itemgetter(*leave_out)(dist))
        zeroed = gone.count(1.0)
        if len(gone) - zeroed > live // 2:
            # Most rows are left out (a store of a key's history, a time before most
            # memories): the sums of every row less theirs would be mostly rounding
            # (one row left: a deviation of 2e-7 instead of 0), so the rows kept
            # are summed instead (a pass over every row in Python: rare).
            return _spread_of(dist, set(leave_out))
        total -= sum(gone) - zeroed
        squares -= sum(map(operator.mul, gone, gone)) - zeroed
        live -= len(gone) - zeroed
    if not live:
        return None
    mean = (total - zero) / live
    std = max((squares - zero) / live - mean * mean, 0.0) ** 0.5
    return (round(1.0 - mean, 9), round(std, 9), live)


def _spread_of(dist: array[float], out: set[int]) -> tuple[float, float, int] | None:
    """As ``spread``, over the non-zero rows not in ``out``, summed one by one."""
    kept = [d for i, d in enumerate(dist) if d != 1.0 and i not in out]
    if not kept:
        return None
    mean = math.fsum(kept) / len(kept)
    std = (math.fsum((d - mean) ** 2 for d in kept) / len(kept)) ** 0.5
    return (round(1.0 - mean, 9), round(std, 9), len(kept))
