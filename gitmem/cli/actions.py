"""What ``recall``, ``add`` and ``context`` do once their arguments are parsed.

Plain functions, no click: the click commands (recall.py, memories.py) check
what only they accept and call these with their parameters as click parsed
them; the fast path (fast.py) calls them with the same dict, which a test
compares with click's own (tests/test_fastpath.py). So both front doors make
the same library call and print through the same renderer.
"""

from __future__ import annotations

from .. import api
from ..model import BriefHit, Hit
from . import render
from .output import run, who


HINT_LOOK = 5  # hits each second look of an empty recall weighs (by their best score)


def recall(query: str | None, diff: str | None, k: int, kinds: tuple[str, ...],
           tags: tuple[str, ...], authors: tuple[str, ...], about: tuple[str, ...],
           paths: tuple[str, ...], min_score: float | None, include_retired: bool, mode: str,
           fmt: str, explain: bool, include_quarantined: bool, as_of: str | None,
           valid_at: str | None, personal: bool, session: str | None, as_json: bool) -> None:
    """``git mem recall``: QUERY or --diff (exactly one: the caller checked)."""
    from . import render_recall  # here: add and context never render a hit

    def find(s: api.Store) -> render_recall.Recalled:
        if diff is not None:
            hits = s.recall_diff(diff or None, k=k)
            shown = f"--diff {diff}".strip()
            if fmt == "brief" and as_json:
                return render_recall.Recalled(query=shown, hits=[BriefHit.of(h) for h in hits])
            return render_recall.Recalled(query=shown, hits=hits)
        assert query is not None

        def look(cutoff: float | None, retired: bool, n: int, use: bool = True) -> list[Hit]:
            assert query is not None
            return s.recall(query, k=n, kinds=kinds, tags=tags, authors=authors, about=about,
                            paths=paths, min_score=cutoff, include_retired=retired,
                            mode=mode, explain=explain and use,
                            include_quarantined=include_quarantined, as_of=as_of,
                            valid_at=valid_at, session=session, record_use=use)

        hits = look(min_score, include_retired, k)
        # A value the team disagrees on says so, as get, keys and context do.
        over = s.contested(hits, as_of=as_of, valid_at=valid_at) if hits else {}
        # So does a replacement another clone made too (forks are marked as they stand now).
        forked = s.forked(hits) if hits and as_of is None and valid_at is None else {}
        if fmt == "brief" and as_json:
            out = render_recall.Recalled(query=query, hits=[BriefHit.of(h) for h in hits])
        else:
            out = render_recall.Recalled(query=query, hits=hits)
        if over:
            out["contested"] = over
        if forked:
            out["forked"] = forked
        if fmt == "brief" and as_json:
            return out
        if not hits and not as_json:
            # Say what was left out only when something was (a new user's trial: the
            # cutoff was blamed in an empty store, under --min-score 0, for retired
            # ones), naming the flags that show it. The looks record no use: nobody is
            # shown what they find.
            hidden = render_recall.left_out(
                lambda cutoff, retired: look(cutoff, retired, HINT_LOOK, False),
                min_score, include_retired)
            if hidden is not None:
                out["hidden"] = hidden
        return out

    run("recall", as_json, find,
        render_recall.brief_hits if fmt == "brief" else render_recall.hits, personal=personal)


def add(text: str, kind: str | None, key: str | None, tags: tuple[str, ...], about: tuple[str, ...],
        paths: tuple[str, ...], importance: float, valid_from: str | None,
        valid_until: str | None, source: str | None, session: str | None,
        supersedes: tuple[str, ...], redact: bool, force: bool, symbol: str | None,
        no_anchor: bool, ephemeral: bool, keep: bool, by: str | None, personal: bool,
        as_json: bool) -> None:
    """``git mem add`` of TEXT as given (the caller read '-' and checked the
    --ephemeral combinations)."""
    if ephemeral:
        run("add", as_json, lambda s: s.note(text, session=session or "", kind=kind or "note",
                                             tags=tags, keep=keep, redact=redact), render.noted)
        return
    run(
        "add", as_json,
        lambda s: s.add(text, kind=kind, key=key, tags=tags, about=about,
                        paths=() if personal else paths,  # a path means nothing across repos
                        importance=importance, valid_from=valid_from,
                        valid_until=valid_until, source=source, session=session,
                        supersedes=supersedes, redact=redact, force=force,
                        symbol=None if personal else symbol, anchor=not no_anchor,
                        by=who(by)),
        render.added, personal="write" if personal else False,
    )


def context(budget: int, fmt: str, personal: bool, as_json: bool) -> None:
    """``git mem context``."""
    run("context", as_json, lambda s: s.context(budget=budget), render.context,
        personal=personal)
