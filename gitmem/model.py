"""The plain data the library returns: records, ops as seen in the log, hits.

These are what front ends print and what ``--json`` serialises (with
``msgspec.to_builtins``), so their field names are public interface: add
fields freely, never rename or remove one. Pure module.
"""

from __future__ import annotations

import msgspec


class Anchor(msgspec.Struct, kw_only=True):
    commit: str | None = None
    paths: list[str] = []


class Record(msgspec.Struct, kw_only=True):
    """A memory as the projection sees it now."""

    id: str
    kind: str
    text: str | None  # None once forgotten
    key: str | None = None
    tags: list[str] = []
    entities: list[str] = []
    importance: float = 0.5
    valid_from: str | None = None
    valid_until: str | None = None
    source: str | None = None
    session: str | None = None
    anchors: Anchor = msgspec.field(default_factory=Anchor)
    supersedes: list[str] = []
    author: str
    author_email: str
    partition: str
    clock: int
    recorded_at: str
    status: str  # active | invalidated | superseded | forgotten
    retired_at: str | None = None
    retired_by: str | None = None
    retired_reason: str | None = None
    commit: str
    quarantine: str | None = None  # why the write gate would refuse it (then hidden by default)
    # A keyed value that lost a conflict: the id of the value that is current.
    conflict_with: str | None = None
    pool: str = "project"  # or "personal": the person's own pool, never pushed to a team


class OpInfo(msgspec.Struct, kw_only=True):
    """One op of the log, in replay order, without the content it carried."""

    id: str
    type: str
    author: str
    author_email: str
    partition: str
    clock: int
    recorded_at: str
    commit: str
    target: str | None = None
    reason: str | None = None
    summary: str | None = None  # first line of the memory's text (add ops)


class Hit(Record, kw_only=True):
    """A recall result: the record plus its rank and score."""

    rank: int
    score: float
    # importance x decay x reinforcement; below the floor a memory has faded
    # (left out of default recall, returned with --all).
    salience: float = 1.0
    faded: bool = False
    explain: dict[str, object] | None = None  # every factor of the score (--explain)


class Skipped(msgspec.Struct, kw_only=True):
    """An op line replay refused."""

    partition: str
    commit: str
    line: int
    reason: str
    id: str | None = None


class RefreshReport(msgspec.Struct, kw_only=True):
    """What one refresh or rebuild did."""

    partitions_changed: int = 0
    partitions_rewritten: int = 0
    ops_applied: int = 0
    ops_skipped: int = 0
    embedded: int = 0
    full_rebuild: bool = False
    seconds: float = 0.0
