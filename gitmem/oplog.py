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

import os
import random
import re
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileMode, SortMode

from . import ops
from .errors import BareRepository, LogBusy, NoIdentity, NotARepository

REF_PREFIX = "refs/memory/"
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
class Appended:
    commit: str
    ref: str
    lines: list[bytes]


class Oplog:
    """A repository's op-log: discovery, identity, partitions, append, read."""

    def __init__(self, start: str | os.PathLike[str] | None = None) -> None:
        start_path = os.fspath(start) if start is not None else os.getcwd()
        git_dir_env = os.environ.get("GIT_DIR")
        try:
            found = git_dir_env or pygit2.discover_repository(start_path)
        except pygit2.GitError:
            found = None
        if not found:
            raise NotARepository(f"not a git repository (or any parent): {start_path}")
        try:
            self.repo = pygit2.Repository(found)
        except pygit2.GitError as exc:
            raise NotARepository(f"cannot open git repository at {found}: {exc}") from exc
        if self.repo.is_bare:
            raise BareRepository(f"{self.repo.path} is a bare repository")
        self.workdir = Path(self.repo.workdir)
        self.gitdir = Path(self.repo.path)
        common = self.gitdir / "commondir"
        # Linked worktrees share refs and state with the main repository.
        if common.exists():
            self.commondir = (self.gitdir / common.read_text().strip()).resolve()
        else:
            self.commondir = self.gitdir
        self.state_dir = self.commondir / STATE_DIR

    # -- identity and partition -------------------------------------------------

    def identity(self) -> ops.Author:
        """The author, resolved exactly as git resolves it for a commit.

        ``git var GIT_AUTHOR_IDENT`` honours GIT_AUTHOR_NAME/EMAIL and every
        config level; ``user.useConfigOnly`` stops git from inventing an
        address from the host name, which would split one person's partition.
        """
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

    def clone_id(self) -> str:
        """This clone's random id, created once, race-free.

        Written to a temp file and hard-linked into place: link() fails if the
        file exists, so concurrent first writers all end up reading one id.
        """
        path = self.state_dir / CLONE_ID_FILE
        try:
            value = path.read_text().strip()
            if value:
                return value
        except FileNotFoundError:
            pass
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self.state_dir / f".clone-id.{os.getpid()}.{uuid.uuid4().hex}"
        tmp.write_text(uuid.uuid4().hex[:12] + "\n")
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
            return str(self.repo.head.target)
        except (pygit2.GitError, KeyError):
            return None

    # -- reading ------------------------------------------------------------------

    def partitions(self) -> dict[str, str]:
        """Every partition ref and its tip commit id. Cheap: reads refs only."""
        out: dict[str, str] = {}
        for name in self.repo.listall_references():
            if not name.startswith(REF_PREFIX):
                continue
            try:
                ref = self.repo.references[name].resolve()
            except (pygit2.GitError, KeyError):
                continue
            out[name] = str(ref.target)
        return out

    def is_ancestor(self, old: str, new: str) -> bool:
        """True when ``old`` is ``new`` or one of its ancestors."""
        if old == new:
            return True
        try:
            return bool(self.repo.descendant_of(new, old))
        except (pygit2.GitError, KeyError, ValueError):
            return False

    def iter_packs(self, tip: str, since: str | None = None) -> Iterator[Pack]:
        """The commits after ``since`` up to ``tip``, oldest first, with their packs."""
        walker = self.repo.walk(tip, SortMode.TOPOLOGICAL | SortMode.REVERSE)
        if since is not None:
            walker.hide(since)
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
        """Highest Lamport clock on any partition tip (each chain is monotonic)."""
        best = 0
        for tip in self.partitions().values():
            try:
                message = self.repo[tip].raw_message
            except (KeyError, ValueError, AttributeError):
                continue
            for m in _TRAILER_CLOCK.finditer(message):
                best = max(best, int(m.group(1)))
        return best

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
        timeout: float = 30.0,
    ) -> Appended:
        """Append one commit holding the pack ``make_lines(first_clock)`` returns.

        Op i of the pack must carry clock ``first_clock + i``. ``make_lines`` is
        called again on every retry with a fresh clock, so the clocks along a
        partition's chain only ever increase.
        """
        ref_name = self.ref_for(partition)
        sig = pygit2.Signature(author.name, author.email, at, tz)
        deadline = time.monotonic() + timeout
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
            builder.insert(PACK_FILE, blob, FileMode.BLOB)
            tree = builder.write()
            message = (
                f"{summary}\n\n"
                f"Gitmem-Format: {ops.FORMAT_VERSION}\n"
                f"Gitmem-Ops: {len(lines)}\n"
                f"Gitmem-Clock: {last_clock}\n"
            )
            commit = self.repo.create_commit(
                None, sig, sig, message, tree, [parent] if parent is not None else []
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
                    raise LogBusy(
                        f"could not update {ref_name} after {attempt} attempts"
                    ) from None
                time.sleep(random.uniform(0.001, 0.004) * min(attempt, 10))
