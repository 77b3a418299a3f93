"""The op-log as a read must see it on a read-only ``.git``.

Why this exists: a read integrates what a plain ``git fetch`` brought into
refs/memory-remotes/* by moving refs/memory/*; where those refs cannot be
written, the read still answers with it (docs/sync.md: every read does), from
this view of the log with the partitions integration chose moved to their
tips. Where the refs moved (every writable clone), the log itself is the view.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..oplog import REF_PREFIX, Integrated, Oplog, Pack


class IntegratedView:
    """The op-log as a read must see it: ``refs/memory/*`` with the partitions
    integration decided to move at the tips it chose, where the refs could not
    be moved (a read-only ``.git``). Implements the projection's LogSource."""

    def __init__(self, log: Oplog, moved: dict[str, str]) -> None:
        self._log = log
        self.moved = moved

    def partitions(self) -> dict[str, str]:
        found = self._log.partitions()
        found.update(self.moved)
        return found

    def tips(self, refs: list[str]) -> dict[str, str]:
        found = self._log.tips(refs)
        found.update((ref, tip) for ref, tip in self.moved.items() if ref in set(refs))
        return found

    def is_ancestor(self, old: str, new: str) -> bool:
        return self._log.is_ancestor(old, new)

    def iter_packs(self, tip: str, since: str | list[str] | None = None) -> Iterator[Pack]:
        return self._log.iter_packs(tip, since)


def integrated_view(log: Oplog, integ: Integrated) -> Oplog | IntegratedView:
    """``log`` itself when every partition ``integ`` moved is at its new tip in
    refs/memory/* (always, where the refs can be written: no work); else
    ``log`` seen with those partitions moved, so a read on a read-only ``.git``
    answers with what a plain ``git fetch`` brought into refs/memory-remotes/*,
    as every read does (docs/sync.md).

    The tip of each partition integration took is found again as it chose it:
    its remote-tracking tips in order, each taken when the one held is not a
    commit, or is an ancestor of it (a read never takes a rewrite, and our own
    partitions are never in ``integ``'s lists)."""
    names = {*integ.created, *integ.fast_forwarded, *integ.replaced}
    if not names:
        return log  # nothing fetched moved: every read's common case
    current = log.tips([REF_PREFIX + name for name in sorted(names)])
    tracking: dict[str, list[str]] = {}
    for tref, tip in sorted(log.tracking_of(names).items()):
        name = tref.rsplit("/", 1)[-1]
        if name in names:
            tracking.setdefault(name, []).append(tip)
    moved: dict[str, str] = {}
    for name, tips in tracking.items():
        ref = REF_PREFIX + name
        have = current.get(ref)
        for tip in tips:
            if have == tip:
                continue
            if have is None or not log.is_commit(have):
                have = tip  # nothing held, or a tip that held nothing: taken
            elif log.is_commit(tip) and log.is_ancestor(have, tip):
                have = tip  # a fast-forward
        if have is not None and have != current.get(ref):
            moved[ref] = have
    return IntegratedView(log, moved) if moved else log
