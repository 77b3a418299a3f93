"""The inbox: proposals waiting for a person's verdict, local to this clone.

Why this exists: capture proposes; only a person decides what enters the team's
log. Proposals live under ``.git/mem/inbox/``, one JSON file each (written with
a rename, so a crashed capture leaves no half file and two captures never
collide), and are never pushed. ``accept`` turns one into an ordinary op
through the usual write path (validation, the write gate, dedup); ``reject``
records the verdict under ``inbox/decided/`` so the same proposal (the same
text; for a confirmation, the same memory and session) is not proposed again.
An accepted one is remembered the same way: capturing the same session twice
proposes nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import msgspec

from .. import ops
from ..errors import AmbiguousId, InvalidInput, UnknownId
from ..model import Proposal, Verdict
from .pool import Pool

INBOX_DIR = "inbox"
DECIDED_DIR = "decided"
MAX_ITEMS = 1000  # proposals kept; beyond it the oldest are dropped


class UnknownProposal(UnknownId):
    code = "unknown_proposal"
    default_hint = "list proposals with 'git mem inbox'"


def folder(pool: Pool) -> Path:
    return pool.log.state_dir / INBOX_DIR


def proposal_id(action: str, text: str, target: str | None = None,
                outcome: str | None = None, session: str | None = None) -> str:
    """Stable per proposal: a new memory by its normalised text (whoever proposes
    it, whenever); a confirmation by the memory, the outcome and the session."""
    if action == "add":
        basis = "add\0" + ops.normalize_text(text)
    else:
        basis = f"confirm\0{target}\0{outcome or ''}\0{session or ''}"
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def known(pool: Pool, pid: str) -> bool:
    """In the inbox now, or decided before."""
    base = folder(pool)
    return (base / f"{pid}.json").exists() or (base / DECIDED_DIR / pid).exists()


def put(pool: Pool, proposal: Proposal) -> bool:
    """File ``proposal``; False when it is there already or was decided."""
    if known(pool, proposal.id):
        return False
    base = folder(pool)
    base.mkdir(parents=True, exist_ok=True)
    _write(base / f"{proposal.id}.json", msgspec.json.encode(proposal))
    _trim(base)
    return True


def items(pool: Pool) -> list[Proposal]:
    """Every proposal waiting, oldest first (a file that is not one is skipped)."""
    out = []
    for path in folder(pool).glob("*.json"):
        try:
            p = msgspec.json.decode(path.read_bytes(), type=Proposal)
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            continue
        if p.id == path.stem:
            out.append(p)
    return sorted(out, key=lambda p: (p.proposed_at, p.id))


def get(pool: Pool, prefix: str) -> Proposal:
    """The waiting proposal whose id starts with ``prefix``."""
    prefix = prefix.strip().lower()
    if len(prefix) < 4 or any(c not in "0123456789abcdef" for c in prefix):
        raise InvalidInput(f"'{prefix}' is not a proposal id",
                           "give at least 4 hex digits of an id 'git mem inbox' lists")
    found = [p for p in items(pool) if p.id.startswith(prefix)]
    if not found:
        raise UnknownProposal(f"no proposal {prefix} in the inbox")
    if len(found) > 1:
        raise AmbiguousId(prefix, [p.id for p in found])
    return found[0]


def decide(pool: Pool, proposal: Proposal, verdict: Verdict) -> None:
    """Record the verdict and take the proposal out of the inbox."""
    base = folder(pool)
    (base / DECIDED_DIR).mkdir(parents=True, exist_ok=True)
    record = {"verdict": verdict.verdict, "at": int(time.time()), "memory": verdict.memory,
              "text": proposal.text if verdict.verdict == "accepted" else None}
    _write(base / DECIDED_DIR / proposal.id, json.dumps(record).encode("utf-8"))
    (base / f"{proposal.id}.json").unlink(missing_ok=True)


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _trim(base: Path) -> None:
    files = sorted(base.glob("*.json"), key=lambda f: f.stat().st_mtime)
    for old in files[:-MAX_ITEMS]:
        old.unlink(missing_ok=True)


def accept(pool: Pool, prefix: str, *, text: str | None = None,
           target_pool: Pool | None = None, by: str | None = None) -> Verdict:
    """Turn a proposal into an ordinary op on ``target_pool`` (default: ``pool``'s):
    a new memory (``text`` replaces the proposed text: ``accept --edit``), or a
    confirmation of the memory it matched. A person accepting it vouches for it;
    ``by`` says otherwise (the solo user's automatic accept)."""
    from . import write

    p = get(pool, prefix)
    dest = target_pool or pool
    if p.action == "confirm" and p.target is not None and text is None:
        done = write.confirm(dest, p.target, f"capture: {p.reason}", outcome=p.outcome, by=by)
        verdict = Verdict(id=p.id, verdict="accepted", memory=done.target, op=done.id,
                          pool=dest.name)
    else:
        root = pool.log.workdir
        paths = [path for path in p.paths if (root / path).exists()] if dest.name == "project" \
            else []
        added = write.add(dest, text if text is not None else p.text, kind=p.kind, tags=p.tags,
                          paths=[str(root / path) for path in paths],
                          importance=p.importance, session=p.session,
                          source=f"capture:{p.extractor}" + (f":{p.agent}" if p.agent else ""),
                          by=by)
        verdict = Verdict(id=p.id, verdict="accepted", memory=added.id, op=added.op,
                          pool=dest.name, duplicate_of=added.duplicate_of)
    decide(pool, p, verdict)
    return verdict


def reject(pool: Pool, prefix: str) -> Verdict:
    """Drop a proposal and remember it: the same one is not proposed again."""
    p = get(pool, prefix)
    verdict = Verdict(id=p.id, verdict="rejected")
    decide(pool, p, verdict)
    return verdict
