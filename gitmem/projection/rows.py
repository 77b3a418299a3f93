"""Table rows -> the records the library returns (``gitmem.model``).

Why this exists: the column lists and their converters must match one to one,
and several queries share them, so they live side by side here.
"""

from __future__ import annotations

import json
from typing import Any

from ..model import Anchor, LinkInfo, OpInfo, Record
from ..timefmt import iso

# The columns of a memory row, in the order ``record`` unpacks them.
MEMORY_COLS = (
    "id, kind, text, key, tags, entities, importance, valid_from, valid_until, "
    "source, session, anchor_commit, paths, supersedes, ref, commit_id, clock, at, "
    "tz, author_name, author_email, status, retired_by, retired_at, retired_tz, "
    "retired_reason, quarantine, shadowed_by, by, link"
)

# The columns of an op, for ``opinfo``: an add's are its memory's row (alias m), with
# its text; every other op's are its row in ops (alias o).
ADD_COLS = (
    "m.id, 'add', m.ref, m.commit_id, m.clock, m.at, m.tz, m.author_name, "
    "m.author_email, NULL, NULL, m.text"
)
OP_COLS = (
    "o.id, o.type, o.ref, o.commit_id, o.clock, o.at, o.tz, o.author_name, "
    "o.author_email, o.target, o.reason, NULL"
)


def partition(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def record(row: tuple[Any, ...]) -> Record:
    (mid, kind, text, key, tags, entities, importance, vfrom, vuntil, source, session,
     anchor_commit, paths, supersedes, ref, commit, clock, at, tz, aname, aemail,
     status, retired_by, retired_at, retired_tz, retired_reason, quarantine, shadowed_by,
     by, link) = row
    return Record(
        id=mid, kind=kind, text=text, key=key, tags=json.loads(tags),
        entities=json.loads(entities), importance=importance,
        valid_from=iso(vfrom, tz) if vfrom is not None else None,
        valid_until=iso(vuntil, tz) if vuntil is not None else None,
        source=source, session=session,
        anchors=Anchor(commit=anchor_commit, paths=json.loads(paths)),
        supersedes=json.loads(supersedes), author=aname, author_email=aemail,
        partition=partition(ref), clock=clock, recorded_at=iso(at, tz) or "",
        status=status, retired_at=iso(retired_at, retired_tz or 0),
        retired_by=retired_by, retired_reason=retired_reason, commit=commit,
        quarantine=quarantine, conflict_with=shadowed_by, by=by,
        link=LinkInfo(**json.loads(link)) if link else None,
    )


def opinfo(row: tuple[Any, ...]) -> OpInfo:
    (oid, typ, ref, commit, clock, at, tz, aname, aemail, target, reason, text) = row
    summary = None
    if typ == "add" and text:
        summary = text.strip().splitlines()[0][:120] if text.strip() else ""
    return OpInfo(
        id=oid, type=typ, author=aname, author_email=aemail, partition=partition(ref),
        clock=clock, recorded_at=iso(at, tz) or "", commit=commit, target=target,
        reason=reason, summary=summary,
    )
