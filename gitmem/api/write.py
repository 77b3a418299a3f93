"""The write path: one memory in, one op appended, in a single direction.

    validate -> gate -> dedup -> encode -> append   (fold and embed happen on read)

Why this exists: every way of changing memory (add, set, confirm, invalidate,
forget, forget --purge) is an op appended to this clone's partition; nothing is
ever edited in place. Each function here takes the pool to write to, checks
its input (``validate``), runs the gate (``gating``), decides what the op is,
and appends it with the pool's compare-and-swap append.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

from .. import ops
from ..errors import GitMemError, InvalidInput, PurgeRefused
from ..model import Added, Confirmed, PurgeRemote, PurgeReport, Retired
from ..oplog import Rewrite
from ..timefmt import iso
from . import anchoring, dedup, gating, validate
from .pool import Pool

if TYPE_CHECKING:
    from ..projection import Projection


def add(
    pool: Pool,
    text: str,
    *,
    kind: str | None = None,
    key: str | None = None,
    tags: Iterable[str] = (),
    about: Iterable[str] = (),
    paths: Iterable[str] = (),
    importance: float = 0.5,
    valid_from: str | int | None = None,
    valid_until: str | int | None = None,
    source: str | None = None,
    session: str | None = None,
    supersedes: Iterable[str] = (),
    redact: bool = False,
    force: bool = False,
    symbol: str | None = None,
    anchor: bool = True,
    by: str | None = None,
    link: ops.Link | None = None,
) -> Added:
    """Append a new memory to this clone's partition (see ``Store.add``)."""
    if kind is None:  # a keyed value is a fact, whether written by set or add --key
        kind = _kind_of_key(pool, key) if key is not None else "note"
    body = validate.memory_body(
        text, kind=kind, key=key, tags=tags, about=about,
        paths=(), importance=importance, valid_from=valid_from,
        valid_until=valid_until, source=source, session=session, head=None,
        cwd=pool.cwd, root=pool.log.workdir,
    )
    if isinstance(text, str):  # memory_body refused anything else
        # The personal pool is outside any repository: nothing there to anchor to.
        body.anchors = anchoring.anchors(pool, text, paths, symbol=symbol,
                                         auto=anchor and pool.name == "project")
    body.by = validate.by_whom(by)
    body.link = link
    body = gating.screen(body, redact=redact)
    old_ids = list(dict.fromkeys(pool.resolve(s) for s in supersedes)) if supersedes else []
    # Said once the memory is written (a refused write replaces nothing).
    retired = _retired_already(pool, old_ids) if old_ids else []
    dup, similar, replaced, vector = dedup.check_new(pool, body, old_ids, force=force)
    if dup is not None:
        oid, op, commit = confirm_op(pool, dup, "added again")
        return Added(id=dup, kind=body.kind, partition=op.partition, commit=commit,
                     clock=op.clock, recorded_at=iso(op.at, op.tz) or "",
                     op=oid, duplicate_of=dup)
    old_ids += [r for r in replaced if r not in old_ids]
    first_line = body.text.strip().splitlines()[0]
    summary = (f"{'set ' + body.key if body.key else 'add ' + body.kind}: "
               f"{validate.clip(first_line, 60)}")

    def make(author: ops.Author, partition: str, at: int, tz: int, clock: int) -> ops.Op:
        return ops.AddOp(
            v=ops.FORMAT_VERSION, author=author, partition=partition, clock=clock,
            at=at, tz=tz, memory=body, supersedes=old_ids,
        )

    oid, op, commit = pool.append_one(make, summary)
    for message in retired:
        pool.warn(message)
    if vector is not None:
        dedup.remember_pending(pool, oid, vector)
    return Added(
        id=oid, kind=body.kind, partition=op.partition, commit=commit, clock=op.clock,
        recorded_at=iso(op.at, op.tz) or "", op=oid, superseded=old_ids,
        similar=[{"id": mid, "cosine": cos} for mid, cos in similar],
    )


def _kind_of_key(pool: Pool, key: str) -> str:
    """The kind a new value of ``key`` takes when none is given: its current value's
    (a review: 'add --key deploy' turned the key's procedure into a fact, out of the
    procedures), else fact."""
    from ..projection import Scope

    name = validate.key_name(key)
    if not name:
        return "fact"  # refused with the reason by memory_body
    try:
        current = pool.read(lambda p: p.keyed(Scope(), name), embed=False)
    except GitMemError:
        return "fact"
    return current[0].kind if current else "fact"


def _retired_already(pool: Pool, ids: list[str]) -> list[str]:
    """Warnings about memories given to --supersedes that are no longer current here:
    the add still names them (as asked), but replaces nothing a forgotten one held,
    and one already replaced now has two replacements (a fork, see git mem
    conflicts). (A new user's trial: 'note: supersedes ...' was printed and nothing
    changed.)"""
    records = pool.read(lambda p: p.records(ids), embed=False)
    said: list[str] = []
    for mid in ids:
        r = records.get(mid)
        if r is None or r.status == "active":
            continue
        by = f" by {r.retired_by[:12]}" if r.retired_by else ""
        if r.status == "forgotten":
            said.append(f"{mid[:12]} is forgotten: there is nothing left of it to supersede")
        elif r.status == "superseded":
            said.append(f"{mid[:12]} is superseded already{by}: this memory replaces it too "
                        "(two replacements of one memory: see git mem conflicts)")
        else:
            said.append(f"{mid[:12]} is {r.status} already{by}: this memory is recorded as "
                        "its replacement")
    return said


def key_for_set(key: str) -> str:
    k = validate.key_name(key)
    if not k:
        raise InvalidInput(f"'{key}' is not a usable key", "use a short name, e.g. db.engine")
    return k


def confirm(pool: Pool, memory_id: str, reason: str | None = None, *,
            outcome: str | None = None, by: str | None = None) -> Confirmed:
    """Reinforce a current memory: it still holds (``outcome``: a procedure was
    followed and "worked" or "failed"; a failure reinforces nothing)."""
    target = pool.resolve(memory_id)
    rec = pool.read(lambda p: p.record(target))
    assert rec is not None
    if rec.status != "active":
        raise InvalidInput(
            f"memory {target[:12]} is {rec.status}; only current memories can be confirmed",
            "add it again (or set the key again) if it holds once more",
        )
    reason = gating.screen_reason(validate.field(reason, "reason"))
    # Confirming a memory whose code moved on says it holds for the code as it
    # is now: the confirm re-anchors it there (renames followed).
    old = pool.read(lambda p: p.current_anchors(target))

    def moved(p: Projection) -> bool:
        anchoring.freshen(pool, p)
        status = anchoring.status_of(p, [target]).get(target) or {}
        return any(item.get("state") != "unchanged" for item in status.get("paths", []))

    if outcome not in (None, "worked", "failed"):
        raise InvalidInput(f"unknown outcome '{outcome}'", "use worked or failed")
    if outcome is not None and rec.kind != "procedure":
        raise InvalidInput(f"memory {target[:12]} is a {rec.kind}; outcomes are for procedures",
                           "confirm it without --worked/--failed")
    who = validate.by_whom(by)
    # A failed run says nothing about the code moving on: only a success re-anchors.
    anchors = (anchoring.reanchor(pool, old)
               if old is not None and outcome != "failed" and pool.read(moved) else None)
    refused = gating.anchor_findings(anchors) if anchors is not None else []
    if refused:
        # The code's new name (a rename) is text the gate refuses: replay would
        # skip the whole confirm. Confirm without moving the anchors.
        pool.warnings.append(f"not re-anchored: {refused[0]} (the code's new name); "
                             "the memory stays anchored where it was")
        anchors = None
    oid, _, _ = confirm_op(pool, target, reason, anchors, outcome=outcome, by=who)
    count = pool.read(lambda p: p.salience_inputs([target]))[target][3]
    return Confirmed(id=oid, target=target, confirms=count, reanchored=anchors is not None,
                     outcome=outcome)


def confirm_op(pool: Pool, target: str, reason: str | None,
               anchors: ops.Anchors | None = None, *, outcome: str | None = None,
               by: str | None = None) -> tuple[str, ops.Op, str]:
    def make(author: ops.Author, partition: str, at: int, tz: int, clock: int) -> ops.Op:
        return ops.ConfirmOp(v=ops.FORMAT_VERSION, author=author, partition=partition,
                             clock=clock, at=at, tz=tz, target=target, reason=reason,
                             anchors=anchors, outcome=outcome,  # type: ignore[arg-type]
                             by=by)

    verb = {"worked": "worked", "failed": "failed"}.get(outcome or "", "confirm")
    return pool.append_one(make, f"{verb} {target[:12]}")


def retire(pool: Pool, memory_id: str, kind: str, reason: str | None) -> Retired:
    """Write an invalidate or forget op (nothing when it is already retired so)."""
    target = pool.resolve(memory_id)
    rec = pool.read(lambda p: p.record(target))
    assert rec is not None
    if (kind == "forget" and rec.status == "forgotten") or (
        kind == "invalidate" and rec.status != "active"
    ):
        pool.warnings.append(f"memory {target[:12]} is already {rec.status}; nothing written")
        return Retired(id=None, target=target, status=rec.status, changed=False)
    reason = gating.screen_reason(validate.field(reason, "reason"))
    cls = ops.ForgetOp if kind == "forget" else ops.InvalidateOp
    summary = f"{kind} {target[:12]}"  # reasons stay in the op, out of commit subjects

    def make(author: ops.Author, partition: str, at: int, tz: int, clock: int) -> ops.Op:
        return cls(
            v=ops.FORMAT_VERSION, author=author, partition=partition, clock=clock,
            at=at, tz=tz, target=target, reason=reason,
        )

    oid, _, _ = pool.append_one(make, summary)
    new_status = "forgotten" if kind == "forget" else "invalidated"
    return Retired(id=oid, target=target, status=new_status, changed=True)


def purge(pool: Pool, memory_id: str, reason: str | None, *, dry_run: bool) -> Retired:
    """Tombstone a memory, then rewrite this clone's partition without its bytes."""
    target = pool.resolve(memory_id)
    rec = pool.read(lambda p: p.record(target))
    assert rec is not None
    if rec.partition not in pool.log.own_partitions():
        tomb = ("it is already forgotten: the tombstone hides it in every clone that syncs"
                if rec.status == "forgotten" else
                f"a tombstone still hides it in every clone that syncs: git mem forget "
                f"{target[:12]}")
        raise PurgeRefused(
            f"memory {target[:12]} was written by {rec.author} <{rec.author_email}> on "
            f"partition {rec.partition}, not by this clone; only that clone can purge it",
            f"ask its author to run 'git mem forget {target[:12]} --purge' in the clone "
            f"that wrote it; {tomb}",
        )
    tombstone = rec.status != "forgotten"
    if dry_run:
        plan = pool.log.purge(rec.partition, [target], dry_run=True)
        return Retired(id=None, target=target, status=rec.status, changed=False,
                       purge=purge_report(plan, dry_run=True, tombstone=tombstone))
    ref = pool.log.ref_for(rec.partition)
    before = pool.log.tips([ref]).get(ref)
    if tombstone:
        result = retire(pool, target, "forget", reason)
    else:
        result = Retired(id=None, target=target, status=rec.status, changed=False)
    done = pool.log.purge(rec.partition, [target])
    result.purge = purge_report(_as_planned(pool, done, before), dry_run=False,
                                tombstone=tombstone)
    result.changed = result.changed or bool(done.removed)
    if not done.removed:
        pool.warnings.append(f"memory {target[:12]} was not found on {done.ref}; "
                             "nothing was purged")
    pool.refresh()  # the projection drops the partition's rows and replays it
    return result


def _as_planned(pool: Pool, done: Rewrite, before: str | None) -> Rewrite:
    """The rewrite as its dry run saw it: the partition's tip before this command
    and only the commits it held then. The tombstone written first (on the same
    partition) is rebuilt too, but no other clone has it yet, and the dry run
    (which writes no tombstone) cannot count it: it said "0 commit(s) rewritten"
    where the real run said 1."""
    if before is None or done.old_tip == before:
        return done
    old = [c for c in done.rewritten if c == before or pool.log.is_ancestor(c, before)]
    return msgspec.structs.replace(done, old_tip=before, rewritten=old)


def purge_report(r: Rewrite, *, dry_run: bool, tombstone: bool) -> PurgeReport:
    return PurgeReport(
        dry_run=dry_run, partition=r.partition, old_tip=r.old_tip, new_tip=r.new_tip,
        ops_removed=r.removed, commits_rewritten=r.rewritten, commits_dropped=r.dropped,
        tombstone=tombstone, backups=r.backups,
        remotes=[PurgeRemote(remote=c.namespace, tip=c.tip, has_content=c.has_content,
                             next_push=c.next_push) for c in r.remotes],
    )
