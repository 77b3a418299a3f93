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
  give unrelated texts sizeable cosines; only standing out means something).

A logistic function of them gives the score. Its coefficients were fitted by
``scripts/fit_relevance.py`` on the dev part of the coding-memory benchmark
(benchmarks/coding.py: a hit is positive when it is a listed answer) and are
checked on its hold-out and on LoCoMo; nothing here knows a word of either.
Read 0.5 as "probably relevant" (about even odds that this is the memory
asked for), and MIN_SCORE, the default cutoff, as "plausibly relevant".
"""

from __future__ import annotations

import math

import msgspec

# (intercept, coverage, z) per mode: single-channel modes have one feature.
COEFFICIENTS: dict[str, tuple[float, float, float]] = {
    "hybrid": (-6.301, 3.998, 1.309),
    "lexical": (-3.916, 4.621, 0.0),
    "vector": (-7.791, 0.0, 2.338),
}
RELEVANT = 0.5  # documented: "probably relevant"
MIN_SCORE = 0.05  # the default cutoff (git config gitmem.minScore); see docs/recall.md


class Evidence(msgspec.Struct, frozen=True):
    coverage: float
    z: float


def coverage(found: set[str], weights: dict[str, float]) -> float:
    """The idf-weighted share of the query's words in ``found``."""
    total = sum(max(w, 0.0) for w in weights.values())
    if total <= 0:
        return 0.0
    return sum(max(weights[w], 0.0) for w in found if w in weights) / total


def score(mode: str, ev: Evidence) -> float:
    """The calibrated score, rounded to 3 places (it is read by people)."""
    a, b, c = COEFFICIENTS.get(mode, COEFFICIENTS["hybrid"])
    x = a + b * ev.coverage + c * ev.z
    return round(1.0 / (1.0 + math.exp(-max(min(x, 40.0), -40.0))), 3)
