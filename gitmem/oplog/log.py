"""The op-log on git refs: the only module that talks to git.

Layout (docs/data-model.md): each author-and-clone pair writes one partition,
``refs/memory/<partition>``, a linear chain of commits. Each commit's tree holds
one blob, ``ops.jsonl``, the op pack of that append. Nothing but this module
writes those refs, and it never touches branches, the index or the work tree.

Crash and race safety of an append:
1. blob, tree and commit objects are written first (content-addressed and
   written atomically by libgit2: a crash leaves at most unreferenced objects);
2. the ref moves last, by compare-and-swap against the tip read in step 1
   (libgit2 takes ``<ref>.lock`` and checks the old value), so a crash leaves
   the ref on a complete commit and a concurrent appender in the same clone
   makes us rebuild the commit on the new tip and try again.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import re
import subprocess
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from typing import Any


class _LazyPygit2:
    """Stands in for the pygit2 module until first use.

    Importing pygit2 costs tens of milliseconds, and most reads find that no
    ref moved: they list refs from files and never need libgit2. The first
    attribute access imports the real module and replaces this stand-in.
    """

    def __getattr__(self, name: str) -> Any:
        import pygit2 as real

        globals()["pygit2"] = real
        return getattr(real, name)


pygit2: Any = _LazyPygit2()

from .. import ops
from ..errors import (
    BareRepository,
    LogBusy,
    NoIdentity,
    NoRemote,
    NotARepository,
    PurgeRefused,
    PushRejected,
    RemoteError,
)

REF_PREFIX = "refs/memory/"
# Where fetched partitions land before we move local refs ourselves, after
# checking ancestry. Never refs/memory/*: a forced fetch there would overwrite
# unpushed local commits, and --prune would delete local partitions.
REMOTE_PREFIX = "refs/memory-remotes/"
BACKUP_PREFIX = "refs/memory-backup/"
_REMOTE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
PACK_FILE = "ops.jsonl"
STATE_DIR = "mem"
CLONE_ID_FILE = "clone-id"
_TRAILER_CLOCK = re.compile(rb"^Gitmem-Clock: (\d{1,18})$", re.MULTILINE)
_IDENT = re.compile(r"^(.*) <(.*)> (\d+) ([+-]\d{4})$")


@dataclass(frozen=True)
class Pack:
    """One commit of a partition: its id and pack bytes, or why it is unreadable."""

    commit: str
    data: bytes | None
    error: str | None = None


@dataclass(frozen=True)
class _Sig:
    """A commit signature: who and when (unix seconds, UTC offset in minutes)."""

    name: str
    email: str
    time: int
    offset: int

    def ident(self) -> str:
        sign = "-" if self.offset < 0 else "+"
        hours, minutes = divmod(abs(self.offset), 60)
        clean = lambda v: v.replace("<", "").replace(">", "").replace("\n", " ")  # noqa: E731
        return f"{clean(self.name)} <{clean(self.email)}> {self.time} {sign}{hours:02d}{minutes:02d}"


@dataclass(frozen=True)
class Appended:
    commit: str
    ref: str
    lines: list[bytes]


@dataclass(frozen=True)
class RemoteCopy:
    """What one remote-tracking ref holds of a partition being purged."""

    namespace: str
    tip: str
    has_content: bool  # its history contains a removed op
    next_push: str  # replace (force-with-lease) | fast-forward | rejected


@dataclass
class Rewrite:
    """A purge of one partition: what changed, or (dry run) what would."""

    partition: str
    ref: str
    old_tip: str
    new_tip: str | None  # None on a dry run
    removed: list[str]  # op ids taken out of the log
    rewritten: list[str]  # old commits rebuilt (lost lines, or a new parent)
    dropped: list[str]  # old commits left out (every line removed)
    remotes: list[RemoteCopy]
    backups: list[str]  # refs/memory-backup/* that held a removed op (rewritten too)


# -- sync ---------------------------------------------------------------------------


@dataclass
class Integrated:
    """What bringing remote-tracking partitions into refs/memory/* did."""

    created: list[str]
    fast_forwarded: list[str]
    replaced: list[str]  # rewritten by their owner: the remote's version wins
    conflicts: list[str]  # our own partitions with commits we do not have


@dataclass
class Pushed:
    partition: str
    status: str  # new | fast-forward | up-to-date
    old: str | None
    new: str


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    if not (os.isatty(0) and os.isatty(2)):
        env["GIT_TERMINAL_PROMPT"] = "0"  # never hang an agent on a password prompt
    return env


class _SyncMixin:
    """Fetch, integrate and push, with the real git binary (its transports,
    credential helpers and config all apply)."""

    repo: pygit2.Repository
    workdir: Path

    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                ["git", *args], cwd=self.workdir, capture_output=True, text=True,
                env=_git_env(), check=False,
            )
        except OSError as exc:
            raise RemoteError(f"cannot run git: {exc}") from exc

    def remotes(self) -> list[str]:
        return sorted(self.repo.remotes.names())

    def default_remote(self, *, push: bool = False) -> str:
        """The remote git itself would use for ``git fetch`` (or ``git push``)."""
        cfg = self.repo.config
        branch = None
        try:
            if not self.repo.head_is_detached:
                branch = self.repo.head.shorthand
        except pygit2.GitError:
            try:
                branch = self.repo.references["HEAD"].target.rsplit("/", 1)[-1]  # unborn
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
                return str(value)
        names = self.remotes()
        if "origin" in names:
            return "origin"
        raise NoRemote(
            "no remote to sync memory with"
            + (f" (remotes: {', '.join(names)})" if names else ""),
            "add one with 'git remote add origin <url>', or name it: git mem sync <remote>"
            if not names else f"name one: git mem sync {names[0]}",
        )

    def namespace(self, remote: str) -> str:
        """The private ref namespace for a remote name or URL."""
        if remote in self.remotes() and _REMOTE_NAME.match(remote):
            return remote
        digest = hashlib.sha256(remote.encode()).hexdigest()[:12]
        return f"url-{digest}"

    def tracking(self, namespace: str | None = None) -> dict[str, str]:
        """Remote-tracking partitions: ref under refs/memory-remotes/ -> tip."""
        prefix = REMOTE_PREFIX + (namespace + "/" if namespace else "")
        return self._refs(prefix)

    def fetch(self, remote: str) -> None:
        """Fetch every partition of ``remote`` into the private namespace."""
        ns = self.namespace(remote)
        proc = self._git(
            "fetch", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules",
            "--prune", "--quiet", remote,
            f"+{REF_PREFIX}*:{REMOTE_PREFIX}{ns}/*",
        )
        if proc.returncode != 0:
            raise RemoteError(
                f"git fetch from '{remote}' failed: {_last_line(proc.stderr)}",
                "check the remote's name or URL and your access (git fetch "
                f"{remote} should work)",
            )

    def integrate(self, namespace: str | None = None, *, replace: bool = False) -> Integrated:
        """Bring fetched partitions into refs/memory/*, checking ancestry.

        Others' partitions: created, or fast-forwarded. A tip that is neither
        ahead nor behind means the owner rewrote it; it replaces ours only
        with ``replace`` (an explicit pull from that one remote), never on a
        read, so a stale copy under another remote name cannot undo a purge.
        Our own partitions are never moved from a remote: a remote tip we do
        not contain is reported as a conflict, unless it is history this clone
        replaced by a purge (the next push replaces it there). Tips that are
        not commits are ignored (replay would only skip them).
        """
        result = Integrated([], [], [], [])
        own = set(self.own_partitions())
        cid = self.clone_id(create=False)
        local = self.partitions()
        for tref, tip in sorted(self.tracking(namespace).items()):
            name = tref.rsplit("/", 1)[-1]
            ref = REF_PREFIX + name
            have = local.get(ref)
            if have == tip or not self.is_commit(tip):
                continue
            if name in own or (cid and name.endswith("-" + cid)):
                if have is None or not self.is_ancestor(tip, have):
                    if self.purged_before(name, tip):
                        continue  # the history we purged: our next push replaces it
                    if name not in result.conflicts:
                        result.conflicts.append(name)
                continue
            if have is None:
                self.force_ref(ref, None, tip)
                result.created.append(name)
            elif self.is_ancestor(have, tip):
                self.force_ref(ref, have, tip)
                result.fast_forwarded.append(name)
            elif self.is_ancestor(tip, have) or not replace:
                continue  # we are ahead, or a rewrite only an explicit pull may take
            else:
                self.force_ref(ref, have, tip)
                result.replaced.append(name)
            local[ref] = tip
        return result

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
        local = self.partitions()
        ns = self.namespace(remote)
        before = self.tracking(ns)
        specs: list[str] = []
        leases: list[str] = []
        for p in partitions:
            ref = REF_PREFIX + p
            theirs = before.get(f"{REMOTE_PREFIX}{ns}/{p}")
            ours = local.get(ref)
            if (theirs and ours and not self.is_ancestor(theirs, ours)
                    and self.purged_before(p, theirs)):
                specs.append(f"{ref}:{ref}")  # no '+': it would override the lease
                leases.append(f"--force-with-lease={ref}:{theirs}")
            else:
                specs.append(f"{ref}:{ref}")
        proc = self._git("push", "--porcelain", "--no-verify", "--no-recurse-submodules",
                         *leases, remote, *specs)
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
            results.append(Pushed(name, status, old, new))
            # Keep our view of the remote current, as git does for branches.
            self._set_tracking(f"{REMOTE_PREFIX}{ns}/{name}", new)
        if rejected:
            name, dst, summary = rejected[0]
            if "stale info" in summary:
                raise RemoteError(
                    f"'{remote}' moved your partition {name} since this clone last fetched "
                    f"it, so the purged version was not pushed ({summary})",
                    "run 'git mem pull', then push again; if pull reports a partition "
                    "conflict, run 'git mem rekey'",
                )
            if "remote rejected" in summary:
                raise PushRejected(
                    f"'{remote}' rejected {dst}: {summary}",
                    "this host refuses refs outside refs/heads and refs/tags; allow "
                    "refs/memory/* there (ask its admin), or sync memory through another "
                    "remote: git mem sync <remote>",
                )
            raise RemoteError(
                f"'{remote}' holds commits on your partition {name} that this clone "
                f"does not have ({summary})",
                "run 'git mem pull' first; if it reports a partition conflict, run "
                "'git mem rekey'",
            )
        if proc.returncode != 0:
            raise RemoteError(
                f"git push to '{remote}' failed: {_last_line(proc.stderr)}",
                f"check the remote's name or URL and your access (git push {remote})",
            )
        return results

    def _set_tracking(self, ref: str, tip: str) -> None:
        if tip:
            self.repo.references.create(ref, tip, force=True)

    def add_fetch_refspec(self, remote: str) -> bool:
        """Make a plain ``git fetch <remote>`` also fetch memory. Idempotent."""
        spec = f"+{REF_PREFIX}*:{REMOTE_PREFIX}{remote}/*"
        proc = self._git("config", "--get-all", f"remote.{remote}.fetch")
        if spec in proc.stdout.split():
            return False
        done = self._git("config", "--add", f"remote.{remote}.fetch", spec)
        if done.returncode != 0:
            raise RemoteError(f"cannot configure remote '{remote}': {_last_line(done.stderr)}")
        return True

    def set_clone_id(self, value: str) -> None:
        """Replace this clone's id (rekey). Atomic: write a temp file, rename it."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_dir / f".clone-id.{os.getpid()}.{os.urandom(16).hex()}"
        tmp.write_text(value + "\n")
        os.replace(tmp, self.state_dir / CLONE_ID_FILE)

    def force_ref(self, ref: str, old: str | None, new: str) -> bool:
        """Move a local ref we own the decision for, by compare-and-swap."""
        try:
            r = self.repo.references.get(ref)
            if r is None:
                if old is not None:
                    return False
                self.repo.references.create(ref, new)
            else:
                if str(r.target) != old:
                    return False
                r.set_target(new)
            return True
        except (pygit2.GitError, pygit2.AlreadyExistsError, OSError):
            return False

    def delete_ref(self, ref: str, old: str) -> bool:
        """Delete a local ref if it still points at ``old``."""
        try:
            r = self.repo.references.get(ref)
            if r is None or str(r.target) != old:
                return False
            r.delete()
            return True
        except (pygit2.GitError, OSError):
            return False

    def backup_ref(self, partition: str, tip: str) -> str:
        """Keep a partition's old tip reachable outside refs/memory/ (never replayed)."""
        name = f"{BACKUP_PREFIX}{partition}-{tip[:12]}"
        self.repo.references.create(name, tip, force=True)
        return name


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


STALE_LOCK_SECONDS = 10.0
_HEX_OID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def _discover_plain(start: Path) -> tuple[Path, Path] | None:
    """Find ``(gitdir, workdir)`` by walking up for ``.git``, as git does.

    Only the ordinary cases: anything unusual (GIT_DIR and friends, ceiling
    directories, a bare repository, no repository at all) returns None and
    libgit2 decides, with its complete rules and errors.
    """
    if any(os.environ.get(v) for v in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR",
                                       "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM")):
        return None
    try:
        here = start.resolve()
    except OSError:
        return None
    for d in (here, *here.parents):
        dotgit = d / ".git"
        try:
            if dotgit.is_dir():
                return (dotgit, d) if (dotgit / "HEAD").is_file() else None
            if dotgit.is_file():
                text = dotgit.read_text().strip()
                if not text.startswith("gitdir:"):
                    return None
                gitdir = (d / text[len("gitdir:"):].strip()).resolve()
                return (gitdir, d) if (gitdir / "HEAD").is_file() else None
            if (d / "HEAD").is_file() and (d / "objects").is_dir():
                return None  # a bare repository (or a .git dir itself): libgit2 says so
        except OSError:
            return None
    return None


def _read_ref_files(commondir: Path, prefix: str) -> dict[str, str] | None:
    """Refs under ``prefix`` read straight from loose files and packed-refs.

    Loose refs are read first and packed-refs second, as git does: ``git
    pack-refs`` writes packed-refs before it deletes loose files, so this order
    can never miss a ref that is being packed. Loose values win. Returns None
    (the caller asks libgit2) for anything but the plain files backend, a
    symbolic or unreadable ref, or a packed-refs file we cannot parse.
    """
    if (commondir / "reftable").exists():
        return None
    loose: dict[str, str] = {}
    base = commondir / prefix
    if base.is_file() or base.is_symlink():  # an exact ref name rather than a folder
        try:
            value = base.read_text().strip() if not base.is_symlink() else ""
        except (OSError, UnicodeDecodeError):
            return None
        if not _HEX_OID.match(value):
            return None
        loose[prefix] = value
    else:
        for dirpath, _dirs, files in os.walk(base):
            rel = Path(dirpath).relative_to(commondir).as_posix()
            for f in files:
                if f.endswith(".lock"):
                    continue
                path = Path(dirpath) / f
                try:
                    value = "" if path.is_symlink() else path.read_text().strip()
                except (OSError, UnicodeDecodeError):
                    return None
                if not _HEX_OID.match(value):
                    return None  # symbolic or odd: let libgit2 resolve it
                loose[f"{rel}/{f}"] = value
    out: dict[str, str] = {}
    want = prefix.encode()
    try:
        with open(commondir / "packed-refs", "rb") as fh:
            for raw in fh:  # bytes: other refs may have any name git allows
                if raw[:1] in (b"#", b"^") or b" " not in raw:
                    continue
                oid, name = raw.rstrip(b"\n").split(b" ", 1)
                if name.startswith(want):
                    try:
                        out[name.decode()] = oid.decode()
                    except UnicodeDecodeError:
                        return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    out.update(loose)
    return out
    for dirpath, _dirs, files in os.walk(base):
        rel = Path(dirpath).relative_to(commondir).as_posix()
        for f in files:
            if f.endswith(".lock"):
                continue
            try:
                value = (Path(dirpath) / f).read_text().strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not _HEX_OID.match(value):
                return None  # symbolic or odd: let libgit2 resolve it
            out[f"{rel}/{f}"] = value
    return out


class Oplog(_SyncMixin):
    """A repository's op-log: discovery, identity, partitions, append, read."""

    def __init__(self, start: str | os.PathLike[str] | None = None) -> None:
        start_path = os.fspath(start) if start is not None else os.getcwd()
        self._repo: Any = None
        self._plain: bool | None = None
        self._facts: set[str] | None = None
        self._settings: dict[str, str] | None = None
        fast = _discover_plain(Path(start_path))
        if fast is not None:
            self.gitdir, self.workdir = fast
        else:
            repo = self._open_with_libgit2(start_path)
            self._repo = repo
            self.workdir = Path(repo.workdir)
            self.gitdir = Path(repo.path)
        common = self.gitdir / "commondir"
        # Linked worktrees share refs and state with the main repository.
        if common.exists():
            self.commondir = (self.gitdir / common.read_text().strip()).resolve()
        else:
            self.commondir = self.gitdir
        self.state_dir = self.commondir / STATE_DIR

    @staticmethod
    def create(path: Path) -> None:
        """Make ``path`` a new git repository (the personal pool), if it is not one."""
        if (path / ".git").exists():
            return
        path.mkdir(parents=True, exist_ok=True)
        try:
            proc = subprocess.run(["git", "init", "-q", str(path)], capture_output=True,
                                  text=True, check=False)
        except OSError as exc:
            raise NotARepository(f"cannot run git to create {path}: {exc}") from exc
        if proc.returncode != 0:
            raise NotARepository(f"cannot create a repository at {path}: "
                                 f"{_last_line(proc.stderr)}")

    def remote_urls(self) -> dict[str, str]:
        """Each remote's fetch URL, with any user name or password removed."""
        out: dict[str, str] = {}
        try:
            proc = subprocess.run(["git", "config", "--get-regexp", r"^remote\..*\.url$"],
                                  cwd=self.workdir, capture_output=True, text=True, check=False)
        except OSError:
            return out
        for line in proc.stdout.splitlines():
            name, _, url = line.partition(" ")
            out[name[len("remote."):-len(".url")]] = re.sub(r"//[^/@]*@", "//", url.strip())
        return out

    @staticmethod
    def _open_with_libgit2(start_path: str) -> Any:
        git_dir_env = os.environ.get("GIT_DIR")
        try:
            found = git_dir_env or pygit2.discover_repository(start_path)
        except pygit2.GitError:
            found = None
        if not found:
            raise NotARepository(f"not a git repository (or any parent): {start_path}")
        try:
            repo = pygit2.Repository(found)
        except pygit2.GitError as exc:
            raise NotARepository(f"cannot open git repository at {found}: {exc}") from exc
        if repo.is_bare:
            raise BareRepository(f"{repo.path} is a bare repository")
        return repo

    @property
    def repo(self) -> Any:
        """The libgit2 repository, opened on first use."""
        if self._repo is None:
            self._repo = pygit2.Repository(str(self.gitdir))
        return self._repo

    # -- writing without libgit2 ---------------------------------------------------
    #
    # git's own on-disk protocol, so git, libgit2 and we can write side by side:
    # objects are zlib-compressed loose files written to a temp name and
    # renamed into place (content-addressed: an existing one is left alone);
    # a ref moves by creating <ref>.lock exclusively, checking the current
    # value (loose file, else packed-refs) against the expected old one,
    # writing the new id and renaming the lock over the ref.

    def _plain_writes_ok(self) -> bool:
        if self._plain is None:
            try:
                config = (self.commondir / "config").read_text(errors="replace").lower()
            except OSError:
                config = ""
            self._plain = (
                "objectformat" not in config
                and "refstorage" not in config
                and not (self.commondir / "reftable").exists()
                and (self.commondir / "objects").is_dir()
            )
        return self._plain

    def _write_object(self, kind: bytes, data: bytes) -> str:
        raw = kind + b" " + str(len(data)).encode() + b"\0" + data
        oid = hashlib.sha1(raw).hexdigest()
        folder = self.commondir / "objects" / oid[:2]
        path = folder / oid[2:]
        if path.exists():
            return oid
        folder.mkdir(exist_ok=True)
        tmp = folder / f"tmp_obj_{os.getpid()}_{os.urandom(16).hex()}"
        with open(tmp, "wb") as fh:
            fh.write(zlib.compress(raw, 1))
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o444)
        os.replace(tmp, path)
        return oid

    def _current_ref(self, ref_name: str) -> str | None:
        """The ref's value; "could not read" is never taken for "absent"."""
        refs = _read_ref_files(self.commondir, ref_name)
        if refs is not None:
            return refs.get(ref_name)
        ref = self.repo.references.get(ref_name)  # libgit2 knows every layout
        return None if ref is None else str(ref.resolve().target)

    def _busy(self, ref_name: str, attempts: int) -> LogBusy:
        lock = self.commondir / f"{ref_name}.lock"
        try:
            age = time.time() - lock.stat().st_mtime
        except OSError:
            return LogBusy(f"could not update {ref_name} after {attempts} attempts")
        return LogBusy(
            f"could not update {ref_name}: {lock} exists (for {age:.0f} s)",
            "if no git or git mem process is running, a crash left it behind: remove it",
        )

    def _cas_ref(self, ref_name: str, old: str | None, new: str) -> bool:
        """Move a ref from ``old`` to ``new`` the way git does; False if we lost a race."""
        path = self.commondir / ref_name
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = Path(str(path) + ".lock")
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            self._clear_stale_lock(lock)
            return False
        try:
            if self._current_ref(ref_name) != old:
                os.close(fd)
                lock.unlink(missing_ok=True)
                return False
            os.write(fd, new.encode() + b"\n")
            os.fsync(fd)
            os.close(fd)
            os.replace(lock, path)
            return True
        except BaseException:
            lock.unlink(missing_ok=True)
            raise

    def _clear_stale_lock(self, lock: Path) -> None:
        """Remove a ref lock left by a crashed writer.

        Only called while we hold this clone's append flock, so no git mem
        appender owns it; nothing else holds a ref lock for more than a moment
        (git and libgit2 write, then rename at once), so a lock older than
        STALE_LOCK_SECONDS is a crash's leftover, not a live writer's.
        """
        try:
            if time.time() - lock.stat().st_mtime > STALE_LOCK_SECONDS:
                lock.unlink()
        except OSError:
            pass

    def _append_plain(
        self,
        ref_name: str,
        sig: _Sig,
        summary: str,
        make_lines: Callable[[int], list[bytes]],
        deadline: float,
    ) -> Appended:
        attempt = 0
        while True:
            attempt += 1
            parent = self._current_ref(ref_name)
            clock = self.max_clock() + 1
            lines = make_lines(clock)
            last_clock = clock + len(lines) - 1  # op i of a pack has clock + i
            blob = self._write_object(b"blob", ops.encode_pack(lines))
            tree = self._write_object(
                b"tree", b"100644 " + PACK_FILE.encode() + b"\0" + bytes.fromhex(blob)
            )
            message = (
                f"{summary}\n\n"
                f"Gitmem-Format: {ops.FORMAT_VERSION}\n"
                f"Gitmem-Ops: {len(lines)}\n"
                f"Gitmem-Clock: {last_clock}\n"
            )
            ident = sig.ident()
            body = f"tree {tree}\n"
            if parent:
                body += f"parent {parent}\n"
            body += f"author {ident}\ncommitter {ident}\n\n{message}"
            commit = self._write_object(b"commit", body.encode("utf-8"))
            if self._cas_ref(ref_name, parent, commit):
                return Appended(commit, ref_name, lines)
            if time.monotonic() > deadline:
                raise self._busy(ref_name, attempt)
            time.sleep(random.uniform(0.001, 0.004) * min(attempt, 10))

    # -- identity and partition -------------------------------------------------

    def identity(self) -> ops.Author:
        """The author, resolved exactly as git resolves it for a commit.

        ``git var GIT_AUTHOR_IDENT`` honours GIT_AUTHOR_NAME/EMAIL and every
        config level; ``user.useConfigOnly`` stops git from inventing an
        address from the host name, which would split one person's partition.
        When both variables are set git uses them as they are, so we skip the
        subprocess.
        """
        env_name = os.environ.get("GIT_AUTHOR_NAME", "").strip()
        env_email = os.environ.get("GIT_AUTHOR_EMAIL", "").strip()
        if env_name and env_email and not any(c in env_name + env_email for c in "<>\n"):
            return ops.Author(name=env_name, email=env_email)
        try:
            proc = subprocess.run(
                ["git", "-c", "user.useConfigOnly=true", "var", "GIT_AUTHOR_IDENT"],
                cwd=self.workdir,
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError as exc:
            raise NoIdentity(f"cannot run git to read the identity: {exc}") from exc
        m = _IDENT.match(proc.stdout.strip())
        if proc.returncode != 0 or not m or not m.group(1).strip() or not m.group(2):
            raise NoIdentity("no git identity configured (user.name and user.email)")
        return ops.Author(name=m.group(1).strip(), email=m.group(2).strip())

    def clone_id(self, create: bool = True) -> str:
        """This clone's random id, created once, race-free.

        Written to a temp file and hard-linked into place: link() fails if the
        file exists, so concurrent first writers all end up reading one id.
        With ``create=False`` an absent id is returned as "".
        """
        path = self.state_dir / CLONE_ID_FILE
        try:
            value = path.read_text().strip()
            if value or not create:
                return value
        except FileNotFoundError:
            if not create:
                return ""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_dir / f".clone-id.{os.getpid()}.{os.urandom(16).hex()}"
        tmp.write_text(os.urandom(6).hex() + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        return path.read_text().strip()

    def partition_for(self, author: ops.Author) -> str:
        return ops.partition_name(author.email, self.clone_id())

    @staticmethod
    def ref_for(partition: str) -> str:
        return REF_PREFIX + partition

    def head(self) -> str | None:
        """HEAD's commit id, or None on an unborn branch."""
        try:
            text = (self.gitdir / "HEAD").read_text().strip()
        except OSError:
            text = ""
        if _HEX_OID.match(text):
            return text  # detached
        if text.startswith("ref: "):
            name = text[5:].strip()
            refs = _read_ref_files(self.commondir, name)
            if refs is not None:
                return refs.get(name)
        try:
            return str(self.repo.head.target)
        except (pygit2.GitError, KeyError):
            return None

    def settings(self) -> dict[str, str]:
        """Every ``gitmem.*`` git config value (all levels), names lower-cased."""
        if self._settings is None:
            try:
                proc = subprocess.run(
                    ["git", "config", "--includes", "--null", "--get-regexp", r"^gitmem\."],
                    cwd=self.workdir, capture_output=True, text=True, check=False,
                )
                out = proc.stdout if proc.returncode == 0 else ""
            except OSError:
                out = ""
            found: dict[str, str] = {}
            for entry in out.split("\0"):
                name, _, value = entry.partition("\n")
                if name:
                    found[name.lower()] = value
            self._settings = found
        return self._settings

    def revision_time(self, revision: str) -> int | None:
        """The committer time of a revision (tag, branch, commit), or None."""
        if not revision or revision.startswith("-") or "\n" in revision:
            return None
        try:
            proc = subprocess.run(
                ["git", "show", "-s", "--format=%ct", "--end-of-options",
                 f"{revision}^{{commit}}"],
                cwd=self.workdir, capture_output=True, text=True, check=False,
            )
        except OSError:
            return None
        text = proc.stdout.strip()
        return int(text) if proc.returncode == 0 and text.isdigit() else None

    # -- reading ------------------------------------------------------------------

    def partitions(self) -> dict[str, str]:
        """Every partition ref and its tip commit id. Cheap: reads refs only."""
        return self._refs(REF_PREFIX)

    def _refs(self, prefix: str) -> dict[str, str]:
        fast = _read_ref_files(self.commondir, prefix)
        if fast is not None:
            return fast
        out: dict[str, str] = {}
        for name in self.repo.listall_references():
            if not name.startswith(prefix):
                continue
            try:
                ref = self.repo.references[name].resolve()
            except (pygit2.GitError, KeyError):
                continue
            out[name] = str(ref.target)
        return out

    def own_partitions(self) -> list[str]:
        """Partition names this clone writes (any author): they end in our clone id."""
        cid = self.clone_id(create=False)
        if not cid:
            return []
        return sorted(
            ref[len(REF_PREFIX):] for ref in self.partitions() if ref.endswith("-" + cid)
        )

    # -- plain reading of loose objects -------------------------------------------------
    #
    # What this clone appended since the last read is loose objects (written by
    # _append_plain): reading them with zlib spares a read after a write the
    # ~70 ms of loading libgit2. Anything else (packed objects, merges, long
    # histories) goes to libgit2, which stays the reference.

    _PLAIN_WALK_MAX = 256

    def _loose(self, oid: str) -> tuple[bytes, bytes] | None:
        """(type, body) of a loose object, or None."""
        if not _HEX_OID.match(oid):
            return None
        try:
            raw = zlib.decompress((self.commondir / "objects" / oid[:2] / oid[2:]).read_bytes())
        except (OSError, zlib.error):
            return None
        header, _, body = raw.partition(b"\0")
        kind, _, size = header.partition(b" ")
        if not size.isdigit() or int(size) != len(body):
            return None
        return kind, body

    def _plain_commit(self, oid: str) -> tuple[str, list[str]] | None:
        """(tree, parents) of a loose commit, or None."""
        obj = self._loose(oid)
        if obj is None or obj[0] != b"commit":
            return None
        tree, parents = "", []
        for line in obj[1].split(b"\n"):
            if not line:
                break
            name, _, value = line.partition(b" ")
            if name == b"tree":
                tree = value.decode("ascii", "replace")
            elif name == b"parent":
                parents.append(value.decode("ascii", "replace"))
        return (tree, parents) if tree else None

    def _plain_chain(self, tip: str, stop: set[str]) -> list[str] | None:
        """Commits from ``tip`` back to (not including) one in ``stop`` or the root,
        newest first; None unless all are loose, linear and within the walk limit."""
        chain, oid = [], tip
        for _ in range(self._PLAIN_WALK_MAX):
            if oid in stop:
                return chain
            commit = self._plain_commit(oid)
            if commit is None or len(commit[1]) > 1:
                return None
            chain.append(oid)
            if not commit[1]:
                return chain if not stop else None  # root reached, stop never seen
            oid = commit[1][0]
        return None

    def _plain_packs(self, tip: str, since: list[str]) -> list[Pack] | None:
        chain = self._plain_chain(tip, set(since))
        if chain is None:
            return None
        width = len(tip) // 2  # raw id bytes in a tree entry (20 for sha1, 32 for sha256)
        packs = []
        for cid in reversed(chain):
            commit = self._plain_commit(cid)
            tree = self._loose(commit[0]) if commit else None
            if tree is None or tree[0] != b"tree":
                return None
            entry = None
            body, i = tree[1], 0
            while i < len(body):
                sp = body.find(b" ", i)
                nul = body.find(b"\0", sp)
                if sp < 0 or nul < 0:
                    return None
                if body[sp + 1 : nul] == PACK_FILE.encode():
                    entry = (body[i:sp], body[nul + 1 : nul + 1 + width].hex())
                i = nul + 1 + width
            if entry is None:
                packs.append(Pack(cid, None, f"commit has no {PACK_FILE}"))
                continue
            if entry[0].startswith(b"4"):  # 40000: a directory
                packs.append(Pack(cid, None, f"{PACK_FILE} is not a file"))
                continue
            blob = self._loose(entry[1])
            if blob is None or blob[0] != b"blob":
                return None
            if len(blob[1]) > ops.MAX_PACK_BYTES:
                packs.append(Pack(cid, None, f"pack of {len(blob[1])} bytes exceeds "
                                  f"{ops.MAX_PACK_BYTES}"))
                continue
            packs.append(Pack(cid, blob[1]))
        return packs

    def is_commit(self, oid: str) -> bool:
        def ask() -> bool:
            if self._plain_commit(oid) is not None:
                return True
            try:
                return bool(self.repo[oid].type == pygit2.enums.ObjectType.COMMIT)
            except (KeyError, ValueError, pygit2.GitError):
                return False

        return self._fact(f"commit {oid}", ask)

    def is_ancestor(self, old: str, new: str) -> bool:
        """True when ``old`` is ``new`` or one of its ancestors."""
        if old == new:
            return True

        def ask() -> bool:
            if self._plain_chain(new, {old}) is not None:
                return True  # reached it through loose, linear history
            try:
                return bool(self.repo.descendant_of(new, old))
            except (pygit2.GitError, KeyError, ValueError):
                return False

        return self._fact(f"ancestor {old} {new}", ask)

    def _fact(self, key: str, ask: Callable[[], bool]) -> bool:
        """Facts about immutable objects, remembered in .git/mem/facts so that
        reads (e.g. with unpushed memories) need not load libgit2 every time.
        Only positive answers are kept: an object that is missing now may
        arrive with the next fetch."""
        if self._facts is None:
            try:
                self._facts = set(json.loads((self.state_dir / "facts").read_text()))
            except (OSError, ValueError, TypeError):
                self._facts = set()
        if key in self._facts:
            return True
        answer = ask()
        if answer:
            self._facts.add(key)
            self._write_memo(self.state_dir / "facts", sorted(self._facts)[-4096:])
        return answer

    def iter_packs(self, tip: str, since: str | list[str] | None = None) -> Iterator[Pack]:
        """The commits after ``since`` up to ``tip``, oldest first, with their packs."""
        if not self.is_commit(tip):
            yield Pack(tip, None, "partition tip is not a commit")
            return
        hidden = [since] if isinstance(since, str) else list(since or [])
        plain = self._plain_packs(tip, hidden) if len(hidden) <= 1 else None
        if plain is not None:
            yield from plain
            return
        walker = self.repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        for hidden in [since] if isinstance(since, str) else since or []:
            walker.hide(hidden)
        for commit in walker:
            cid = str(commit.id)
            try:
                entry = commit.tree[PACK_FILE]
            except KeyError:
                yield Pack(cid, None, f"commit has no {PACK_FILE}")
                continue
            obj = self.repo[entry.id]
            if not isinstance(obj, pygit2.Blob):
                yield Pack(cid, None, f"{PACK_FILE} is not a file")
                continue
            if obj.size > ops.MAX_PACK_BYTES:
                yield Pack(cid, None, f"pack of {obj.size} bytes exceeds {ops.MAX_PACK_BYTES}")
                continue
            yield Pack(cid, obj.data)

    def max_clock(self) -> int:
        """Highest Lamport clock on any partition tip (each chain is monotonic).

        A tip's clock is read from its commit's trailer: from the loose object
        when there is one, else through libgit2 (packed, e.g. after a fetch),
        and remembered in .git/mem/tip-clocks so later appends skip libgit2.
        """
        memo_path = self.state_dir / "tip-clocks"
        try:
            memo: dict[str, int] = json.loads(memo_path.read_text())
        except (OSError, ValueError):
            memo = {}
        best, seen, changed = 0, {}, False
        for tip in self.partitions().values():
            clock = memo.get(tip)
            if clock is None:
                changed = True
                message = self._loose_commit_message(tip)
                if message is None:
                    try:
                        message = self.repo[tip].raw_message
                    except (KeyError, ValueError, AttributeError):
                        message = b""
                clock = max((int(m.group(1)) for m in _TRAILER_CLOCK.finditer(message)), default=0)
            seen[tip] = clock
            best = max(best, clock)
        if changed or len(seen) != len(memo):
            self._write_memo(memo_path, seen)
        return best

    def _write_memo(self, path: Path, data: object) -> None:
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            tmp = self.state_dir / f".{path.name}.{os.getpid()}.{os.urandom(16).hex()}"
            tmp.write_text(json.dumps(data, sort_keys=True))
            os.replace(tmp, path)
        except OSError:
            pass  # only a cache

    def _loose_commit_message(self, oid: str) -> bytes | None:
        obj = self._loose(oid)
        if obj is None or obj[0] != b"commit":
            return None
        return obj[1].partition(b"\n\n")[2]

    # -- writing ------------------------------------------------------------------

    def append(
        self,
        partition: str,
        author: ops.Author,
        at: int,
        tz: int,
        summary: str,
        make_lines: Callable[[int], list[bytes]],
        *,
        timeout: float = 60.0,
    ) -> Appended:
        """Append one commit holding the pack ``make_lines(first_clock)`` returns.

        Op i of the pack must carry clock ``first_clock + i``. ``make_lines`` is
        called again on every retry with a fresh clock, so the clocks along a
        partition's chain only ever increase.
        """
        ref_name = self.ref_for(partition)
        sig = _Sig(author.name, author.email, at, tz)
        deadline = time.monotonic() + timeout
        with self._append_lock(ref_name, deadline):
            return self._append_locked(ref_name, sig, summary, make_lines, deadline)

    @contextmanager
    def _append_lock(self, ref_name: str, deadline: float) -> Iterator[None]:
        """Serialise appenders of this clone (an flock, released if we crash).

        Correctness does not depend on it (the ref update is a compare-and-swap
        and also guards against writers that do not take this lock); it stops
        many concurrent writers from rebuilding commits they then throw away.
        """
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with open(self.state_dir / "append.lock", "a+b") as fh:
            while True:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise LogBusy(f"another git mem process kept {ref_name} locked") from None
                    time.sleep(random.uniform(0.002, 0.01))
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def _append_locked(
        self,
        ref_name: str,
        sig: Any,
        summary: str,
        make_lines: Callable[[int], list[bytes]],
        deadline: float,
    ) -> Appended:
        if self._plain_writes_ok():
            return self._append_plain(ref_name, sig, summary, make_lines, deadline)
        attempt = 0
        while True:
            attempt += 1
            ref = self.repo.references.get(ref_name)
            parent = ref.target if ref is not None else None
            clock = self.max_clock() + 1
            lines = make_lines(clock)
            last_clock = clock + len(lines) - 1  # op i of a pack has clock + i
            blob = self.repo.create_blob(ops.encode_pack(lines))
            builder = self.repo.TreeBuilder()
            builder.insert(PACK_FILE, blob, pygit2.enums.FileMode.BLOB)
            tree = builder.write()
            message = (
                f"{summary}\n\n"
                f"Gitmem-Format: {ops.FORMAT_VERSION}\n"
                f"Gitmem-Ops: {len(lines)}\n"
                f"Gitmem-Clock: {last_clock}\n"
            )
            psig = pygit2.Signature(sig.name, sig.email, sig.time, sig.offset)
            commit = self.repo.create_commit(
                None, psig, psig, message, tree, [parent] if parent is not None else []
            )
            try:
                if ref is None:
                    self.repo.references.create(ref_name, commit)
                else:
                    ref.set_target(commit)  # compare-and-swap on the tip we read
                return Appended(str(commit), ref_name, lines)
            except (pygit2.GitError, pygit2.AlreadyExistsError, OSError) as exc:
                if type(exc) is OSError and "lock" not in str(exc):
                    raise  # a real I/O failure, not a lost race
                # Lost the race (ref moved, or another writer holds <ref>.lock):
                # rebuild on the new tip.
                if time.monotonic() > deadline:
                    raise self._busy(ref_name, attempt) from None
                time.sleep(random.uniform(0.001, 0.004) * min(attempt, 10))

    # -- purging ------------------------------------------------------------------
    #
    # The one place a partition's history is rewritten (git mem forget --purge).
    # Only this clone's own partitions, by compare-and-swap from the tip the
    # rewrite started from. Objects go through libgit2: a rare path, and it
    # knows every object format. No ref ever keeps the old tip: the content
    # must become unreachable. What is kept is .git/mem/purges, the ids of the
    # replaced commits, so that push and integrate can tell "the remote still
    # has our pre-purge history" from "someone else wrote to our partition".

    PURGES_FILE = "purges"

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
        ref = self.ref_for(partition)
        drop = set(op_ids)
        deadline = time.monotonic() + timeout
        with self._append_lock(ref, deadline):
            tip = self._current_ref(ref)
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
                b for b, btip in sorted(self._refs(BACKUP_PREFIX).items())
                if self._rewrite_chain(btip, in_backup, write=False)[1]
            ]
            removed = [ops.op_id(line) for line in gone]
            result = Rewrite(partition, ref, tip, None, removed, rewritten, dropped,
                             self._remote_copies(partition, tip, holders,
                                                 set(rewritten) | set(dropped)),
                             backups)
            if dry_run or not removed:
                return result
            self._record_purge(partition, tip, rewritten + dropped)
            moved = (self._cas_ref(ref, tip, new_tip) if self._plain_writes_ok()
                     else self.force_ref(ref, tip, new_tip))
            if not moved:
                raise LogBusy(f"{ref} moved while it was being purged; it was left as it is",
                              "run the purge again")
            result.new_tip = new_tip
            for b in backups:
                old = self._refs(BACKUP_PREFIX).get(b)
                if old:
                    self.force_ref(b, old, self._rewrite_chain(old, in_backup, write=True)[0])
        return result

    def purged_before(self, partition: str, tip: str) -> bool:
        """True when ``tip`` is history of ``partition`` that a purge here replaced."""
        entry = self._purges().get(partition)
        return bool(entry) and tip in entry.get("replaced", [])

    def _purges(self) -> dict[str, dict[str, list[str]]]:
        try:
            data = json.loads((self.state_dir / self.PURGES_FILE).read_text())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _record_purge(self, partition: str, tip: str, replaced: list[str]) -> None:
        """Remember the replaced commits (written before the ref moves: crash-safe)."""
        data = self._purges()
        entry = data.setdefault(partition, {"tips": [], "replaced": []})
        entry["tips"] = [*entry.get("tips", []), tip]
        entry["replaced"] = sorted(set(entry.get("replaced", [])) | set(replaced))
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_dir / f".{self.PURGES_FILE}.{os.getpid()}.{os.urandom(16).hex()}"
        tmp.write_text(json.dumps(data, sort_keys=True, indent=1) + "\n")
        os.replace(tmp, self.state_dir / self.PURGES_FILE)

    def _remote_copies(self, partition: str, tip: str, holders: list[str],
                       replaced: set[str]) -> list[RemoteCopy]:
        out = []
        for tref, ttip in sorted(self.tracking().items()):
            if not tref.endswith("/" + partition):
                continue
            ns = tref[len(REMOTE_PREFIX):-len(partition) - 1]
            has = any(self.is_ancestor(h, ttip) for h in holders)
            if ttip in replaced or self.purged_before(partition, ttip):
                action = "replace (force-with-lease)"
            elif self.is_ancestor(ttip, tip):
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
        commit = self.repo[tip]
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
            obj = self.repo[commit.tree[PACK_FILE].id]
        except KeyError:
            return None
        if not isinstance(obj, pygit2.Blob) or obj.size > ops.MAX_PACK_BYTES:
            return None  # replay skips it too: it never served an op
        return bytes(obj.data)

    def _tree_with_pack(self, tree: Any, data: bytes) -> Any:
        builder = self.repo.TreeBuilder(tree)
        builder.insert(PACK_FILE, self.repo.create_blob(data), pygit2.enums.FileMode.BLOB)
        return builder.write()

    def _commit_like(self, commit: Any, message: bytes, tree: Any, parent: str | None) -> Any:
        args = [None, commit.author, commit.committer, message, tree,
                [parent] if parent else []]
        if commit.message_encoding:
            args.append(commit.message_encoding)
        return self.repo.create_commit(*args)


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
