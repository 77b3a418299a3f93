"""``Store`` methods for memory that grows by itself: capture, the inbox, session
working memory, links and skills (docs/growth.md).

A mixin so that store.py stays the read-and-write core; every method is a thin
call into the module that does the job (``capture``, ``inbox``, ``scratch``,
``links``, ``skills``), imported when the method runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..model import (Added, CaptureReport, Fading, Hit, Proposal, Related, ScratchNote,
                     SkillProposal, Verdict)

if TYPE_CHECKING:
    from .pool import Pool


class Growth:
    _pool: Pool

    # -- capture and the inbox -------------------------------------------------------

    def capture(self, transcript: str | None = None, *, session: str | None = None,
                agent: str | None = None, event: str | None = None,
                use_model: bool = True) -> CaptureReport:
        """Read a session's transcript and file what it proposes in the inbox:
        explicit requests, corrections, commands that kept succeeding, files the
        session kept returning to, the session's kept notes, and (with
        gitmem.extractor set) the user's model command's proposals. Nothing
        reaches the log until a person accepts it (or, with
        gitmem.captureAccept=personal, it goes to the person's own pool)."""
        from . import capture, personal
        mine = None
        if capture._auto_accept(self._pool) == "personal" and self._pool.name == "project":
            mine = personal.open_pool(create=True, one_shot=self._pool.one_shot)
            personal.lend_identity(self._pool, mine)
        try:
            return capture.capture(self._pool, transcript_path=transcript, session=session,
                                   agent=agent, event=event, use_model=use_model,
                                   personal=mine)
        finally:
            if mine is not None:
                mine.close()

    def inbox(self) -> list[Proposal]:
        """Proposals waiting for a verdict, oldest first."""
        from . import inbox
        return inbox.items(self._pool)

    def accept(self, proposal: str, *, text: str | None = None,
               personal: bool = False) -> Verdict:
        """Turn a proposal into an ordinary op (``text`` replaces its text); with
        ``personal``, into the person's own pool."""
        from . import inbox
        mine = None
        if personal:
            from . import personal as pers
            mine = pers.open_pool(create=True, one_shot=self._pool.one_shot)
            if self._pool.name == "project":
                pers.lend_identity(self._pool, mine)
        try:
            return inbox.accept(self._pool, proposal, text=text, target_pool=mine)
        finally:
            if mine is not None:
                mine.close()

    def reject(self, proposal: str) -> Verdict:
        """Drop a proposal; the same one is not proposed again."""
        from . import inbox
        return inbox.reject(self._pool, proposal)

    # -- session working memory ------------------------------------------------------

    def note(self, text: str, *, session: str, kind: str = "note", tags: Sequence[str] = (),
             keep: bool = False, redact: bool = False) -> ScratchNote:
        """Add to a session's working memory: local, never pushed, dropped when the
        session ends (``keep``: proposed for the log when it is captured)."""
        from . import scratch
        return scratch.note(self._pool, session, text, kind=kind, tags=list(tags), keep=keep,
                            redact=redact)

    def session_notes(self, session: str) -> list[ScratchNote]:
        from . import scratch
        return scratch.notes(self._pool, scratch.session_name(session))

    def end_session(self, session: str) -> int:
        """Drop a session's working memory; how many notes it held."""
        from . import scratch
        return scratch.drop(self._pool, scratch.session_name(session))

    def session_hits(self, session: str, query: str, k: int) -> list[Hit]:
        from . import scratch
        return scratch.hits(self._pool, session, query, k)

    # -- links and skills ------------------------------------------------------------

    def link(self, src: str, predicate: str, dst: str, *, by: str | None = None) -> Added:
        """Record ``src PREDICATE dst`` (an edge memory; see api/links.py)."""
        from . import links
        return links.link(self._pool, src, predicate, dst, by=by)

    def related(self, node: str, *, depth: int = 2) -> Related:
        """The links within ``depth`` hops of ``node``, nearest first."""
        from . import links
        return links.related(self._pool, node, depth=depth)

    def fading(self, *, limit: int = 20) -> list[Fading]:
        """Current memories nearest to fading out of default recall, and why."""
        from . import decay
        return decay.fading(self._pool, limit=limit)

    def skills(self, *, write: bool = False) -> list[SkillProposal]:
        """Procedures ready to become SKILL.md files (diffs), skills to retire;
        ``write`` writes the files and keeps a reference memory."""
        from . import skills
        return skills.propose(self._pool, write_files=write)
