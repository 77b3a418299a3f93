"""Sharing memory through any git remote: pull, push, sync, init, rekey.

Why this exists: the op-log travels with the code, through the remotes the team
already has. Git does the transport (``gitmem.oplog``); this module is the
policy: a pull integrates every partition and refreshes the projection, a push
is fast-forward only and sends this clone's own partitions, and a clone that
finds its partition id used elsewhere (a copied ``.git``) moves its unpushed
ops to a new id with ``rekey``, losing nothing.
"""

from __future__ import annotations

import os

import msgspec

from .. import ops
from ..errors import InvalidInput, NoIdentity, PartitionConflict
from ..model import InitReport, RekeyReport, SyncReport
from ..oplog import PACK_FILE, REF_PREFIX, tracked_partition
from ..oplog.remotes import shown as shown_remote
from . import heal
from .pool import Pool


def pull(pool: Pool, remote: str | None = None) -> SyncReport:
    """Fetch every partition from ``remote`` and bring the others' forward."""
    remote = remote or pool.log.default_remote(command="pull")
    # A partition ref of ours that is not a commit: git's own fetch may fail on it
    # (an object that is missing) and a push would spread it; say what is wrong.
    pool.log.check_own_tips("fetched")
    fetched = pool.log.fetch(remote)
    if fetched.left_out:
        left_out = fetched.left_out
        shown = ", ".join(r[len(REF_PREFIX):][:60] for r in left_out[:3])
        pool.warn(f"left out {len(left_out)} ref(s) of '{shown_remote(remote)}' that this clone "
                  f"cannot store ({shown}{' ...' if len(left_out) > 3 else ''}): not a "
                  "partition's name, or one this file system cannot tell from another")
    integ = pool.log.integrate(pool.log.namespace(remote), replace=True, must_write=True)
    report = SyncReport(
        remote=shown_remote(remote), fetched=True, created=integ.created,
        fast_forwarded=integ.fast_forwarded, replaced=integ.replaced,
        conflicts=integ.conflicts,
    )
    report.refresh = pool.refresh()
    if fetched.filled and pool.read(lambda p: p.skipped(1, reason=f"{PACK_FILE} blob ")
                                     or p.skipped(1, reason="tree ")):
        # Ops skipped for a blob or tree a partial clone lacked, fetched just now:
        # replay cannot revisit a commit it has passed, a rebuild can (rare: once).
        report.refresh = pool.rebuild()
    pool.warn_foreign(integ)
    if integ.conflicts:
        raise PartitionConflict(
            f"'{shown_remote(remote)}' holds commits on this clone's partition "
            f"{', '.join(integ.conflicts)} that this clone does not have "
            "(the same .git copied to two places, or a push to this partition from "
            "somewhere else)"
        )
    return report

def push(pool: Pool, remote: str | None = None) -> SyncReport:
    """Push this clone's own partitions to ``remote`` (fast-forward only)."""
    remote = remote or pool.log.default_remote(push=True, command="push")
    pushed = pool.log.push(remote, pool.log.own_partitions())
    unrecorded = sorted({p.unrecorded for p in pushed if p.unrecorded})
    if unrecorded:
        # The remote has it: what the command is for. Only this clone's note of
        # it (refs/memory-remotes/) is missing, so status counts it as unpushed.
        pool.warn(f"pushed to '{shown_remote(remote)}', but this clone could not record it: "
                  f"{'; '.join(unrecorded)}; 'git mem status' counts it as unpushed "
                  "until a later push records it")
    return SyncReport(
        remote=shown_remote(remote),
        pushed=[{"partition": p.partition, "status": p.status, "old": p.old, "new": p.new}
                for p in pushed],
    )

def sync(pool: Pool, remote: str | None = None) -> SyncReport:
    """Pull, then push: after it, the remote and this clone hold the same memory."""
    remote = remote or pool.log.default_remote()
    report = pull(pool, remote)
    report.pushed = push(pool, remote).pushed
    return report

def init(pool: Pool, *, fetch_refspec: bool = False, remote: str | None = None,
         pre_push: bool | None = None) -> InitReport:
    """One-time set-up: this clone's id, and optionally a memory fetch refspec and
    the pre-push hook that pushes memory with the code (``pre_push=False`` removes it)."""
    cid = pool.log.clone_id()
    try:
        mine: str | None = pool.log.partition_for(pool.log.identity())
    except NoIdentity:
        mine = None
    added: dict[str, bool] = {}
    if fetch_refspec:
        targets = [remote] if remote else [pool.log.default_remote(command="init --fetch-refspec --remote")]
        for r in targets:
            if r not in pool.log.remotes():
                raise InvalidInput(f"'{r}' is not a configured remote",
                                   "list remotes with 'git remote -v'")
            added[r] = pool.log.add_fetch_refspec(r)
    try:
        hook = pool.log.pre_push_hook(pre_push)
    except OSError as exc:
        raise InvalidInput(f"cannot change the pre-push hook: {exc}",
                           "check the hooks directory ('git rev-parse --git-path hooks')") from None
    return InitReport(clone_id=cid, partition=mine, fetch_refspecs_added=added, pre_push=hook)

def rekey(pool: Pool) -> RekeyReport:
    """Give this clone a new partition id, moving every op no remote has.

    For each of this clone's partitions: its tip is kept under
    refs/memory-backup/ first; the ops that no remote holds are re-appended
    to the new partition (ids referenced between them are remapped); the
    old local ref is then set to the remote's version, or removed when no
    remote has it (all its ops moved). The new id is saved last, so an
    interrupted rekey leaves this clone on its old id and can run again.
    """
    with pool.writing():  # a full disk or a read-only .git: the typed error
        return _rekey(pool)


def _rekey(pool: Pool) -> RekeyReport:
    try:
        old_cid = pool.log.clone_id()
        own = pool.log.own_partitions()
    except InvalidInput:
        # A clone-id file that holds no clone id names no partition of ours:
        # nothing to move, and the new id below replaces the file.
        old_cid, own = "", []
    new_cid = os.urandom(6).hex()
    tracking: dict[str, list[str]] = {}
    for tref, tip in pool.log.tracking().items():
        tracked = tracked_partition(tref)
        if tracked is not None:
            tracking.setdefault(tracked, []).append(tip)
    local = pool.log.partitions()
    plan = [(name, local[REF_PREFIX + name]) for name in own if REF_PREFIX + name in local]
    backups = [b for b in (pool.log.backup_ref(name, tip) for name, tip in plan) if b]
    moved = 0
    renamed: dict[str, str] = {}
    for name, tip in plan:
        # A remote copy that is not a commit holds nothing to keep or to move to.
        remote_tips = sorted(t for t in set(tracking.get(name, [])) if pool.log.is_commit(t))
        # A tip someone wrapped in a tag: the ops of the commit it names are moved
        # (only those that claim this partition, as replay would take them).
        peeled = pool.log.peel_to_commit(tip)
        lines: list[bytes] = []
        for pack in pool.log.iter_packs(peeled or tip, remote_tips):
            if pack.data is not None:
                lines.extend(ops.split_pack(pack.data))
        moved += _reappend(pool, lines, new_cid, renamed, only=name if peeled else None)
        # The old partition now belongs to the other copy (or to nobody).
        newest = [t for t in remote_tips
                  if not any(o != t and pool.log.is_ancestor(t, o) for o in remote_tips)]
        if newest:
            pool.log.force_ref(REF_PREFIX + name, tip, newest[0])
        else:
            pool.log.delete_ref(REF_PREFIX + name, tip)
    pool.log.set_clone_id(new_cid)
    pool.refresh()
    return RekeyReport(old_clone_id=old_cid, new_clone_id=new_cid, moved_ops=moved,
                       partitions=renamed, backups=backups)

def _reappend(pool: Pool, lines: list[bytes], new_cid: str, renamed: dict[str, str],
              only: str | None = None) -> int:
    """Write ops again on this clone's new partition, remapping ids between them
    (``only``: just the ops that claim that partition)."""
    from ..replay import Decoded, check_line

    idmap: dict[str, str] = {}
    count = 0
    for raw in lines:
        try:
            claimed = ops.decode(raw).partition
        except (msgspec.DecodeError, msgspec.ValidationError):
            continue  # replay skips it too: nothing to move
        if only is not None and claimed != only:
            continue
        item = check_line(raw, claimed)
        if not isinstance(item, Decoded):
            continue
        op = item.op
        partition = ops.partition_name(op.author.email, new_cid)
        renamed[op.partition] = partition

        idmap[item.id] = heal.append_again(pool, partition, op, idmap,
                                           f"rekey: {ops.op_type(op)} {item.id[:12]}")
        count += 1
    return count
