"""The orders recall applies after fusion, each for a question fusion cannot tell apart.

- a link that names a key comes after the key's current fact, unless it holds more of
  the question (``after_their_keys``);
- a link whose relation the question asks for comes before the other links at the node
  it names (``before_other_links``);
- under ``--all``, a key's current value is looked up by key and comes before its old
  values when it holds their evidence (``current_values``, ``before_its_old_values``).
Each changes the scored list in place, records its factor for ``--explain`` and says
which memory it was put after or before, so the shown score agrees with the order.
"""

from __future__ import annotations

import math
from typing import Any

import msgspec

from . import ops
from .projection import Projection, Scope
from .relations import asked_of, loose

# Under --all, a key's current value is lifted to the rank of an old value found by meaning
# alone only if its own cosine is within NEAR_Z standard deviations of that one's.
NEAR_Z = 1.0

# Under --all, the keys whose current value is looked up when their old values are
# candidates (each a query; a broad question may touch many keys' histories).
KEYS_LOOKED_UP = 20


def after_their_keys(projection: Projection, scored: list[Any],
                      inputs: dict[str, tuple[str, float, int, int, int | None]],
                      matches: dict[str, str], current: dict[str, bool], *,
                      window: int, asks: dict[str, dict[str, str]] | None = None,
                      nodes: set[str] | None = None) -> dict[str, str]:
    """Links that name a key whose current fact is a candidate too, and hold none
    of the query's words that fact does not hold, ranked at most as high as the
    fact (factor ``names_key``, and after it on a tie); ``scored`` is changed in
    place; returned: each link moved -> the fact it was put after.

    A link is context about the things it names: asking about a key ("which database
    engine do we use") wants the key's value (db.engine: postgres), not "db.engine
    depends on app.py", whose words matched only because it names the key. A link
    that holds more of the question (the predicate: "what does db.engine depend on",
    the other end: "what depends on app.py") is about the relation and keeps its
    place; a word that asks for the link's predicate in other words (``asks``:
    "what does the db engine rely on") counts as held by the link. Only links within
    ``window`` of the top are looked at (one further down can only move further down). Not in --mode vector: without the query's
    words, a question about the relation cannot be told apart."""
    if not matches or not any(inputs.get(x[1], ("note",))[0] == "edge" for x in scored):
        return {}
    top = sorted(scored, key=lambda x: (x[0], x[1]))[:window]
    links = [x[1] for x in top if inputs.get(x[1], ("note",))[0] == "edge"]
    facts = [x[1] for x in scored if inputs.get(x[1], ("note",))[0] == "fact"
             and current.get(x[1], True) and not x[6]]
    if not links or not facts:
        return {}
    recs = projection.records([*links, *facts])
    by_key: dict[str, list[str]] = {}
    for mid in facts:
        rec = recs.get(mid)
        if rec is not None and rec.key:
            by_key.setdefault(rec.key.lower(), []).append(mid)
    naming: dict[str, list[str]] = {}
    relation: dict[str, set[str]] = {}
    for mid in links:
        link = recs[mid].link if mid in recs else None
        if link is not None:
            ends = {ops.node_name(link.src).lower(), ops.node_name(link.dst).lower()}
            if named := [f for end in sorted(ends) for f in by_key.get(end, [])]:
                naming[mid] = named
                relation[mid] = asked_of(asks or {}, nodes or set(), link.predicate,
                                         link.src, link.dst)
    if not naming:
        return {}
    ids = list(dict.fromkeys([*naming, *(f for fs in naming.values() for f in fs)]))
    held = projection.term_presence(ids, matches)
    for mid, words in relation.items():
        held[mid] = held.get(mid, set()) | words
    final = {x[1]: -x[0] for x in scored}
    caps: dict[str, float] = {}
    after: dict[str, str] = {}
    for mid, named in naming.items():
        for f in named:
            if (held.get(mid, set()) <= held.get(f, set()) and final[f] <= final[mid]
                    and final[f] < caps.get(mid, math.inf)):
                caps[mid], after[mid] = final[f], f
    for i, x in enumerate(scored):
        if x[1] in caps:
            neg, mid, rrf, factors, entry, sal, faded = x
            factors["names_key"] = caps[mid] / -neg if neg else 1.0
            scored[i] = (-caps[mid], mid, rrf, factors, entry, sal, faded)
    return after


def before_other_links(projection: Projection, scored: list[Any],
                        inputs: dict[str, tuple[str, float, int, int, int | None]],
                        asks: dict[str, dict[str, str]], naming: set[str], *,
                        window: int) -> set[str]:
    """Links whose relation the query asks for (asked_of) rank at least as high as the
    other links at the nodes they share with the question (factor ``asked``; before them
    on a tie); ``scored`` is changed in place; returned: the links moved.

    "billing belongs to" asks for "billing part_of payments", not "alice owns billing";
    both are at the node it names, so the graph walk votes for both, and their words and
    vectors come out as a coin toss: the asked-for link, whose relation word counts in its
    relevance (recall._evidence), was shown second at 0.86 under the other's 0.33 (a review).
    Only links within ``window`` of the top are looked at."""
    if not asks:
        return set()
    top = sorted(scored, key=lambda x: (x[0], x[1]))[:window]
    links = [x[1] for x in top if inputs.get(x[1], ("note",))[0] == "edge"]
    if len(links) < 2:
        return set()
    asked: dict[str, set[str]] = {}
    others: dict[str, set[str]] = {}
    for mid, rec in projection.records(links).items():
        if rec.link is None:
            continue
        ends = {loose(rec.link.src), loose(rec.link.dst)} & naming
        if asked_of(asks, naming, rec.link.predicate, rec.link.src, rec.link.dst):
            asked[mid] = ends
        elif ends:
            others[mid] = ends
    if not asked or not others:
        return set()
    final = {x[1]: -x[0] for x in scored}
    raised: set[str] = set()
    for i, x in enumerate(scored):
        neg, mid, rrf, factors, entry, sal, faded = x
        if mid not in asked:
            continue
        best = max((final[o] for o, ends in others.items() if ends & asked[mid]), default=0.0)
        if best >= -neg:
            if neg and best > -neg:
                factors["asked"] = best / -neg
            scored[i] = (-best, mid, rrf, factors, entry, sal, faded)
            raised.add(mid)
    return raised


def current_values(projection: Projection, scope: Scope, current: dict[str, bool],
                   base: dict[str, float]) -> dict[str, list[str]]:
    """Under --all: the current value (at the point asked about) of each key whose old
    values are among the candidates -> those old values.

    A key set 400 times has 400 near-identical values; their ranks in either channel
    are swayed by the one number that differs, and the current value stood 182nd
    (lexical 214th): beyond the candidates, where no factor could bring it back (a
    review). It is looked up by key instead, for the KEYS_LOOKED_UP keys whose old
    values fused best (``base``)."""
    old = [mid for mid, now in current.items() if not now]
    if not old:
        return {}
    keys: dict[str, list[str]] = {}
    for mid, rec in projection.records(old).items():
        if rec.key:
            keys.setdefault(rec.key, []).append(mid)
    scope = msgspec.structs.replace(scope, retired=False)
    out: dict[str, list[str]] = {}
    best = {key: max(base.get(m, 0.0) for m in ms) for key, ms in keys.items()}
    for key in sorted(keys, key=lambda k: (-best[k], k))[:KEYS_LOOKED_UP]:
        for rec in projection.keyed(scope, key):
            out.setdefault(rec.id, []).extend(keys[key])
    return out


def before_its_old_values(projection: Projection, scored: list[Any],
                           olds: dict[str, list[str]], matches: dict[str, str],
                           cosines: dict[str, float], spread: float, *,
                           cut: bool) -> dict[str, str]:
    """A key's current value ranks at least as high as its best old value of those it
    holds the evidence of (factor ``current_value``; before it on a tie: the sort puts
    current truth first). ``scored`` is changed in place; returned: each current value
    moved -> the old value it was put before.

    The evidence: the old value's query words, every one of them (an old value that
    holds more of the question, "make beta17", keeps its place); an old value that holds
    none (found by meaning: --mode vector, or hybrid) lifts the current value only if its
    vector is as near the query, within NEAR_Z standard deviations (``spread``) of the
    old value's cosine. Holding no word the old value lacks is no evidence: with no query
    words it held for every value, and "ask bob" took the relevance (1.00) of the old
    "deploy with make release-legacy on the old jenkins box" for "make release legacy
    jenkins" (a review). A current value the vector scan did not list stands at most as
    near as its last (when it was ``cut`` short; else it has no vector)."""
    floor = min(cosines.values()) if cut and cosines else None

    def near(mid: str, old: str) -> bool:
        mine = cosines.get(mid, floor)
        return (old in cosines and mine is not None and spread > 0
                and (cosines[old] - mine) / spread <= NEAR_Z)

    final = {x[1]: -x[0] for x in scored}
    ids = list(dict.fromkeys([*olds, *(o for os_ in olds.values() for o in os_)]))
    held = projection.term_presence([m for m in ids if m in final], matches) if matches else {}
    before: dict[str, str] = {}
    for i, x in enumerate(scored):
        neg, mid, rrf, factors, entry, sal, faded = x
        if mid not in olds:
            continue
        mine = held.get(mid, set())
        best, old = max(((final[o], o) for o in olds[mid] if o in final and (
            held[o] <= mine if held.get(o) else near(mid, o))), default=(0.0, ""))
        if best > -neg:
            if neg:
                factors["current_value"] = best / -neg
            scored[i] = (-best, mid, rrf, factors, entry, sal, faded)
            before[mid] = old
    return before
