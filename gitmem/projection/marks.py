"""The refs mark: what the refs were made of when the replayed tips were their listing.

Why this exists: with 20,000 partitions, listing every ref and comparing it with
its replayed tip was most of every command (40,000 loose files read 4-16 times).
The api describes the refs cheaply (a ``RefsMark``: every loose ref with its id,
packed-refs by its identity); the projection records that description in ``meta``
in the transaction that makes its tips exactly that listing, and a later refresh
that finds the same mark still recorded lists only the refs the api says may have
moved since.

The invariant: the recorded mark, when there is one, names refs whose listing is
exactly the replayed tips. Every transaction that moves tips records the mark it
was given (when its tips are that mark's listing) or deletes the row, so a mark
never outlives the tips it described; a ref that vanished or was rewritten
(dropped rows) widens the comparison to every partition.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .logsource import LogSource

# The meta row holding the mark of the refs the replayed tips are the listing of.
MARK_KEY = "refs"


class RefsMark:
    """What the refs are made of now, as the op-log can say it cheaply (the api
    builds it; the projection only compares and records it).

    ``value`` names the refs' state (recorded in meta when the replayed tips are
    its listing). ``since`` is the recorded value it was compared with, and
    ``only`` the refs that may have moved since then (None: any): while the
    recorded mark is still ``since``, a refresh lists and compares those alone
    (20,000 partitions, one moved: one ref read, one row compared).
    ``expected(current, only)`` says whether ``current`` (of ``only``, or of
    every partition) is exactly the listing ``value`` stands for."""

    # (A plain class: dataclasses imports inspect, which a hot command never loads.)
    __slots__ = ("value", "since", "only", "expected")

    def __init__(self, value: str, since: str | None, only: frozenset[str] | None,
                 expected: Callable[[dict[str, str], frozenset[str] | None], bool]) -> None:
        self.value = value
        self.since = since
        self.only = only
        self.expected = expected


def recorded(c: sqlite3.Connection) -> str | None:
    """The mark recorded with the replayed tips, or None."""
    row = c.execute("SELECT value FROM meta WHERE key = ?", (MARK_KEY,)).fetchone()
    return None if row is None else str(row[0])


def narrowed(mark: RefsMark | None, full: bool, now: str | None) -> frozenset[str] | None:
    """The refs to list and compare alone, or None for every one: only while the
    recorded mark (``now``) is still the one ``mark`` was narrowed from."""
    if mark is None or full or mark.since is None or now != mark.since:
        return None
    return mark.only


def listing(watermarks: Callable[..., dict[str, str]], source: LogSource,
            only: frozenset[str] | None) -> tuple[dict[str, str], dict[str, str]]:
    """(the refs, the tips replayed) of every partition, or of ``only``."""
    if only is None:
        return source.partitions(), watermarks()
    return source.tips(sorted(only)), watermarks(sorted(only))


def lost_any(source: LogSource, current: dict[str, str], stored: dict[str, str]) -> bool:
    """A partition of the narrowed listing was deleted or rewritten (not moved
    forward): its rows are dropped, so every partition must be compared."""
    return any(ref not in current or (current[ref] != tip and not source.is_ancestor(tip, current[ref]))
               for ref, tip in stored.items())


def settle(c: sqlite3.Connection, mark: RefsMark | None, complete: bool,
           current: dict[str, str], only: frozenset[str] | None) -> None:
    """At the end of a refresh's transaction: record ``mark`` when the replayed tips
    are exactly its listing, else delete any recorded one (the invariant above)."""
    if mark is not None and complete and mark.expected(current, only):
        c.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) "
                  "DO UPDATE SET value = excluded.value", (MARK_KEY, mark.value))
    else:
        c.execute("DELETE FROM meta WHERE key = ?", (MARK_KEY,))


# The memory commits a replay stopped at because a shallow fetch had cut their history
# (they were listed in .git/shallow): a JSON list, absent when none. History that arrives
# later (fetch --deepen, --unshallow) moves no tip, so no refresh would replay it: a read
# that finds one of them no longer listed replays everything, once (api/pool.py).
SHALLOW_KEY = "shallow_cut"


def shallow_cut(c: sqlite3.Connection) -> list[str]:
    row = c.execute("SELECT value FROM meta WHERE key = ?", (SHALLOW_KEY,)).fetchone()
    if row is None:
        return []
    try:
        value = json.loads(row[0])
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def set_shallow_cut(c: sqlite3.Connection, value: list[str]) -> None:
    if not value:
        c.execute("DELETE FROM meta WHERE key = ?", (SHALLOW_KEY,))
    else:
        c.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) "
                  "DO UPDATE SET value = excluded.value", (SHALLOW_KEY, json.dumps(sorted(value))))
