"""Healing a clone whose own ops were written with a poisoned Lamport clock.

Why this exists: before writers took their clock from accepted ops only
(``replay.next_clock``), a teammate's crafted clock could make this clone write
ops that its own replay then skipped as an "implausible Lamport clock jump":
the user saw an id printed, and the memory never appeared. Those ops are still
in this clone's partition, intact. On the first write after the upgrade, each
one is appended again with a clock replay accepts (content, author and times
kept; ids that the rescued ops give each other are remapped, as ``rekey``
does), so nothing the user added is lost. The ids rescued are remembered in
``.git/mem/rescued-clocks`` so an op is rescued once.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import msgspec

from .. import ops
from ..oplog import REF_PREFIX
from . import cachefiles

if TYPE_CHECKING:
    from .pool import Pool

RESCUED_FILE = "rescued-clocks"
_REASON = "implausible Lamport clock jump"


def rescue_skipped_clocks(pool: Pool) -> int:
    """Re-append this clone's own ops that replay skipped for a clock jump; how many."""
    if pool.healed:
        return 0
    pool.healed = True  # first: the appends below come back through next_clock
    own = set(pool.log.own_partitions())
    if not own:
        return 0
    refs = [REF_PREFIX + name for name in sorted(own)]
    victims = [s for s in pool.read(lambda p: p.skipped(refs=refs, reason=_REASON), embed=False)
               if s.id]
    if not victims:
        return 0
    path = pool.log.state_dir / RESCUED_FILE
    done = set(cachefiles.load(path, list[str]) or [])  # never blocks, never raises
    wanted = {s.id for s in victims} - done
    if not wanted:
        return 0
    tips = pool.log.tips([REF_PREFIX + name for name in sorted({s.partition for s in victims})])
    idmap: dict[str, str] = {}
    count = 0
    for name in sorted({s.partition for s in victims}):
        tip = tips.get(REF_PREFIX + name)
        if tip is None:
            continue
        for pack in pool.log.iter_packs(tip):
            for raw in ops.split_pack(pack.data or b""):
                oid = ops.op_id(raw)
                if oid not in wanted:
                    continue
                try:
                    op = ops.decode(raw)
                except (msgspec.DecodeError, msgspec.ValidationError):
                    continue
                idmap[oid] = append_again(pool, name, op, idmap,
                                           f"rescue: {ops.op_type(op)} with a valid clock")
                done.add(oid)
                count += 1
    _save(path, sorted(done))
    if count:
        pool.warnings.append(f"re-appended {count} op(s) of this clone that an earlier "
                             "version wrote with an unusable clock (see docs/sync.md)")
    return count


def append_again(pool: Pool, partition: str, op: ops.Op, idmap: dict[str, str],
                 summary: str) -> str:
    """Append ``op`` once more on ``partition`` with a fresh clock, ids it refers to
    remapped through ``idmap`` (rekey and the rescue above); the new op's id."""
    def make(clock: int) -> list[bytes]:
        fields = {f: getattr(op, f) for f in op.__struct_fields__}
        fields.update(partition=partition, clock=clock)
        if isinstance(op, ops.AddOp):
            fields["supersedes"] = [idmap.get(x, x) for x in op.supersedes]
        else:
            fields["target"] = idmap.get(op.target, op.target)
        return [ops.encode(type(op)(**fields))]

    appended = pool.log.append(partition, op.author, op.at, op.tz, summary, make,
                               next_clock=lambda: pool.next_clock(partition))
    return ops.op_id(appended.lines[0])


def _save(path: os.PathLike[str], ids: list[str]) -> None:
    tmp = f"{os.fspath(path)}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(ids, fh)
    os.replace(tmp, path)
