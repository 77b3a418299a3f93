"""The ``Oplog`` facade: one object per repository, the op-log's whole interface.

The api and the projection talk to this one class; behind it each job has
its own collaborator (discovery, refs, objects, history, append, purge,
sync), built once here and handed what it needs. The facade adds no logic
of its own: every method is one call on a collaborator.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import ops
from ..errors import NoIdentity
from . import discover as _discover
from .gitcmd import Git, probe_memory, spawn_detached
from .gitconfig import GitConfig
from .history import History
from .libgit2 import Libgit2
from .objects import Objects
from .records import Appended, Fetched, Integrated, Pack, Pushed, Rewrite
from .refs import (REF_PREFIX, REMOTE_PREFIX, Refs, RefsView, own_partitions,
                   tracked_partition)
from .state import State

if TYPE_CHECKING:
    from .append import Appender
    from .code import Change, Entry
    from .purge import Purger, Purges
    from .sync import Sync


class Oplog:
    """A repository's op-log: discovery, identity, partitions, append, read, sync."""

    def __init__(self, start: str | os.PathLike[str] | None = None) -> None:
        start_path = os.fspath(start) if start is not None else os.getcwd()
        where, opened = _discover.discover(start_path)
        self.gitdir: Path = where.gitdir
        self.workdir: Path = where.workdir
        self.commondir: Path = where.commondir
        self.state_dir: Path = where.state_dir
        self._settings: dict[str, str] | None = None
        self._libgit2 = Libgit2(self.gitdir, opened)
        self._state = State(self.state_dir)
        self._config = GitConfig(self.workdir, self.gitdir, self.commondir, self._state)
        self._objects = Objects(self.commondir)
        self._refs = Refs(self.gitdir, self.commondir, self._libgit2)
        # History is walked from the common directory: in a linked worktree libgit2
        # looks for .git/shallow in the worktree's own git directory, where git never
        # writes it, and a shallow tip's missing parent made its ops unreadable.
        walker = (self._libgit2 if self.gitdir == self.commondir
                  else Libgit2(self.commondir))
        self._history = History(self._objects, self._refs, walker, self._state)
        # Whose identity to write with when git gives none here (see identity()).
        self.identity_from: Oplog | None = None

    # Appending, purging and syncing are built on first use, their modules
    # imported then: a read process (a fresh `git mem recall`) loads none of them.

    @functools.cached_property
    def _appender(self) -> Appender:
        from .append import Appender
        return Appender(self._objects, self._refs, self._libgit2, self._history, self.state_dir)

    @functools.cached_property
    def _purges(self) -> Purges:
        from .purge import Purges
        return Purges(self._state)

    @functools.cached_property
    def _purger(self) -> Purger:
        from .purge import Purger
        return Purger(self._objects, self._refs, self._history, self._libgit2,
                      self._state, self._purges)

    @functools.cached_property
    def _sync(self) -> Sync:
        from .sync import Sync
        return Sync(git=Git(self.workdir), refs=self._refs, history=self._history,
                    purges=self._purges, state=self._state, libgit2=self._libgit2)

    @staticmethod
    def create(path: Path) -> None:
        """Make ``path`` a new git repository (the personal pool), if it is not one."""
        _discover.create(path)

    @property
    def repo(self) -> Any:
        """The libgit2 repository, opened on first use."""
        return self._libgit2.repo

    # -- identity, settings, partition ------------------------------------------------

    def identity(self) -> ops.Author:
        """The author, resolved exactly as git resolves it for a commit; when git
        gives none here, the identity git gives in ``identity_from`` if one is set
        (the personal pool, a repository of its own, borrows the identity of the
        repository the person works in: one set only in that repository's config
        counts). Asked only when needed: a read never resolves it."""
        try:
            return _discover.identity(self._config)
        except NoIdentity:
            if self.identity_from is None or self.identity_from is self:
                raise
            return self.identity_from.identity()

    def settings(self) -> dict[str, str]:
        """Every ``gitmem.*`` git config value (all levels), names lower-cased."""
        if self._settings is None:
            self._settings = self._config.settings()
        return self._settings

    def revision_time(self, revision: str) -> int | None:
        """The committer time of a revision (tag, branch, commit), or None."""
        return _discover.revision_time(self.workdir, revision)

    def tag_times(self) -> list[tuple[str, int]]:
        """Each tag and its commit's committer time (the as-of slider's stops)."""
        return _discover.tag_times(self.workdir)

    def remote_urls(self) -> dict[str, str]:
        """Each remote's fetch URL, with any user name or password removed."""
        return _discover.without_credentials(self._config.remote_urls())

    def clone_id(self, create: bool = True) -> str:
        """This clone's random id, created once, race-free ("" if absent and not ``create``)."""
        return self._state.clone_id(create)

    def set_clone_id(self, value: str) -> None:
        """Replace this clone's id (rekey). Atomic: write a temp file, rename it."""
        self._state.set_clone_id(value)

    def partition_for(self, author: ops.Author) -> str:
        """The partition ``author`` writes to from this clone."""
        return ops.partition_name(author.email, self.clone_id())

    @staticmethod
    def ref_for(partition: str) -> str:
        """The ref of a partition."""
        return REF_PREFIX + partition

    def head(self) -> str | None:
        """HEAD's commit id, or None on an unborn branch."""
        return self._refs.head()

    # -- the code memories are about (code.py, imported on first use: a read of
    # memories anchored to no code never needs it) -----------------------------------

    def code_entries(self, rev: str, paths: list[str]) -> dict[str, Entry]:
        """path -> what it is at ``rev`` (a blob or tree id), for paths that exist there."""
        from . import code

        return code.entries(self.workdir, rev, paths)

    def code_change(self, path: str, anchor: Entry, commit: str | None, now: Entry | None,
                    head: str, lines: tuple[int, int] | None = None) -> Change:
        """How ``path`` changed from ``anchor`` (at ``commit``) to ``now`` (at ``head``)."""
        from . import code

        return code.compare(self.workdir, path, anchor, commit, now, head, lines)

    def code_diff(self, rev: str | None) -> tuple[list[str], list[str]] | None:
        """(paths, identifiers) a change touches: the work tree against HEAD, or ``rev``."""
        from . import code

        return code.diff(self.workdir, rev)

    # -- reading ---------------------------------------------------------------------

    def partitions(self) -> dict[str, str]:
        """Every partition ref and its tip commit id. Cheap: reads refs only."""
        return self._refs.under(REF_PREFIX)

    def cut_by_shallow(self) -> bool:
        """A shallow fetch may have left some partition without its history (status)."""
        return self._history.cut_by_shallow(self.commondir / "shallow")

    def shallow_ids(self) -> frozenset[str] | None:
        """The commits .git/shallow lists (their parents are not here), or none; None
        when it lists too many to read on every command (history.SHALLOW_READ)."""
        return self._history.shallow_ids(self.commondir / "shallow")

    def memory_commits(self, ids: frozenset[str]) -> list[str]:
        """Those of ``ids`` that are memory commits (their tree holds a pack)."""
        return self._history.memory_commits(ids)

    def tips(self, refs: list[str]) -> dict[str, str]:
        """The tips of the refs ``refs`` (partitions or remote-tracking ones) that
        exist, each looked up alone: a few among 20,000 cost what a few cost."""
        found = self._refs.lookup(refs)
        if found is None:
            listed = {**self._refs.under(REF_PREFIX), **self._refs.under(REMOTE_PREFIX)}
            return {ref: listed[ref] for ref in refs if ref in listed}
        return found

    def tracking_of(self, names: set[str]) -> dict[str, str]:
        """The remote-tracking refs of the partitions ``names``, in every namespace."""
        spaces = self._refs.namespaces()
        if spaces is None:
            return {r: t for r, t in self.tracking().items()
                    if tracked_partition(r) in names}
        return self.tips([f"{REMOTE_PREFIX}{ns}/{n}" for ns in spaces for n in sorted(names)])

    def any_partitions(self) -> bool:
        """True when refs/memory/ holds any ref."""
        return self._refs.any_under(REF_PREFIX)

    def others_partition(self) -> bool:
        """True when refs/memory/ holds a partition this clone does not write."""
        cid = self.clone_id(create=False)
        return self._refs.any_under(REF_PREFIX, but=("-" + cid) if cid else None)

    def fetched(self, namespace: str) -> bool:
        """True when a fetch from the remote of ``namespace`` brought any partition."""
        return self._refs.any_under(f"{REMOTE_PREFIX}{namespace}/")

    def own_partitions(self) -> list[str]:
        """Partition names this clone writes (any author): they end in our clone id."""
        cid = self.clone_id(create=False)
        if not cid:
            return []
        found = self._refs.ending(REF_PREFIX, "-" + cid)
        return own_partitions(self.partitions() if found is None else found, cid)

    def refs_view(self) -> RefsView | None:
        """What refs/memory/* and refs/memory-remotes/* are made of now, read
        cheaply (loose refs, packed-refs by identity; see refs.RefsView), or None
        when the layout is not one we read ourselves."""
        return self._refs.view((REF_PREFIX, REMOTE_PREFIX))

    def listing_of(self, view: RefsView, refs: frozenset[str] | None) -> dict[str, str] | None:
        """The partition tips ``view`` stands for (of ``refs``, or every one), or
        None when packed-refs is no longer the file it saw (or was not settled)."""
        packed = self._refs.packed()
        if (packed is None or not view.settled
                or (list(packed.identity) if packed.identity else None) != view.packed):
            return None
        if refs is None:
            try:
                out = {n.decode(): o.decode() for n, o in packed.items(REF_PREFIX.encode())}
            except UnicodeDecodeError:
                return None
            out.update((n, o) for n, o in view.loose.items() if n.startswith(REF_PREFIX))
            return out
        found: dict[str, str] = {}
        for ref in refs:
            if ref in view.loose:
                found[ref] = view.loose[ref]
                continue
            oid = packed.get(ref.encode())
            if oid is not None:
                found[ref] = oid.decode()
        return found

    def pack_refs(self) -> bool:
        """Move loose refs into packed-refs (``git pack-refs --all``, what ``git gc``
        does): a flood of fetched partitions then costs one file to look at, not
        one per ref. False when git could not (a read-only .git, a lock held, no git
        on PATH) or should not: a ``reference-transaction`` hook would see every
        branch of the user's created and deleted by a read (git before 2.42 cannot
        pack refs/memory alone), so then nothing is packed and reads list the loose
        files, as before."""
        from ..errors import GitMemError

        git = Git(self.workdir)
        try:
            hook = git("rev-parse", "--git-path", "hooks/reference-transaction")
            if hook.returncode != 0:
                return False
            path = Path(hook.stdout.strip())
            if not path.is_absolute():
                path = self.workdir / path
            if os.access(path, os.X_OK):
                return False
            return git("pack-refs", "--all").returncode == 0
        except (OSError, GitMemError):
            return False

    def is_commit(self, oid: str) -> bool:
        """True when ``oid`` names a commit this repository has."""
        return self._history.is_commit(oid)

    def check_own_tips(self, nothing: str) -> None:
        """PartitionNotACommit when one of this clone's partition refs points at
        something that is not a commit (sharing refuses until it is healed)."""
        local = self.partitions()
        for name in self.own_partitions():
            self._history.check_own_tip(REF_PREFIX + name, local.get(REF_PREFIX + name),
                                        nothing=nothing)

    def peel_to_commit(self, oid: str) -> str | None:
        """The commit a tag ``oid`` points at (None when ``oid`` is no tag of one)."""
        return self._history.peel_to_commit(oid)

    def is_ancestor(self, old: str, new: str) -> bool:
        """True when ``old`` is ``new`` or one of its ancestors."""
        return self._history.is_ancestor(old, new)

    def save_memos(self) -> None:
        """Keep what this process learned about commits (History.save_facts)."""
        self._history.save_facts()

    def iter_packs(self, tip: str, since: str | list[str] | None = None) -> Iterator[Pack]:
        """The commits after ``since`` up to ``tip``, oldest first, with their packs."""
        return self._history.iter_packs(tip, since)

    def _plain_packs(self, tip: str, since: list[str]) -> list[Pack] | None:
        # The loose-object reader alone (tests compare it with libgit2's walk).
        return self._history.plain_packs(tip, since)

    # -- writing ---------------------------------------------------------------------

    def append(
        self,
        partition: str,
        author: ops.Author,
        at: int,
        tz: int,
        summary: str,
        make_lines: Callable[[int], list[bytes]],
        *,
        next_clock: Callable[[], int],
        timeout: float = 60.0,
    ) -> Appended:
        """Append one commit holding the pack ``make_lines(first_clock)`` returns.

        Op i of the pack must carry clock ``first_clock + i``. ``next_clock()``
        gives ``first_clock``; both are called again on every retry (under the
        append lock), so a retry builds on what the lost race added. The clock
        comes from the caller because only replay knows which ops count: a tip's
        ``Gitmem-Clock`` trailer is whatever its writer claimed (issue 13).
        """
        return self._appender.append(partition, author, at, tz, summary, make_lines,
                                     next_clock=next_clock, timeout=timeout)

    def purge(self, partition: str, op_ids: list[str], *, dry_run: bool = False,
              timeout: float = 60.0) -> Rewrite:
        """Rewrite our ``partition`` without the ops ``op_ids`` (see purge.py)."""
        return self._purger.purge(partition, op_ids, dry_run=dry_run, timeout=timeout)

    def purged_before(self, partition: str, tip: str) -> bool:
        """True when ``tip`` is history of ``partition`` that a purge here replaced."""
        return self._purges.replaced_before(partition, tip)

    def force_ref(self, ref: str, old: str | None, new: str) -> bool:
        """Move a local ref we own the decision for, by compare-and-swap."""
        return self._refs.force(ref, old, new)

    def delete_ref(self, ref: str, old: str) -> bool:
        """Delete a local ref if it still points at ``old``."""
        return self._refs.delete(ref, old)

    def backup_ref(self, partition: str, tip: str) -> str | None:
        """Keep a partition's old tip reachable outside refs/memory/ (never replayed);
        None when the object is missing."""
        return self._refs.backup(partition, tip)

    # -- sync ------------------------------------------------------------------------

    def remotes(self) -> list[str]:
        """The names of the configured remotes, sorted."""
        return self._sync.remotes()

    def default_remote(self, *, push: bool = False, command: str = "sync") -> str:
        """The remote git itself would use for ``git fetch`` (or ``git push``); when
        there is none, the hint names ``command`` (the one that asked)."""
        return self._sync.default_remote(push=push, command=command)

    def namespace(self, remote: str) -> str:
        """The private ref namespace for a remote name or URL."""
        return self._sync.namespace(remote)

    def tracking(self, namespace: str | None = None) -> dict[str, str]:
        """Remote-tracking partitions: ref under refs/memory-remotes/ -> tip."""
        return self._refs.tracking(namespace)

    def fetch(self, remote: str) -> Fetched:
        """Fetch every partition of ``remote`` into the private namespace (sync.py)."""
        return self._sync.fetch(remote)

    def integrate(self, namespace: str | None = None, *, replace: bool = False,
                  must_write: bool = False, only: frozenset[str] | None = None) -> Integrated:
        """Bring fetched partitions into refs/memory/*, checking ancestry (see sync.py);
        ``only``: just these partitions (names), the ones whose refs moved."""
        if only is not None and not only:
            return Integrated([], [], [], [])
        if not self._refs.any_under(REMOTE_PREFIX + (namespace + "/" if namespace else "")):
            return Integrated([], [], [], [])  # nothing fetched: every read's common case
        return self._sync.integrate(namespace, replace=replace, must_write=must_write,
                                    only=only)

    def push(self, remote: str, partitions: list[str]) -> list[Pushed]:
        """Push our partitions to ``remote``: fast-forward only (see sync.py)."""
        return self._sync.push(remote, partitions)

    def probe_memory(self, remote: str, timeout: float = 3.0) -> int | None:
        """How many memory refs ``remote`` holds (one ``git ls-remote``), None if unknown."""
        return probe_memory(remote, self.workdir, timeout)

    def spawn(self, argv: list[str], log: Path | None = None) -> bool:
        """Start ``argv`` detached, in this work tree (the background catch-up)."""
        return spawn_detached(argv, self.workdir, log)

    def pre_push_hook(self, install: bool | None = None) -> str:
        """The opt-in pre-push hook (see githooks.py): its state, or install/remove it."""
        from . import githooks
        if install is None:
            return githooks.state(self.workdir)
        return githooks.install(self.workdir) if install else githooks.uninstall(self.workdir)

    def add_fetch_refspec(self, remote: str) -> bool:
        """Make a plain ``git fetch <remote>`` also fetch memory. Idempotent."""
        return self._sync.add_fetch_refspec(remote)
