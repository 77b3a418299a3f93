"""What fades soon and why: the decay view of ``git mem ui`` (and the library).

Salience is importance x decay x reinforcement (salience.salience); a memory
whose salience drops below gitmem.salienceFloor leaves default recall (it is
never deleted). This lists current memories nearest to that line, with the
days left if nothing renews them (a confirmation, a recall that returns it).
"""

from __future__ import annotations

import math

from ..model import Fading
from ..projection import Projection, Scope
from . import settings
from .pool import Pool

SCAN = 5000  # newest current memories considered


def fading(pool: Pool, *, limit: int = 20) -> list[Fading]:
    from ..salience import FUTURE_SKEW, salience

    cfg = settings.salience_config(pool.log, None)

    def run(p: Projection) -> list[Fading]:
        records, _ = p.browse(Scope(now=cfg.now), retired_only=False, limit=SCAN, offset=0)
        inputs = p.salience_inputs([r.id for r in records], horizon=cfg.now + FUTURE_SKEW)
        out = []
        for r in records:
            kind, imp, at, confirms, last_confirm = inputs.get(r.id, (r.kind, 0.5, 0, 0, None))
            half = cfg.half_life_days.get(kind) if cfg.decay else None
            if not half:
                continue  # never fades
            f = salience(cfg, kind=kind, importance=imp, at=at, confirms=confirms,
                         last_confirm=last_confirm, last_use=None)
            if f["salience"] <= 0:
                continue
            # salience halves every half-life: days until it crosses the floor.
            left = half * math.log2(f["salience"] / cfg.floor) if f["salience"] > cfg.floor \
                else 0.0
            why = (f"{kind}, half-life {half:g} days, last renewed {f['age_days']:.0f} days ago, "
                   f"{confirms} confirmation{'s' if confirms != 1 else ''}")
            out.append(Fading(memory=r, salience=round(f["salience"], 4), floor=cfg.floor,
                              days_left=round(left, 1), why=why))
        out.sort(key=lambda x: (x.days_left if x.days_left is not None else math.inf,
                                x.memory.id))
        return out[:limit]

    return pool.read(run)
