"""Session working memory: a scratch layer per agent session, local and short-lived.

Why this exists: an agent learns things mid-task that matter for the next hour,
not for the team ("the flaky test is test_upload, skip it while I fix auth").
Those go here (``git mem add --ephemeral``), not to the log: one JSON-lines file
per session under ``.git/mem/sessions/``, never pushed, read before the durable
store by that session's recalls and hooks, dropped when the session ends (the
session-end hook, or ``git mem session end``). A note marked ``keep`` is
proposed for the shared log (the inbox) when the session is captured.

The write gate runs here too: a secret never lands on disk, even for an hour.
Files of sessions that never said goodbye are removed after MAX_AGE_DAYS.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from ..errors import InvalidInput
from ..model import Hit, ScratchNote
from ..timefmt import iso
from . import gating, validate
from .pool import Pool

SESSIONS_DIR = "sessions"
MAX_NOTES = 500  # per session
MAX_AGE_DAYS = 14


def _path(pool: Pool, session: str) -> Path:
    digest = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return pool.log.state_dir / SESSIONS_DIR / f"{digest}.jsonl"


def session_name(session: str | None) -> str:
    """The session id, checked (a one-line field of at most 512 characters)."""
    checked = validate.field(session, "session")
    if not checked:
        raise InvalidInput("no session to keep working memory for",
                           "pass --session ID, or set GITMEM_SESSION (hooks pass the agent's)")
    return checked


def note(pool: Pool, session: str, text: str, *, kind: str = "note",
         tags: tuple[str, ...] | list[str] = (), keep: bool = False,
         redact: bool = False) -> ScratchNote:
    """Add a note to ``session``'s working memory (never to the log)."""
    session = session_name(session)
    body = validate.memory_body(
        text, kind=kind, key=None, tags=tags, about=(), paths=(), importance=0.5,
        valid_from=None, valid_until=None, source=None, session=session, head=None,
        cwd=pool.cwd, root=pool.log.workdir)
    body = gating.screen(body, redact=redact)
    now = int(time.time())
    line = {"text": body.text, "kind": body.kind, "tags": body.tags, "keep": keep, "at": now}
    raw = json.dumps(line, ensure_ascii=False, sort_keys=True)
    nid = hashlib.sha256(f"{session}\n{raw}".encode("utf-8", "surrogatepass")).hexdigest()[:16]
    path = _path(pool, session)
    if len(_read(path)) >= MAX_NOTES:
        raise InvalidInput(f"this session already holds {MAX_NOTES} notes",
                           "end it (git mem session end) or add durable memories instead")
    path.parent.mkdir(parents=True, exist_ok=True)
    # One write of one line with O_APPEND: concurrent writers never interleave a line.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_BINARY", 0), 0o600)
    try:
        os.write(fd, (json.dumps({"id": nid, "session": session, **line},
                                 ensure_ascii=False) + "\n").encode("utf-8"))
    finally:
        os.close(fd)
    _prune(path.parent)
    return ScratchNote(id=nid, session=session, text=body.text, kind=body.kind, tags=body.tags,
                       keep=keep, recorded_at=iso(now, 0) or "")


def notes(pool: Pool, session: str) -> list[ScratchNote]:
    """``session``'s notes, oldest first (lines that are not notes are skipped)."""
    out = []
    for obj in _read(_path(pool, session)):
        text, kind = obj.get("text"), obj.get("kind", "note")
        if not isinstance(text, str) or not text or not isinstance(kind, str):
            continue
        raw_tags = obj.get("tags")
        tags = [t for t in raw_tags if isinstance(t, str)] if isinstance(raw_tags, list) else []
        raw_at = obj.get("at")
        at = raw_at if isinstance(raw_at, int) else 0
        out.append(ScratchNote(id=str(obj.get("id", ""))[:16], session=session, text=text,
                               kind=kind, tags=tags, keep=obj.get("keep") is True,
                               recorded_at=iso(at, 0) or ""))
    return out


def drop(pool: Pool, session: str) -> int:
    """Forget ``session``'s working memory; how many notes it held."""
    path = _path(pool, session)
    n = len(_read(path))
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    return n


def hits(pool: Pool, session: str, query: str, k: int) -> list[Hit]:
    """The session's notes that share a content word with ``query``, as recall hits
    (``pool`` "session"), most words shared first, then newest."""
    from ..recall import terms

    wanted = set(terms(query))
    if not wanted:
        return []
    scored = []
    for n, item in enumerate(notes(pool, session)):
        shared = wanted & set(terms(item.text))
        if shared:
            scored.append((-len(shared), -n, item, len(shared) / len(wanted)))
    scored.sort(key=lambda x: (x[0], x[1]))
    return [Hit(id=item.id, kind=item.kind, text=item.text, tags=item.tags, session=session,
                author="(this session)", author_email="", partition="session", clock=0,
                recorded_at=item.recorded_at, status="active", commit="", pool="session",
                rank=r, score=round(cover, 3))
            for r, (_, _, item, cover) in enumerate(scored[:k], start=1)]


def _read(path: Path) -> list[dict[str, object]]:
    try:
        raw = path.read_bytes()
    except OSError:
        return []
    out = []
    for line in raw.splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _prune(folder: Path) -> None:
    cutoff = time.time() - MAX_AGE_DAYS * 86400
    for old in folder.glob("*.jsonl"):
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            pass
