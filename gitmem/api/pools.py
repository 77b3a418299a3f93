"""Two pools read as one: the pool a ``Store`` was opened on and, for a project,
the person's own pool beside it.

Why this exists: reads merge both pools, an id-based action goes to the pool
that knows the id, and a failing personal pool must never break a project's
answer (it is skipped with one warning). Those rules are one job, kept here so
the facade (store.py) only says which action uses them. The personal pool is
looked up lazily, and again on the next read while there is none, so a
long-lived server sees a pool created after it started; the two pools never
recurse into each other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import ops
from ..errors import AmbiguousId, GitMemError, UnknownId
from ..model import Context, Fork, Hit, Shown
from .pool import Pool


class Pools:
    """``main``, the pool a store was opened on, and the personal pool beside it."""

    def __init__(self, main: Pool) -> None:
        self.main = main
        self._personal: Pool | None | bool = False  # False: not looked for yet

    def close(self) -> None:
        if isinstance(self._personal, Pool):
            self._personal.close()
        self.main.close()

    def personal(self) -> Pool | None:
        """The personal pool read beside ``main``, or None (none yet, disabled with
        gitmem.personal=false, failing, or ``main`` is the personal pool)."""
        from . import personal
        # None is looked up again on the next read: a long-lived server sees a pool
        # created after it started.
        if not isinstance(self._personal, Pool) and self.main.name == "project":
            self._personal = None
            try:
                self._personal = personal.beside(self.main)
            except Exception as exc:  # noqa: BLE001 - a broken pool must not break reads
                self.skip(exc)
        return self._personal if isinstance(self._personal, Pool) else None

    def skip(self, exc: BaseException) -> None:
        """The personal pool is a second source: when it fails, the project's
        answer still comes, with one warning."""
        why = exc.message if isinstance(exc, GitMemError) else f"{type(exc).__name__}: {exc}"
        self.main.warn(f"personal pool skipped: {why}")

    def _warnings_of(self, mine: Pool) -> None:
        self.main.warnings.extend(w for w in mine.warnings if w not in self.main.warnings)

    def owner(self, memory_id: str) -> Pool:
        """``main``, or the personal pool when only it knows ``memory_id``."""
        try:
            found = self.main.resolve(memory_id)
        except UnknownId:
            mine = self.personal()
            if mine is None:
                raise
            try:
                mine.resolve(memory_id)
            except UnknownId:
                raise UnknownId(f"no memory with id {memory_id.strip().lower()} "
                                "(in this repository or the personal pool)") from None
            return mine
        mine = self.personal() if len(memory_id.strip()) < ops.ID_HEX_LEN else None
        if mine is not None:
            try:
                other = mine.resolve(memory_id)
            except UnknownId:
                return self.main
            except Exception as exc:  # noqa: BLE001 - see skip
                self.skip(exc)
                return self.main
            raise AmbiguousId(memory_id.strip().lower(), [found, other])
        return self.main

    # -- reads over both ---------------------------------------------------------------

    def recall(self, query: str, *, k: int, kinds: Sequence[str], tags: Sequence[str],
               include_retired: bool, mode: str, explain: bool, include_quarantined: bool,
               as_of: str | int | None, valid_at: str | int | None, record_use: bool,
               authors: Sequence[str], about: Sequence[str], paths: Sequence[str],
               min_score: float | None, session: str | None) -> list[Hit]:
        """``Store.recall``: ``main``'s hits with the personal pool's merged in, and
        ``session``'s working memory first."""
        from . import reads

        # One cutoff for both pools: this repository's setting, or the caller's.
        cutoff = reads.cutoff(self.main, min_score)

        def theirs(mine: Pool, t_as_of: int | None, t_valid: int | None) -> list[Hit]:
            # Points in time are passed resolved: a tag names a commit of this
            # repository, which the personal pool does not have.
            return reads.recall(
                mine, query, k=k, kinds=kinds, tags=tags, include_retired=include_retired,
                mode=mode, explain=explain, include_quarantined=include_quarantined,
                as_of=t_as_of, valid_at=t_valid, authors=authors, about=about,
                min_score=cutoff)

        def merge(hits: list[Hit], t_as_of: int | None, t_valid: int | None) -> list[Hit]:
            return self._merged(k, hits, lambda mine: theirs(mine, t_as_of, t_valid))

        # Paths name files of this repository: the personal pool is not asked then.
        hits = reads.recall(
            self.main, query, k=k, kinds=kinds, tags=tags, include_retired=include_retired,
            mode=mode, explain=explain, include_quarantined=include_quarantined, as_of=as_of,
            valid_at=valid_at, record_use=record_use, authors=authors, about=about,
            paths=paths, min_score=cutoff,
            merge=merge if self.main.name == "project" and not paths else None)
        if session and as_of is None and valid_at is None and not paths:
            from . import scratch

            # Working memory is read before the durable store (it is newer).
            first = scratch.hits(self.main, session, query, k)
            if first:
                hits = _ranked((first + hits)[:k])
        return hits

    def _merged(self, k: int, hits: list[Hit], ask: Callable[[Pool], list[Hit]]) -> list[Hit]:
        """``hits`` and the personal pool's answer to ``ask``, as one ranking."""
        from . import personal

        mine = self.personal()
        if mine is None:
            return hits
        try:
            theirs = ask(mine)
        except Exception as exc:  # noqa: BLE001 - see skip
            self.skip(exc)
            return hits
        finally:
            self._warnings_of(mine)
        # The pool's pointers to repositories are its bookkeeping, not answers here.
        theirs = [h for h in theirs if not (h.key or "").startswith(personal.REPO_KEY)]
        # One ranking: scores compare across pools (same formula); personal first
        # among equals, then by id, so the order is the same every time.
        return _ranked(sorted(hits + theirs,
                              key=lambda h: (-h.rank_score, h.pool != "personal", h.id))[:k])

    def show(self, memory_id: str) -> Shown:
        """``Store.show``: from the pool that knows the id, labelled with it."""
        from . import reads

        owner = self.owner(memory_id)
        shown = reads.show(owner, memory_id)
        if owner is not self.main:
            shown.memory.pool = "personal"
        return shown

    def context(self, budget: int, recent_days: int) -> Context:
        """``Store.context``: each section's personal memories first, labelled."""
        from . import profile, sharing

        profile.check_budget(budget)
        sections = profile.sections(self.main, recent_days)
        sharing.note_remote_memory(self.main)
        mine = self.personal()
        if mine is not None:
            try:
                theirs = profile.sections(mine, recent_days)
            except Exception as exc:  # noqa: BLE001 - see skip
                self.skip(exc)
            else:
                sections = profile.merge(sections, theirs)
        return profile.render(sections, budget)

    # -- keyed conflicts and forks over both -------------------------------------------

    def contested(self, hits: Sequence[Hit], as_of: str | int | None,
                  valid_at: str | int | None) -> dict[str, list[str]]:
        """``Store.contested``: ``main``'s winners, and the personal pool's when a hit
        is its."""
        from . import reads
        out = reads.contested(self.main, hits, as_of, valid_at)
        mine = self.personal()
        if mine is not None and any(h.pool == mine.name for h in hits):
            out.update(reads.contested(mine, hits, as_of, valid_at))
        return out

    def forks(self) -> list[Fork]:
        """``Store.forks``: ``main``'s, then the personal pool's (skipped if it fails)."""
        from . import facts
        out = facts.forks(self.main)
        mine = self.personal()
        if mine is not None:
            try:
                out += facts.forks(mine)
            except Exception as exc:  # noqa: BLE001 - a broken pool must not break reads
                self.skip(exc)
        return out

    def forked(self, hits: Sequence[Hit]) -> dict[str, list[str]]:
        """``Store.forked``: ``main``'s forks among ``hits``, and the personal pool's
        when a hit is its."""
        if not any(h.supersedes for h in hits):
            return {}  # only a replacement can be in a fork (no module loaded, no read)
        from . import facts
        out = facts.forked(self.main, hits)
        mine = self.personal()
        if mine is not None and any(h.pool == mine.name for h in hits):
            out.update(facts.forked(mine, hits))
        return out


def _ranked(hits: list[Hit]) -> list[Hit]:
    for n, h in enumerate(hits, start=1):
        h.rank = n
    return hits
