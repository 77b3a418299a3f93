"""The lexical channel: FTS5's bm25 ranking of the memories holding a query's words.

Why this exists apart from the other queries: at 100k memories ranking is most
of a warm recall, and the rules that keep it fast (words no memory holds are
dropped; a broad query ranks only its specific matches in hybrid recall, and
the memories holding two of its words first alone) are this channel's.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

from .queries import Kept
from .rows import spell
from .signals import doc_counts
from .scope import Scope, filters


# A query whose words match this many rows in all is "broad": scoring every match is
# most of a warm recall at 100k memories (a common word holds a quarter of them), so
# its lexical channel ranks fewer (see lexical).
BROAD = 1000
# In a broad query, a word this many rows hold is common; a row holding no word of
# the query but common ones is not a specific match.
COMMON = 250  # at most BROAD: words are counted up to BROAD rows
# Words a broad query pairs up (the rarest): the pairs grow as the square of the words.
BROAD_WORDS = 4
# bm25's column weights: text, key, tags, entities, and the words the thesaurus adds
# (gitmem/concepts.py). Chosen on the coding benchmark's dev part among 0.15, 0.3, 0.5
# and 1.0 (docs/recall.md, "Concept expansion").
CONCEPTS_WEIGHT = 1.0
BM25 = f"bm25(memories_fts, 1.0, 0.6, 0.4, 0.4, {CONCEPTS_WEIGHT})"


def _phrase(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


class Plan(NamedTuple):
    every: str  # the OR of the words the index holds
    broad: bool
    specific: str  # the OR of the query's uncommon words ("": every word is common)
    pairs: str  # rows holding two of its rarest words ("": fewer than two words)


def _plan(c: sqlite3.Connection, words: list[str], kept: Kept | None = None) -> Plan:
    """What to rank for ``words`` (a word no memory has changes no score, and is left out)."""
    counted = [(n, i, word) for i, (word, n) in enumerate(
        zip(words, doc_counts(c, map(_phrase, words), BROAD, kept))) if n]
    present = [w for _, _, w in sorted(counted, key=lambda t: t[1])]
    every = " OR ".join(map(_phrase, present or words))
    broad = sum(n for n, _, _ in counted) >= BROAD
    specific = " OR ".join(_phrase(w) for n, _, w in sorted(counted, key=lambda t: t[1])
                           if n < COMMON)
    rarest = [w for _, _, w in sorted(counted)[:BROAD_WORDS]]
    pairs = " OR ".join(f"({_phrase(a)} AND {_phrase(b)})"
                        for i, a in enumerate(rarest) for b in rarest[i + 1:])
    return Plan(every, broad, specific, pairs)


def lexical(
    c: sqlite3.Connection,
    words: list[str],
    *,
    scope: Scope,
    limit: int,
    specific_only: bool = False,
    kept: Kept | None = None,
) -> list[tuple[str, float]]:
    """FTS5 bm25 candidates for any of ``words`` as (memory id, bm25); lower bm25 is
    better, ties in id order.

    Two steps, same answer as one join: FTS5 ranks its own rows first, by bm25
    and then rowid, which is the id's order (a memory's FTS row increases with its
    id, see ftsrows.FTS_BITS); a join per matching row costs as much again as
    the ranking. Then only the best rows are looked up and filtered, in that
    order; if the filters leave fewer than ``limit``, the first step takes more rows.

    A broad query (its words in BROAD rows or more in all) ranks fewer rows:

    - with ``specific_only`` (hybrid recall, where the vector channel also
      ranks every memory), only the rows holding an uncommon word of it (one
      fewer than COMMON rows hold), possibly none: among thousands of rows
      holding only "use" or "test", bm25 prefers the shortest, which says
      nothing, and scoring them was most of a warm recall;
    - alone (lexical mode), first the rows holding two of its rarest words,
      which bm25 puts above nearly every row holding one (FTS5 counts a word
      once per pair it completes, so a row holding three ranks as if it held
      them twice: more of the query, higher); if those are fewer than
      ``limit``, every match.

    ``kept``: the words' counts kept while the tables are unchanged (signals.doc_counts).
    """
    plan = _plan(c, words, kept)
    if not plan.broad:
        return _ranked(c, plan.every, scope, limit)
    if specific_only:
        return _ranked(c, plan.specific, scope, limit) if plan.specific else []
    if plan.pairs:
        hits = _ranked(c, plan.pairs, scope, limit)
        if len(hits) >= limit:
            return hits
    return _ranked(c, plan.every, scope, limit)


def _ranked(c: sqlite3.Connection, match: str, scope: Scope, limit: int) -> list[tuple[str, float]]:
    want = 4 * limit + 32
    while True:
        ranked = c.execute(
            f"SELECT rowid, {BM25} AS r FROM memories_fts "
            "WHERE memories_fts MATCH ? ORDER BY r, rowid LIMIT ?", (match, want)).fetchall()
        if not ranked:
            return []
        # INDEXED BY: look the rows up by their FTS row (a planner without statistics
        # once walked every active memory through an index on status instead). The
        # ids' bytes: only those kept are spelled in hex (SQL would spell every one).
        sql, args = filters("SELECT m.fts, m.digest FROM memories m INDEXED BY memories_fts_row "
                            f"WHERE m.fts IN ({','.join('?' * len(ranked))})",
                            [r for r, _ in ranked], scope)
        keys: dict[int, bytes] = dict(c.execute(sql, args).fetchall())
        hits: list[tuple[str, float]] = []
        for rowid, r in ranked:
            if rowid in keys:
                hits.append((spell(keys[rowid]), float(r)))
                if len(hits) == limit:
                    break
        if len(hits) >= limit or len(ranked) < want:
            return hits
        if want > 4096:
            break
        want *= 8
    # The filters reject nearly every match (a narrow scope): one join.
    sql, args = filters(
        f"SELECT m.id, {BM25} AS r "
        "FROM memories_fts JOIN memories m ON m.fts = memories_fts.rowid "
        "WHERE memories_fts MATCH ?", [match], scope)
    args.append(limit)
    return [(r[0], float(r[1])) for r in c.execute(sql + " ORDER BY r, m.fts LIMIT ?", args)]
