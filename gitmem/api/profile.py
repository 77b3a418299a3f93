"""The context profile: what an agent should read first, within a token budget.

Why this exists: an agent starting a session cannot ask about what it does not
know it should ask. ``git mem context`` hands it the standing knowledge:
persona, current keyed facts, procedures, the most salient notes and recent
changes. This module picks each section's candidates from one pool, best first
by salience (``salience.by_salience``); ``merge`` puts the person's own pool
beside the project's; ``gitmem.context`` renders them within the budget.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import msgspec
import msgspec.structs

from .. import context as ctx
from .. import twins
from ..errors import InvalidInput
from ..model import Context, ContextItem, OpInfo, Record
from . import anchoring, gating, settings
from .facts import key_values
from .personal import REPO_KEY
from .pool import Pool
from .settings import DAY

if TYPE_CHECKING:
    from ..projection import Projection, Scope


# Past one author who holds more than this share of a section's candidates, the
# candidates are looked for among the other authors too (see candidates); the
# cap on what is shown is gitmem.context's (AUTHOR_FLOOR).
AUTHOR_SHARE = 0.5
CANDIDATES = 200  # per section, before ranking by salience


def candidates(p: Projection, scope: Scope, keyed: bool | None) -> list[Record]:
    """A section's candidates: the most important memories, looking past any one
    author who would otherwise fill the whole candidate list (a flood of ops
    from one teammate must not crowd everyone else out of the profile)."""
    rows = p.top(scope, keyed=keyed, limit=CANDIDATES)
    crowd: list[str] = []
    while len(rows) >= CANDIDATES and len(crowd) < 5:
        counts = Counter(r.author_email for r in rows if r.author_email not in crowd)
        top_author, n = counts.most_common(1)[0] if counts else ("", 0)
        if n <= CANDIDATES * AUTHOR_SHARE:
            break
        crowd.append(top_author)
        more = p.top(msgspec.structs.replace(scope, not_by=tuple(crowd)), keyed=keyed,
                     limit=CANDIDATES)
        seen = {r.id for r in rows}
        rows += [r for r in more if r.id not in seen]
        if len(more) < CANDIDATES:
            break
    return rows


def others_news(p: Projection, recent: list[OpInfo], scope: Scope) -> list[OpInfo]:
    """When one author wrote most of the latest ops (a flood), the others' own
    recent adds within ``scope``, newest first, as ops: candidates for the
    recent section that the flood would have pushed out of the log's tail."""
    counts = Counter(o.author_email for o in recent)
    if not counts or counts.most_common(1)[0][1] * 2 <= len(recent):
        return []
    crowd = counts.most_common(1)[0][0]
    seen = {o.id for o in recent}
    rows = p.top(msgspec.structs.replace(scope, not_by=(crowd,)), limit=CANDIDATES)
    rows.sort(key=lambda r: (-settings.ts(r.recorded_at), -r.clock, r.id))
    return [OpInfo(id=r.id, type="add", author=r.author, author_email=r.author_email,
                   partition=r.partition, clock=r.clock, recorded_at=r.recorded_at,
                   commit=r.commit, summary=(r.text or "").split("\n", 1)[0])
            for r in rows if r.id not in seen][:len(recent)]


def no_more_than_shown(pairs: list[tuple[Record, float]]) -> list[tuple[Record, float]]:
    """``pairs`` without the candidates the author cap could never show: no
    author shows more lines than the others together (gitmem.context.build), so
    beyond the others' number of candidates an author's weakest are dropped
    before their lines are rendered (a flood's 200 candidates, 4 of them kept)."""
    per = Counter(r.author_email for r, _ in pairs)
    if len(per) < 2:
        return pairs
    kept: Counter[str] = Counter()
    out = []
    for pair in pairs:
        who = pair[0].author_email
        if kept[who] < len(pairs) - per[who]:
            kept[who] += 1
            out.append(pair)
    return out


def check_budget(budget: int) -> None:
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < ctx.MIN_BUDGET:
        raise InvalidInput(f"budget must be at least {ctx.MIN_BUDGET} tokens (got {budget})",
                           "use --budget 500")


def merge(sections: dict[str, list[ctx.Item]],
          theirs: dict[str, list[ctx.Item]]) -> dict[str, list[ctx.Item]]:
    """The personal pool's candidates beside the project's: by salience, the
    person's own first on ties; a text both pools hold takes one line, the first
    (a review: "Use British English in docs" in both showed twice)."""
    for name, items in theirs.items():
        merged = sorted(items + sections.get(name, []), key=lambda i: (-i.score, not i.personal))
        # (An item without a twin id, as the recent section's, is its own.)
        sections[name] = twins.first_of_each(merged, lambda i: i.twin)
    return sections


def render(sections: dict[str, list[ctx.Item]], budget: int) -> Context:
    built = ctx.build(sections, budget)
    return Context(budget=budget, tokens=built.tokens, markdown=built.markdown,
                   items=[ContextItem(section=i.section, line=i.line, id=i.id)
                          for i in built.items], left_out=built.left_out)


def sections(pool: Pool, recent_days: int) -> dict[str, list[ctx.Item]]:
    """Each section's candidates, best first (ctx.Item)."""
    from ..projection import Scope
    from ..salience import by_salience

    cfg = settings.salience_config(pool.log, None)

    def run(p: Projection) -> dict[str, list[ctx.Item]]:
        conflicted = set(p.conflicted_keys())
        label = "personal" if pool.name == "personal" else None

        def items(section: str, pairs: list[tuple[Record, float]],
                  with_key: bool = False) -> list[ctx.Item]:
            pairs = no_more_than_shown(pairs)
            # Flag the ones whose code changed; the ones whose code is gone fade.
            kept = {r.id for r in anchoring.annotate(pool, p, [r for r, _ in pairs], fade=True)}
            pairs = [(r, sal) for r, sal in pairs if r.id in kept]
            # Twins (one text added on two clones before either synced) take one line:
            # after the fade (a review: the twin kept faded, and took the other with it).
            pairs = twins.first_of_each(pairs, lambda x: twins.twin_id(x[0]))
            return [ctx.Item(section, ctx.memory_line(
                r, with_key=with_key, conflict=with_key and r.key in conflicted, label=label),
                r.id, score=sal, personal=label is not None, author=r.author_email,
                twin=twins.twin_id(r))
                for r, sal in pairs]

        winners: dict[str, Record] = {}
        for v in key_values(pool, p, None, None, None):
            winners.setdefault(v.key or "", v)
        facts = [(r, sal) for r, sal in by_salience(p, cfg, list(winners.values()))
                 if not (label and (r.key or "").startswith(REPO_KEY))]  # pointers
        sections: dict[str, list[ctx.Item]] = {
            "persona": items("persona", by_salience(
                p, cfg, candidates(p, Scope(kinds=("persona",), now=cfg.now), None))),
            "facts": items("facts", facts, with_key=True),
            "procedures": items("procedures", by_salience(
                p, cfg, candidates(p, Scope(kinds=("procedure",), now=cfg.now), False))),
            "notes": items("notes", by_salience(
                p, cfg, candidates(p, Scope(kinds=("fact", "note", "edge"), now=cfg.now),
                                   False))),
        }
        if label:
            return sections  # the person's recent changes are not the project's news
        since = cfg.now - recent_days * DAY
        recent = [o for o in reversed(p.log(limit=60)) if o.type != "confirm"]
        # Within the window; an op dated in the future (a skewed clock, or a
        # forged date) must not stay pinned to the top.
        recent = sorted((o for o in recent
                         if since <= settings.ts(o.recorded_at) <= cfg.now + DAY),
                        key=lambda o: (-settings.ts(o.recorded_at), -o.clock, o.id))[:10]
        recent += others_news(p, recent, Scope(since=since, until=cfg.now + DAY, now=cfg.now))
        recs = p.records(o.id if o.type == "add" else o.target or "" for o in recent)
        lines = []
        for o in recent:
            rec = recs.get(o.id if o.type == "add" else o.target or "")
            if rec is not None and rec.quarantine:
                continue  # what the gate refuses never reaches an agent, even as news
            if o.reason and gating.findings(o.reason):
                o = msgspec.structs.replace(o, reason=None)
            lines.append(ctx.Item("recent", ctx.recent_line(o, rec), o.id, author=o.author_email))
        sections["recent"] = lines
        return sections

    return pool.read(run)
