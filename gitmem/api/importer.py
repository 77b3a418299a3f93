"""Bulk import: many memories from JSON lines, many ops per commit.

Why this exists: seeding a repository's memory (from notes, another tool, a
migration) must be fast and all-or-nothing per line set: every line is
validated and gated before anything is written, exact duplicates confirm the
existing memory instead of copying it, and each pack of ops is one atomic
commit appended with the same compare-and-swap as a single add.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import TYPE_CHECKING

import msgspec

from .. import ops
from ..errors import GateRefused, InvalidInput
from ..model import Imported
from ..timefmt import now_from_env, parse_date
from . import gating, heal, validate
from .pool import Pool

if TYPE_CHECKING:
    from ..projection import Projection


class ImportRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One line of ``git mem import``: the options of ``git mem add``."""

    text: str
    kind: str = "note"
    key: str | None = None
    tags: list[str] = []
    about: list[str] = []
    paths: list[str] = []
    importance: float = 0.5
    valid_from: str | int | None = None
    valid_until: str | int | None = None
    source: str | None = None
    session: str | None = None
    recorded_at: str | None = None  # when the log learned it (default: now)


IMPORT_DECODER = msgspec.json.Decoder(ImportRecord)
IMPORT_HINT = (
    'each line must be a JSON object like {"text": "...", "kind": "fact", "tags": ["x"]}; '
    "fields: text, kind, key, tags, about, paths, importance, valid_from, valid_until, "
    "source, session, recorded_at"
)


def import_records(
    pool: Pool, lines: Iterable[str | bytes], *, pack_size: int = 5000, redact: bool = False
) -> Imported:
    """Bulk-add memories from JSON lines, many ops per commit.

    Every line is validated before anything is written, so a bad line at
    the end does not leave half an import behind. Each pack (one commit)
    is atomic; the report lists the commits written.
    """
    if pack_size < 1:
        raise InvalidInput(f"pack size must be at least 1 (got {pack_size})", "use 5000")
    head = pool.log.head()
    bodies: list[tuple[int, ops.MemoryBody, tuple[int, int] | None]] = []
    for n, line in enumerate(lines, start=1):
        if not (line.strip() if isinstance(line, str) else line.strip()):
            continue
        try:
            rec = IMPORT_DECODER.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise InvalidInput(f"line {n}: {exc}", IMPORT_HINT) from None
        try:
            body = validate.memory_body(
                rec.text, kind=rec.kind, key=rec.key, tags=rec.tags, about=rec.about,
                paths=rec.paths,
                importance=rec.importance, valid_from=rec.valid_from,
                valid_until=rec.valid_until, source=rec.source, session=rec.session,
                head=head, cwd=pool.cwd, root=pool.log.workdir,
            )
            at = parse_date(rec.recorded_at) if rec.recorded_at else None
            body = gating.screen(body, redact=redact)
        except GateRefused as exc:
            raise GateRefused([f"line {n}: {f}" for f in exc.findings], exc.hint) from None
        except InvalidInput as exc:
            raise type(exc)(f"line {n}: {exc.message}", exc.hint) from None
        bodies.append((n, body, at))
    author = pool.log.identity()
    heal.rescue_skipped_clocks(pool)
    now = now_from_env()
    partition = pool.log.partition_for(author)
    # Dedup on write, exact only (a near-duplicate check would embed every
    # line): a line that repeats a current memory confirms it instead, a
    # line that repeats an earlier line is dropped.
    items: list[tuple[ops.MemoryBody | str, tuple[int, int] | None]] = []
    duplicates: list[dict[str, object]] = []
    # A keyed line replaces the key's values, like set: the current ones for
    # the first line of a key, then the previous line of the same key.
    keys = sorted({b.key for _, b, _ in bodies if b.key is not None})
    latest: dict[str, list[str]] = {}
    if keys:
        from ..projection import Scope

        def current(p: Projection) -> dict[str, list[str]]:
            out: dict[str, list[str]] = {}
            for r in p.keyed(Scope(shadow=False)):
                if r.key in keys:
                    out.setdefault(r.key or "", []).append(r.id)
            return out

        latest = pool.read(current, embed=False)
    if bodies:
        existing = pool.read(lambda p: [p.duplicate_of(b.text, b.kind, b.key)
                                         for _, b, _ in bodies], embed=False)
        first_line: dict[tuple[str, str | None, str], int] = {}
        for (n, body, at), dup in zip(bodies, existing):
            sig = (body.kind, body.key, ops.text_hash(body.text))
            if dup is not None:
                duplicates.append({"line": n, "id": dup})
                if sig not in first_line:
                    items.append((dup, at))
                    first_line[sig] = n
            elif sig in first_line:
                duplicates.append({"line": n, "line_of_first": first_line[sig]})
            else:
                first_line[sig] = n
                items.append((body, at))
    ids: list[str] = []
    commits: list[str] = []
    for start in range(0, len(items), pack_size):
        chunk = items[start : start + pack_size]

        after: dict[str, list[str]] = {}

        def make(clock: int, chunk: list = chunk) -> list[bytes]:  # type: ignore[type-arg]
            out = []
            state = {k: list(v) for k, v in latest.items()}  # rebuilt on every retry
            for i, (what, at) in enumerate(chunk):
                common = dict(v=ops.FORMAT_VERSION, author=author, partition=partition,
                              clock=clock + i, at=(at or now)[0], tz=(at or now)[1])
                if isinstance(what, ops.MemoryBody):
                    op: ops.Op = ops.AddOp(**common, memory=what,  # type: ignore[arg-type]
                                           supersedes=state.get(what.key, [])
                                           if what.key is not None else [])
                else:
                    op = ops.ConfirmOp(**common, target=what,  # type: ignore[arg-type]
                                       reason="imported again")
                out.append(ops.encode(op))
                if isinstance(what, ops.MemoryBody) and what.key is not None:
                    state[what.key] = [ops.op_id(out[-1])]
            for line in out:
                validate.check_writable(line, partition)
            after.clear()
            after.update(state)
            return out

        last_at = chunk[-1][1] or now
        adds = sum(isinstance(w, ops.MemoryBody) for w, _ in chunk)
        appended = pool.log.append(
            partition, author, last_at[0], last_at[1], f"import {adds} memories", make,
            next_clock=partial(pool.next_clock, partition, len(chunk)),
        )
        ids.extend(ops.op_id(line) for line, (w, _) in zip(appended.lines, chunk)
                   if isinstance(w, ops.MemoryBody))
        commits.append(appended.commit)
        latest = dict(after)
        if pool.progress is not None:
            pool.progress("importing", start + len(chunk), len(items))
    return Imported(count=len(ids), ids=ids, commits=commits, partition=partition,
                    duplicates=duplicates)
