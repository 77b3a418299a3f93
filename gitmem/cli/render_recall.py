"""The human output of ``recall``: each hit whole, one line a hit (``--format
brief``), and the line an empty recall prints, saying what it left out.

Split from render.py (every other command's output), whose rules it follows:
memory text shown whole is an indented block, in lists one clipped line, and
every line is made ``safe`` where it is printed (output.run).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

from ..model import BriefHit, Hit
from .render import block, clip_line, code_changed, short_ids


# What recall returns under --json: the list wrapped in an object, so the
# envelope's data is always an object.
class Recalled(TypedDict):
    query: str
    hits: list[Hit] | list[BriefHit]
    # Human output only, when nothing is shown: why (actions.recall looked).
    hidden: NotRequired[str]
    # Hits that win a keyed conflict -> the ids of the values they win over (only
    # when there are any; a losing value says so in its own conflict_with).
    contested: NotRequired[dict[str, list[str]]]
    # Hits that are one of several current replacements of one memory (two clones
    # replaced it before syncing) -> the others (only when there are any).
    forked: NotRequired[dict[str, list[str]]]


def hits(r: Recalled) -> str:
    found = [h for h in r["hits"] if isinstance(h, Hit)]
    over = r.get("contested") or {}
    forked = r.get("forked") or {}
    return ("\n".join(hit_lines(h, over.get(h.id), forked.get(h.id)) for h in found) if found
            else no_match(r.get("hidden")))


def brief_hits(r: Recalled) -> str:
    """One line per hit: id, score, kind, the text's first line."""
    lines = []
    over = r.get("contested") or {}
    forked = r.get("forked") or {}
    for h in r["hits"]:
        mark = "" if h.status in (None, "active") else f" [{h.status}]"
        mark += f" [conflict: wins over {short_ids(over[h.id])}]" if h.id in over else ""
        mark += f" [fork: {short_ids(forked[h.id])} replaces the same]" if h.id in forked else ""
        mark += f" [{h.pool}]" if h.pool in ("personal", "session") else ""
        mark += " [faded]" if h.faded else ""
        changed = h.code_changed if isinstance(h, BriefHit) else bool(h.code and h.code.stale)
        mark += " [code changed since]" if changed else ""
        text = f"{h.key}: {h.text}" if h.key and h.text is not None else h.text  # as list
        lines.append(f"{h.id[:12]}  {h.score:.2f}  {h.kind:<9} {clip_line(text, 90)}{mark}")
    return "\n".join(lines) if lines else no_match(r.get("hidden"))


def left_out(look: Callable[[float | None, bool], list[Hit]], min_score: float | None,
             include_retired: bool) -> str | None:
    """What an empty recall left out that would answer it (``no_match``'s word), from
    second looks: ``look(cutoff, retired)``. The look whose best hit scores highest
    wins: when only retired memories answer, --min-score 0 shows unrelated hits
    below the cutoff, and the hint must name --all instead."""
    cut = min_score != 0
    if not include_retired:
        # Retired hits that clear the cutoff outscore anything below it.
        if look(min_score, True):
            return "retired"
    below = look(0.0, include_retired) if cut else []
    both = look(0.0, True) if cut and not include_retired else []
    best_below = max((h.score for h in below), default=-1.0)
    if both and max(h.score for h in both) > best_below:
        return "both"  # the best of what the cutoff left out is retired
    return "cutoff" if below else None


def no_match(hidden: str | None) -> str:
    """The line an empty recall prints, with what was left out when something was
    (the query is not echoed: the user just typed it, and it may be long)."""
    if hidden == "cutoff":
        return ("no memory matches (hits below the relevance cutoff are left out: "
                "--min-score 0 shows them)")
    if hidden == "retired":
        return "no memory matches (retired memories are left out: --all shows them)"
    if hidden == "both":
        return ("no memory matches (retired memories below the relevance cutoff are left out: "
                "--all --min-score 0 shows them)")
    return "no memory matches"


def hit_lines(h: Hit, wins_over: list[str] | None = None,
              forked_with: list[str] | None = None) -> str:
    """A hit's head line and text; ``wins_over``: the values it wins a conflict over;
    ``forked_with``: the other current replacements of what it replaces."""
    head = f"{h.id[:12]}  {h.kind:<9} {h.score:5.2f}  {h.author}  {h.recorded_at[:10]}"
    if h.key:
        head += f"  key={h.key}"
    if h.tags:
        head += "  #" + " #".join(h.tags)
    if h.status != "active":
        head += f"  [{h.status} {(h.retired_at or '')[:10]}"
        head += f": {h.retired_reason}]" if h.retired_reason else "]"
    if h.pool != "project":
        head += f"  [{h.pool}]"
    if h.conflict_with:
        head += f"  [conflict: loses to {h.conflict_with[:12]}]"
    if wins_over:
        head += f"  [conflict: wins over {short_ids(wins_over)}; see git mem conflicts]"
    if forked_with:
        head += f"  [fork: {short_ids(forked_with)} replaces the same memory; see git mem conflicts]"
    if h.faded:
        head += f"  [faded: salience {h.salience:.3f}]"
    if h.quarantine:
        head += f"  [quarantined: {h.quarantine}]"
    out = head + "\n" + block(h.text or "")
    note = code_changed(h.code)
    if note:
        out += f"\n    [{note}]"
    if h.explain:
        e: dict[str, Any] = h.explain  # recall's explain: ranks, raw, rrf, factors, ...
        ranks = ", ".join(f"{c} #{r} ({e['raw'][c]:.4g})" for c, r in e["ranks"].items())
        factors = " x ".join(f"{k} {v:.3f}" for k, v in e["factors"].items())
        sig = e.get("signals") or {}
        if sig:
            factors += (f" (age {sig['age_days']:.1f} d, {sig['confirms']} confirmation(s), "
                        f"{sig['uses']} use(s))")
        out += f"\n    ~ {ranks}; rrf {e['rrf']:.5f} x {factors} = {e['final']:.5f}"
        rel = e.get("relevance") or {}
        if rel:
            out += (f"\n    ~ relevance {rel['score']:.3f}: query words held {rel['coverage']:.2f}"
                    f" (idf-weighted), vector z {rel['z']:.2f}")
            if rel.get("novel"):
                out += f", rare words no memory holds {rel['novel']:.2f}"
            if rel.get("bounded_by"):
                out += f"; bounded by {rel['bounded_by'][:12]}, the memory it is ranked beside"
    return out
