"""Each memory's row in the full-text index, and the rows not inserted yet.

Why this exists: FTS5 breaks bm25 ties by row, so a memory's row in
memories_fts (memories.fts) increases with its id, whatever order ops arrived
in, and the lexical channel's ties fall in id order without a join (see
lexical.py). A row is where the id's first FTS_BITS bits put it (id_rowid), or
just above the row of the id before it when that one is there already; the ids
after it that are then in the way move up one each (rare: at a million
memories, one id in 17 lands on a row taken). Rows are numbers an FTS5 doclist
stores as deltas, so the fewer the bits, the smaller the index: at 100k
memories 60 bits made its pages 18.4 MB, 32 bits 9.4, 24 bits 7.5 (and a row
number takes 4 bytes where it took 6; 22 bits would save 0.6 MB more, but
leave a few million memories crowding their rows).

Rows are inserted in batches, not one by one: FTS5 flushes its pending terms
whenever a rowid is not above the last one, and ours follow the ids, in no
order: inserted as they come, 100k rows take 6.5 s; sorted, in one go, 2.5 s.
Used by fold.py, inside the refresh's transaction.
"""

from __future__ import annotations

import sqlite3

FTS_BITS = 24

# (row in the index, text, key, tags, entities): what memories_text gives back (its
# concepts column is computed from them, by the same SQL function here)
Row = tuple[int, str, str | None, str, str]


def id_rowid(memory_id: str) -> int:
    """Where a memory's row in memories_fts goes when no other id is in the way."""
    return (int(memory_id[:16], 16) >> (64 - FTS_BITS)) + 1


class FtsRows:
    """One refresh's placement of full-text rows (``c``: its connection)."""

    def __init__(self, c: sqlite3.Connection) -> None:
        self._c = c
        # Full-text rows not yet inserted, by memories rowid. Flushed before anything
        # moves or deletes rows of the index, and at the end of a refresh.
        self._pending: dict[int, Row] = {}
        # A first replay places rows where the ids' bits put them and settles the
        # few that collide in one pass at its end (settle): looking up each new
        # id's neighbours would cost more than the rest of the replay. Its rows
        # go in from the table at flush, none of them before.
        self.bulk = False

    def add(self, rowid: int, row: Row) -> None:
        """The memories row ``rowid`` goes into the index as ``row`` (at the next
        flush). The index reads these columns back from the row (memories_text)
        when it deletes it: ``row`` must hold exactly what the row holds."""
        if not self.bulk:  # (a first replay's rows go in from the table: flush)
            self._pending[rowid] = row

    def drop_pending(self, rowid: int) -> bool:
        """Forget the row of ``rowid`` if it is not in the index yet (True: it was
        pending, or a first replay's, so there is nothing to delete from the index)."""
        return self.bulk or self._pending.pop(rowid, None) is not None

    def clear(self) -> None:
        self._pending.clear()
        self.bulk = False

    def flush(self) -> None:
        """Insert every pending row, in row order."""
        if self.bulk:
            self._settle()
            # A first replay's rows (every row there: it began on empty tables) are not
            # in the index yet: all of them in one statement, in row order, read from
            # the table itself (no copy of their text is held here, so a replay of any
            # size holds no more in memory than one of a few ops).
            self._c.execute("INSERT INTO memories_fts(rowid, text, key, tags, entities, "
                            "concepts) SELECT fts, text, key, tags, entities, concepts "
                            "FROM memories_text "
                            "ORDER BY fts")
        if self._pending:
            self._c.executemany(
                "INSERT INTO memories_fts(rowid, text, key, tags, entities, concepts) "
                "VALUES (?1, ?2, ?3, ?4, ?5, concepts(?2, ?3, ?4, ?5))",
                sorted(self._pending.values()))
            self._pending.clear()

    def _settle(self) -> None:
        """End a first replay's placement: in id order, each row at its id's bits or
        just above the row before it (memories_fts_row is made again afterwards)."""
        c = self._c
        self.bulk = False
        moved: list[tuple[int, int]] = []
        below = 0
        for mid, rowid, fts in sorted(c.execute("SELECT id, rowid, fts FROM memories")):
            row = max(id_rowid(mid), below + 1)
            if row != fts:
                moved.append((row, rowid))
            below = row
        c.executemany("UPDATE memories SET fts = ? WHERE rowid = ?", moved)

    def place(self, memory_id: str, key: bytes) -> int:
        """The row in memories_fts for a memory not replayed yet (``key``: its id's
        bytes), keeping the rows in the ids' order: the memories after it whose rows
        are in the way move up."""
        c = self._c
        if self.bulk:
            return id_rowid(memory_id)  # for now: see _settle
        below, above = c.execute(
            "SELECT (SELECT fts FROM memories WHERE digest < ?1 ORDER BY digest DESC LIMIT 1), "
            "(SELECT fts FROM memories WHERE digest > ?1 ORDER BY digest LIMIT 1)",
            (key,)).fetchone()
        row = max(id_rowid(memory_id), (below or 0) + 1)
        if above is None or above > row:
            return row  # nearly always: nothing in the way
        moves: list[tuple[int, int]] = []  # (memories rowid, its new row in the index)
        top = row
        after = c.execute("SELECT rowid, fts FROM memories WHERE digest > ? ORDER BY digest",
                          (key,))
        while (nxt := after.fetchone()) is not None and nxt[1] <= top:
            top += 1
            moves.append((nxt[0], top))
        after.close()
        if moves:
            self.flush()
            for rowid, new in reversed(moves):  # the farthest first: its new row is free
                # Out of the index by the old row and in by the new one (a forgotten
                # memory is in neither: memories_text leaves it out).
                c.execute("DELETE FROM memories_fts WHERE rowid = "
                          "(SELECT fts FROM memories WHERE rowid = ?)", (rowid,))
                c.execute("UPDATE memories SET fts = ? WHERE rowid = ?", (new, rowid))
                c.execute("INSERT INTO memories_fts(rowid, text, key, tags, entities, concepts) "
                          "SELECT fts, text, key, tags, entities, concepts FROM memories_text "
                          "WHERE fts = ?", (new,))
        return row
