"""History a shallow fetch cut, and its arrival: when a read must replay everything.

A shallow fetch of the memory refs (``git fetch --depth 1`` with the memory
refspec, as a CI job might) leaves a partition's tip without its history; the
replay reads what the clone has and stops at the commits ``.git/shallow`` lists.
The projection records those memory commits (``marks.SHALLOW_KEY``). History that
arrives later (``fetch --deepen``, ``--unshallow``) moves no tip, so no refresh
would replay it: once a recorded commit is no longer listed, the next read
replays everything, or, under a front end's budget (a hook answers from the rows
it has), leaves it to the catch-up that front end starts.

Another shallow fetch of newer tips leaves the old boundaries listed: no replay
then (a full one would stop at the new tips and drop what was read).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import RefreshReport

if TYPE_CHECKING:
    from ..oplog import Oplog
    from ..projection import Projection


class Cut:
    """What .git/shallow lists and what the projection recorded, read before a
    replay (a fetch during the replay is seen by the next one). A plain class:
    ``dataclasses`` imports ``inspect`` (~5 ms), and every read comes here."""

    __slots__ = ("listed", "recorded")

    def __init__(self, listed: frozenset[str], recorded: list[str]) -> None:
        self.listed = listed
        self.recorded = recorded

    @classmethod
    def read(cls, log: Oplog, proj: Projection) -> Cut:
        return cls(log.shallow_ids(), proj.shallow_cut() or [])

    @property
    def arrived(self) -> bool:
        """History under a commit the replay stopped at has arrived since."""
        return any(c not in self.listed for c in self.recorded)

    def record(self, log: Oplog, proj: Projection, report: RefreshReport, *, full: bool) -> None:
        """After a complete replay that looked at the partitions, record the memory
        commits it stopped at. Looked up only when a partition moved (up to 10k
        lookups in a shallow clone), and not only when ops were applied: a tip whose
        ops are all skipped may sit on a cut."""
        if not report.complete or not (full or report.ops_applied or report.ops_skipped
                                       or report.partitions_changed):
            return
        now = log.memory_commits(self.listed) if self.listed else []
        if now != self.recorded:
            proj.set_shallow_cut(now)
