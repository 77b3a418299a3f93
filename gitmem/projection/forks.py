"""Forks: one memory replaced twice at once, on two clones that had not synced.

Why this exists: ``--supersedes`` retires a memory in favour of a new one. Two
clones that each replace the same memory before either has synced write two
successors; merging is union, so both are current, and the memory they replaced
names only one of them (``retired_by``: replay's rule picks one). Nothing in the
log is wrong, but a reader that showed the two as if each were the truth would
hide a disagreement. So each current successor is told of the others ("heads":
the current ends of the chains of replacements that start at the memory they
share), the way a keyed value is told it is in conflict; ``git mem conflicts``
lists them, and a later ``--supersedes`` of both ends the fork.

Only the add of a current memory counts (a quarantined one replaces nothing, a
keyed value losing a conflict is that conflict's); chains are followed up to DEPTH
replacements.
"""

from __future__ import annotations

import sqlite3

from .tables import STATE_CODE

DEPTH = 32
# Current: active, passed the gate, and no losing value of a keyed conflict (concurrent
# sets of a key each replace its old value: that is a conflict, said as one).
_LIVE = f"m.state = {STATE_CODE['active']} AND m.quarantine IS NULL AND m.shadowed_by IS NULL"

# Every memory reachable from the starting ones through replacements, one step
# each way at a time: up to what each replaced (its targets), down to what
# replaced each (the ops of links naming it). Bounded by depth.
_FAMILY = f"""
WITH RECURSIVE fam(id, depth) AS (
    SELECT value, 0 FROM json_each(?)
    UNION
    SELECT l.target, f.depth + 1 FROM fam f JOIN links l INDEXED BY links_op
        ON l.op = f.id AND l.type = 'supersede' WHERE f.depth < {DEPTH}
    UNION
    SELECT l.op, f.depth + 1 FROM fam f JOIN links l
        ON l.target = f.id AND l.type = 'supersede' WHERE f.depth < {DEPTH}
)
SELECT DISTINCT f.id FROM fam f JOIN memories m ON m.digest = unhex(f.id) WHERE {_LIVE}
"""


def heads(c: sqlite3.Connection, ids: list[str]) -> dict[str, list[str]]:
    """For each of ``ids`` that is a current memory in a fork: the other current
    memories descended, through replacements, from what it replaced (sorted)."""
    import json

    out: dict[str, list[str]] = {}
    for mid in ids:
        if mid in out:
            continue
        # Only a memory that replaced something can be in a fork.
        if c.execute("SELECT 1 FROM links INDEXED BY links_op WHERE op = ? AND type = 'supersede' "
                     "LIMIT 1", (mid,)).fetchone() is None:
            continue
        live = sorted(r[0] for r in c.execute(_FAMILY, (json.dumps([mid]),)))
        if len(live) > 1 and mid in live:
            for one in live:
                if one in ids:
                    out[one] = [x for x in live if x != one]
    return out


def all_forks(c: sqlite3.Connection) -> list[list[str]]:
    """Every fork: the current memories of each family of replacements that has
    more than one (sorted, families in order of their first id)."""
    import json

    starts = [r[0] for r in c.execute(
        "SELECT DISTINCT l.target FROM links l WHERE l.type = 'supersede'")]
    seen: set[str] = set()
    out: list[list[str]] = []
    for target in starts:
        if target in seen:
            continue
        live = sorted(r[0] for r in c.execute(_FAMILY, (json.dumps([target]),)))
        seen.update(live)
        seen.add(target)
        if len(live) > 1:
            out.append(live)
    return sorted(out)
