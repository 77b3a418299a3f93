"""Memories close to one another: the near-duplicate searches over the vector file.

Why apart from vectors.py: that module keeps the file (appended, zeroed, a new
generation, damage) and scans it for recall; these are two questions asked of it
by other readers, each with its own SQL for which memories qualify (current, of one
kind, not keyed): ``nearest``, the memories close to a new one (dedup on write,
``git mem similar ID``), and ``similar_pairs``, every close pair (``git mem
similar``, numpy). ``Projection.nearest`` and ``Projection.similar_pairs`` call
them in the caller's connection; loaded only then, never by a plain read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from . import firstpass, queries
from .distances import within
from .scope import Scope, filters
from .vectors import VectorFile, top_slot


def nearest(
    vectors: VectorFile, c: sqlite3.Connection, query: bytes, *, kind: str, min_cos: float,
    exclude: Iterable[str] = (), limit: int = 5,
) -> list[tuple[str, float]]:
    """Current memories of ``kind`` whose whole-text vector has cosine >= ``min_cos``
    with ``query`` (chunk vectors are not compared), best first."""
    import simsimd

    if not vectors.dim or len(query) != vectors.dim or not any(query):
        return []
    c.execute("BEGIN")
    try:
        top = top_slot(c)
        if top is None:
            return []
        cut = 1.0 - min_cos + 1e-9
        found_first = (vectors.first_pass(c, simsimd, query, top + 1)
                       if top + 1 >= max(firstpass.FIRST_PASS_FROM, firstpass.NEAREST_FROM)
                       else None)
        if found_first is not None:
            # Rows this close are among the first pass's candidates (docs/recall.md).
            close = sorted((d, r) for r, d in zip(found_first[0], found_first[1])
                           if d <= cut and d < 1.0)
        else:
            dist = vectors.distances(c, simsimd, query, top + 1)
            if dist is None:
                return []
            close = within(dist, cut)
        skip = set(exclude)
        found: list[tuple[float, str]] = []
        # Best first, a chunk at a time: a near-duplicate check at 100k must
        # not fetch every row above a loose threshold.
        for lo in range(0, len(close), 64):
            chunk = close[lo : lo + 64]
            if len(found) >= limit and round(1.0 - chunk[0][0], 6) < found[limit - 1][0]:
                break
            dist_of = {i: d for d, i in chunk}
            # A row's memory through vec_rows; its whole-text row is its vec_slot.
            for mid, slot in queries.by_ids(
                c,
                "SELECT m.id, r.slot FROM vec_rows r CROSS JOIN memories m "
                "ON m.rowid = r.memory WHERE m.vec_slot = r.slot AND m.kind = ? "
                "AND m.status = 'active' AND m.quarantine IS NULL AND m.key IS NULL "
                "AND r.slot IN", list(dist_of), prefix_args=[kind]
            ):
                if mid not in skip:
                    found.append((round(1.0 - dist_of[slot], 6), mid))
            found.sort(key=lambda x: (-x[0], x[1]))
        return [(mid, cos) for cos, mid in found[:limit]]
    finally:
        c.execute("COMMIT")


def similar_pairs(
    vectors: VectorFile, c: sqlite3.Connection, *, min_cos: float, kinds: Iterable[str] = (),
    since: int | None = None, limit: int = 50,
) -> list[tuple[str, str, float]]:
    """Pairs of current memories of the same kind whose whole-text vectors have
    cosine >= ``min_cos``: (older id, newer id, cosine), most similar first.

    Exact: every pair is compared (with ``since``, only pairs with at least
    one memory recorded since then), about 2 s per 10k x 10k memories.
    """
    import numpy as np
    import simsimd

    sql = ("SELECT m.id, m.kind, m.vec_slot, m.at FROM memories m "
           "WHERE m.vec_slot IS NOT NULL AND m.key IS NULL")  # keyed values replace
    sql, args = filters(sql, [], Scope(kinds=tuple(kinds)))
    # A reset (a rebuild, say) that commits after this snapshot began deletes the
    # generation it names once it has committed: read again in a new snapshot,
    # which names the new one. (Taken for damage, the projection was deleted.)
    for _ in range(3):
        c.execute("BEGIN")
        try:
            rows = c.execute(sql + " ORDER BY m.clock, m.id", args).fetchall()
            top = top_slot(c)
            if not rows or top is None:
                return []
            n = top + 1
            try:
                raw = np.fromfile(vectors.path(c), dtype=np.int8, count=n * vectors.dim)
            except FileNotFoundError:
                continue
        finally:
            c.execute("COMMIT")
        if raw.size < n * vectors.dim:
            return []
        matrix = raw.reshape(n, vectors.dim)
        break
    else:
        return []  # retired under three snapshots in a row: none this time
    pairs: list[tuple[float, str, str]] = []
    by_kind: dict[str, list[tuple[str, int, int]]] = {}
    for mid, kind, slot, at in rows:
        by_kind.setdefault(kind, []).append((mid, slot, at))
    for members in by_kind.values():
        vecs = np.ascontiguousarray(matrix[[slot for _, slot, _ in members]])
        recent = [i for i, (_, _, at) in enumerate(members) if since is None or at >= since]
        for lo in range(0, len(recent), 256):
            block = recent[lo : lo + 256]
            dist = np.asarray(simsimd.cdist(vecs[block], vecs, metric="cosine"))
            for bi, j in zip(*np.nonzero(dist <= 1.0 - min_cos + 1e-9)):
                i = block[bi]
                if i == j:
                    continue
                a, b = (i, j) if i < j else (j, i)
                pairs.append((round(1.0 - float(dist[bi, j]), 6), members[a][0],
                              members[b][0]))
    pairs = sorted(set(pairs), key=lambda p: (-p[0], p[1], p[2]))
    return [(a, b, cos) for cos, a, b in pairs[:limit]]
