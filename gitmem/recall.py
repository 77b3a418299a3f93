"""Ranking: from a question to ordered memories, with no model call.

Lexical for now: the query's content words, OR-ed, ranked by FTS5's bm25.
Everything that decides order goes through ``rank()`` so the vector channel,
fusion and time signals can join it in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .model import Hit
from .projection import Projection

# Function words that only dilute an OR query. Kept small on purpose: a word
# that can carry meaning in a code base ("test", "run", "use") stays.
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has
    have how i if in into is it its me my of on or our should so than that the
    their them then there these they this to was we were what when where which
    who why will with would you your""".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)

ACTIVE = ["active"]


@dataclass
class Query:
    text: str
    k: int = 10
    kinds: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    include_retired: bool = False


def terms(text: str) -> list[str]:
    """Content words of a query, lower-cased, in order, without repeats."""
    words = [w.lower() for w in _WORD.findall(text)]
    content = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(content))


def fts_match(words: list[str]) -> str:
    """An FTS5 MATCH expression: each word a quoted string, OR-ed."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def rank(projection: Projection, q: Query) -> list[Hit]:
    """The one ranking function every front end uses."""
    words = terms(q.text)
    if not words or q.k <= 0:
        return []
    statuses = [] if q.include_retired else ACTIVE
    lexical = projection.lexical(
        fts_match(words), kinds=q.kinds, tags=q.tags, statuses=statuses, limit=q.k
    )
    records = projection.records(mid for mid, _ in lexical)
    hits: list[Hit] = []
    for n, (mid, bm25) in enumerate(lexical, start=1):
        rec = records[mid]
        hits.append(Hit(**_fields(rec), rank=n, score=round(-bm25, 6)))
    return hits


def _fields(rec: object) -> dict[str, object]:
    return {f: getattr(rec, f) for f in rec.__struct_fields__}  # type: ignore[attr-defined]
