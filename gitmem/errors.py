"""Typed errors for git mem.

Every failure a user can cause or fix is one of these classes. Each carries a
message (what went wrong), a hint (how to fix it), a stable machine-readable
``code`` for the JSON envelope and a documented process exit code. Only the
front ends (CLI, MCP) turn them into output; the core just raises.

The exit codes are the table ``EXIT_CODES`` below: scripts/gen_docs.py
writes docs/cli.md and the man page from it, and a test checks that every
class's code is in it.
"""

from __future__ import annotations

import errno
import os

# Process exit code -> what it means, for the docs. 0, 1 and 2 are generic (2 is
# also click's usage error); every other code belongs to the classes below.
# A code is a promise to scripts: never reuse one for a different meaning.
EXIT_CODES: dict[int, str] = {
    0: "success",
    1: "unexpected internal error (a bug: rerun with GITMEM_DEBUG=1 and report it)",
    2: "invalid input: empty text, bad id, bad date, out-of-range value; also click's usage "
       "errors",
    3: "not usable here: outside a git repository, or a bare repository",
    4: "no git identity configured",
    5: "unknown id (or a key with no value)",
    6: "ambiguous id prefix (the candidates are listed)",
    7: "the op-log stayed busy: could not append after many retries",
    8: "a remote could not be used (none configured, fetch or push failed)",
    9: "the remote host refused the memory refs",
    10: "partition conflict: a remote holds commits on this clone's own partition (see rekey)",
    11: "refused by the write gate: a secret, prompt-injection phrasing or invisible Unicode",
    12: "near-duplicate: a memory of the same kind with a very similar meaning is stored "
        "(add --force stores it anyway)",
    13: "the disk is full or failing: no space left, quota exceeded or an I/O error "
        "(nothing was written half-way; free space and retry)",
    14: "read-only: the repository's .git cannot be written (writes are refused; reads "
        "still answer, from a temporary projection)",
    15: "the repository belongs to another user, and git's safe.directory does not name it: "
        "refused, as git refuses it (git config --global --add safe.directory PATH if you "
        "trust that user)",
    16: "the projection stayed locked: another git mem process (most often the background "
        "catch-up replaying newly fetched memory) held its write lock past the busy "
        "timeout; try again",
    130: "interrupted (Ctrl-C)",
    141: "the reader of the output went away before it was written (a closed pipe, as "
         "in `git mem context | head -1`): nothing more to say",
}


class GitMemError(Exception):
    """Base class: a failure with a message, a hint and an exit code."""

    code: str = "error"
    exit_code: int = 1
    default_hint: str = ""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def one_line(self) -> str:
        """The single stderr line: ``error: <message>; hint: <hint>``."""
        if self.hint:
            return f"error: {self.message}; hint: {self.hint}"
        return f"error: {self.message}"

    # Attribute names a subclass adds to its JSON error object (stable fields).
    fields: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            "exit_code": self.exit_code,
        }
        d.update((name, getattr(self, name)) for name in self.fields)
        return d


class InvalidInput(GitMemError):
    code = "invalid_input"
    exit_code = 2


class EmptyText(InvalidInput):
    code = "empty_text"
    default_hint = "pass the memory text as an argument, or '-' to read it from stdin"


class PurgeRefused(InvalidInput):
    """A purge this clone may not or cannot do (someone else's partition, an odd chain)."""

    code = "purge_refused"


class InvalidDate(InvalidInput):
    code = "invalid_date"
    default_hint = (
        "use an ISO date such as 2026-11-21 or 2026-11-21T14:30:00+01:00, "
        "or a git date such as '@1700000000 +0000'"
    )


class NotARepository(GitMemError):
    code = "not_a_repository"
    exit_code = 3
    default_hint = "run git mem inside a git work tree, or create one with 'git init'"


class RepositoryUnreadable(NotARepository):
    """libgit2 cannot open the repository git found (a damaged or hand-edited file of
    .git: its shallow list, config or HEAD)."""

    code = "repository_unreadable"
    default_hint = ("run 'git fsck' and 'git status' to see what git makes of it; a shallow "
                    "list with a line that is no commit id (.git/shallow) is one cause")


class RepositoryUnsupported(RepositoryUnreadable):
    """The repository uses a format the bundled libgit2 cannot read (sha256 object
    ids, the reftable ref store): git reads it, git mem cannot yet."""

    code = "repository_unsupported"
    default_hint = ("git mem needs a repository with sha1 object ids and files for refs "
                    "(git's default); see docs/architecture.md, Limits")


class PathTooLong(NotARepository):
    """The projection's path is longer than SQLite opens (504 bytes: its 512-byte
    limit, less the room for a '-journal' suffix)."""

    code = "path_too_long"
    default_hint = ("clone or move the repository to a shorter path (SQLite cannot open "
                    "a file whose path is longer than 504 bytes)")


class BareRepository(GitMemError):
    code = "bare_repository"
    exit_code = 3
    default_hint = (
        "git mem keeps its projection in a work tree's .git directory; "
        "clone the repository ('git clone <path>') and run it there"
    )


class DubiousOwnership(GitMemError):
    """The repository found is owned by another user (git's CVE-2022-24765 check):
    its memory would brief your agent and its config name commands git mem runs."""

    code = "dubious_ownership"
    exit_code = 15
    default_hint = ("if you trust the user who owns it: git config --global --add "
                    "safe.directory PATH")


class NoIdentity(GitMemError):
    code = "no_identity"
    exit_code = 4
    default_hint = (
        'set it with: git config --global user.name "Your Name" && '
        "git config --global user.email you@example.com "
        "(or set GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL)"
    )


class UnknownId(GitMemError):
    code = "unknown_id"
    exit_code = 5
    default_hint = "list ids with 'git mem recall QUERY --all' or 'git mem log'"


class UnknownKey(UnknownId):
    code = "unknown_key"
    default_hint = "set it with 'git mem set KEY VALUE'; list keys with 'git mem keys'"


class AmbiguousId(GitMemError):
    code = "ambiguous_id"
    exit_code = 6
    fields = ("candidates",)

    def __init__(self, prefix: str, candidates: list[str]) -> None:
        shown = ", ".join(c[:12] for c in candidates[:10])
        more = f" and {len(candidates) - 10} more" if len(candidates) > 10 else ""
        super().__init__(
            f"id prefix '{prefix}' is ambiguous: {shown}{more}",
            "give more characters of the id",
        )
        self.prefix = prefix
        self.candidates = candidates


class LogBusy(GitMemError):
    code = "log_busy"
    exit_code = 7
    default_hint = "another process kept updating the same partition; try again"


class ProjectionBusy(GitMemError):
    """SQLite's busy timeout ran out: another process held the projection's write
    lock all along (a catch-up replaying a big push, a long rebuild)."""

    code = "projection_busy"
    exit_code = 16
    default_hint = ("another git mem process is replaying new memory (see "
                    ".git/mem/catch-up.log); try again in a moment")


# SQLite's primary result codes for a lock another connection holds.
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6


def busy_error(exc: BaseException) -> ProjectionBusy | None:
    """ProjectionBusy when ``exc`` is SQLite giving up on a lock another process
    held past the busy timeout ("database is locked"), else None. Known by its
    result code (sqlite3 is the projection's to import, not this module's)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(code, int) or code & 0xFF not in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return None
    return ProjectionBusy("the memory projection stayed locked by another git mem process "
                          f"({exc})")


class NoRemote(GitMemError):
    code = "no_remote"
    exit_code = 8


class RemoteError(GitMemError):
    code = "remote_error"
    exit_code = 8


class PushRejected(GitMemError):
    code = "push_rejected"
    exit_code = 9


class RefNameConflict(PushRejected):
    """The remote holds a ref that blocks a partition's name: ``refs/memory/<p>/x``
    (a ref cannot be a name and a folder at once), pushed there by someone."""

    code = "ref_name_conflict"


class PartitionConflict(GitMemError):
    code = "partition_conflict"
    exit_code = 10
    default_hint = (
        "this clone's partition is also written from another place (a copied .git, or "
        "someone who pushed to it: 'git log' of the remote's ref shows who); run "
        "'git mem rekey' here to move this clone's unpushed ops to a new partition, "
        "then 'git mem sync'"
    )


class PartitionNotACommit(PartitionConflict):
    """This clone's own partition ref points at something that is not a commit (a
    tag, blob, tree, or a missing object): an append on it would write a commit
    with a parent git cannot read, which breaks gc and every push."""

    code = "partition_not_a_commit"
    default_hint = (
        "run 'git mem rekey': it keeps the odd ref under refs/memory-backup/ and moves "
        "this clone's writes to a new partition"
    )


class GateRefused(GitMemError):
    """The write gate found something that must not enter a shared log."""

    code = "refused_by_gate"
    exit_code = 11
    fields = ("findings",)

    def __init__(self, findings: list[str], hint: str) -> None:
        # (The gate names a text's first eight findings: a count past them is not known.)
        shown = "; ".join(findings[:5]) + ("; and more" if len(findings) > 5 else "")
        super().__init__(f"refused: {shown}", hint)
        self.findings = findings


class NearDuplicate(GitMemError):
    """A memory of the same kind is already stored with a very similar meaning."""

    code = "near_duplicate"
    exit_code = 12
    fields = ("existing", "cosine")

    def __init__(self, existing: str, cosine: float, text: str) -> None:
        clip = text if len(text) <= 80 else text[:79] + "…"
        super().__init__(
            f"near-duplicate of {existing[:12]} (cosine {cosine:.3f}): {clip!r}; nothing written",
            f"store it anyway with --force, reinforce the existing one with "
            f"'git mem confirm {existing[:12]}', or replace it with --supersedes {existing[:12]}",
        )
        self.existing = existing
        self.cosine = cosine


class DiskError(GitMemError):
    """The device holding the repository failed a write (an I/O error)."""

    code = "disk_error"
    exit_code = 13
    default_hint = ("check the device (dmesg, df -h) and retry; nothing was written "
                    "half-way: the op-log is only ever updated whole and the "
                    "projection is rebuilt from it")


class DiskFull(DiskError):
    """No space left (or the quota is used up) where a write had to go."""

    code = "disk_full"
    default_hint = ("free some space there (or raise your quota) and retry; nothing was "
                    "written half-way: the op-log is only ever updated whole and the "
                    "projection is rebuilt from it")


class ReadOnly(GitMemError):
    """The repository's .git cannot be written (a read-only mount or checkout)."""

    code = "read_only"
    exit_code = 14
    default_hint = ("memory is written to .git (refs/memory/*, .git/mem): run this in a "
                    "clone you can write to; reads still work here")


_NO_SPACE = {errno.ENOSPC: "no space left", errno.EDQUOT: "disk quota exceeded"}
_READ_ONLY = {errno.EROFS: "read-only file system", errno.EACCES: "permission denied",
              errno.EPERM: "permission denied"}


def from_os_error(exc: OSError, where: str | os.PathLike[str] | None = None, *,
                  writing: bool = True) -> GitMemError | None:
    """The typed error for a write the file system refused (a full disk, a
    read-only mount), or None when ``exc`` is something else. ``where``: the
    directory to name (the repository's .git), else the file that failed.
    ``writing``: ``exc`` surely came from a write, so a permission error means
    the place is read-only to us (otherwise only EROFS does)."""
    place = os.fspath(where) if where is not None else (
        os.fsdecode(exc.filename) if isinstance(exc.filename, (str, bytes)) else None)
    code = exc.errno if exc.errno is not None else errno_in_text(str(exc))
    if code in _NO_SPACE:
        on = f" on the device holding {place}" if place else ""
        return DiskFull(f"{_NO_SPACE[code]}{on}")
    if code == errno.EROFS or (writing and code in _READ_ONLY):
        return ReadOnly(f"cannot write {place or 'the repository'}: {_READ_ONLY[code]}")
    if code == errno.EIO:
        return DiskError(f"disk I/O error writing {place or 'the repository'}")
    return None


# The C library's words for the errors above, as libgit2 and git print them
# ("failed to write out file: No space left on device"): their OSErrors and
# messages carry no errno.
_STRERRORS = {os.strerror(code): code
              for code in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO)}


def errno_in_text(text: str, *, permission: bool = True) -> int | None:
    """The errno a message from libgit2 or git names by its C library words
    ("...: No space left on device"), or None. ``permission``: also "Permission
    denied" (not for a remote's messages, where it is about access)."""
    found = dict(_STRERRORS)
    if permission:
        found[os.strerror(errno.EACCES)] = errno.EACCES
    for words, code in found.items():
        if words in text:
            return code
    return None
