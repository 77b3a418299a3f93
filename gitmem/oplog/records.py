"""The records the op-log returns.

Callers (the api, the projection) get these plain records (msgspec structs: cheap to define at import) and never a
libgit2 object: git stays inside this package, and a record's fields are the
whole contract.
"""

from __future__ import annotations

import msgspec


class Pack(msgspec.Struct, frozen=True):
    """One commit of a partition: its id and pack bytes, or why it is unreadable."""

    commit: str
    data: bytes | None
    error: str | None = None


class Appended(msgspec.Struct, frozen=True):
    """The commit an append wrote, the ref it moved, and the op lines it holds."""

    commit: str
    ref: str
    lines: list[bytes]


class RemoteCopy(msgspec.Struct, frozen=True):
    """What one remote-tracking ref holds of a partition being purged."""

    namespace: str
    tip: str
    has_content: bool  # its history contains a removed op
    next_push: str  # replace (force-with-lease) | fast-forward | rejected


class Rewrite(msgspec.Struct):
    """A purge of one partition: what changed, or (dry run) what would."""

    partition: str
    ref: str
    old_tip: str
    new_tip: str | None  # None on a dry run
    removed: list[str]  # op ids taken out of the log
    rewritten: list[str]  # old commits rebuilt (lost lines, or a new parent)
    dropped: list[str]  # old commits left out (every line removed)
    remotes: list[RemoteCopy]
    backups: list[str]  # refs/memory-backup/* that held a removed op (rewritten too)


class Integrated(msgspec.Struct):
    """What bringing remote-tracking partitions into refs/memory/* did."""

    created: list[str]
    fast_forwarded: list[str]
    replaced: list[str]  # rewritten by their owner: the remote's version wins
    conflicts: list[str]  # our own partitions with commits we do not have
    # Partitions named with this clone's id that this clone never wrote (a copy of its
    # .git, or a name chosen to look like one): left out, said, never a conflict.
    foreign: list[str] = msgspec.field(default_factory=list)


class Fetched(msgspec.Struct):
    """What fetching a remote's partitions did beyond the fetch itself."""

    left_out: list[str]  # refs under refs/memory/ this clone cannot store (remotes.storable)
    filled: int = 0  # objects a partial clone lacked and asked for (remotes.missing_pack_objects)


class Pushed(msgspec.Struct):
    """One partition a push sent (or found already there)."""

    partition: str
    status: str  # new | fast-forward | up-to-date | forced (a purge replaced it)
    old: str | None
    new: str
    # Why this clone could not record the push (its tracking ref under
    # refs/memory-remotes/: a full disk, a read-only .git); "" when it did.
    unrecorded: str = ""
