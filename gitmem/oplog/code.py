"""The code a memory is about, as git sees it: what a path held, and how it changed.

Why this exists: a memory anchored to ``src/auth/session.py`` records the blob
that path had at HEAD when it was written. Later, comparing that blob with
the one at the new HEAD says whether the code moved on: unchanged (the same
blob, also after a revert), changed only in white space, changed (how many
commits, how many lines, and whether a line range was touched), renamed (git's
rename detection, as ``git log --follow`` uses it) or deleted. Everything
here asks the git binary, in as few processes as possible; the caller caches
the answers per HEAD (the projection), so no read pays for them twice.

An anchor's object ids come from an op, which a teammate wrote: a blob id may
name 120 MB of "a\n" shipped inside a memory commit's tree (issue 13: one
recall took 63 s and 2.6 GB diffing it). So every git call here has a timeout
and a bound on what is read of its output, a blob over ``MAX_BLOB_BYTES`` (by
its object header, never inflated) is not diffed (the anchor's state is
``unknown``: git cannot tell in reasonable time), and git itself treats a blob
over that size inside a tree as binary (``core.bigFileThreshold``).
"""

from __future__ import annotations

import re
from pathlib import Path

import msgspec

from .gitcmd import run_git_bounded

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.M)
# An identifier on a changed line: a name of 4+ characters (keywords are common
# words of every file; they are left out by ``KEYWORDS``).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
KEYWORDS = frozenset("""
self this that true false none null return import from class def function const
static public private protected void else elif while with async await yield
string number boolean println printf print assert expect require module export
default extends implements interface package final struct impl match case break
continue pass raise throw throws catch finally lambda args kwargs type typeof
""".split())


# The largest blob an anchor's diff reads: hand-written source files are far
# smaller (a few hundred KB at most); generated ones over it (an amalgamation, a
# bundle, a data file) are compared by id only: unchanged or "unknown".
MAX_BLOB_BYTES = 4 << 20
# Each git process here: at most this long, and this much of its output read.
GIT_TIMEOUT = 10.0
OUTPUT_LIMIT = 16 << 20
# Passed to every git that may diff: a blob over MAX_BLOB_BYTES is binary to git,
# which then never inflates it (numstat says "-", a -U0 diff has no hunk).
_BIG = ("-c", f"core.bigFileThreshold={MAX_BLOB_BYTES}")


class Entry(msgspec.Struct, frozen=True):
    """What a path is at a revision: ``blob`` or ``tree``, and its object id."""

    type: str
    oid: str


class Change(msgspec.Struct, omit_defaults=True):
    """How an anchored path changed between its anchor and HEAD.

    ``state``: ``unchanged`` | ``whitespace`` (only white space changed) |
    ``changed`` | ``renamed`` | ``deleted`` | ``unknown`` (git cannot tell:
    the anchor's objects are not in this clone, a blob is over MAX_BLOB_BYTES,
    or git did not answer within GIT_TIMEOUT).
    """

    state: str
    commits: int | None = None  # commits since the anchor that touched the path
    changed_at: int | None = None  # the newest of them (unix seconds)
    added: int | None = None  # lines added and deleted, anchor -> HEAD
    deleted: int | None = None
    renamed_to: str | None = None
    range_touched: bool | None = None  # for FILE:START-END anchors

    @property
    def stale(self) -> bool:
        return self.state in ("changed", "renamed", "deleted") and self.range_touched is not False


def head(workdir: Path) -> str | None:
    """HEAD's commit id, or None (an unborn branch, no git)."""
    proc = _git(workdir, "rev-parse", "-q", "--verify", "HEAD^{commit}")
    oid = proc.strip() if proc is not None else ""
    return oid or None


def entries(workdir: Path, rev: str, paths: list[str]) -> dict[str, Entry]:
    """path -> Entry at ``rev`` for each path (relative to the repository root)
    that exists there; one git process. ``.`` is the root tree."""
    wanted = sorted({p.rstrip("/") or "." for p in paths})
    if not wanted or any("\n" in p for p in wanted):
        return {}
    # One object name a line ("HEAD:src/a.py", "HEAD:" for the root), answered
    # "<oid> <type> <size>" or "... missing" in the same order. (ls-tree would
    # not name a folder given together with a file inside it.)
    names = "".join(f"{rev}:{'' if p == '.' else p}\n" for p in wanted)
    out = _git(workdir, "cat-file", "--batch-check", input=names)
    found: dict[str, Entry] = {}
    for path, line in zip(wanted, (out or "").splitlines()):
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("blob", "tree"):
            found[path] = Entry(parts[1], parts[0])
    return found


def compare(workdir: Path, path: str, anchor: Entry, commit: str | None, now: Entry | None,
            head_commit: str, lines: tuple[int, int] | None = None) -> Change:
    """How ``path`` changed from ``anchor`` (recorded at ``commit``) to ``now`` (at
    ``head_commit``); ``lines`` narrows a file anchor to a 1-based inclusive range."""
    if now is not None and now.oid == anchor.oid:
        return Change("unchanged")
    commits, changed_at = _history(workdir, commit, head_commit, path)
    if now is None:  # gone from HEAD: moved (when git can tell) or deleted
        moved = _renamed(workdir, path, commit, head_commit) if commit else None
        return Change("renamed" if moved else "deleted", renamed_to=moved, commits=commits,
                      changed_at=changed_at)
    sizes = _sizes(workdir, [anchor.oid, now.oid])
    if anchor.oid not in sizes or any(
            kind == "blob" and size > MAX_BLOB_BYTES for kind, size in sizes.values()):
        # Not in this clone, or too big to diff in reasonable time: cannot tell
        # (never stale for it, never a failure).
        return Change("unknown", commits=commits, changed_at=changed_at)
    counted = _numstat(workdir, anchor.oid, now.oid)
    if counted is None:
        return Change("unknown", commits=commits, changed_at=changed_at)
    added, deleted = counted
    if (added, deleted) != (0, 0) and _numstat(workdir, anchor.oid, now.oid, "-w",
                                               "--ignore-blank-lines") == (0, 0):
        return Change("whitespace", commits=commits, changed_at=changed_at, added=added,
                      deleted=deleted)
    change = Change("changed", commits=commits, changed_at=changed_at, added=added,
                    deleted=deleted)
    if lines is not None and anchor.type == "blob" and now.type == "blob":
        touched = _touches(workdir, anchor.oid, now.oid, lines)
        if touched is None:
            return Change("unknown", commits=commits, changed_at=changed_at)
        change.range_touched = touched
    return change


# -- one git question each ---------------------------------------------------------


def _git(workdir: Path, *args: str, input: str | None = None,
         partial: bool = False) -> str | None:
    """git's output, or None when it failed, ran past GIT_TIMEOUT or printed more
    than OUTPUT_LIMIT (with ``partial``: what it printed by then, for a best-effort
    answer)."""
    # errors="replace": a diff holds the code's own bytes and names (a Latin-1 source
    # file, a file named in Latin-1), and 'recall --diff' was an internal error on
    # them. A name that is not UTF-8 matches no memory's path (ops are UTF-8) either way.
    got = run_git_bounded(*args, cwd=workdir, input=input, timeout=GIT_TIMEOUT,
                          limit=OUTPUT_LIMIT, errors="replace")
    if got is None:
        return None
    return got.out if got.ok or (partial and got.cut) else None


def _has(workdir: Path, oid: str) -> bool:
    return _git(workdir, "cat-file", "-e", oid) is not None


def _sizes(workdir: Path, oids: list[str]) -> dict[str, tuple[str, int]]:
    """oid -> (type, size) from each object's header (nothing is inflated), for
    those this clone has; one git process."""
    wanted = [o for o in dict.fromkeys(oids) if o and o.isalnum()]
    out = _git(workdir, "cat-file", "--batch-check", input="".join(f"{o}\n" for o in wanted))
    found: dict[str, tuple[str, int]] = {}
    for oid, line in zip(wanted, (out or "").splitlines()):
        parts = line.split()
        if len(parts) == 3 and parts[2].isdigit():
            found[oid] = (parts[1], int(parts[2]))
    return found


def _history(workdir: Path, since: str | None, until: str, path: str) -> tuple[int | None, int | None]:
    """(commits since ``since`` that touched ``path``, the newest one's time)."""
    if not since or not _has(workdir, since):
        return None, None
    out = _git(workdir, "log", "--format=%ct", f"{since}..{until}", "--", path)
    if out is None:
        return None, None
    times = [int(t) for t in out.split() if t.isdigit()]
    return len(times), (times[0] if times else None)


def _numstat(workdir: Path, old: str, new: str, *flags: str) -> tuple[int, int] | None:
    """(lines added, deleted) old -> new; None when git could not tell in time."""
    out = _git(workdir, *_BIG, "diff", "--numstat", "--no-ext-diff", "--no-textconv", *flags,
               old, new)
    if out is None:
        return None
    added = deleted = 0
    for line in out.splitlines():
        a, _, rest = line.partition("\t")
        d, _, _ = rest.partition("\t")
        added += int(a) if a.isdigit() else 0  # "-" for binary files
        deleted += int(d) if d.isdigit() else 0
    return added, deleted


def _touches(workdir: Path, old: str, new: str, lines: tuple[int, int]) -> bool | None:
    """True when a hunk of the diff old -> new changes a line in ``lines`` of old
    (or inserts right inside the range); None when git could not tell in time."""
    # Git's own hunks, never an external diff's output (diff.external, GIT_EXTERNAL_DIFF:
    # difftastic's had no "@@" line, so no range was ever touched, and that was cached).
    out = _git(workdir, *_BIG, "diff", "-U0", "--no-ext-diff", "--no-textconv", "--no-color",
               old, new)
    if out is None:
        return None
    start, end = lines
    for m in _HUNK.finditer(out):
        first = int(m.group(1))
        count = int(m.group(2)) if m.group(2) is not None else 1
        if count == 0:  # a pure insertion after line ``first``
            if start <= first < end:
                return True
        elif first <= end and first + count - 1 >= start:
            return True
    return False


def _renamed(workdir: Path, path: str, since: str, until: str) -> str | None:
    """Where git's rename detection says ``path`` (a file or a folder) went."""
    if not _has(workdir, since):
        return None
    out = _git(workdir, "diff", "-M", "--name-status", "-z", "--diff-filter=R", since, until)
    fields = (out or "").split("\0")
    moves: dict[str, str] = {}
    i = 0
    while i + 2 < len(fields):
        status, src, dst = fields[i], fields[i + 1], fields[i + 2]
        if status.startswith("R"):
            moves[src] = dst
        i += 3
    if path in moves:
        return moves[path]
    # A folder: every file under it moved under one new folder.
    prefix = path.rstrip("/") + "/"
    inside = {src: dst for src, dst in moves.items() if src.startswith(prefix)}
    if not inside:
        return None
    targets = set()
    for src, dst in inside.items():
        rest = src[len(prefix):]
        if not dst.endswith("/" + rest) and dst != rest:
            return None
        targets.add(dst[: len(dst) - len(rest)].rstrip("/"))
    return targets.pop() if len(targets) == 1 else None


def diff(workdir: Path, rev: str | None) -> tuple[list[str], list[str]] | None:
    """What a change touches: (paths, with old and new names of renames; the
    identifiers on its changed lines, most frequent first). ``rev`` None: the
    work tree against HEAD; else the work tree against ``rev`` or, for
    ``A..B``, B against A. None when git cannot read ``rev``."""
    if rev is not None and (not rev.strip() or rev.startswith("-")):
        return None
    spec = [rev] if rev else ["HEAD"]
    names = _git(workdir, "diff", "--name-status", "-M", "-z", *spec, "--", partial=True)
    if names is None:
        return None
    fields = names.split("\0")
    paths: list[str] = []
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        take = 2 if status[:1] in ("R", "C") else 1
        for p in fields[i + 1: i + 1 + take]:
            if p and p not in paths:
                paths.append(p)
        i += 1 + take
    # (Best effort past OUTPUT_LIMIT: the identifiers of what was read.)
    text = _git(workdir, *_BIG, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
                *spec, "--", partial=True) or ""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        if line[:1] in ("+", "-") and not line.startswith(("+++", "---")):
            for word in _NAME.findall(line[1:]):
                if word.lower() not in KEYWORDS:
                    counts[word] = counts.get(word, 0) + 1
    return paths, sorted(counts, key=lambda w: (-counts[w], w))
