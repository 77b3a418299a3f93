"""The write gate's verdicts on replayed ops: asked once per op and gate version.

Why this exists: scanning every op again is the slowest part of a replay, and a
verdict is a pure function of the op's bytes and the gate's version, so it is
cached in the file (an add's on its memory's row, any other op's in
gate_verdicts) and carried in memory across the rows a replay deletes and
writes again. ``fold`` asks; this module answers and remembers.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .. import ops


# What the write gate is asked about on replay: a whole op (its author's name
# and every free field it carries); a bare memory body is still understood.
Screened = ops.Op | ops.MemoryBody
# An op id -> (the gate's version, its reason to refuse the op or None).
Carried = dict[str, tuple[str, "str | None"]]


class Verdicts:
    """The write gate's verdicts on replayed ops, each op asked about once.

    A verdict is a pure function of the op's bytes and the gate's version, so it
    is cached: an add's on its memory's row (``memories.gate`` names the version,
    ``memories.quarantine`` holds the reason), any other op's in gate_verdicts.
    Rows a replay deletes to replay them again (a rewritten partition, a full
    replay) leave their verdicts in ``carried`` (shared with the caller, which
    also fills it from the file a rebuild replaces): scanning every memory again
    is the slowest part of a replay. ``check`` None: no gate, every op passes.
    """

    def __init__(self, c: sqlite3.Connection, check: Callable[[Screened], str | None] | None,
                 version: Callable[[], str], carried: Carried) -> None:
        self._c = c
        self._check = check
        self._version = version
        self.carried = carried
        self._named: tuple[str, int] | None = None

    def version(self) -> tuple[str, int] | None:
        """The gate's version and its number in gate_versions (None: no gate)."""
        if self._check is None:
            return None
        if self._named is None:
            name = self._version()
            self._c.execute("INSERT OR IGNORE INTO gate_versions(version) VALUES (?)", (name,))
            number = self._c.execute("SELECT id FROM gate_versions WHERE version = ?",
                                     (name,)).fetchone()[0]
            self._named = (name, int(number))
        return self._named

    def __call__(self, op_id: str, op: Screened) -> str | None:
        """Why the gate would refuse this op (None: it passes). An add's verdict is
        the caller's to store, with ``version()``, on the row it inserts."""
        named = self.version()
        if named is None or self._check is None:
            return None
        name, number = named
        kept = self.carried.get(op_id)
        if kept is not None and kept[0] != name:
            kept = None  # judged by another version of the gate
        if isinstance(op, ops.AddOp):
            return kept[1] if kept is not None else self._check(op)
        key = bytes.fromhex(op_id)
        row = self._c.execute("SELECT reason FROM gate_verdicts WHERE op = ? AND version = ?",
                              (key, number)).fetchone()
        if row is not None:
            return row[0]  # type: ignore[no-any-return]
        reason = kept[1] if kept is not None else self._check(op)
        self._c.execute("INSERT OR REPLACE INTO gate_verdicts(op, version, reason) "
                        "VALUES (?, ?, ?)", (key, number, reason))
        return reason

    def carry(self, where: str, args: tuple[object, ...]) -> None:
        """Keep the verdicts of the memories ``where`` (on alias m) selects: their
        rows are about to be deleted and replayed again."""
        self.carried.update(
            (mid, (version, reason)) for mid, version, reason in self._c.execute(
                "SELECT m.id, v.version, m.quarantine FROM memories m "
                f"JOIN gate_versions v ON v.id = m.gate WHERE {where}", args))
