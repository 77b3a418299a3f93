"""Keyed facts: the value of an attribute now, then, and every value it ever had.

Why this exists: "which database do we use?" has one current answer that
changes over time. ``set`` records values (``write``); this module answers
``get``/``keys`` on either timeline (what the log believed ``as_of``, what was
true in the world ``valid_at``), ``history`` and ``conflicts`` (concurrent sets
whose deterministic winner the fold rules pick, ``gitmem.replay``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import UnknownKey
from ..model import Conflict, FactValue, Fork, KeyHistory, Record
from ..timefmt import iso
from . import settings
from .pool import Pool

if TYPE_CHECKING:
    from ..projection import Projection


def get(pool: Pool, key: str, *, as_of: str | int | None = None,
        valid_at: str | int | None = None) -> FactValue:
    """The value of ``key``: current, as the log believed it at ``as_of``, or as
    true in the world at ``valid_at``. Concurrent values are in ``conflicts``."""
    t_as_of = settings.point_in_time(pool.log, as_of, "--as-of")
    t_valid = settings.point_in_time(pool.log, valid_at, "--valid-at")
    k = (key or "").strip()
    values = pool.read(lambda p: key_values(pool, p, k, t_as_of, t_valid))
    if not values:
        when = "".join([f" as of {iso(t_as_of)}" if t_as_of is not None else "",
                        f" valid at {iso(t_valid)}" if t_valid is not None else ""])
        hint = None
        if when:  # the key may hold a value now: say so rather than "set it"
            now = pool.read(lambda p: key_values(pool, p, k, None, None))
            if now:
                hint = (f"it has a value now ('git mem get {k}'); its history: "
                        f"'git mem history {k}'")
        raise UnknownKey(f"no value for key '{k}'{when}", hint)
    return fact_value(values[0], values[1:], t_as_of, t_valid)

def keys(pool: Pool, *, as_of: str | int | None = None,
         valid_at: str | int | None = None) -> list[FactValue]:
    """Every key's value (see ``get``), sorted by key."""
    t_as_of = settings.point_in_time(pool.log, as_of, "--as-of")
    t_valid = settings.point_in_time(pool.log, valid_at, "--valid-at")
    values = pool.read(lambda p: key_values(pool, p, None, t_as_of, t_valid))
    grouped: dict[str, list[Record]] = {}
    for r in values:
        grouped.setdefault(r.key or "", []).append(r)
    return [fact_value(v[0], v[1:], t_as_of, t_valid) for _, v in sorted(grouped.items())]

def key_values(pool: Pool, p: Projection, key: str | None, as_of: int | None,
            valid_at: int | None) -> list[Record]:
    """A key's (or every key's) values, winner first per key. Without a point in
    time: what holds now, so a value set ahead of time (--valid-from in the
    future) takes over only when it starts, and an expired one stops."""
    from ..projection import Scope

    if as_of is not None or valid_at is not None:
        return p.keyed(Scope(as_of=as_of, valid_at=valid_at, shadow=False), key)
    now = settings.now()
    values = p.keyed(Scope(shadow=False, now=now), key)
    started = [v for v in values if v.valid_from is None or settings.ts(v.valid_from) <= now]
    if len(started) == len(values):
        return values
    keys_waiting = {v.key for v in values} - {v.key for v in started}
    # Keys whose only current values have not started: what is valid now.
    earlier = [v for v in p.keyed(Scope(valid_at=now, shadow=False), key)
               if v.key in keys_waiting]
    return sorted(started + earlier, key=lambda v: (v.key or "", -v.clock, v.id))

def history(pool: Pool, key: str) -> KeyHistory:
    """Every value ``key`` ever had, oldest first, with who set it and when."""
    k = (key or "").strip()
    values = pool.read(lambda p: p.key_history(k))
    if not values:
        raise UnknownKey(f"key '{k}' was never set")
    live = [r for r in values if r.status == "active" and r.quarantine is None]
    current = next((r.id for r in live if r.conflict_with is None), None)
    return KeyHistory(key=k, current=current,
                      conflicts=[r.id for r in live if r.conflict_with is not None],
                      values=values)

def conflicts(pool: Pool) -> list[Conflict]:
    """Keys with more than one current value: concurrent sets not yet resolved."""
    from ..projection import Scope

    def run(p: Projection) -> list[Conflict]:
        out = []
        for key in p.conflicted_keys():
            values = p.keyed(Scope(shadow=False), key)
            if len(values) > 1:
                out.append(Conflict(key=key, current=values[0], others=values[1:]))
        return out

    return pool.read(run)


def forks(pool: Pool) -> list[Fork]:
    """Memories replaced twice at once: each fork's current replacements."""

    def run(p: Projection) -> list[Fork]:
        out = []
        for point, ids in p.forks():
            records = p.records(ids)
            heads = sorted((records[i] for i in ids if i in records), key=lambda r: (r.clock, r.id))
            if len(heads) > 1:
                for r in heads:
                    r.pool = pool.name
                out.append(Fork(heads=heads, replaced=[point]))
        return out

    return pool.read(run, embed=False)


def forked(pool: Pool, hits: Iterable[Record]) -> dict[str, list[str]]:
    """The hits of this pool that are one of several current replacements of one
    memory, each with the others (forks.py)."""
    mine = [h.id for h in hits if h.pool == pool.name and h.status == "active" and h.supersedes]
    if not mine:
        return {}
    return pool.read(lambda p: p.forked(mine), embed=False)


def fact_value(rec: Record, others: list[Record], as_of: int | None,
                valid_at: int | None) -> FactValue:
    return FactValue(
        key=rec.key or "", value=rec.text or "", id=rec.id, author=rec.author,
        author_email=rec.author_email, recorded_at=rec.recorded_at,
        valid_from=rec.valid_from, valid_until=rec.valid_until,
        status=rec.status if as_of is None and valid_at is None else "active",
        status_now=rec.status, conflicts=others, as_of=iso(as_of) if as_of is not None else None,
        valid_at=iso(valid_at) if valid_at is not None else None,
    )
