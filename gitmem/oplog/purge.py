"""Purging: the one place a partition's history is rewritten (``forget --purge``).

Only this clone's own partitions, by compare-and-swap from the tip the
rewrite started from. Objects go through libgit2: a rare path, and it knows
every object format. No ref ever keeps the old tip: the content must become
unreachable. What is kept is ``.git/mem/purges``, the ids of the replaced
commits, so that push and integrate (sync.py) can tell "the remote still has
our pre-purge history" from "someone else wrote to our partition".
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from .. import ops
from ..errors import LogBusy, PurgeRefused
from .append import append_lock
from .history import History
from .libgit2 import Libgit2, pygit2
from .objects import PACK_FILE, Objects
from .records import RemoteCopy, Rewrite
from .refs import BACKUP_PREFIX, REF_PREFIX, REMOTE_PREFIX, Refs
from .state import State

PURGES_FILE = "purges"


class Purges:
    """The record of what purges in this clone replaced (``.git/mem/purges``)."""

    def __init__(self, state: State) -> None:
        self._state = state

    def replaced_before(self, partition: str, tip: str) -> bool:
        """True when ``tip`` is history of ``partition`` that a purge here replaced."""
        entry = self._load().get(partition)
        if not entry:
            return False
        return tip in entry.get("replaced", [])

    def _load(self) -> dict[str, dict[str, list[str]]]:
        # Not disposable: a damaged record is left for the user, never deleted.
        data = self._state.read_json(PURGES_FILE, disposable=False)
        return data if isinstance(data, dict) else {}

    def record(self, partition: str, tip: str, replaced: list[str]) -> None:
        """Remember the replaced commits (written before the ref moves: crash-safe)."""
        data = self._load()
        entry = data.setdefault(partition, {"tips": [], "replaced": []})
        entry["tips"] = [*entry.get("tips", []), tip]
        entry["replaced"] = sorted(set(entry.get("replaced", [])) | set(replaced))
        self._state.replace(PURGES_FILE, json.dumps(data, sort_keys=True, indent=1) + "\n")


class Purger:
    """Rewrites this clone's partitions (and rekey's backups) without chosen ops."""

    def __init__(self, objects: Objects, refs: Refs, history: History, libgit2: Libgit2,
                 state: State, purges: Purges) -> None:
        self._objects = objects
        self._refs = refs
        self._history = history
        self._libgit2 = libgit2
        self._state = state
        self._purges = purges

    def purge(self, partition: str, op_ids: list[str], *, dry_run: bool = False,
              timeout: float = 60.0) -> Rewrite:
        """Rewrite our ``partition`` without the ops ``op_ids``.

        Walks the chain root to tip; a commit that loses lines gets a new
        pack and a neutral message (add messages quote the memory), every
        later commit is re-parented with its author, committer, times and
        message kept; a commit left with no line is dropped (if every one is,
        one empty commit stays, so the rewrite can still replace the
        partition in other clones). Backup refs (rekey) holding a removed op,
        or rekey's copy of the same record, are rewritten the same way.
        ``dry_run`` writes nothing.
        """
        ref = REF_PREFIX + partition
        drop = set(op_ids)
        deadline = time.monotonic() + timeout
        with append_lock(self._state.path, ref, deadline):
            tip = self._refs.current(ref)
            if tip is None:
                raise PurgeRefused(f"this clone has no partition {partition}")
            new_tip, gone, rewritten, dropped, holders = self._rewrite_chain(
                tip, lambda line: ops.op_id(line) in drop, write=not dry_run
            )
            # rekey re-appends ops under new ids: in its backups, a copy of a
            # removed add (the same memory record) is removed as well.
            copy_of = _same_memory(gone)

            def in_backup(line: bytes) -> bool:
                return ops.op_id(line) in drop or copy_of(line)

            backups = [
                b for b, btip in sorted(self._refs.under(BACKUP_PREFIX).items())
                if self._rewrite_chain(btip, in_backup, write=False)[1]
            ]
            removed = [ops.op_id(line) for line in gone]
            result = Rewrite(partition, ref, tip, None, removed, rewritten, dropped,
                             self._remote_copies(partition, tip, holders,
                                                 set(rewritten) | set(dropped)),
                             backups)
            if dry_run or not removed:
                return result
            # Recorded before the ref moves, so no crash can leave the remote's
            # old history looking like someone else's commits.
            self._purges.record(partition, tip, rewritten + dropped)
            moved = (self._refs.cas(ref, tip, new_tip) if self._objects.plain_writes_ok()
                     else self._refs.force(ref, tip, new_tip))
            if not moved:
                raise LogBusy(f"{ref} moved while it was being purged; it was left as it is",
                              "run the purge again")
            result.new_tip = new_tip
            for b in backups:
                old = self._refs.under(BACKUP_PREFIX).get(b)
                if old:
                    self._refs.force(b, old, self._rewrite_chain(old, in_backup, write=True)[0])
        return result

    def _remote_copies(self, partition: str, tip: str, holders: list[str],
                       replaced: set[str]) -> list[RemoteCopy]:
        out = []
        for tref, ttip in sorted(self._refs.under(REMOTE_PREFIX).items()):
            if not tref.endswith("/" + partition):
                continue
            ns = tref[len(REMOTE_PREFIX):-len(partition) - 1]
            has = any(self._history.is_ancestor(h, ttip) for h in holders)
            if ttip in replaced or self._purges.replaced_before(partition, ttip):
                action = "replace (force-with-lease)"
            elif self._history.is_ancestor(ttip, tip):
                action = "fast-forward"
            else:
                action = "rejected (it holds commits this clone does not have)"
            out.append(RemoteCopy(ns, ttip, has, action))
        return out

    def _rewrite_chain(
        self, tip: str, drop: Callable[[bytes], bool], *, write: bool
    ) -> tuple[str, list[bytes], list[str], list[str], list[str]]:
        """Rebuild the first-parent chain ending at ``tip`` without the op
        lines ``drop`` selects.

        Returns (new tip, removed lines, rewritten commits, dropped commits,
        commits that held a removed op). Without ``write`` nothing is created
        and the new tip is "" (or ``tip`` when nothing changes).
        """
        chain = []
        commit = self._libgit2.repo[tip]
        while True:
            if len(commit.parents) > 1:
                raise PurgeRefused(
                    f"commit {commit.id} on {tip[:12]}'s chain is a merge; a partition "
                    "is a linear chain, so it was not written by git mem",
                    "inspect it with 'git log --graph' on that ref",
                )
            chain.append(commit)
            if not commit.parents:
                break
            commit = commit.parents[0]
        chain.reverse()
        removed: list[bytes] = []
        rewritten: list[str] = []
        dropped: list[str] = []
        holders: list[str] = []
        parent: str | None = None  # the (possibly new) id the next commit hangs on
        changed = False
        for commit in chain:
            cid = str(commit.id)
            data = self._pack_of(commit)
            new_data = None
            gone: list[bytes] = []
            if data is not None:
                pieces = data.split(b"\n")
                gone = [p for p in pieces if p.strip() and drop(p)]
                if gone:
                    removed.extend(gone)
                    holders.append(cid)
                    new_data = b"\n".join(p for p in pieces if p not in gone)
                    if not ops.split_pack(new_data):
                        dropped.append(cid)
                        changed = True
                        continue
            if not changed and new_data is None:
                parent = cid
                continue
            changed = True
            rewritten.append(cid)
            if not write:
                parent = ""
                continue
            tree = commit.tree_id
            message = commit.raw_message
            if new_data is not None:
                tree = self._tree_with_pack(commit.tree, new_data)
                message = _purge_message(message, len(gone), len(ops.split_pack(new_data)))
            parent = str(self._commit_like(commit, message, tree, parent))
        if not write:
            return (tip if not changed else ""), removed, rewritten, dropped, holders
        if parent is None and changed:
            # Every commit lost every line: keep one empty commit, never delete
            # the ref (a deleted ref would not be deleted in other clones).
            last = chain[-1]
            tree = self._tree_with_pack(last.tree, b"")
            message = _purge_message(last.raw_message, len(removed), 0)
            parent = str(self._commit_like(last, message, tree, None))
        return (parent or tip), removed, rewritten, dropped, holders

    def _pack_of(self, commit: Any) -> bytes | None:
        try:
            obj = self._libgit2.repo[commit.tree[PACK_FILE].id]
        except KeyError:
            return None
        if not isinstance(obj, pygit2.Blob) or obj.size > ops.MAX_PACK_BYTES:
            return None  # replay skips it too: it never served an op
        return bytes(obj.data)

    def _tree_with_pack(self, tree: Any, data: bytes) -> Any:
        repo = self._libgit2.repo
        builder = repo.TreeBuilder(tree)
        builder.insert(PACK_FILE, repo.create_blob(data), pygit2.enums.FileMode.BLOB)
        return builder.write()

    def _commit_like(self, commit: Any, message: bytes, tree: Any, parent: str | None) -> Any:
        args = [None, commit.author, commit.committer, message, tree,
                [parent] if parent else []]
        if commit.message_encoding:
            args.append(commit.message_encoding)
        return self._libgit2.repo.create_commit(*args)


def _same_memory(lines: list[bytes]) -> Callable[[bytes], bool]:
    """A test for op lines that add the same memory record as one of ``lines``."""
    bodies = []
    for line in lines:
        try:
            op = ops.decode(line)
        except ValueError:
            continue
        if isinstance(op, ops.AddOp):
            bodies.append(op.memory)

    def test(line: bytes) -> bool:
        if not bodies or b'"op":"add"' not in line:
            return False
        try:
            op = ops.decode(line)
        except ValueError:
            return False
        return isinstance(op, ops.AddOp) and op.memory in bodies

    return test


def _purge_message(old: bytes, removed: int, remaining: int) -> bytes:
    """A neutral message for a commit that lost ops (an add's quotes its memory).

    The Gitmem-* trailers are kept, with Gitmem-Ops updated; Gitmem-Clock
    stays as it was (an upper bound: clocks only need to grow).
    """
    trailers = []
    for line in old.splitlines():
        if line.startswith(b"Gitmem-Ops:"):
            line = b"Gitmem-Ops: %d" % remaining
        if line.startswith(b"Gitmem-") and b": " in line:
            trailers.append(line)
    if not any(t.startswith(b"Gitmem-Ops:") for t in trailers):
        trailers.append(b"Gitmem-Ops: %d" % remaining)
    return b"purge: removed %d op(s)\n\n" % removed + b"\n".join(trailers) + b"\n"

