"""Salience: how much a memory still counts without a query, importance x decay over
age x reinforcement, and the order of memories by it alone.

Why a module of its own: recall multiplies its fused ranks by it, and the context
profile, decay reports and anchoring order memories by it without a query (through
``by_salience``); the defaults are git config (api/settings.py, docs/recall.md).
"""

from __future__ import annotations

import math

import msgspec

from . import timefmt
from .model import Record
from .projection import Projection

# Salience defaults (each is git config, see docs/recall.md). Half-lives in
# days per kind; None: never decays (how to do things, who we are).
HALF_LIFE_DAYS: dict[str, float | None] = {
    "note": 90.0, "fact": 365.0, "edge": 180.0, "procedure": None, "persona": None,
}
SALIENCE_FLOOR = 0.05
# Recorded times are the writer's claim. One beyond now plus this skew is not
# believed: ranking uses the latest believable time before it in Lamport order
# (projection's salience_inputs), so a memory dated 9999-12-31 decays like any
# other instead of staying fresh forever; status lists such memories.
DAY = 86400
FUTURE_SKEW = timefmt.FUTURE_SKEW
REINFORCEMENT_CAP = 2.0


class Salience(msgspec.Struct):
    """How salience is computed: the clock and the configuration."""

    now: int
    half_life_days: dict[str, float | None] = msgspec.field(default_factory=lambda: dict(HALF_LIFE_DAYS))
    floor: float = SALIENCE_FLOOR
    decay: bool = True


def salience(
    cfg: Salience, *, kind: str, importance: float, at: int, confirms: int,
    last_confirm: int | None, last_use: int | None, age_at: int | None = None,
) -> dict[str, float]:
    """Every factor of a memory's salience (their product is "salience").

    - importance: 0.75 + 0.5 x importance (neutral at the default 0.5);
    - decay: 0.5 ** (age / half-life of the kind), age counted from the last
      reinforcement: recorded, confirmed, added again, or returned by recall;
    - reinforcement: 1 + 0.2 log2(1 + confirmations), at most 2. Being
      returned by recall only renews the age: a boost for it would feed back
      (what was returned once would rank higher next time, relevant or not).

    ``age_at``: the time ages are measured to, when not ``cfg.now`` (recall
    --valid-at: what was true then ranks as if then were now); times are still
    believed up to ``cfg.now`` plus the skew.
    """
    imp = 0.75 + 0.5 * importance
    horizon = cfg.now + FUTURE_SKEW
    last = min(max(at, last_confirm or at, last_use or at), horizon)
    half = cfg.half_life_days.get(kind) if cfg.decay else None
    age_days = max((cfg.now if age_at is None else age_at) - last, 0) / DAY
    decay = 0.5 ** (age_days / half) if half else 1.0
    reinf = min(REINFORCEMENT_CAP, 1.0 + 0.2 * math.log2(1 + confirms))
    return {"importance": imp, "decay": decay, "reinforcement": reinf,
            "salience": imp * decay * reinf, "age_days": age_days,
            "future_dated": 1.0 if at > horizon else 0.0}


def by_salience(projection: Projection, cfg: Salience,
                records: list[Record]) -> list[tuple[Record, float]]:
    """Records best first by salience alone (no query), faded ones left out; ties
    by recorded time, then id. The context profile's order within a section."""
    inputs = projection.salience_inputs([r.id for r in records],
                                        horizon=cfg.now + FUTURE_SKEW)
    scored = []
    for r in records:
        kind, imp, at, confirms, last = inputs[r.id]
        f = salience(cfg, kind=kind, importance=imp, at=at, confirms=confirms,
                     last_confirm=last, last_use=None)
        if f["salience"] >= cfg.floor:
            scored.append((-f["salience"], r.recorded_at, r.id, r))
    scored.sort(key=lambda x: (x[0], x[1], x[2]))
    return [(x[3], -x[0]) for x in scored]
