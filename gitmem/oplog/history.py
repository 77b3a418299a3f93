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

import json
import re
from collections.abc import Callable, Iterator

from .. import ops
from .libgit2 import Libgit2, pygit2
from .objects import PACK_FILE, Objects
from .records import Pack
from .refs import REF_PREFIX, Refs
from .state import State

# An append writes the last clock of its pack as a trailer of the commit
# message, so the next clock is known from tips alone, without replaying.
_TRAILER_CLOCK = re.compile(rb"^Gitmem-Clock: (\d{1,18})$", re.MULTILINE)
TIP_CLOCKS_FILE = "tip-clocks"
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

    # -- plain reading of loose objects -------------------------------------------------
    #
    # What this clone appended since the last read is loose objects (written by
    # append.py): reading them with zlib spares a read after a write the
    # ~70 ms of loading libgit2.

    def plain_chain(self, tip: str, stop: set[str]) -> list[str] | None:
        """Commits from ``tip`` back to (not including) one in ``stop`` or the root,
        newest first; None unless all are loose, linear and within the walk limit."""
        chain: list[str] = []
        oid = tip
        for _ in range(self._PLAIN_WALK_MAX):
            if oid in stop:
                return chain
            commit = self._objects.commit(oid)
            if commit is None or len(commit[1]) > 1:
                return None
            chain.append(oid)
            if not commit[1]:
                return chain if not stop else None  # root reached, stop never seen
            oid = commit[1][0]
        return None

    def plain_packs(self, tip: str, since: list[str]) -> list[Pack] | None:
        """``iter_packs`` from loose objects alone; None if any is not loose."""
        chain = self.plain_chain(tip, set(since))
        if chain is None:
            return None
        width = len(tip) // 2  # raw id bytes in a tree entry (20 for sha1, 32 for sha256)
        packs = []
        for cid in reversed(chain):
            commit = self._objects.commit(cid)
            tree = self._objects.loose(commit[0]) if commit else None
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
            blob = self._objects.loose(entry[1])
            if blob is None or blob[0] != b"blob":
                return None
            if len(blob[1]) > ops.MAX_PACK_BYTES:
                packs.append(Pack(cid, None, f"pack of {len(blob[1])} bytes exceeds "
                                  f"{ops.MAX_PACK_BYTES}"))
                continue
            packs.append(Pack(cid, blob[1]))
        return packs

    # -- questions about commits ----------------------------------------------------

    def is_commit(self, oid: str) -> bool:
        """True when ``oid`` names a commit this repository has."""
        def ask() -> bool:
            if self._objects.commit(oid) is not None:
                return True
            try:
                return bool(self._libgit2.repo[oid].type == pygit2.enums.ObjectType.COMMIT)
            except (KeyError, ValueError, pygit2.GitError):
                return False

        return self._fact(f"commit {oid}", ask)

    def is_ancestor(self, old: str, new: str) -> bool:
        """True when ``old`` is ``new`` or one of its ancestors."""
        if old == new:
            return True

        def ask() -> bool:
            if self.plain_chain(new, {old}) is not None:
                return True  # reached it through loose, linear history
            try:
                return bool(self._libgit2.repo.descendant_of(new, old))
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
                self._facts = set(json.loads((self._state.path / FACTS_FILE).read_text()))
            except (OSError, ValueError, TypeError):
                self._facts = set()
        if key in self._facts:
            return True
        answer = ask()
        if answer:
            self._facts.add(key)
            self._state.write_memo(FACTS_FILE, sorted(self._facts)[-4096:])
        return answer

    # -- reading packs and clocks ------------------------------------------------------

    def iter_packs(self, tip: str, since: str | list[str] | None = None) -> Iterator[Pack]:
        """The commits after ``since`` up to ``tip``, oldest first, with their packs."""
        if not self.is_commit(tip):
            yield Pack(tip, None, "partition tip is not a commit")
            return
        hidden = [since] if isinstance(since, str) else list(since or [])
        plain = self.plain_packs(tip, hidden) if len(hidden) <= 1 else None
        if plain is not None:
            yield from plain
            return
        repo = self._libgit2.repo
        walker = repo.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)
        for h in hidden:
            walker.hide(h)
        for commit in walker:
            cid = str(commit.id)
            try:
                entry = commit.tree[PACK_FILE]
            except KeyError:
                yield Pack(cid, None, f"commit has no {PACK_FILE}")
                continue
            obj = repo[entry.id]
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
        memo_path = self._state.path / TIP_CLOCKS_FILE
        try:
            memo: dict[str, int] = json.loads(memo_path.read_text())
        except (OSError, ValueError):
            memo = {}
        best, changed = 0, False
        seen: dict[str, int] = {}
        for tip in self._refs.under(REF_PREFIX).values():
            clock = memo.get(tip)
            if clock is None:
                changed = True
                message = self._objects.commit_message(tip)
                if message is None:
                    try:
                        message = self._libgit2.repo[tip].raw_message
                    except (KeyError, ValueError, AttributeError):
                        message = b""
                clock = max((int(m.group(1)) for m in _TRAILER_CLOCK.finditer(message)),
                            default=0)
            seen[tip] = clock
            best = max(best, clock)
        if changed or len(seen) != len(memo):
            self._state.write_memo(TIP_CLOCKS_FILE, seen)
        return best
