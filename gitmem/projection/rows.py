"""Table rows -> the records the library returns (``gitmem.model``).

Why this exists: the column lists and their converters must match one to one,
and several queries share them, so they live side by side here.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .. import ops
from ..model import Anchor, LinkInfo, OpInfo, Record
from ..timefmt import iso
from .tables import KINDS, STATES

# A row's partition ref, its author's name and email, and a commit id as text (the
# row holds numbers: see tables.py): SQL on memory alias ``m`` or op alias ``o``.
def _ref(a: str) -> str:
    return f"(SELECT p.ref FROM partitions p WHERE p.id = {a}.part)"


def _author(a: str) -> str:
    return (f"(SELECT au.name FROM authors au WHERE au.id = {a}.author), "
            f"(SELECT au.email FROM authors au WHERE au.id = {a}.author)")


def _commit(column: str) -> str:
    """A row's commit as text: its bytes, or a commits row (see tables.py)."""
    return f"lower(hex({_oid(column)}))"


def _oid(column: str) -> str:
    """A row's commit as bytes: its own, or its commits row's (see tables.py)."""
    return (f"CASE WHEN typeof({column}) = 'integer' THEN "
            f"(SELECT cm.oid FROM commits cm WHERE cm.id = {column}) ELSE {column} END")


# The columns of a memory row (alias m), in the order ``record`` unpacks them. Bytes
# and numbers as the row holds them (the id's, the commits', kind, status, twice the
# importance): Python spells them for less than SQL (a context profile reads ~600 rows).
MEMORY_COLS = (
    "m.digest, m.kind_code, m.text, m.key, m.tags, m.entities, m.importance, m.valid_from, "
    f"m.valid_until, m.source, m.session, {_oid('m.anchor_commit')}, m.paths, m.supersedes, "
    f"{_ref('m')}, {_oid('m.commit_id')}, m.clock, m.at, m.tz, {_author('m')}, m.state, "
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


# Ids met lately (read from rows, or asked about) and their bytes: a recall or a
# context profile asks about the ~100-600 ids it has just read, several times over.
_KNOWN: dict[str, bytes] = {}
_KNOWN_MAX = 8192


def spell(key: bytes) -> str:
    """A memory's id from a row's ``digest``: 64 hex digits (remembered for ``digest``)."""
    memory_id = key.hex()
    if len(_KNOWN) >= _KNOWN_MAX:
        _KNOWN.clear()
    _KNOWN[memory_id] = key
    return memory_id


def digest(memory_id: str) -> bytes:
    """A memory id as a row stores it (``memories.digest``): its 32 bytes. Anything
    but an id's 64 lower-case hex digits gives b"", which no memory has (as no
    memory's id was such a text)."""
    key = _KNOWN.get(memory_id)
    if key is not None:
        return key
    try:
        key = bytes.fromhex(memory_id)
    except (TypeError, ValueError):
        return b""
    # 64 digits made 32 bytes (fromhex skips white space), none of them upper case.
    if len(key) == 32 and len(memory_id) == 64 and (memory_id.islower() or memory_id.isdigit()):
        spell(key)
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
     state, retired_by, retired_at, retired_tz, retired_reason, quarantine, shadowed_by,
     by, link) = row
    return Record(
        id=spell(mid), kind=KINDS[kind], text=text, key=key, tags=_list(tags),
        entities=_list(entities), importance=importance / 2,
        valid_from=iso(vfrom, tz) if vfrom is not None else None,
        valid_until=iso(vuntil, tz) if vuntil is not None else None,
        source=source, session=session,
        anchors=Anchor(commit=anchor_commit.hex() if anchor_commit else None,
                       paths=_list(paths)),
        supersedes=_list(supersedes), author=aname, author_email=aemail,
        partition=partition(ref), clock=clock, recorded_at=iso(at, tz) or "",
        status=STATES[state], retired_at=iso(retired_at, retired_tz or 0),
        retired_by=retired_by, retired_reason=retired_reason, commit=commit.hex(),
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
