"""History a shallow fetch cut, and its arrival: when a read must replay everything.

A shallow fetch of the memory refs (``git fetch --depth 1`` with the memory
refspec, as a CI job might) leaves a partition's tip without its history; the
replay reads what the clone has and stops at the commits ``.git/shallow`` lists.
The projection records those of them it met (``marks.SHALLOW_KEY``). History
that arrives later (``fetch --deepen``, ``--unshallow``) moves no tip, so no
refresh would replay it: once a recorded commit is no longer listed, the next
read replays everything, or, under a front end's budget (a hook answers from
the rows it has), leaves it to the catch-up that front end starts.

Another shallow fetch of newer tips leaves the old boundaries listed: no replay
then (a full one would stop at the new tips and drop what was read).

What is recorded: every listed commit a replay walked (whatever its tree holds:
a teammate's tip with no ops.jsonl is a cut too), kept while it stays listed,
and, after a replay that moved a partition, every listed commit whose tree holds
a pack (a tip a replay has not walked yet: its ops wait for the history).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..model import RefreshReport

if TYPE_CHECKING:
    from ..oplog import Oplog
    from ..projection import Projection
    from ..projection.logsource import LogSource


class Cut:
    """What .git/shallow lists and what the projection recorded, read before a
    replay (a fetch during the replay is seen by the next one). A plain class:
    ``dataclasses`` imports ``inspect`` (~5 ms), and every read comes here."""

    __slots__ = ("listed", "whole", "recorded", "seen")

    def __init__(self, listed: frozenset[str] | None, recorded: list[str]) -> None:
        # None: too long a list to read on every command (history.SHALLOW_READ); then
        # nothing counts as arrived and nothing recorded is dropped.
        self.whole = listed is not None
        self.listed = listed or frozenset()
        self.recorded = recorded
        self.seen: set[str] = set()  # listed commits the replay walked

    @classmethod
    def read(cls, log: Oplog, proj: Projection, *, look: bool = True) -> Cut:
        """``look`` False: .git/shallow is not read (nothing moved since the last replay,
        the file included), so nothing counts as arrived and nothing recorded is dropped."""
        return cls(log.shallow_ids() if look else None, proj.shallow_cut() or [])

    @property
    def arrived(self) -> bool:
        """History under a commit the replay stopped at has arrived since."""
        return self.whole and any(c not in self.listed for c in self.recorded)

    def watch(self, source: LogSource) -> LogSource:
        """``source``, noting the listed commits a replay walks through it."""
        return _Watched(source, self) if self.listed else source

    def record(self, log: Oplog, proj: Projection, report: RefreshReport, *, full: bool) -> None:
        """Record what this replay met, complete or not (a catch-up's first slice walks
        the oldest commits, the cut among them). Pack-holding listed commits are looked
        up only when a partition moved (up to SHALLOW_LOOKS lookups in a shallow clone),
        and not only when ops were applied: a tip whose ops are all skipped may sit on
        a cut."""
        keep = set(self.seen)
        keep.update(c for c in self.recorded if c in self.listed or not self.whole)
        if self.listed and report.complete and (full or report.ops_applied or report.ops_skipped
                                                or report.partitions_changed):
            keep.update(log.memory_commits(self.listed))
        now = sorted(keep)
        if now != self.recorded:
            proj.set_shallow_cut(now)


class _Watched:
    """A LogSource that notes each listed commit it hands the replay."""

    def __init__(self, source: LogSource, cut: Cut) -> None:
        self._source = source
        self._cut = cut

    def partitions(self) -> dict[str, str]:
        return self._source.partitions()

    def tips(self, refs: list[str]) -> dict[str, str]:
        return self._source.tips(refs)

    def is_ancestor(self, old: str, new: str) -> bool:
        return self._source.is_ancestor(old, new)

    def iter_packs(self, tip: str, since: str | None = None) -> Iterator[object]:
        listed, seen = self._cut.listed, self._cut.seen
        for pack in self._source.iter_packs(tip, since):
            commit = getattr(pack, "commit", None)
            if commit in listed:
                seen.add(commit)
            yield pack
