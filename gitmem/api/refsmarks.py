"""The api's side of the refs mark: a view of the refs taken around integration, what
moved since the recorded one, and the mark handed to the projection (projection/marks.py
keeps it). Here because it reads the op-log (oplog.refs.RefsView), which the projection
may not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..oplog import REF_PREFIX
from ..oplog.refs import RefsView, tracked_partition

if TYPE_CHECKING:
    from ..oplog import Oplog
    from ..projection import RefsMark


# From this many loose refs under refs/memory*/ a read packs them (Oplog.pack_refs).
PACK_LOOSE_FROM = 1000


def encode_view(view: RefsView) -> str:
    """The mark's value: the view as sorted JSON (what the projection records)."""
    import msgspec

    return msgspec.json.encode(view, order="sorted").decode()


def fetched_part(view: RefsView) -> tuple[list[int] | None, dict[str, str]]:
    """What a view says of remote-tracking refs (and of packed-refs, which holds both)."""
    return view.packed, {r: t for r, t in view.loose.items() if not r.startswith(REF_PREFIX)}


def moved_since(view: RefsView | None, since: str | None) -> frozenset[str] | None:
    """The partitions (names) whose refs, local or remote-tracking, may have moved
    since the projection recorded ``since``; None when only a whole look can tell."""
    if view is None or since is None:
        return None
    import msgspec

    try:
        old = msgspec.json.decode(since, type=RefsView)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    changed = view.changed_since(old)
    if changed is None:
        return None
    names = set()
    for ref in changed:
        if ref.startswith(REF_PREFIX):
            names.add(ref[len(REF_PREFIX):])
        else:
            name = tracked_partition(ref)
            if name is not None:
                names.add(name)
    return frozenset(names)


def mark_for(log: Oplog, view: RefsView, since: str | None,
             moved: frozenset[str] | None) -> RefsMark:
    """The projection's mark for ``view``, taken before integration: recorded
    only when the tips replayed are exactly its listing. Integration ran after
    it, so a remote-tracking ref that moved since is one the mark does not
    hold, and the next read looks at it again; a ref integration moved makes
    the listing differ from the view's, and nothing is recorded."""
    from ..projection import RefsMark

    def expected(current: dict[str, str], only: frozenset[str] | None) -> bool:
        return view.settled and log.listing_of(view, only) == current

    only = None if moved is None else frozenset(REF_PREFIX + n for n in moved)
    return RefsMark(value=encode_view(view), since=since, only=only, expected=expected)
