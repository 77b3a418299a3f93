"""Code anchors: which code a memory is about, and whether that code moved on.

On write, ``anchors`` resolves the paths a memory is about (given with
``--path``, a file, a folder or ``FILE:START-END``; and, unless turned off,
the paths its text names that exist in the work tree) to what each held at
HEAD: a blob or a tree id, recorded with the commit. On read, ``freshen``
compares every anchor with HEAD once per HEAD (the answers are cached in the
projection, so a read after the first one for a HEAD starts no git process)
and ``status_of`` says, per memory, whether the code changed since.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .. import ops
from ..errors import InvalidInput
from ..model import CodeChange, CodeStatus, Hit, Record
from ..timefmt import iso
from . import settings, validate

if TYPE_CHECKING:
    from ..projection import Projection
    from .pool import Pool

MAX_TEXT_PATHS = 16  # paths taken from one memory's text
# A path in prose: segments joined by '/', or a file name with an extension
# ("spec/", "db/migrate", "src/auth/session.py", "Makefile" is not taken: too
# many plain words are also file names). Checked against the work tree.
_TEXT_PATH = re.compile(
    r"(?<![\w@:/.-])((?:[\w.-]+/)+[\w.-]*|[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,9})(?![\w/])")
_RANGE = re.compile(r"^(.+?):(\d+)(?:-(\d+))?$")


def split_range(given: str) -> tuple[str, tuple[int, int] | None]:
    """``src/a.py:10-20`` -> (``src/a.py``, (10, 20)); ``src/a.py:7`` -> (.., (7, 7))."""
    m = _RANGE.match(given.strip())
    if not m:
        return given, None
    # (A number of thousands of digits: int() refuses it, or takes long.)
    too_long = max(len(m.group(2)), len(m.group(3) or "")) > len(str(ops.MAX_LINE))
    start = 0 if too_long else int(m.group(2))
    end = int(m.group(3)) if m.group(3) and not too_long else start
    if start < 1 or end < start or end > ops.MAX_LINE:
        raise InvalidInput(f"'{given}' is not a line range",
                           f"write FILE:START-END, with 1 <= START <= END <= {ops.MAX_LINE}")
    return m.group(1), (start, end)


def text_paths(text: str, root: Path) -> list[str]:
    """Paths the text names that exist in the work tree (relative, '/' separated)."""
    out: list[str] = []
    resolved_root = root.resolve()
    for m in _TEXT_PATH.finditer(text):
        cand = m.group(1).rstrip(".,;:)")
        if not cand or cand.startswith(("/", "~")) or "//" in cand or ".." in cand.split("/"):
            continue
        full = root / cand
        try:
            if not full.exists() or resolved_root not in full.resolve().parents:
                continue
        except OSError:
            continue
        rel = cand.rstrip("/")
        if rel and rel not in out and ops.path_problem(rel) is None:
            out.append(rel)
        if len(out) >= MAX_TEXT_PATHS:
            break
    return out


def anchors(pool: Pool, text: str, paths: Iterable[str], *, symbol: str | None = None,
            auto: bool = True) -> ops.Anchors:
    """The anchors of a new memory: HEAD, its paths, and each path's object at HEAD."""
    root = pool.log.workdir
    explicit: list[str] = []
    ranges: dict[str, tuple[int, int]] = {}
    for given in paths:
        if not given or not given.strip():
            continue
        path, rng = split_range(given)
        rel = validate.repo_paths([path], pool.cwd, root)[0]
        if rel not in explicit:
            explicit.append(rel)
        if rng is not None:
            ranges[rel] = rng
    if symbol is not None:
        symbol = validate.field(symbol, "symbol")
        if symbol and not explicit:
            raise InvalidInput("--symbol needs a --path", "name the file that defines it")
    found = [p for p in text_paths(text, root) if p not in explicit] if auto else []
    every = validate.names([*explicit, *found], "path")
    head = pool.log.head()
    code: list[ops.CodeAnchor] = []
    if head is not None and every:
        at_head = pool.log.code_entries(head, every)
        for p in every:
            e = at_head.get(p)
            if e is None:
                continue  # not committed yet (or outside git): anchored by path only
            rng = ranges.get(p) if e.type == "blob" else None
            code.append(ops.CodeAnchor(
                path=p, type=e.type, oid=e.oid,  # type: ignore[arg-type]
                start=rng[0] if rng else None, end=rng[1] if rng else None,
                symbol=symbol if p in explicit and symbol else None))
    return ops.Anchors(commit=head, paths=every, code=code)


def reanchor(pool: Pool, old: ops.Anchors) -> ops.Anchors | None:
    """The same paths anchored at HEAD now (``confirm``), following renames; None
    when the memory has no code anchors."""
    from ..oplog.code import Entry

    if not old.code:
        return None
    head = pool.log.head()
    if head is None:
        return None
    paths = [a.path for a in old.code]
    now = pool.log.code_entries(head, paths)
    code = []
    for a in old.code:
        path = a.path
        e = now.get(path)
        if e is None and old.commit:
            moved = pool.log.code_change(path, Entry(a.type, a.oid), old.commit, None, head).renamed_to
            if moved:
                path = moved
                e = pool.log.code_entries(head, [moved]).get(moved)
        if e is None:
            continue  # deleted: the memory keeps no anchor there
        code.append(ops.CodeAnchor(path=path, type=e.type, oid=e.oid,  # type: ignore[arg-type]
                                   start=a.start if e.type == "blob" else None,
                                   end=a.end if e.type == "blob" else None, symbol=a.symbol))
    return ops.Anchors(commit=head, paths=list(dict.fromkeys([*(c.path for c in code), *old.paths])),
                       code=code)


# -- staleness, once per HEAD ----------------------------------------------------------


def freshen(pool: Pool, p: Projection) -> str | None:
    """Compare every code anchor with HEAD, if HEAD moved since the last time;
    returns HEAD (None: no commit yet, nothing to compare).

    Within a front end's budget (``pool.deadline``: a hook, the MCP server) it stops
    comparing when the budget is spent and keeps what it has; the next read goes on
    from there (each comparison is bounded, oplog/code.py, but an op may carry 64
    anchors and a teammate many ops: adv39). An anchor not compared yet shows no
    state, as one git cannot tell."""
    head = pool.log.head()
    if head is None or p.code_head() == head:
        return head
    anchors_now = p.code_anchor_rows()
    if not anchors_now:
        return head  # nothing anchored: nothing to compare, nothing to store
    from ..oplog.code import Entry

    paths = sorted({row[1] for row in anchors_now})
    now = pool.log.code_entries(head, paths) if paths else {}
    states: dict[tuple[str, str, str | None, int | None, int | None], Any] = dict(
        p.partial_code_states(head))
    for _memory, path, type_, oid, commit, start, end in anchors_now:
        key = (path, oid, commit, start, end)
        if key in states:
            continue
        if pool.deadline is not None and time.monotonic() > pool.deadline:
            p.set_code_states(head, states, complete=False)
            return head
        lines = (start, end) if start is not None and end is not None else None
        states[key] = pool.log.code_change(path, Entry(type_, oid), commit, now.get(path), head,
                                           lines)
    p.set_code_states(head, states)
    return head


def status_of(p: Projection, ids: list[str]) -> dict[str, dict[str, Any]]:
    """memory id -> {"stale": bool, "paths": [{"path", "state", ...}]} for the
    memories of ``ids`` with code anchors (as of the last ``freshen``)."""
    stored_states = p.code_states(ids)
    if not stored_states:
        return {}
    import msgspec

    from ..oplog.code import Change

    out: dict[str, dict[str, Any]] = {}
    for mid, path, stored in stored_states:
        change = msgspec.convert(stored, Change)
        entry = out.setdefault(mid, {"stale": False, "paths": []})
        item = {"path": path, **msgspec.to_builtins(change)}
        if change.changed_at is not None:
            item["changed_at"] = iso(change.changed_at, 0)
        entry["paths"].append(item)
        entry["stale"] = entry["stale"] or change.stale
    return out


R = TypeVar("R", bound=Record)


def annotate(pool: Pool, p: Projection, records: list[R], *, fade: bool = False) -> list[R]:
    """Set ``code`` on each record with code anchors (HEAD compared first, if it
    moved); with ``fade``, leave out memories whose every anchored path was deleted."""
    if not records or freshen(pool, p) is None:
        return records
    status = status_of(p, [r.id for r in records])
    out = []
    for r in records:
        st = status.get(r.id)
        if st is not None:
            if fade and gone(st):
                continue
            r.code = CodeStatus(stale=st["stale"], paths=[CodeChange(**i) for i in st["paths"]])
        out.append(r)
    return out


def gone(status: dict[str, Any]) -> bool:
    """Every anchored path was deleted: the memory fades from default recall."""
    paths = status.get("paths") or []
    return bool(paths) and all(item.get("state") == "deleted" for item in paths)


def under(path: str, anchored: str) -> bool:
    """``path`` is ``anchored`` or inside it (a folder anchor), or ``anchored`` is inside ``path``."""
    a, b = anchored.rstrip("/"), path.rstrip("/")
    return a in (".", "") or a == b or b.startswith(a + "/") or a.startswith(b + "/")


def relative(path: str, pool: Pool) -> str:
    """A path the user typed, relative to the repository root."""
    return validate.repo_paths([path], pool.cwd, pool.log.workdir)[0] if path else "."


# -- reads by code ---------------------------------------------------------------------


def stale(pool: Pool) -> list[Record]:
    """Current memories whose anchored code changed since, newest change first."""

    def run(p: Projection) -> list[Record]:
        freshen(pool, p)
        ids = list(dict.fromkeys(row[0] for row in p.code_anchor_rows()))
        recs = [r for r in p.records(ids).values()
                if r.status == "active" and r.quarantine is None and r.conflict_with is None]
        flagged = [r for r in annotate(pool, p, recs) if r.code is not None and r.code.stale]
        return sorted(flagged, key=_newest_change, reverse=True)

    return pool.read(run)


def _newest_change(r: Record) -> tuple[str, str]:
    paths = r.code.paths if r.code is not None else []
    return max((c.changed_at or "" for c in paths), default=""), r.id


def about(pool: Pool, path: str) -> list[Record]:
    """Current memories anchored to ``path``, a folder above it or (for a folder)
    anything inside it; best first by salience."""
    from ..salience import by_salience

    rel = relative(path, pool)
    cfg = settings.salience_config(pool.log, None)

    def run(p: Projection) -> list[Record]:
        recs = [r for r in p.records(p.anchored_to([rel])).values()
                if r.status == "active" and r.quarantine is None and r.conflict_with is None]
        ranked = [r for r, _ in by_salience(p, cfg, recs)]
        return annotate(pool, p, ranked)

    return pool.read(run)
