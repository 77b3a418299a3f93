"""Reading a partition's history: its packs, ancestry, and the highest clock.

A refresh replays only what moved, so it asks three questions of git: which
commits lie between the tip it knew and the new one (with their packs), is
an old tip an ancestor of the new one (else the partition was rewritten),
and, for an append, the highest Lamport clock on any tip. Loose, linear
history (what this clone wrote since the last read) is answered from loose
objects; anything else (packed objects, merges, long histories) goes to
libgit2, which stays the reference. Answers about immutable objects are
remembered in the state dir so later commands need not ask again.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .. import ops
from ..errors import PartitionNotACommit, RepositoryUnreadable
from .libgit2 import Libgit2, pygit2
from .objects import PACK_FILE, Objects
from .records import Pack
from .refs import REF_PREFIX, Refs
from .state import State

# The ids of a shallow list looked up as commits (~10 us each): cut_by_shallow (status)
# and memory_commits (after a replay that moved a partition).
SHALLOW_LOOKS = 10_000
# The ids of a shallow list read to tell whether a commit is still listed (a set
# lookup each; ~65 bytes a line): past this, shallow_ids cannot tell and says None.
SHALLOW_READ = 200_000

# Verdicts remembered per process (History._remember), of each kind.
_MEMO_MAX = 65_536
_T = TypeVar("_T")

# An append writes the last clock of its pack as a trailer of the commit
# message, so the next clock is known from tips alone, without replaying.
FACTS_FILE = "facts"


class History:
    """The commit history behind the partition refs of one repository."""

    _PLAIN_WALK_MAX = 256

    def __init__(self, objects: Objects, refs: Refs, libgit2: Libgit2, state: State) -> None:
        self._objects = objects
        self._refs = refs
        self._libgit2 = libgit2
        self._state = state
        self._facts: set[str] | None = None
        self._learned = 0  # facts learned by this process
        self._saved = 0  # ... of which the memo holds this many
        # Verdicts on immutable objects, the same from either reader: a tree id ->
        # (its ops.jsonl blob, or "" and why it is not a pack's tree); a blob id ->
        # why it is not a pack (too large, missing, not a blob).
        self._trees: dict[str, tuple[str, str | None]] = {}
        self._blobs: dict[str, str] = {}
        # The last pack read (blob id, bytes): commits reusing one blob read it once
        # (110 commits sharing a 16 MiB ops.jsonl inflated it 110 times: 60 s).
        self._last: tuple[str, bytes] = ("", b"")

    # -- plain reading of loose objects -------------------------------------------------
    #
    # What this clone appended since the last read is loose objects (written by
    # append.py): reading them with zlib spares a read after a write the
    # ~70 ms of loading libgit2.

    def plain_chain(self, tip: str, stop: set[str]) -> list[str] | None:
        """Commits from ``tip`` back to (not including) one in ``stop`` or the root,
        newest first; None unless all are loose, linear and within the walk limit."""
        chain = self._plain_chain(tip, stop)
        return [cid for cid, _, _ in chain] if chain is not None else None

    def _plain_chain(self, tip: str, stop: set[str]) -> list[tuple[str, str, int]] | None:
        """``plain_chain`` with each commit's tree and size: (commit, tree, size)."""
        chain: list[tuple[str, str, int]] = []
        oid = tip
        for _ in range(self._PLAIN_WALK_MAX):
            if oid in stop:
                return chain
            commit = self._objects.commit_head(oid)
            if commit is None or len(commit[1]) > 1:
                return None
            chain.append((oid, commit[0], commit[2]))
            if not commit[1]:
                return chain if not stop else None  # root reached, stop never seen
            oid = commit[1][0]
        return None

    def plain_packs(self, tip: str, since: list[str]) -> list[Pack] | None:
        """``iter_packs`` from loose objects alone; None if any is not loose."""
        chain = self._plain_chain(tip, set(since))
        if chain is None:
            return None
        packs = []
        for pack in self._plain_read(chain):
            if pack is None:
                return None
            packs.append(pack)
        return packs

    def _plain_read(self, chain: list[tuple[str, str, int]]) -> Iterator[Pack | None]:
        """The packs of a loose chain (newest first), oldest first, one at a time (a
        pack is up to 64 MiB: they are never all held at once); None, and no more,
        at the first commit the loose reader cannot decide (libgit2 goes on from
        there)."""
        for cid, tree, size in reversed(chain):
            if size > ops.MAX_COMMIT_BYTES:
                yield Pack(cid, None, _commit_oversized(size))
                continue
            verdict = self._trees.get(tree) or self._plain_tree(tree, len(cid) // 2)
            if verdict is None:
                yield None
                return
            blob_id, problem = verdict
            problem = problem or self._blobs.get(blob_id)
            if problem is not None:
                yield Pack(cid, None, problem)
                continue
            head = self._objects.header(blob_id)
            if head is None or head[0] != b"blob":
                yield None
                return
            if head[1] > ops.MAX_PACK_BYTES:
                yield Pack(cid, None, self._remember(self._blobs, blob_id, _oversized(head[1])))
                continue
            if self._last[0] != blob_id:
                blob = self._objects.loose(blob_id)
                if blob is None or blob[0] != b"blob":
                    yield None
                    return
                self._last = (blob_id, blob[1])
            yield Pack(cid, self._last[1])

    def _plain_tree(self, tree_id: str, width: int) -> tuple[str, str | None] | None:
        """(its ops.jsonl blob, or why the tree is not a pack's) of a loose tree,
        remembered; None when the loose reader cannot tell (libgit2 then does).
        ``width``: raw id bytes in a tree entry (20 for sha1, 32 for sha256)."""
        head = self._objects.header(tree_id)
        if head is None or head[0] != b"tree":
            return None
        if head[1] > ops.MAX_TREE_BYTES:
            return self._remember(self._trees, tree_id, ("", _tree_oversized(head[1])))
        tree = self._objects.loose(tree_id)
        if tree is None or tree[0] != b"tree":
            return None
        entries: list[tuple[bytes, str]] = []
        body, i = tree[1], 0
        while i < len(body):
            sp = body.find(b" ", i)
            nul = body.find(b"\0", sp)
            if sp < 0 or nul < 0 or nul + 1 + width > len(body):
                return None
            if body[sp + 1 : nul] == PACK_FILE.encode():
                entries.append((body[i:sp], body[nul + 1 : nul + 1 + width].hex()))
            i = nul + 1 + width
        # Decide only what is certain from the raw mode; anything unusual
        # (a legacy mode libgit2 normalises, a blob that is not loose)
        # goes to libgit2, so both readers always give the same verdict.
        kinds = [_MODES.get(mode) for mode, _ in entries]
        if None in kinds:
            return None
        problem = _entries_problem(kinds)
        return self._remember(self._trees, tree_id,
                              ("", problem) if problem is not None else (entries[0][1], None))

    @staticmethod
    def _remember(memo: dict[str, _T], oid: str, verdict: _T) -> _T:
        """Keep a verdict on an immutable object for the rest of this process (a tree
        or blob reused by every commit of a partition is judged once)."""
        if len(memo) >= _MEMO_MAX:
            memo.clear()
        memo[oid] = verdict
        return verdict

    # -- questions about commits ----------------------------------------------------

    def is_commit(self, oid: str) -> bool:
        """True when ``oid`` names a commit this repository has."""
        if self._objects.commit(oid) is not None:
            return True  # a loose commit: read faster than the memo, nothing to remember

        def ask() -> bool:
            try:
                return bool(self._libgit2.repo[oid].type == pygit2.enums.ObjectType.COMMIT)
            except (KeyError, ValueError, pygit2.GitError):
                return False

        return self._fact(f"commit {oid}", ask)

    def is_ancestor(self, old: str, new: str) -> bool:
        """True when ``old`` is ``new`` or one of its ancestors."""
        if old == new:
            return True
        if self.plain_chain(new, {old}) is not None:
            # Reached through loose, linear history: what every read after an add
            # asks (one step back), read faster than the memo, nothing to remember.
            return True

        def ask() -> bool:
            try:
                return bool(self._libgit2.repo.descendant_of(new, old))
            except (pygit2.GitError, KeyError, ValueError):
                return False

        return self._fact(f"ancestor {old} {new}", ask)

    def _fact(self, key: str, ask: Callable[[], bool]) -> bool:
        """Facts about immutable objects that only libgit2 could answer (packed
        objects, merges, long histories), remembered in .git/mem/facts so that
        later reads need not load libgit2 to ask again. Only positive answers are
        kept: an object that is missing now may arrive with the next fetch.

        What loose objects answer is not remembered: reading them costs less than
        reading the memo, and remembering it cost every read after an add two
        rewrites of the memo, which grew with every add to its 4,096 entries."""
        if self._facts is None:
            data = self._state.read_json(FACTS_FILE)  # never blocks, never raises
            self._facts = {x for x in data if isinstance(x, str)} if isinstance(data, list) else set()
        if key in self._facts:
            return True
        answer = ask()
        if answer:
            self._facts.add(key)
            self._learned += 1
            if self._learned & (self._learned - 1) == 0:
                # The 1st, 2nd, 4th, 8th... fact learned: a command that learns one
                # keeps it at once, and a pull that learns 20,000 (one per fetched
                # tip) rewrites the memo 15 times, not 20,000 (which took 60% of a
                # first sync of 5,000 partitions); save_facts keeps the rest.
                self.save_facts()
        return answer

    def save_facts(self) -> None:
        """Write the facts learned since the memo was last written, if any."""
        if self._facts is not None and self._saved != self._learned:
            self._saved = self._learned
            self._state.write_memo(FACTS_FILE, sorted(self._facts)[-4096:])

    # -- reading packs and clocks ------------------------------------------------------

    def iter_packs(self, tip: str, since: str | list[str] | None = None) -> Iterator[Pack]:
        """The commits after ``since`` up to ``tip``, oldest first, with their packs.

        Never raises for what a remote sent: a tip that is not a commit, a
        history that cannot be walked, or a commit whose tree is not one
        regular blob named ops.jsonl gives a Pack with the reason instead.
        """
        if not self.is_commit(tip):
            yield Pack(tip, None, self.tip_problem(tip))
            return
        hidden = [since] if isinstance(since, str) else list(since or [])
        chain = self._plain_chain(tip, set(hidden)) if len(hidden) <= 1 else None
        if chain is not None:
            for pack in self._plain_read(chain):
                if pack is None:  # libgit2 goes on after the last commit given
                    break
                yield pack
                hidden = [pack.commit]
            else:
                return
        repo = self._libgit2.repo
        try:
            walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL
                               | pygit2.enums.SortMode.REVERSE)
            for h in hidden:
                walker.hide(h)
            # A reverse walk reads the whole history before its first answer: its
            # ids are kept, never its commits (30 of 50 MiB each took 1.5 GB).
            commits = [str(commit.id) for commit in walker]
        except (pygit2.GitError, KeyError, ValueError) as exc:
            yield Pack(tip, None, f"history cannot be read: {_one_line(exc)}")
            return
        for cid in commits:
            yield self._libgit2_pack(repo, cid)

    def _libgit2_pack(self, repo: Any, cid: str) -> Pack:
        """One commit's pack read through libgit2, with the loose reader's verdicts
        (and memo). Sizes come from the object headers (``Odb.read_header``: the
        pack's entry header, nothing inflated), before anything is read whole."""
        size = _size(repo, cid)
        if size is not None and size > ops.MAX_COMMIT_BYTES:
            return Pack(cid, None, _commit_oversized(size))
        try:
            tree_id = str(repo[cid].tree_id)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            return Pack(cid, None, f"commit cannot be read: {_one_line(exc)}")
        verdict = self._trees.get(tree_id) or self._libgit2_tree(repo, tree_id)
        if verdict is None:
            return Pack(cid, None, f"tree {tree_id} is missing")
        oid, problem = verdict
        problem = problem or self._blobs.get(oid)
        if problem is not None:
            return Pack(cid, None, problem)
        try:
            kind, size = repo.odb.read_header(oid)
        except (KeyError, ValueError, pygit2.GitError):
            # (Not remembered: a missing blob may arrive with the next fetch.)
            return Pack(cid, None, f"{PACK_FILE} blob {oid} is missing")
        if kind != pygit2.enums.ObjectType.BLOB:
            return Pack(cid, None, self._remember(
                self._blobs, oid, f"{PACK_FILE} names a {_TYPE_NAMES.get(int(kind), kind)}, "
                "not a blob"))
        if size > ops.MAX_PACK_BYTES:
            return Pack(cid, None, self._remember(self._blobs, oid, _oversized(size)))
        if self._last[0] != oid:
            try:
                self._last = (oid, repo[oid].data)
            except (KeyError, ValueError, pygit2.GitError):
                return Pack(cid, None, f"{PACK_FILE} blob {oid} is missing")
        return Pack(cid, self._last[1])

    def _libgit2_tree(self, repo: Any, tree_id: str) -> tuple[str, str | None] | None:
        """(its ops.jsonl blob, or why the tree is not a pack's), remembered; None
        when the tree is missing."""
        size = _size(repo, tree_id)
        if size is None:
            return None
        if size > ops.MAX_TREE_BYTES:
            return self._remember(self._trees, tree_id, ("", _tree_oversized(size)))
        try:
            entries = [e for e in repo[tree_id] if e.name == PACK_FILE]
        except (pygit2.GitError, KeyError, ValueError, TypeError):
            return None
        kinds = [_FILEMODES.get(int(e.filemode), f"entry of mode {int(e.filemode):o}")
                 for e in entries]
        problem = _entries_problem(kinds)
        return self._remember(self._trees, tree_id,
                              ("", problem) if problem is not None else (str(entries[0].id), None))

    def check_own_tip(self, ref_name: str, tip: str | None, *, nothing: str = "written") -> None:
        """Refuse to build on (or push) this clone's own partition when its ref
        points at something that is not a commit (a tag, blob or tree someone
        pointed it at, or an object that is missing). A commit with such a parent
        is one git fsck calls broken: gc of the whole repository fails and every
        push is rejected. The ref is not ours to repair silently (whoever moved it
        may mean something): PartitionNotACommit, with how to heal."""
        if tip is None or self.is_commit(tip):
            return
        problem = self.tip_problem(tip).removeprefix("partition tip is not a commit: ")
        hint = None
        peeled = self.peel_to_commit(tip)
        if peeled is not None:
            hint = (f"if {peeled[:12]} is this partition's own history ('git log {peeled[:12]}'), "
                    f"point the ref back at it: git update-ref {ref_name} {peeled} {tip}; "
                    "otherwise run 'git mem rekey' (it keeps the odd ref under "
                    "refs/memory-backup/ and moves this clone's writes to a new partition)")
        raise PartitionNotACommit(
            f"this clone's partition {ref_name} points at {tip[:12]}, which is not a commit "
            f"({problem}); nothing was {nothing}", hint)

    def peel_to_commit(self, oid: str) -> str | None:
        """The commit a tag (or chain of tags) ``oid`` points at, or None."""
        try:
            obj = self._libgit2.repo.get(oid)
            if obj is None or obj.type != pygit2.enums.ObjectType.TAG:
                return None
            return str(obj.peel(pygit2.Commit).id)
        except (pygit2.GitError, KeyError, ValueError, TypeError):
            return None

    def shallow_ids(self, shallow: Path) -> frozenset[str] | None:
        """The commit ids ``shallow`` (.git/shallow) lists; none when there is no such
        regular file; None when it lists more than SHALLOW_READ (whether an id is
        still listed cannot be told from a part: git sorts the list by id, so other
        entries push any id past a cut). Never raises, never blocks."""
        ids = _shallow_lines(shallow, SHALLOW_READ)
        return frozenset(ids) if len(ids) <= SHALLOW_READ else None

    def memory_commits(self, ids: frozenset[str]) -> list[str]:
        """Those of ``ids`` (the first SHALLOW_LOOKS, by id) that are commits whose
        tree holds a pack, sorted."""
        try:
            repo = self._libgit2.repo
        except RepositoryUnreadable:
            return []
        out = []
        for oid in sorted(ids)[:SHALLOW_LOOKS]:
            try:
                size = _size(repo, oid)
                if size is None or size > ops.MAX_COMMIT_BYTES:
                    continue  # (replay skips such a commit unread: no pack of it is cut)
                obj = repo.get(oid)
                if obj is None or obj.type != pygit2.enums.ObjectType.COMMIT:
                    continue
                tree = _size(repo, str(obj.tree_id))
                if tree is not None and tree <= ops.MAX_TREE_BYTES and PACK_FILE in obj.tree:
                    out.append(oid)
            except (pygit2.GitError, KeyError, ValueError):
                continue
        return out

    def cut_by_shallow(self, shallow: Path) -> bool:
        """Whether a shallow fetch may have cut a partition's history: ``shallow`` (the
        repository's list of commits whose parents it does not have) names a commit
        whose tree holds a pack. Looks up at most SHALLOW_LOOKS of its ids and says True
        past them (git sorts the list by id: the rest could be anything). Never raises,
        never blocks: a file that is not a regular one (a FIFO, a link) says False."""
        ids = _shallow_lines(shallow, SHALLOW_LOOKS)
        try:
            self._libgit2.repo
        except RepositoryUnreadable:
            return bool(ids)  # (libgit2 refuses a list it cannot read: it may well cut)
        return bool(self.memory_commits(frozenset(ids[:SHALLOW_LOOKS]))) or len(ids) > SHALLOW_LOOKS

    def tip_problem(self, oid: str) -> str:
        """Why a partition tip is not a commit, naming what it is."""
        head = self._objects.header(oid)
        kind: str | None = head[0].decode("ascii", "replace") if head else None
        if kind is None:
            try:
                obj = self._libgit2.repo.get(oid)
                kind = obj.type_str if obj is not None else None
            except (pygit2.GitError, KeyError, ValueError):
                kind = None
        if kind is None:
            return "partition tip is not a commit: the object is missing"
        return f"partition tip is not a commit: it is a {kind}"

# -- what a pack commit's tree may hold ---------------------------------------------

# Raw tree-entry modes the loose reader decides on (others go to libgit2).
_MODES = {b"100644": "file", b"100755": "file", b"40000": "directory",
          b"160000": "submodule (gitlink)", b"120000": "symbolic link"}


def _entries_problem(kinds: Sequence[str | None]) -> str | None:
    """Why the ops.jsonl entries of a tree (their kinds) are not one regular file."""
    if not kinds:
        return f"commit has no {PACK_FILE}"
    if len(kinds) > 1:
        return f"the tree has {len(kinds)} entries named {PACK_FILE}"
    if kinds[0] != "file":
        return f"{PACK_FILE} is a {kinds[0]}, not a file"
    return None


def _oversized(size: int) -> str:
    return f"pack of {size} bytes exceeds {ops.MAX_PACK_BYTES}"


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


def _commit_oversized(size: int) -> str:
    return f"commit of {size} bytes exceeds {ops.MAX_COMMIT_BYTES}"


def _tree_oversized(size: int) -> str:
    return (f"tree of {size} bytes exceeds {ops.MAX_TREE_BYTES} "
            f"(a pack commit's tree holds {PACK_FILE} alone)")


def _size(repo: Any, oid: str) -> int | None:
    """An object's size from its header, nothing inflated; None when it is missing."""
    try:
        return int(repo.odb.read_header(oid)[1])
    except (KeyError, ValueError, pygit2.GitError):
        return None


_TYPE_NAMES = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}


# The same, as libgit2 reports them (git's format constants, normalised).
_FILEMODES = {0o100644: "file", 0o100755: "file", 0o40000: "directory",
              0o160000: "submodule (gitlink)", 0o120000: "symbolic link"}


def _shallow_lines(shallow: Path, limit: int) -> list[str]:
    """The first ``limit`` + 1 ids ``shallow`` lists, read without following a link
    or blocking (a FIFO, a link: none)."""
    try:
        fd = os.open(shallow, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0))
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        want = (limit + 1) * 65  # ids of SHA-1 or SHA-256, a line each
        chunks: list[bytes] = []
        size = 0
        while size < want and (chunk := os.read(fd, want - size)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError:
        return []
    finally:
        os.close(fd)
    return [raw.decode("ascii", "replace") for raw in b"".join(chunks).split()[:limit + 1]]
