"""How likely a recall hit is to answer the question: a score from 0 to 1.

Why this exists: recall orders memories by reciprocal rank fusion, which says
which memory beats which, never whether any of them answers: the best match
for a question nothing answers still comes first, with a score like 0.016
that means nothing to a person. Relevance is computed per hit from two pieces
of evidence a person can check (``--explain`` prints both):

- coverage: the share of the query's content words the memory holds (its
  text, key, tags or entities, stemmed as FTS5 stems them), each word weighted
  by its inverse document frequency, so "kafka" counts for more than "use";
- z: how far the memory's embedding cosine stands above the mean cosine of
  this query against every memory, in standard deviations (static embeddings
  give unrelated texts sizeable cosines; only standing out means something),
  less what chance adds in a bigger store than the one the coefficients were
  fitted on (see ``chance``);
- novel (of the query, the same for every hit): the idf-weighted share of its
  words that no memory holds and that are rare in English (past RARE_RANK in
  the embedder's frequency-ordered vocabulary, or not a word of it): "what is
  the Kafka topic" in a store that never mentions Kafka asks about something it
  does not hold, where "who do I page when something is down" only paraphrases.

A logistic function of them gives the score. The coverage and z coefficients
were fitted by ``scripts/fit_relevance.py`` on the dev part of the
coding-memory benchmark (benchmarks/coding.py: a hit is positive when it is a
listed answer) and are checked on its hold-out and on LoCoMo; nothing here
knows a word of either. The novel coefficient cannot be fitted that way (per
hit, log loss cannot see that a whole query has no answer): it is the largest
penalty whose cost to "cut hit@3" on that dev part stays within 2 points
(hybrid: 72.8 to 72.0, while unanswerable queries left quiet went from 43.8% to
59.4%; lexical: 60.8 to 59.2, quiet 21.9% to 50.0%).
Read 0.5 as "probably relevant" (about even odds that this is the memory
asked for), and MIN_SCORE, the default cutoff, as "plausibly relevant".
"""

from __future__ import annotations

import math
from collections.abc import Callable

import msgspec

# (intercept, coverage, z, novel) per mode: vector mode has no words to judge.
COEFFICIENTS: dict[str, tuple[float, float, float, float]] = {
    "hybrid": (-6.301, 3.998, 1.309, -1.0),
    "lexical": (-3.916, 4.621, 0.0, -0.75),
    "vector": (-7.791, 0.0, 2.338, 0.0),
}
# Vocabulary ids past this are rare words: "week" is 1,736, "configuration" 8,566,
# "kafka" and "terraform" are not whole words of it at all.
RARE_RANK = 8000
# The memories of the store the coefficients were fitted on (the coding benchmark's).
FIT_ROWS = 156
RELEVANT = 0.5  # documented: "probably relevant"
MIN_SCORE = 0.05  # the default cutoff (git config gitmem.minScore); see docs/recall.md


class Evidence(msgspec.Struct, frozen=True):
    coverage: float
    z: float
    novel: float = 0.0


def idf(rows: int, frequencies: dict[str, int]) -> dict[str, float]:
    """word -> inverse document frequency, log((N + 1) / (df + 0.5)), over ``rows``
    memories and each word's document frequency (projection.term_frequencies)."""
    return {w: math.log((rows + 1) / (df + 0.5)) for w, df in frequencies.items()}


def chance(rows: int) -> float:
    """How many more standard deviations the best of ``rows`` unrelated cosines
    (``rows``: the stored vectors, a long memory's pieces included) reaches than
    the best of FIT_ROWS: sqrt(2 ln n), the usual approximation of the
    largest of n normal draws, grows with the store (3.2 at 156 memories, 4.3 at
    10k, 4.8 at 100k). A z-score is judged against that, or the best unrelated
    memory of a big store would look relevant: among 100k synthetic notes every
    unanswerable coding query kept hits above the cutoff."""
    if rows <= FIT_ROWS:
        return 0.0
    return math.sqrt(2 * math.log(rows)) - math.sqrt(2 * math.log(FIT_ROWS))


def coverage(found: set[str], weights: dict[str, float]) -> float:
    """The idf-weighted share of the query's words in ``found``."""
    total = sum(max(w, 0.0) for w in weights.values())
    if total <= 0:
        return 0.0
    return sum(max(weights[w], 0.0) for w in found if w in weights) / total


def novelty(unseen: set[str], weights: dict[str, float],
            rank: Callable[[str], int | None]) -> float:
    """The idf-weighted share of the query's words (``weights``) that no memory
    holds (``unseen``) and that ``rank`` (a word's frequency rank) calls rare."""
    rare = {w for w in unseen if (r := rank(w)) is None or r > RARE_RANK}
    return coverage(rare, weights) if rare else 0.0


def score(mode: str, ev: Evidence) -> float:
    """The calibrated score, rounded to 3 places (it is read by people)."""
    a, b, c, d = COEFFICIENTS.get(mode, COEFFICIENTS["hybrid"])
    # A vector less like the query than most (z below 0) is no evidence against: a
    # terse memory embeds poorly ("oncall.primary = carol@example.com" stood 2.8
    # deviations below for "who is on call", and its words could not lift it over the
    # cutoff). No figure of the three coding suites moves (no answer there is below 0).
    x = a + b * ev.coverage + c * max(ev.z, 0.0) + d * ev.novel
    return round(1.0 / (1.0 + math.exp(-max(min(x, 40.0), -40.0))), 3)
