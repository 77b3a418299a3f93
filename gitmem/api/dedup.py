"""Dedup: is a new memory one we already have? And which stored ones are near twins?

Why this exists: agents repeat themselves. On write, the same text (normalised)
as a current memory of the same kind and key reinforces that memory instead of
adding a copy; a near-duplicate (cosine at or above gitmem.duplicateThreshold)
is refused unless forced; a close one is stored and reported. ``similar`` lists
such pairs for review. The policy is here; the projection only answers the
distance queries, and the writer pays for no numpy (pure-Python query vectors).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .. import ops
from ..errors import InvalidInput, NearDuplicate
from ..model import SimilarPair
from . import cachefiles, settings
from .embedding import query_vector
from .pool import CACHE_DIR, Pool

if TYPE_CHECKING:
    from ..projection import Projection

PENDING_LIMIT = 64  # unembedded memories a writer compares itself (else it embeds them)
# Vectors of memories this clone added and no read has embedded yet, so the
# next add compares with them without re-embedding (a cache, like the
# projection: it only saves time on the write path, answers never use it).
PENDING_FILE = "pending-vectors.json"
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
Verdict = tuple[str | None, list[tuple[str, float]], list[str], bytes | None]


def check_new(pool: Pool, body: ops.MemoryBody, old_ids: list[str], *, force: bool) -> Verdict:
    """Dedup on write: (duplicate of, similar memories, the key's current values,
    the new memory's vector when one was computed)."""
    from ..embed.text import embed_text
    from ..projection import Scope
    from ..projection.distances import cosines

    dup_min, similar_min = settings.thresholds(pool.log)

    def run(p: Projection) -> Verdict:
        current: list[str] = []
        if body.key is not None:
            values = p.keyed(Scope(shadow=False), body.key)
            current = [r.id for r in values]
            # The value is already the key's one current value: reinforce it.
            # (Setting it again during a conflict resolves the conflict.)
            if (len(values) == 1 and not old_ids and values[0].kind == body.kind
                    and ops.normalize_text(values[0].text or "") == ops.normalize_text(body.text)):
                return values[0].id, [], current, None
            return None, [], current, None  # a new value replaces, it never duplicates
        dup = p.duplicate_of(body.text, body.kind, None)
        if dup is not None and not old_ids:  # with --supersedes it is a replacement
            return dup, [], current, None
        qvec = query_vector(embed_text(None, body.text, body.entities, body.tags))
        if qvec is None:
            return None, [], current, None
        floor = min(similar_min, dup_min)
        # Memories replayed but not embedded yet (a writer does not pay for
        # numpy): few, so compared here with the pure-Python embedder.
        pending = p.unembedded(body.kind, PENDING_LIMIT)
        if pending is None:
            pool.refresh_from_log(p)  # many: embed them the usual way first
            pending = []
        near = p.nearest(qvec, kind=body.kind, min_cos=floor, exclude=old_ids)
        known = pending_vectors(pool, {row[0] for row in pending})
        ids, vectors = [], []
        for mid, key, text, entities, tags in pending:
            if mid in old_ids:
                continue
            other = known.get(mid)
            if other is None or len(other) != len(qvec):
                other = query_vector(embed_text(key, text, entities, tags))
            if other is not None:
                ids.append(mid)
                vectors.append(other)
        for mid, cos in zip(ids, cosines(qvec, vectors)):
            if cos >= floor:
                near.append((mid, round(cos, 6)))
        near.sort(key=lambda x: (-x[1], x[0]))
        # The embedder barely sees numbers ("port 8080" ~ "port 9090"): texts
        # whose numbers differ are different facts, at most similar.
        if near and near[0][1] >= dup_min and not force:
            rec = p.record(near[0][0])
            if rec is not None and same_numbers(body.text, rec.text):
                raise NearDuplicate(near[0][0], near[0][1], rec.text or "")
        return None, near[:5], current, qvec

    return pool.read(run, embed=False)


def closest(pool: Pool, body: ops.MemoryBody) -> tuple[str, float] | None:
    """The current memory ``body`` would duplicate (cosine 1.0 for the same text)
    or nearly duplicate, or None: what capture proposes to confirm instead."""
    try:
        dup, _, _, _ = check_new(pool, body, [], force=False)
    except NearDuplicate as exc:
        return exc.existing, exc.cosine
    return (dup, 1.0) if dup is not None else None


def pending_vectors(pool: Pool, wanted: set[str]) -> dict[str, bytes]:
    cached = cachefiles.load_pending_vectors(pool.log.state_dir / CACHE_DIR / PENDING_FILE)
    try:
        return {k: bytes.fromhex(v) for k, v in cached.items() if k in wanted}
    except ValueError:  # not hex: a damaged cache only costs the work it saved
        return {}


def remember_pending(pool: Pool, memory_id: str, vector: bytes) -> None:
    path = pool.log.state_dir / CACHE_DIR / PENDING_FILE
    cached = cachefiles.load_pending_vectors(path)
    cached = dict(list(cached.items())[-(PENDING_LIMIT - 1):])
    cached[memory_id] = vector.hex()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(8).hex()}")
        tmp.write_text(json.dumps(cached))
        os.replace(tmp, path)
    except OSError:
        pass


def similar(pool: Pool, memory_id: str | None = None, *, since: str | int | None = None,
            limit: int = 50, kinds: Sequence[str] = ()) -> list[SimilarPair]:
    """Pairs of current memories of one kind that are close in meaning (cosine at
    or above gitmem.similarThreshold), most similar first, for review."""
    from ..embed.text import embed_text

    if limit < 1:
        raise InvalidInput(f"--limit must be at least 1 (got {limit})", "use --limit 50")
    dup_min, sim_min = settings.thresholds(pool.log)
    t_since = settings.point_in_time(pool.log, since, "--since")
    target = pool.resolve(memory_id) if memory_id else None

    def run(p: Projection) -> list[SimilarPair]:
        if target is not None:
            rec = p.record(target)
            if rec is None or rec.text is None:
                return []
            qvec = query_vector(embed_text(rec.key, rec.text, rec.entities, rec.tags))
            near = p.nearest(qvec, kind=rec.kind, min_cos=sim_min, exclude=[target],
                             limit=limit) if qvec else []
            pairs = [(target, mid, cos) for mid, cos in near]
        else:
            pairs = p.similar_pairs(min_cos=sim_min, kinds=kinds, since=t_since,
                                    limit=limit)
        recs = p.records({x for a, b, _ in pairs for x in (a, b)})
        out = []
        for a, b, cos in pairs:
            older, newer = sorted((recs[a], recs[b]), key=lambda r: (r.clock, r.id))
            same = same_numbers(older.text, newer.text)
            out.append(SimilarPair(cosine=cos, near_duplicate=cos >= dup_min and same,
                                   older=older, newer=newer))
        return out

    return pool.read(run)


def same_numbers(a: str | None, b: str | None) -> bool:
    return _NUMBER.findall(a or "") == _NUMBER.findall(b or "")
