"""Table rows -> the records the library returns (``gitmem.model``).

Why this exists: the column lists and their converters must match one to one,
and several queries share them, so they live side by side here.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

from .. import ops
from ..model import Anchor, LinkInfo, OpInfo, Record
from ..timefmt import iso

# A row's partition ref, its author's name and email, and a commit id as text (the
# row holds numbers: see schema.py): SQL on memory alias ``m`` or op alias ``o``.
def _ref(a: str) -> str:
    return f"(SELECT p.ref FROM partitions p WHERE p.id = {a}.part)"


def _author(a: str) -> str:
    return (f"(SELECT au.name FROM authors au WHERE au.id = {a}.author), "
            f"(SELECT au.email FROM authors au WHERE au.id = {a}.author)")


def _commit(column: str) -> str:
    return (f"CASE WHEN typeof({column}) = 'blob' THEN lower(hex({column})) ELSE "
            f"(SELECT lower(hex(cm.oid)) FROM commits cm WHERE cm.id = {column}) END")


# A memory's importance (alias m): the row holds twice it (see schema.py).
IMPORTANCE = "m.importance / 2.0"

# The columns of a memory row (alias m), in the order ``record`` unpacks them.
MEMORY_COLS = (
    f"m.id, m.kind, m.text, m.key, m.tags, m.entities, {IMPORTANCE}, m.valid_from, "
    f"m.valid_until, m.source, m.session, {_commit('m.anchor_commit')}, m.paths, m.supersedes, "
    f"{_ref('m')}, {_commit('m.commit_id')}, m.clock, m.at, m.tz, {_author('m')}, m.status, "
    "m.retired_by, m.retired_at, m.retired_tz, m.retired_reason, m.quarantine, "
    "m.shadowed_by, m.by, m.link"
)

# The columns of an op, for ``opinfo``: an add's are its memory's row (alias m), with
# its text; every other op's are its row in ops (alias o).
ADD_COLS = (
    f"m.id, 'add', {_ref('m')}, {_commit('m.commit_id')}, m.clock, m.at, m.tz, {_author('m')}, "
    "NULL, NULL, m.text"
)
OP_COLS = (
    f"o.id, o.type, {_ref('o')}, {_commit('o.commit_id')}, o.clock, o.at, o.tz, {_author('o')}, "
    "o.target, o.reason, NULL"
)


def norm(text: str) -> int:
    """A memory's ``norm`` column: 32 bits of ``ops.text_hash`` (normalised text), as a
    signed integer (4 bytes in the row and its index). Equal texts have equal norms; a
    reader compares the texts too (at 100k memories, a lookup meets another text's
    norm once in 40,000)."""
    return int(ops.text_hash(text)[:8], 16) - (1 << 31)


@functools.lru_cache(maxsize=4096)  # a recall converts its ~100 candidates ~6 times
def digest(memory_id: str) -> bytes:
    """A memory id as a row stores it (``memories.digest``): its 32 bytes. Anything
    but an id's 64 lower-case hex digits gives b"", which no memory has (as no
    memory's id was such a text)."""
    if isinstance(memory_id, str) and len(memory_id) == 64 and memory_id.lower() == memory_id:
        try:
            key = bytes.fromhex(memory_id)
        except ValueError:
            return b""
        if len(key) == 32:  # (fromhex skips white space)
            return key
    return b""


def digests(ids: Iterable[str]) -> list[bytes]:
    """``digest`` of each id, in order."""
    return [digest(mid) for mid in ids]


def partition(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _list(raw: str | None) -> Any:
    """A JSON list column (NULL or "[]": empty); most are empty, and need no parser
    (~0.7 us a call, four a row: the context profile builds ~600 rows)."""
    return [] if raw is None or raw == "[]" else json.loads(raw)


def record(row: tuple[Any, ...]) -> Record:
    (mid, kind, text, key, tags, entities, importance, vfrom, vuntil, source, session,
     anchor_commit, paths, supersedes, ref, commit, clock, at, tz, aname, aemail,
     status, retired_by, retired_at, retired_tz, retired_reason, quarantine, shadowed_by,
     by, link) = row
    return Record(
        id=mid, kind=kind, text=text, key=key, tags=_list(tags),
        entities=_list(entities), importance=importance,
        valid_from=iso(vfrom, tz) if vfrom is not None else None,
        valid_until=iso(vuntil, tz) if vuntil is not None else None,
        source=source, session=session,
        anchors=Anchor(commit=anchor_commit, paths=_list(paths)),
        supersedes=_list(supersedes), author=aname, author_email=aemail,
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
