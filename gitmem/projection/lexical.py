"""The lexical channel: FTS5's bm25 ranking of the memories holding a query's words.

Why this exists apart from the other queries: at 100k memories ranking is most
of a warm recall, and the rules that keep it fast (words no memory holds are
dropped, a broad query ranks the memories holding two of its words first) are
this channel's alone.
"""

from __future__ import annotations

import sqlite3

from .scope import Scope, filters


# A query whose words match this many rows in all is "broad": its lexical channel first
# ranks only the memories that hold two or more of its words (see lexical).
BROAD = 4000
# Words a broad query pairs up (the rarest): the pairs grow as the square of the words.
BROAD_WORDS = 4


def _phrase(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _narrow(c: sqlite3.Connection, words: list[str]) -> tuple[str, str | None]:
    """The query's OR expression over the words the index holds (a word no memory has
    changes no score), and for a broad query an expression matching the memories that
    hold at least two of its rarest words; None when the query is not broad."""
    counted = []
    for i, word in enumerate(words):
        n = c.execute("SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts "
                      "MATCH ? LIMIT ?)", (_phrase(word), BROAD)).fetchone()[0]
        if n:
            counted.append((n, i, word))
    present = [w for _, _, w in sorted(counted, key=lambda t: t[1])]
    every = " OR ".join(map(_phrase, present or words))
    if len(present) < 2 or sum(n for n, _, _ in counted) < BROAD:
        return every, None
    rarest = [w for _, _, w in sorted(counted)[:BROAD_WORDS]]
    pairs = " OR ".join(f"({_phrase(a)} AND {_phrase(b)})"
                        for i, a in enumerate(rarest) for b in rarest[i + 1:])
    return every, pairs


def lexical(
    c: sqlite3.Connection,
    words: list[str],
    *,
    scope: Scope,
    limit: int,
) -> list[tuple[str, float]]:
    """FTS5 bm25 candidates for any of ``words`` as (memory id, bm25); lower bm25 is
    better, ties in id order.

    Two steps, same answer as one join: FTS5 ranks its own rows first, by bm25
    and then rowid, which is the id's order (a memory's FTS row increases with its
    id, see fold.FTS_BITS); a join per matching row costs as much again as
    the ranking. Then only the best rows are looked up and filtered, in that
    order; if the filters leave fewer than ``limit``, the first step takes more rows.

    A broad query (its words in BROAD rows or more: at 100k memories a common word
    matches a quarter of them, and scoring them all is most of a warm recall) ranks
    first the memories holding two or more of its words, which bm25 puts above
    nearly every memory holding one; only if those are fewer than ``limit`` does it
    rank every match. Within that first step FTS5 counts a word once per pair it
    completes, so a memory holding three words ranks as if it held them twice: more
    of the query, higher (deterministic, and documented in docs/recall.md).
    """
    every, pairs = _narrow(c, words)
    if pairs is not None:
        hits = _ranked(c, pairs, scope, limit)
        if len(hits) >= limit:
            return hits
    return _ranked(c, every, scope, limit)


def _ranked(c: sqlite3.Connection, match: str, scope: Scope, limit: int) -> list[tuple[str, float]]:
    want = 4 * limit + 32
    while True:
        ranked = c.execute(
            "SELECT rowid, bm25(memories_fts, 1.0, 0.6, 0.4, 0.4) AS r FROM memories_fts "
            "WHERE memories_fts MATCH ? ORDER BY r, rowid LIMIT ?", (match, want)).fetchall()
        if not ranked:
            return []
        # INDEXED BY: look the rows up by their FTS row (a planner without statistics
        # once walked every active memory through an index on status instead).
        sql, args = filters("SELECT m.fts, m.id FROM memories m INDEXED BY memories_fts_row "
                            f"WHERE m.fts IN ({','.join('?' * len(ranked))})",
                            [r for r, _ in ranked], scope)
        ids = dict(c.execute(sql, args).fetchall())
        hits = [(ids[rowid], float(r)) for rowid, r in ranked if rowid in ids][:limit]
        if len(hits) >= limit or len(ranked) < want:
            return hits
        if want > 4096:
            break
        want *= 8
    # The filters reject nearly every match (a narrow scope): one join.
    sql, args = filters(
        "SELECT m.id, bm25(memories_fts, 1.0, 0.6, 0.4, 0.4) AS r "
        "FROM memories_fts JOIN memories m ON m.fts = memories_fts.rowid "
        "WHERE memories_fts MATCH ?", [match], scope)
    args.append(limit)
    return [(r[0], float(r[1])) for r in c.execute(sql + " ORDER BY r, m.fts LIMIT ?", args)]
