"""Ranking: from a question to ordered memories, with no model call.

Two channels, fused:
- lexical: the query's content words, OR-ed, ranked by FTS5's bm25 (names,
  literals, rare words);
- vector: cosine between the query's and each memory's static embedding
  (paraphrases: "how do I run the tests" finds "make spec runs the suite").
Each channel yields its best candidates; reciprocal rank fusion (RRF) merges
the lists by rank, not by incomparable raw scores; then cheap multiplicative
signals give the final score: salience, that is importance x decay over age
x reinforcement (salience.py). Memories whose salience has fallen below
a floor have faded: they leave default recall and come back with ``--all``.
Everything that decides order is in ``rank()``; ``explain`` records every
factor so ``git mem recall --explain`` can show why a result is where it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from . import ops, relevance, reorder, twins
from .relations import asked_of, relation_asks
from .salience import FUTURE_SKEW, Salience, salience
from .model import Hit, Record
from .projection import Projection, Scope

# Function words that only dilute an OR query. Kept small on purpose: a word
# that can carry meaning in a code base ("test", "run", "use") stays.
STOPWORDS = frozenset(
    """a an and are as at be been but by can could did do does for from had has
    have how i if in into is it its me my of on or our should so than that the
    their them then there these they this to was we were what when where which
    who why will with would you your""".split()
)
_WORD = re.compile(r"\w+", re.UNICODE)

# Lower than the usual 60 (tuned for TREC runs fusing many systems): with two channels a
# channel's top hit should count (1/11, as much as rank 12 in both; with 60, 1/61 was
# as much as rank 61 in both). Measured at 60, 20, 10, 5, 2 (docs/recall.md): 10 is in the middle of a flat
# gain on LoCoMo and the coding benchmark, level on the hold-out.
RRF_K = 10
CANDIDATES = 100  # per channel, before fusion
# A vector-only candidate must stand out: static embeddings give any two
# texts a sizeable cosine, so "relevant" means well above this query's mean
# over the corpus (z-score), or, in a corpus too small for statistics, above
# an absolute cosine. Lexical matches are never filtered.
VECTOR_MIN_Z = 1.0
VECTOR_MIN_COS = 0.6
SMALL_CORPUS = 50
# Conversations and work sessions: the answer often sits next to the memory
# that matched (the reply after a question). The best candidates lend a share
# of their score to their neighbours in the same session.
# (LoCoMo dev set: +1.1 R@10 at 0.1; larger shares push neighbours above
# direct hits and cost R@5 and MRR.)
CONTEXT_SHARE = 0.1
CONTEXT_SOURCES = 20
# A candidate that asks a question ("how did they handle the accident?") lends
# more to the next memory of its session, where the answer usually is. (LoCoMo
# dev set, categories 1-4: R@10 71.0 -> 73.4, R@5 63.2 -> 63.4, MRR 0.459 ->
# 0.475; 0.6 gains more R@10 but costs MRR, 1.0 costs R@5 too.)
REPLY_SHARE = 0.3
WEIGHTS = {"lexical": 1.0, "vector": 1.0, "graph": 0.5}  # RRF weight per channel
# The graph channel: links reached from the nodes a query names, within this
# many hops (docs/growth.md, Links).
GRAPH_HOPS = 2
GRAPH_SEEDS = 20  # the best candidates per channel that may seed the walk
MODES = ("hybrid", "lexical", "vector")

class Query(msgspec.Struct):
    text: str
    k: int = 10
    kinds: list[str] = msgspec.field(default_factory=list)
    tags: list[str] = msgspec.field(default_factory=list)
    include_retired: bool = False  # also retired, conflict-losing and faded memories
    mode: str = "hybrid"  # hybrid | lexical | vector
    explain: bool = False
    include_quarantined: bool = False
    as_of: int | None = None  # what the log believed then
    valid_at: int | None = None  # what was true in the world then
    salience: Salience | None = None  # None: importance only (no clock)
    authors: list[str] = msgspec.field(default_factory=list)  # any of them (name or email)
    about: list[str] = msgspec.field(default_factory=list)  # all of them
    paths: list[str] = msgspec.field(default_factory=list)  # all of them (see Scope)
    # Hits less relevant than this are left out (relevance.py). None: the default,
    # relevance.MIN_SCORE, from SMALL_CORPUS memories up (in a handful of memories
    # a z-score says little, and there is little to wade through).
    min_score: float | None = None

    def scope(self) -> Scope:
        return Scope(kinds=tuple(self.kinds), tags=tuple(self.tags),
                     retired=self.include_retired, quarantined=self.include_quarantined,
                     as_of=self.as_of, valid_at=self.valid_at,
                     now=self.salience.now if self.salience is not None else None,
                     authors=tuple(self.authors), about=tuple(self.about),
                     paths=tuple(self.paths))


# What an unconfirmed agent-written memory's score is multiplied by (Trust).
UNVOUCHED = 0.9
# With --all, what a memory that is not current truth (retired, or losing a keyed
# conflict) is multiplied by: the current value comes before the value it replaced
# unless that one answers clearly better (a key's old and new values differ by a
# word or a number, so their ranks are a coin toss: rank 1 against 2 in both
# channels is a factor 0.92). Default recall never sees such memories: its order is
# untouched.
RETIRED = 0.8

# --path boost: a memory tied to the path itself (or to something inside an
# asked folder) counts in full; each folder level above it costs PATH_STEP, down
# to PATH_FLOOR (a memory about the whole repository).
PATH_STEP = 0.85
PATH_FLOOR = 0.6


def closeness(memory_paths: list[str], asked: list[str]) -> float:
    """How close a memory's paths come to every asked path (1.0: the path itself)."""
    worst = 1.0
    for a in asked:
        a = a.rstrip("/") or "."
        best = PATH_FLOOR
        for v in memory_paths:
            v = v.rstrip("/") or "."
            if a == "." or v == a or v.startswith(a + "/"):
                best = 1.0
                break
            if v != "." and a.startswith(v + "/"):
                best = max(best, PATH_STEP ** (a[len(v) + 1:].count("/") + 1))
        worst = min(worst, max(best, PATH_FLOOR))
    return worst


def projection_closeness(paths: dict[str, list[str]], asked: list[str]) -> dict[str, float]:
    return {mid: closeness(ps, asked) for mid, ps in paths.items()}


def node_names(text: str) -> list[str]:
    """What a query may call a node: its words and runs of two or three words
    (joined by a space, '-' or '_'), lower-cased."""
    words = [w.lower() for w in _WORD.findall(text)][:64]
    out = [w for w in words if w not in STOPWORDS]
    for n in (2, 3):
        for i in range(len(words) - n + 1):
            run = words[i:i + n]
            out += [" ".join(run), "-".join(run), "_".join(run)]
    return list(dict.fromkeys(out))


def terms(text: str) -> list[str]:
    """Content words of a query, lower-cased, in order, without repeats."""
    words = [w.lower() for w in _WORD.findall(text)]
    content = [w for w in words if w not in STOPWORDS] or words
    return list(dict.fromkeys(content))


def fts_match(words: list[str]) -> str:
    """An FTS5 MATCH expression: each word a quoted string, OR-ed."""
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


UsageFn = Callable[[list[str]], dict[str, tuple[int, int]]]


def rank(
    projection: Projection,
    q: Query,
    embed_query: Callable[[str], bytes | None] | None = None,
    usage: UsageFn | None = None,
    word_rank: Callable[[str], int | None] | None = None,
) -> list[Hit]:
    """The one ranking function every front end uses.

    Faded memories are dropped after fusion; when they crowd the candidate
    lists (an old, busy topic), the lists are fetched deeper until k live
    results are found or the channels run dry. Hits below ``q.min_score``
    are left out; a deeper look is not taken for them (what ranks lower is
    rarely more relevant).
    """
    if q.k <= 0:
        return []
    qvec = embed_query(q.text) if q.mode in ("hybrid", "vector") and embed_query else None
    depth = max(CANDIDATES, q.k)
    while True:
        hits, exhausted, cut = _rank_at(projection, q, qvec, usage, depth, word_rank)
        if (len(hits) + cut >= q.k or exhausted or q.salience is None
                or q.include_retired):
            return hits
        depth *= 4


def _rank_at(
    projection: Projection,
    q: Query,
    qvec: bytes | None,
    usage: UsageFn | None,
    depth: int,
    word_rank: Callable[[str], int | None] | None = None,
) -> tuple[list[Hit], bool, int]:
    """One ranking with ``depth`` candidates per channel; True when no channel
    was cut short (a deeper look would find nothing more); how many of the
    best were left out as below ``q.min_score``."""
    scope = q.scope()
    lists: dict[str, list[tuple[str, float]]] = {}
    words = terms(q.text)
    fetched: list[int] = []  # candidates per channel before any relevance floor
    stats: tuple[float, float, int] | None = None
    cosines: dict[str, float] = {}
    if qvec:
        vec, stats = projection.vector(qvec, scope=scope, limit=depth)
        mean, std, n = stats
        cosines = dict(vec)
        fetched.append(len(vec))
        if n < SMALL_CORPUS or std <= 0:
            lists["vector"] = [x for x in vec if x[1] >= VECTOR_MIN_COS]
        else:
            lists["vector"] = [x for x in vec if (x[1] - mean) / std >= VECTOR_MIN_Z]
        # The floor is a z-score: a deeper scan only adds less similar rows, so a
        # list the floor cut is exhausted whatever its length.
        if len(lists["vector"]) < len(vec):
            fetched[-1] = 0
    if q.mode in ("hybrid", "lexical") and words:
        sees_all = stats is not None and stats[2] > 0 and projection.all_embedded()
        lists = {"lexical": [
            (mid, -bm25)
            # Hybrid: a broad query's common words are left to the vector channel,
            # when it sees every memory (vectors may wait after a read with a deadline;
            # a key's long history, whose words are common in the index, is no corpus
            # there: see Projection.vector).
            for mid, bm25 in projection.lexical(words, scope=scope, limit=depth,
                                                specific_only=sees_all)
        ], **lists}  # the lexical channel first, as it always was (explain's order)
        fetched.append(len(lists["lexical"]))
    hops: dict[str, int] = {}
    asks = relation_asks(q.text) if q.mode != "vector" else {}
    named = node_names(q.text)
    naming = set(named)
    if q.mode == "hybrid" and projection.any_edges():
        # Seeds: nodes the query names, and links its words or meaning found.
        found = [mid for ranked in lists.values() for mid, _ in ranked[:GRAPH_SEEDS]]
        reached = projection.graph_walk(scope=scope, names=named, edges=found,
                                        depth=GRAPH_HOPS)
        hops = {mid: n for mid, n, *_ in reached}
        # The walk votes for what it adds: the links beyond a seed, and those at a node
        # the query names. A seed's own vote would count its words a second time (RRF
        # takes its lists for independent evidence): "db engine" put the link
        # "db.engine depends on app.py" above the fact db.engine, which its words and
        # vector had tied.
        # It votes too for a link whose relation the query asks in other words, at a
        # node it names: "what does the db engine rely on" for "db.engine depends on
        # app.py" (neither channel knows that relying is depending).
        seeds = set(found)
        voted = [(mid, 1.0 / n) for mid, n, src, predicate, dst in reached
                 if n > 1 or mid not in seeds
                 or {ops.node_name(src).lower(), ops.node_name(dst).lower()} & naming
                 or asked_of(asks, naming, predicate, src, dst)]
        if voted:
            lists["graph"] = voted
    fused: dict[str, dict[str, dict[str, float]]] = {}
    for channel, ranked in lists.items():
        for n, (mid, raw) in enumerate(ranked, start=1):
            entry = fused.setdefault(mid, {"rank": {}, "raw": {}})
            entry["rank"][channel] = n
            entry["raw"][channel] = raw
    exhausted = all(n < depth for n in fetched)
    if not fused:
        return [], exhausted, 0
    base = {
        mid: sum(WEIGHTS.get(c, 1.0) / (RRF_K + r) for c, r in e["rank"].items())
        for mid, e in fused.items()
    }
    context: dict[str, float] = {}
    if CONTEXT_SHARE > 0 and q.mode == "hybrid":  # single-channel modes stay pure baselines
        sources = sorted(base, key=lambda m: (-base[m], m))[:CONTEXT_SOURCES]
        near = projection.neighbours(sources, scope=scope)
        asking = projection.questions(list(near))
        for src, (after, before) in near.items():
            # A question's answer is usually the next memory of its session.
            lent = [(after, REPLY_SHARE if src in asking else CONTEXT_SHARE),
                    (before, CONTEXT_SHARE)]
            for other, share in lent:
                if other is not None:
                    context[other] = context.get(other, 0.0) + share * base[src]
                    fused.setdefault(other, {"rank": {}, "raw": {}})
    # --valid-at a past time: what was true then ranks as if then were now, its age
    # measured to the time asked, counting the confirmations made by then (a fact set
    # 322 days ago, valid then, decayed to 0.54 under a note recalled yesterday).
    age_at = (q.valid_at if q.salience is not None and q.valid_at is not None
              and q.valid_at < q.salience.now else None)
    # Under --all: which candidates are current truth (at the point asked about, if any).
    current: dict[str, bool] = {}
    if q.include_retired:
        if q.as_of is None and q.valid_at is None:
            current = projection.standing(list(fused))
        else:
            live = set(projection.live_ids(list(fused), Scope(
                as_of=q.as_of, valid_at=q.valid_at, quarantined=True)))
            current = {mid: mid in live for mid in fused}
    # A key's current value, when its old values are candidates (candidates too now).
    olds = reorder.current_values(projection, q.scope(), current, base) if q.include_retired else {}
    for mid in olds:
        fused.setdefault(mid, {"rank": {}, "raw": {}})
        current[mid] = True
    inputs = projection.salience_inputs(
        fused, q.as_of if age_at is None else age_at,
        horizon=q.salience.now + FUTURE_SKEW if q.salience is not None else None)
    # Uses are recorded with their last time only: an as-of query leaves them out, and
    # one after the time --valid-at asks about says nothing of the uses before it.
    uses = (usage(list(fused)) if usage is not None and q.salience is not None
            and q.as_of is None else {})
    if age_at is not None:
        uses = {mid: u for mid, u in uses.items() if u[1] is not None and u[1] <= age_at}
    closer = (projection_closeness(projection.paths_of(list(fused)), q.paths) if q.paths
              else {})
    doubted = projection.unvouched(list(fused))
    scored = []
    signals: dict[str, dict[str, float]] = {}
    for mid, entry in fused.items():
        rrf = base.get(mid, 0.0) + context.get(mid, 0.0)
        kind, imp, at, confirms, last_confirm = inputs.get(mid, ("note", 0.5, 0, 0, None))
        if q.salience is None:
            factors = {"importance": 0.75 + 0.5 * imp}
            sal = factors["importance"]
        else:
            n_uses, last_use = uses.get(mid, (0, None))
            full = salience(q.salience, kind=kind, importance=imp, at=at, confirms=confirms,
                            last_confirm=last_confirm, last_use=last_use, age_at=age_at)
            factors = {f: full[f] for f in ("importance", "decay", "reinforcement")}
            sal = full["salience"]
            signals[mid] = {"age_days": round(full["age_days"], 3), "confirms": confirms,
                            "uses": n_uses}
            if full["future_dated"]:
                signals[mid]["future_dated"] = 1  # its recorded time was not believed
        faded = q.salience is not None and sal < q.salience.floor
        if faded and not q.include_retired:
            continue  # faded from default recall; never deleted, back with --all
        if q.paths:
            # --path filters, then boosts: a memory about the file itself ranks
            # above one about a folder above it, and that above the whole repo.
            factors["path"] = closer.get(mid, PATH_FLOOR)
        if mid in doubted:
            # Written by an agent (or poured in by a clone's first session) and
            # not yet confirmed by a person or a second author.
            factors["trust"] = UNVOUCHED
        if not current.get(mid, True):
            factors["retired"] = RETIRED
        final = (rrf * sal * factors.get("path", 1.0) * factors.get("trust", 1.0)
                 * factors.get("retired", 1.0))
        scored.append((-final, mid, rrf, factors, entry, sal, faded))
    matches = {w: fts_match([w]) for w in words} if q.mode != "vector" else {}
    # What these two rules moved -> the memory it was put beside, whose relevance then
    # bounds its own: the shown score agrees with the order (a link put after its key's
    # fact showed a higher score than the fact; a review).
    lifted = (reorder.before_its_old_values(projection, scored, olds, matches, cosines,
                                     stats[1] if stats is not None else 0.0,
                                     cut=len(cosines) >= depth) if olds else {})
    raised = reorder.before_other_links(projection, scored, inputs, asks, naming, window=3 * q.k)
    deferred = reorder.after_their_keys(projection, scored, inputs, matches, current,
                                 window=3 * q.k, asks=asks, nodes=naming)
    # Equal scores: current truth before retired or losing values, a link after the
    # key's fact it defers to (below), a link asked for before the others, then by id.
    scored.sort(key=lambda x: (x[0], not current.get(x[1], True), x[1] in deferred,
                               x[1] not in raised, x[1]))
    min_score = q.min_score
    if min_score is None:
        size = stats[2] if stats is not None else projection.size()
        min_score = relevance.MIN_SCORE if size >= SMALL_CORPUS else 0.0
    # Relevance for the best k; when the cutoff leaves some out, for the next k, up to
    # 3k in all (the evidence costs a few FTS5 lookups per hit).
    evidence: dict[str, relevance.Evidence] = {}
    kept: list[Any] = []
    looked = 0
    rows, frequencies = projection.term_frequencies(matches) if matches else (0, {})
    weights = relevance.idf(rows, frequencies)
    unseen = {w for w, df in frequencies.items() if not df}
    novel = (relevance.novelty(unseen, weights, word_rank)
             if unseen and word_rank is not None else 0.0)
    # Twins (one text added on two clones before either synced: twins.py) take one
    # place, the better ranked: two of a few hits spent on one answer said nothing more.
    records: dict[str, Record] = {}
    twins_left = 0
    rel: dict[str, float] = {}

    def relevant(mid: str) -> float:
        own = relevance.score(q.mode, evidence[mid])
        if mid in deferred:
            return min(own, relevance.score(q.mode, evidence[deferred[mid]]))
        if mid in lifted:
            return max(own, relevance.score(q.mode, evidence[lifted[mid]]))
        return own

    while len(kept) < q.k and looked < min(len(scored), 3 * q.k):
        batch = scored[looked : looked + q.k]
        looked += len(batch)
        ids = [x[1] for x in batch]
        beside = [m for mid in ids for m in (deferred.get(mid), lifted.get(mid))
                  if m is not None and m not in evidence]
        wanted = list(dict.fromkeys([*ids, *beside]))
        evidence.update(_evidence(projection, matches, weights, wanted, cosines, stats, hops,
                                  novel, [m for m in wanted if inputs.get(m, ("",))[0] == "edge"],
                                  asks, naming))
        rel.update((mid, relevant(mid)) for mid in ids)
        passing = [x for x in batch if rel[x[1]] >= min_score]
        records.update(projection.records(x[1] for x in passing))
        fresh = [x for x in passing if x[1] in records]  # (not one gone since it was ranked)
        had = len(kept)
        kept = twins.first_of_each(kept + fresh, lambda x: twins.twin_id(records[x[1]])
                                   if records[x[1]].status == "active" else "")
        dropped = len(fresh) - (len(kept) - had)
        twins_left += dropped
        if min_score <= 0 and not dropped:
            break
    cut = looked - len(kept) - twins_left if len(kept) < q.k else 0
    chosen = kept[: q.k]
    hits: list[Hit] = []
    for n, (neg, mid, rrf, factors, entry, sal, faded) in enumerate(chosen, start=1):
        explain = None
        if q.explain:
            explain = {
                "ranks": {c: int(r) for c, r in entry["rank"].items()},
                "raw": {c: round(v, 6) for c, v in entry["raw"].items()},
                "context": round(context.get(mid, 0.0), 6),
                "rrf": round(rrf, 6),
                "factors": {k: round(v, 6) for k, v in factors.items()},
                "salience": round(sal, 6),
                "signals": signals.get(mid, {}),
                "final": round(-neg, 6),
                "relevance": {"words": len(weights), "coverage": round(evidence[mid].coverage, 3),
                              "z": round(evidence[mid].z, 3),
                              "novel": round(evidence[mid].novel, 3), "score": rel[mid]},
            }
            other = deferred.get(mid) or lifted.get(mid)
            if other and rel[mid] != relevance.score(q.mode, evidence[mid]):
                # Its own evidence gave another score: the memory it was put beside bounds it.
                explain["relevance"]["bounded_by"] = other
        hits.append(Hit(**_fields(records[mid]), rank=n, score=rel[mid], rank_score=round(-neg, 6),
                        salience=round(sal, 6), faded=faded, explain=explain))
    if q.as_of is not None or q.valid_at is not None:
        # Mark each hit as it stood at the point asked about, not as it stands now (a
        # value superseded since was labelled "superseded" --as-of a time it was current).
        live = set(projection.live_ids([h.id for h in hits], Scope(
            as_of=q.as_of, valid_at=q.valid_at, quarantined=True)))
        then: dict[str, list[str]] = {}  # a key's values at that point, winner first
        for h in hits:
            loses_to = None
            if h.id not in live:
                if h.key is None or not q.include_retired:
                    continue
                # A value losing a conflict then, though superseded since (a review: it
                # was labelled "superseded", retired after the time asked about).
                if h.key not in then:
                    then[h.key] = [r.id for r in projection.keyed(Scope(
                        as_of=q.as_of, valid_at=q.valid_at, shadow=False), h.key)]
                if h.id not in then[h.key][1:]:
                    continue
                loses_to = then[h.key][0]
            h.status, h.retired_at, h.retired_by, h.retired_reason = "active", None, None, None
            h.conflict_with = loses_to
    return hits, exhausted, cut


def _evidence(projection: Projection, matches: dict[str, str], weights: dict[str, float],
              ids: list[str], cosines: dict[str, float],
              stats: tuple[float, float, int] | None,
              hops: dict[str, int] | None = None,
              novel: float = 0.0, links: list[str] | None = None,
              asks: dict[str, dict[str, str]] | None = None,
              naming: set[str] | None = None) -> dict[str, relevance.Evidence]:
    """Each hit's evidence of relevance (see gitmem.relevance); ``matches``: the
    query's words and their FTS5 expressions (none in vector mode). A link
    reached through the graph (``hops``) is judged with the words of the links
    that lead to it: the chain answers the question, not its last edge alone.
    A link (of ``links``) holds the words that ask for its relation (asked_of)."""
    hops = hops or {}
    first = [mid for mid, n in hops.items() if n == 1]
    wanted = list(dict.fromkeys([*ids, *first])) if any(m in hops for m in ids) else ids
    found = projection.term_presence(wanted, matches) if matches and wanted else {}
    chain: set[str] = set().union(*(found.get(m, set()) for m in first)) if first else set()
    for mid in ids:
        if hops.get(mid, 0) > 1:
            found[mid] = found.get(mid, set()) | chain
    if asks and matches and links:
        for mid, rec in projection.records(links).items():
            if rec.link is not None and (words := asked_of(
                    asks, naming or set(), rec.link.predicate, rec.link.src, rec.link.dst)):
                found[mid] = found.get(mid, set()) | words
    z: dict[str, float] = {}
    if stats is not None and stats[1] > 0:
        mean, std, rows = stats
        luck = relevance.chance(rows)  # what the best unrelated memory reaches by chance
        z = {mid: (cos - mean) / std - luck for mid, cos in cosines.items()}
    # A hit the vector channel did not list stands at most as high as its last.
    floor = min(z.values()) if z else 0.0
    return {mid: relevance.Evidence(coverage=relevance.coverage(found.get(mid, set()), weights),
                                    z=z.get(mid, floor), novel=novel) for mid in ids}


def _fields(rec: Record) -> dict[str, Any]:
    return {f: getattr(rec, f) for f in rec.__struct_fields__}
