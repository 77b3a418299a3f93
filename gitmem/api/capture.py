"""Capture: a finished (or compacting) session's transcript in, inbox proposals out.

    transcript -> events -> extractors (rules; the user's model command; the
    session's kept notes) -> write gate -> dedup (a near-duplicate becomes a
    confirmation) -> verdicts so far -> inbox

Runs in a detached background process started by the session-end hook
(``agents.spawn``), so the agent never waits; nothing here is on the read
path. A crash loses only this run's proposals: the inbox gets whole files or
nothing, and the log is written only when a person accepts (or, opted in with
``gitmem.captureAccept = personal``, into that person's own pool, never the
team's log).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from collections.abc import Iterator
from pathlib import Path

import msgspec
import msgspec.structs

from .. import ops
from ..capture import rules, runner, transcript
from ..capture.rules import Candidate
from ..errors import GateRefused, GitMemError
from ..model import CaptureReport, Evidence, Proposal
from ..timefmt import iso
from . import dedup, gating, inbox, locks, scratch, settings, validate
from .pool import Pool

ENDS = ("SessionEnd",)  # events after which the session's working memory is dropped
LOG_FILE = "capture.log"


def capture(pool: Pool, *, transcript_path: str | None, session: str | None,
            agent: str | None = None, event: str | None = None, use_model: bool = True,
            personal: Pool | None = None) -> CaptureReport:
    """Read a session and file what it proposes (see the module docstring)."""
    session = validate.field(session, "session") if session else None
    report = CaptureReport(session=session, transcript=transcript_path, events=0)
    with _once(pool, session) as mine:
        if not mine:
            report.errors.append("another capture of this session is running; it will "
                                 "see the same transcript")
            return report
        size = transcript.size(transcript_path) if transcript_path else -1
        if (session and event is not None and event not in ENDS and size >= 0
                and _seen_size(pool, session) == size):
            return report  # a hook after a turn that added nothing since the last capture
        events = transcript.read(transcript_path) if transcript_path else []
        report.events = len(events)
        found = rules.extract(events)
        if use_model:
            command = settings.setting(pool.log, "gitmem.extractor", str, "",
                                       "name a command that reads stdin and prints JSON lines")
            if command.strip():
                try:
                    found += runner.run(command, events, cwd=str(pool.log.workdir))
                except runner.RunnerFailed as exc:
                    report.errors.append(str(exc))
        if session:
            found += [Candidate(text=n.text, kind=n.kind, tags=n.tags,
                                reason="kept from the session's working memory",
                                evidence=[(0, transcript.excerpt(n.text))])
                      for n in scratch.notes(pool, session) if n.keep]
        for c in found:
            proposal = _proposal(pool, c, session, agent, report)
            if proposal is None:
                continue
            if inbox.put(pool, proposal):
                report.proposed.append(proposal)
            else:
                report.known += 1
        if personal is not None or _auto_accept(pool) == "personal":
            _accept_into_personal(pool, personal, report, agent)
        if session and event in ENDS:
            scratch.drop(pool, session)
            report.dropped_session = True
        if session and size >= 0:
            _seen_size(pool, session, size)
    return report


def _seen_size(pool: Pool, session: str, size: int | None = None) -> int | None:
    """The transcript size the last capture of ``session`` read (or record it)."""
    import hashlib

    name = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    path = inbox.folder(pool) / f".seen-{name}"
    if size is None:
        try:
            return int(path.read_text())
        except (OSError, ValueError):
            return None
    try:
        path.write_text(str(size))
    except OSError:
        pass
    return size


def _proposal(pool: Pool, c: Candidate, session: str | None, agent: str | None,
              report: CaptureReport) -> Proposal | None:
    """The inbox entry for a candidate, or None (refused by the gate, or known)."""
    if gating.findings(c.text) or any(gating.findings(t) for t in c.tags):
        report.refused += 1  # never stored, not even locally, never echoed
        return None
    common = {"tags": c.tags, "reason": c.reason, "session": session, "agent": agent,
              "extractor": "model" if c.reason == "model extractor" else "builtin",
              "proposed_at": iso(int(time.time()), 0) or "",
              "evidence": [Evidence(line=line, excerpt=_masked(text)) for line, text in c.evidence]}
    if c.command is not None:
        # A procedure the log already holds, run with success: its outcome.
        named = pool.read(lambda p: p.procedures_naming(c.command or ""), embed=False)
        if named:
            rec = pool.read(lambda p: p.record(named[0]), embed=False)
            pid = inbox.proposal_id("confirm", c.text, named[0], "worked", session)
            if inbox.known(pool, pid):
                report.known += 1
                return None
            return Proposal(id=pid, action="confirm", text=c.text, kind="procedure",
                            target=named[0], target_text=rec.text if rec else None,
                            outcome="worked", **common)  # type: ignore[arg-type]
    paths = _relative(pool, c.paths)
    if c.paths and not paths:
        return None  # about files outside this repository
    text = c.text
    for original, rel in zip(c.paths, paths):
        text = text.replace(original, rel)
    c = msgspec.structs.replace(c, text=text)
    try:
        body = validate.memory_body(
            c.text, kind=c.kind, key=None, tags=c.tags, about=(), paths=(),
            importance=c.importance, valid_from=None, valid_until=None, source=None,
            session=session, head=None, cwd=pool.cwd, root=pool.log.workdir)
    except GitMemError:
        report.refused += 1
        return None
    near = dedup.closest(pool, body)
    if near is not None:
        target, cosine = near
        pid = inbox.proposal_id("confirm", c.text, target, None, session)
        if inbox.known(pool, pid) or inbox.known(pool, inbox.proposal_id("add", c.text)):
            report.known += 1
            return None
        rec = pool.read(lambda p: p.record(target), embed=False)
        return Proposal(id=pid, action="confirm", text=c.text, kind=c.kind, target=target,
                        target_text=rec.text if rec else None, cosine=round(cosine, 3),
                        **common)  # type: ignore[arg-type]
    pid = inbox.proposal_id("add", c.text)
    if inbox.known(pool, pid):
        report.known += 1
        return None
    return Proposal(id=pid, action="add", text=c.text, kind=c.kind, paths=paths,
                    importance=c.importance, **common)  # type: ignore[arg-type]


def _masked(text: str) -> str:
    """Evidence is shown to people and agents: a secret in it is masked."""
    if not gating.findings(text):
        return text
    from .. import gate

    return gate.redact(text)[0]


def _relative(pool: Pool, paths: list[str]) -> list[str]:
    root = pool.log.workdir.resolve()
    out = []
    for p in paths:
        full = Path(p) if Path(p).is_absolute() else root / p
        try:
            rel = full.resolve().relative_to(root).as_posix()
        except (ValueError, OSError):
            return []  # a file outside this repository: the candidate is not ours
        if not rel or ops.path_problem(rel) is not None:
            return []
        out.append(rel)
    return out


def _auto_accept(pool: Pool) -> str:
    value = settings.setting(pool.log, "gitmem.captureAccept", _accept_mode, "none",
                             "use none or personal")
    return value


def _accept_mode(raw: str) -> str:
    low = raw.lower()
    if low in ("none", "no", "off", "false", ""):
        return "none"
    if low == "personal":
        return "personal"
    raise ValueError(raw)


def _accept_into_personal(pool: Pool, personal: Pool | None, report: CaptureReport,
                          agent: str | None) -> None:
    """The solo user's switch: new memories go straight into their own pool (never
    the team's log), marked as written by the agent."""
    if personal is None:
        return
    for p in list(report.proposed):
        if p.action != "add":
            continue
        try:
            done = inbox.accept(pool, p.id, target_pool=personal,
                                by=f"agent:{agent or 'capture'}")
        except (GateRefused, GitMemError) as exc:
            report.errors.append(f"{p.id}: {exc}")
            continue
        if done.memory:
            report.accepted.append(done.memory)


@contextmanager
def _once(pool: Pool, session: str | None) -> Iterator[bool]:
    """One capture per session at a time (a Stop hook fires after every turn)."""
    if not session:
        yield True
        return
    import hashlib

    name = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    with locks.held(inbox.folder(pool) / f".capture-{name}.lock") as free:
        yield free
