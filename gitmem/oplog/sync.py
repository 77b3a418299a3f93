"""Sync: fetch, integrate and push partitions with the real git binary.

git's transports, credential helpers and config all apply, so memory syncs
wherever ``git fetch`` and ``git push`` already work. Fetched partitions land
in a private namespace (``refs/memory-remotes/<remote>/``) and are brought
into ``refs/memory/*`` here, after checking ancestry: a fetch never
overwrites unpushed local commits, and a rewritten partition replaces ours
only when we ask for it.

Everything sync needs is handed to it (the git runner, refs, history, the
purge record, the clone's state, libgit2 for remotes and config), so the
contract is the constructor's signature.
"""

from __future__ import annotations

import hashlib
import re

from ..errors import (
    DiskError,
    GitMemError,
    NoRemote,
    PushRejected,
    ReadOnly,
    RefNameConflict,
    RemoteError,
    errno_in_text,
    from_os_error,
)
from .gitcmd import Git, last_line, what_git_said
from .history import History
from .libgit2 import Libgit2, pygit2
from .purge import Purges
from .records import Fetched, Integrated, Pushed
from .refs import REF_PREFIX, REMOTE_PREFIX, Refs, own_partitions, tracked_partition
from .remotes import (PROMISOR_KEYS, checked_remote, missing_pack_objects, partial_clone, scrubbed, shown,
                      storable)
from .state import State

_REMOTE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\Z")
# git's words for a ref that cannot be created because another ref is in the way
# (refs/files-backend.c): "cannot lock ref 'A': 'A/x' exists; cannot create 'A'".
_EXISTS = re.compile(r"cannot lock ref '([^']+)': '([^']+)' exists")
# A ref the remote could not lock or update (another receive-pack holds it, or one
# killed there left its .lock): nothing to do with which refs the host accepts.
_CONTENDED = re.compile(r"failed to update ref|failed to lock|cannot lock ref|Unable to create "
                        r"'[^']*\.lock'")


class Sync:
    """Moves partitions between this clone and its remotes."""

    def __init__(self, *, git: Git, refs: Refs, history: History, purges: Purges,
                 state: State, libgit2: Libgit2) -> None:
        self._git = git
        self._refs = refs
        self._history = history
        self._purges = purges
        self._state = state
        self._libgit2 = libgit2

    def remotes(self) -> list[str]:
        """The names of the configured remotes, sorted."""
        return sorted(self._libgit2.repo.remotes.names())

    def default_remote(self, *, push: bool = False, command: str = "sync") -> str:
        """The remote git itself would use for ``git fetch`` (or ``git push``)."""
        repo = self._libgit2.repo
        cfg = repo.config
        branch = None
        try:
            if not repo.head_is_detached:
                branch = repo.head.shorthand
        except pygit2.GitError:
            try:
                branch = repo.references["HEAD"].target.rsplit("/", 1)[-1]  # unborn
            except (KeyError, AttributeError):
                branch = None
        keys = []
        if branch and push:
            keys.append(f"branch.{branch}.pushRemote")
        if push:
            keys.append("remote.pushDefault")
        if branch:
            keys.append(f"branch.{branch}.remote")
        for key in keys:
            try:
                value = cfg[key]
            except KeyError:
                continue
            if value and value != ".":
                return checked_remote(str(value), key)
        names = self.remotes()
        if "origin" in names:
            return "origin"
        raise NoRemote(
            "no remote to sync memory with"
            + (f" (remotes: {', '.join(names)})" if names else ""),
            f"add one with 'git remote add origin <url>', or name it: git mem {command} <remote>"
            if not names else f"name one: git mem {command} {names[0]}",
        )

    def namespace(self, remote: str) -> str:
        """The private ref namespace for a remote name or URL."""
        if remote in self.remotes() and _REMOTE_NAME.match(remote):
            return remote
        digest = hashlib.sha256(remote.encode()).hexdigest()[:12]
        return f"url-{digest}"

    def tracking(self, namespace: str | None = None) -> dict[str, str]:
        """Remote-tracking partitions: ref under refs/memory-remotes/ -> tip."""
        return self._refs.tracking(namespace)

    def fetch(self, remote: str) -> Fetched:
        """Fetch every partition of ``remote`` into the private namespace: the refs
        under refs/memory/ left out because this clone cannot store them (see
        _fetch_storable, usually none), and the objects a partial clone lacked."""
        ns = self.namespace(checked_remote(remote))
        proc = self._git(
            "fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
            "--prune", "--quiet", "--end-of-options", remote,
            f"+{REF_PREFIX}*:{REMOTE_PREFIX}{ns}/*",
        )
        if proc.returncode == 0:
            return Fetched([], self._fill_missing(remote))
        where = shown(remote)
        here = self._local_failure(proc.stderr, f"fetch from '{where}'", remote)
        if here is not None:
            raise here
        left_out = self._fetch_storable(remote, ns)
        if left_out is not None:
            return Fetched(left_out, self._fill_missing(remote))
        raise RemoteError(
            f"git fetch from '{where}' failed: {what_git_said(self._scrubbed(proc.stderr, remote))}",
            "check the remote's name or URL and your access (git fetch "
            f"{where} should work)",
        )

    def _fetch_storable(self, remote: str, ns: str) -> list[str] | None:
        """After a failed fetch: fetch by name the partitions this clone can store,
        prune the rest of the namespace, and return the refs left out; None when
        the remote cannot even be listed (then the failure is the remote's).

        Why: one ref a teammate pushed that this clone cannot store (a name too long
        for the file system, 'p' beside 'p/x': a file and a folder at once) failed
        the one fetch of refs/memory/* for every clone, and no sync went through.
        Which names are taken: remotes.storable."""
        listed = self._git("ls-remote", "--refs", "--end-of-options", remote, f"{REF_PREFIX}*")
        if listed.returncode != 0:
            return None
        refs = (line.split("\t", 1)[-1].strip() for line in listed.stdout.splitlines())
        names = {ref[len(REF_PREFIX):] for ref in refs if ref.startswith(REF_PREFIX)}
        take, left_out = storable(names, self._refs.directory)
        prefix = f"{REMOTE_PREFIX}{ns}/"
        for ref, tip in self._refs.under(prefix).items():
            if ref[len(prefix):] not in take:
                self._refs.delete(ref, tip)  # gone from the remote, or left out
        if take:
            proc = self._git(
                "fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
                "--quiet", "--stdin", "--end-of-options", remote,
                input="".join(f"+{REF_PREFIX}{n}:{prefix}{n}\n" for n in take))
            if proc.returncode != 0:
                here = self._local_failure(proc.stderr, f"fetch from '{shown(remote)}'", remote)
                if here is not None:
                    raise here
                return None
        return left_out

    def _fill_missing(self, remote: str) -> int:
        """In a partial clone (``git clone --filter=blob:none`` or ``tree:0``), fetch
        the memory commits' trees and ``ops.jsonl`` blobs the filter left out, and
        nothing else they hold; how many objects were asked for. git fetches a
        missing object when one of its commands needs it, libgit2 (which replays)
        never does, so every op arrived as a "missing blob" and the team's memory
        stayed empty however often one synced. Asked for as git's own lazy fetch
        asks (noop negotiation, ids on stdin): trees first, then the blobs they
        name. A remote that refuses leaves them listed by status, as before."""
        if not partial_clone(self._git("config", "--get-regexp", PROMISOR_KEYS).stdout):
            return 0  # not a partial clone: nothing can be missing this way
        commits = self._git("rev-list", f"--glob={REF_PREFIX}*", f"--glob={REMOTE_PREFIX}*").stdout
        asked = 0
        for _ in range(2):  # the trees, then the blobs they name
            want = missing_pack_objects(self._libgit2.repo, commits.split())
            if not want:
                break
            asked += len(want)
            done = self._git("-c", "fetch.negotiationAlgorithm=noop", "fetch", "--no-tags",
                             "--no-write-fetch-head", "--no-recurse-submodules", "--quiet",
                             "--filter=blob:none", "--stdin", "--end-of-options", remote,
                             input="".join(oid + "\n" for oid in want))
            if done.returncode != 0:
                break
        return asked

    def integrate(self, namespace: str | None = None, *, replace: bool = False,
                  must_write: bool = False, only: frozenset[str] | None = None) -> Integrated:
        """Bring fetched partitions into refs/memory/*, checking ancestry.

        Others' partitions: created, or fast-forwarded. A tip that is neither
        ahead nor behind means the owner rewrote it; it replaces ours only
        with ``replace`` (an explicit pull from that one remote), never on a
        read, so a stale copy under another remote name cannot undo a purge.
        Our own partitions are never moved from a remote: a remote tip we do
        not contain is reported as a conflict, unless it is history this clone
        replaced by a purge (the next push replaces it there). A partition named
        with our clone id that we do not hold is no partition of ours: left out
        and listed (``foreign``). Another's tip
        that is not a commit is taken only where we hold no commit for that
        partition (replay then lists it in status); a commit is never
        replaced by one. ``only``: just these partitions (names); their refs are
        looked up alone, not listed with every other.
        """
        result = Integrated([], [], [], [])

        def take(ref: str, have: str | None, tip: str) -> None:
            # A disk that cannot take the ref: a pull says so (``must_write``); a read
            # answers from the fetched tips anyway (api/pool.py, _integrated_view).
            try:
                self._refs.force(ref, have, tip)
            except (DiskError, ReadOnly):
                if must_write:
                    raise

        cid = self._state.clone_id(create=False)
        if only is None:
            local = self._refs.under(REF_PREFIX)
            tracked = self.tracking(namespace)
        else:
            local, tracked = self._narrowed(namespace, only)
        own = set(own_partitions(local, cid))
        for tref, tip in sorted(tracked.items()):
            found = tracked_partition(tref)
            if found is None:
                continue  # not a partition (refs/memory/<p>/x on the remote): never ours to take
            name = found
            ref = REF_PREFIX + name
            have = local.get(ref)
            if have == tip:
                continue
            mine = name in own
            if not mine and cid and name.endswith("-" + cid):
                # Our clone id on a partition we never wrote (we hold every one we
                # write): a copy of this .git, or a teammate's name made to look like
                # ours, which made every pull report a conflict and every sync fail.
                # Neither is taken (nor pushed as ours), nor blocks anything: listed.
                if name not in result.foreign:
                    result.foreign.append(name)
                continue
            if not self._history.is_commit(tip):
                if not mine and (have is None or not self._history.is_commit(have)):
                    take(ref, have, tip)
                    (result.created if have is None else result.replaced).append(name)
                    local[ref] = tip
                continue
            if have is not None and not self._history.is_commit(have) and not mine:
                take(ref, have, tip)  # a tip that held nothing: take the commit
                result.replaced.append(name)
                local[ref] = tip
                continue
            if mine:
                if have is not None and not self._history.is_commit(have):
                    continue  # not a conflict: our ref is damaged (check_own_tip says so)
                if have is None or not self._history.is_ancestor(tip, have):
                    if self._purges.replaced_before(name, tip):
                        continue  # the history we purged: our next push replaces it
                    if name not in result.conflicts:
                        result.conflicts.append(name)
                continue
            if have is None:
                take(ref, None, tip)
                result.created.append(name)
            elif self._history.is_ancestor(have, tip):
                take(ref, have, tip)
                result.fast_forwarded.append(name)
            elif self._history.is_ancestor(tip, have) or not replace:
                continue  # we are ahead, or a rewrite only an explicit pull may take
            else:
                take(ref, have, tip)
                result.replaced.append(name)
            local[ref] = tip
        self._history.save_facts()
        return result

    def _narrowed(self, namespace: str | None, only: frozenset[str]
                  ) -> tuple[dict[str, str], dict[str, str]]:
        """(local refs, remote-tracking refs) of the partitions ``only`` alone,
        each looked up by name (in every remote namespace, or in ``namespace``)."""
        spaces = [namespace] if namespace else self._refs.namespaces()
        if spaces is None:
            return self._listed(namespace, only)
        names = sorted(only)
        local = self._refs.lookup([REF_PREFIX + n for n in names])
        tracked = self._refs.lookup([f"{REMOTE_PREFIX}{ns}/{n}" for ns in spaces for n in names])
        if local is None or tracked is None:
            return self._listed(namespace, only)
        return local, tracked

    def _listed(self, namespace: str | None, only: frozenset[str]
                ) -> tuple[dict[str, str], dict[str, str]]:
        """``_narrowed`` from whole listings (a layout we do not read ourselves)."""
        local = self._refs.under(REF_PREFIX)
        tracked = self.tracking(namespace)
        return ({r: t for r, t in local.items() if r[len(REF_PREFIX):] in only},
                {r: t for r, t in tracked.items() if tracked_partition(r) in only})

    def push(self, remote: str, partitions: list[str]) -> list[Pushed]:
        """Push our partitions to ``remote``: fast-forward only.

        The one exception is a partition this clone purged: when the remote
        still holds the history the purge replaced (our tracking tip is part
        of it), that ref alone gets ``--force-with-lease=<ref>:<tracking tip>``,
        so git replaces it only if the remote has not moved since we last saw
        it. Deliberately without ``+`` on the refspec: a forced refspec makes
        git skip the lease's staleness check. Any other non-fast-forward is
        rejected as always.
        """
        if not partitions:
            return []
        local = self._refs.under(REF_PREFIX)
        ns = self.namespace(checked_remote(remote))
        where = shown(remote)
        before = self.tracking(ns)
        specs: list[str] = []
        leases: list[str] = []
        for p in partitions:
            ref = REF_PREFIX + p
            theirs = before.get(f"{REMOTE_PREFIX}{ns}/{p}")
            ours = local.get(ref)
            self._history.check_own_tip(ref, ours, nothing="pushed")  # never spread it
            if (theirs and ours and not self._history.is_ancestor(theirs, ours)
                    and self._purges.replaced_before(p, theirs)):
                specs.append(f"{ref}:{ref}")  # no '+': it would override the lease
                leases.append(f"--force-with-lease={ref}:{theirs}")
            else:
                specs.append(f"{ref}:{ref}")
        proc = self._git("push", "--porcelain", "--no-verify", "--no-recurse-submodules",
                         *leases, "--end-of-options", remote, *specs)
        results: list[Pushed] = []
        rejected: list[tuple[str, str, str]] = []
        for line in proc.stdout.splitlines():
            parts = line.split("\t")
            if len(parts) < 3 or ":" not in parts[1]:
                continue
            flag, refs, summary = parts[0], parts[1], parts[2]
            dst = refs.split(":", 1)[1]
            name = dst[len(REF_PREFIX):] if dst.startswith(REF_PREFIX) else dst
            if flag == "!":
                rejected.append((name, dst, summary))
                continue
            new = local.get(REF_PREFIX + name, "")
            status = {"*": "new", "=": "up-to-date", "+": "forced"}.get(flag, "fast-forward")
            old = before.get(f"{REMOTE_PREFIX}{ns}/{name}")
            # Keep our view of the remote current, as git does for branches. The
            # push is done whatever happens here: a full disk or a read-only .git
            # only leaves this clone's record of it behind (said, not raised).
            unrecorded = self._set_tracking(f"{REMOTE_PREFIX}{ns}/{name}", new)
            results.append(Pushed(name, status, old, new, unrecorded))
        if rejected:
            name, dst, summary = rejected[0]
            if "stale info" in summary:
                raise RemoteError(
                    f"'{where}' moved your partition {name} since this clone last fetched "
                    f"it, so the purged version was not pushed ({summary})",
                    "run 'git mem pull', then push again; if pull reports a partition "
                    "conflict, run 'git mem rekey'",
                )
            blocked = self._blocker(proc.stderr, dst, ns) if "remote rejected" in summary \
                else None
            if blocked is not None:
                raise RefNameConflict(
                    f"'{where}' cannot store {dst}: it holds {blocked}, and a ref cannot be "
                    "both a name and a folder (someone pushed it there; it is no partition)",
                    f"see what it holds ('git fetch {where} {blocked}' then 'git log "
                    f"FETCH_HEAD'), keep it under another name if it matters, then remove it: "
                    f"git push {where} :{blocked}; then git mem sync",
                )
            if "remote rejected" in summary and _CONTENDED.search(summary + proc.stderr):
                raise RemoteError(
                    f"'{where}' could not update {dst} just now: {summary}",
                    "another push to it was under way (run git mem sync again), or a push "
                    "killed there left a lock file: if this keeps failing, ask whoever runs "
                    f"the remote to remove {dst}.lock",
                )
            if "remote rejected" in summary:
                raise PushRejected(
                    f"'{where}' rejected {dst}: {summary}",
                    "this host refuses refs outside refs/heads and refs/tags; allow "
                    "refs/memory/* there (ask its admin), or sync memory through another "
                    "remote: git mem sync <remote>",
                )
            raise RemoteError(
                f"'{where}' holds commits on your partition {name} that this clone "
                f"does not have ({summary})",
                "run 'git mem pull' first; if it reports a partition conflict, run "
                "'git mem rekey'",
            )
        if proc.returncode != 0:
            here = self._local_failure(proc.stderr, f"push to '{where}'", remote)
            if here is not None:
                raise here
            raise RemoteError(
                f"git push to '{where}' failed: {what_git_said(self._scrubbed(proc.stderr, remote))}",
                f"check the remote's name or URL and your access (git push {where})",
            )
        return results

    def _blocker(self, stderr: str, dst: str, ns: str) -> str | None:
        """The ref on the remote that keeps ``dst`` from being created there, when a
        rejection is a name/folder conflict: named by git's own message ("cannot
        lock ref '<dst>': '<dst>/x' exists"), else seen in what the last fetch
        brought (refs/memory-remotes/<ns>/<p>/...), else None."""
        for m in _EXISTS.finditer(stderr):
            locked, there = m.group(1), m.group(2)
            if locked == dst and (there.startswith(dst + "/") or dst.startswith(there + "/")):
                return there
        inside = f"{REMOTE_PREFIX}{ns}/{dst[len(REF_PREFIX):]}/"
        for tref in sorted(self.tracking(ns)):
            if tref.startswith(inside):
                return REF_PREFIX + tref[len(f"{REMOTE_PREFIX}{ns}/"):]
        return None

    def _set_tracking(self, ref: str, tip: str) -> str:
        """Record what the remote now holds; "" when done, else why it could not be."""
        if not tip:
            return ""
        try:
            self._refs.put(ref, tip)
        except (OSError, pygit2.GitError) as exc:
            typed = from_os_error(exc, self._state.path.parent) if isinstance(exc, OSError) \
                else None
            return typed.message if typed is not None else f"cannot write {ref}: {exc}"
        return ""

    def _scrubbed(self, text: str, remote: str) -> str:
        """git's ``text`` about ``remote`` as a message may print it: without the
        password of the remote as given, nor of the URLs its name stands for (a
        review: 'sync origin' printed git's "'hunter2@host:repo.git' does not
        appear to be a git repository" for an scp-like URL with a password)."""
        urls: list[str] = []
        try:
            cfg = self._libgit2.repo.config
            for key in (f"remote.{remote}.url", f"remote.{remote}.pushurl"):
                urls += [str(v) for v in cfg.get_multivar(key)]
        except Exception:  # noqa: BLE001 - only a message is at stake: shown() still applies
            pass
        return scrubbed(text, remote, *urls)

    def _local_failure(self, stderr: str, what: str, remote: str) -> GitMemError | None:
        """The typed error when git failed on this side: no space left, a read-only
        .git (its own words in ``stderr``), never blamed on the remote. "Permission
        denied" is left out: from a remote it is about access."""
        for line in reversed(stderr.splitlines()):
            code = errno_in_text(line, permission=False)
            if code is None or line.lstrip().startswith("remote:"):
                continue
            typed = from_os_error(OSError(code, line), self._state.path.parent)
            if typed is not None:
                typed.message = (f"git {what} failed here: {typed.message} "
                                 f"({self._scrubbed(line.strip(), remote)})")
                return typed
        return None

    def add_fetch_refspec(self, remote: str) -> bool:
        """Make a plain ``git fetch <remote>`` also fetch memory. Idempotent."""
        spec = f"+{REF_PREFIX}*:{REMOTE_PREFIX}{checked_remote(remote)}/*"
        proc = self._git("config", "--get-all", f"remote.{remote}.fetch")
        if spec in proc.stdout.split():
            return False
        done = self._git("config", "--add", f"remote.{remote}.fetch", spec)
        if done.returncode != 0:
            raise RemoteError(f"cannot configure remote '{remote}': {last_line(done.stderr)}")
        return True
