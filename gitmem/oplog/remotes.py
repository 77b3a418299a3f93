"""What a remote hands us, judged before it reaches git, a ref or a message.

Why this exists: a remote is someone else's. Its name or URL may come from a
config a teammate suggested, its refs from anyone who can push, its objects
from a partial clone's filter; each reaches a git command line, the file
system or the terminal. The rules for each are here, as plain functions
(sync.py runs the commands):

- remote names and URLs: one git would read as an option is refused
  (``checked_remote``), and a URL is shown without its user, password and
  query string (``shown``);
- partition names: which of a remote's refs this clone can store as tracking
  refs (``storable``);
- partial clones: which objects the memory commits need and this clone lacks
  (``missing_pack_objects``).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from .libgit2 import pygit2
from .objects import PACK_FILE

# A URL in a remote or in git's words: its user and password, and its query string
# ("https://bob:ghp_...@host/r.git", "...?private_token=glpat-..."), are never
# repeated in a message (CI logs keep what we print).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"]+")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def _without_credentials(url: str) -> str:
    scheme, rest = url.split("://", 1)
    # Everything up to the last "@": a password may hold a raw "@" or "/" (git reads
    # the last "@" too). A path holding "@" loses its host: a message only.
    rest = rest.rsplit("@", 1)[-1]
    return f"{scheme}://{rest.split('?', 1)[0].split('#', 1)[0]}"


# An scp-like remote whose user part holds a password ("bob:hunter2@host:repo.git"):
# git reads "bob" as the host, but the person meant a credential. Not a Windows
# path ("C:\\src\\team@corp\\repo": a drive letter, then a separator).
# The password may hold "/" and "@" (generated tokens do): up to the last "@", when
# what follows is itself host:path (a path holding "@", as "host:/repos/@team/x.git",
# is no password).
_SCP_PASSWORD = re.compile(r"(?![A-Za-z]:[\\/])[^\s/\\@:]+:\S*@(?=[^\s@/:]+:[^\s@]*\Z)")
# A URL's authority: up to the first "/" after the scheme. Its port, when it has
# one, is digits (an IPv6 host is bracketed).
_AUTHORITY = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<auth>[^/]*)(?P<rest>.*)\Z", re.S)
_HOST_PORT = re.compile(r"(\[[^\]]*\]|[^:\[\]]*)(:\d*)?\Z")


def recorded(remote: str) -> str:
    """A remote as it may be stored (the personal pool's pointer to a repository,
    an op: never rewritten but by a purge): without its user, password, query
    string and fragment, and nothing else lost. A message may strip more (``shown``
    strips a URL up to its last "@": a path holding one loses its host there); a
    record keeps a path's "@" ("https://host/org/repo@v1.git") unless the URL's
    authority is no host and port (a password holding "/": then as ``shown``)."""
    core = remote.strip()
    m = _AUTHORITY.match(core)
    if m is None:
        scp = _SCP_PASSWORD.match(core)
        return core[scp.end():] if scp is not None else core
    auth = m.group("auth").rsplit("@", 1)[-1]
    if not _HOST_PORT.match(auth):  # "ci:Zx9" of https://ci:Zx9/Qw7@host/: a password's "/"
        return _without_credentials(core)
    rest = m.group("rest").split("?", 1)[0].split("#", 1)[0]
    return f"{m.group('scheme')}{auth}{rest}"


def shown(text: str) -> str:
    """A remote, or git's message about one, as messages may print it: every URL
    without its user, password and query string. A remote that is a URL as a whole
    (a line end after it, as a file's CRLF leaves, included) loses them whatever its
    password holds (a quote or a space ended the URL the pattern finds in a message,
    and the rest of a password was printed); so does an scp-like remote whose user
    part holds a password."""
    core = text.rstrip("\r\n")
    if not any(ch in core for ch in "\n\r"):
        if _SCHEME.match(core):
            return _without_credentials(core) + text[len(core):]
        scp = _SCP_PASSWORD.match(core)
        if scp is not None:
            return core[scp.end():] + text[len(core):]
    return _URL.sub(lambda m: _without_credentials(m.group()), text)


def scrubbed(text: str, *remotes: str) -> str:
    """git's ``text`` about a remote as messages may print it (``shown``), and without
    the password of any of ``remotes`` (the remote as given, and the URLs a remote's
    name stands for) wherever git repeated it outside a URL (an scp-like remote's
    "user:password@" reaches git as a host and a path)."""
    out = shown(text)
    for remote in remotes:
        secret = _password(remote)
        if secret:
            out = out.replace(secret, "***")
    return out


def _password(remote: str) -> str | None:
    """The password a remote as written holds (None: none, or too short to look for)."""
    core = remote.strip()
    if _SCHEME.match(core):
        userinfo = core.split("://", 1)[1].rsplit("@", 1)
        found = userinfo[0].split(":", 1)[1] if len(userinfo) == 2 and ":" in userinfo[0] else None
    else:
        scp = _SCP_PASSWORD.match(core)
        found = core[:scp.end() - 1].split(":", 1)[1] if scp is not None else None
    return found if found and len(found) >= 4 else None


def option_like(remote: str) -> bool:
    """Whether git would read ``remote`` as something else than a remote: an option
    ("--upload-pack=<command>" runs the command), or a value a NUL or newline ends."""
    return remote.startswith("-") or any(ch in remote for ch in "\0\n\r")


def checked_remote(remote: str, source: str | None = None) -> str:
    """``remote`` (a name, a URL or a path), refused when ``option_like``.
    ``source``: the config key it came from (else: the command line)."""
    if option_like(remote):
        where = f" (from git config {source})" if source else ""
        raise InvalidInput(
            f"{shown(remote)[:80]!r}{where} is not a remote name or URL",
            "name a remote ('git remote -v' lists them) or give its URL"
            + (f"; fix it with: git config --unset {source}" if source else ""))
    return remote


# A partition's name, as a fetch by name takes it: one ref component git allows,
# short enough for any file system to hold it with its ".lock" (255 bytes a name),
# and none Windows cannot hold.
_PARTITION = re.compile(r"^(?!\.)[^/\x00-\x20\x7f~^:?*\[\\<>\"|]+(?<!\.lock)(?<!\.)\Z")
MAX_NAME_BYTES = 200
_RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                       *(f"LPT{i}" for i in range(1, 10))})  # Windows device names


def _as_written(name: str) -> bool:
    """Whether git mem could have written ``name``: lower case, NFC."""
    return name == name.lower() and unicodedata.is_normalized("NFC", name)


def folds_case(directory: Path) -> bool:
    """Whether the file system holding ``directory`` treats names equal but for case
    as one (macOS and Windows by default)."""
    other = directory.with_name(directory.name.swapcase())
    try:
        return other != directory and os.path.samefile(directory, other)
    except OSError:
        return False


def storable(names: Iterable[str], refs_dir: Path) -> tuple[list[str], list[str]]:
    """(the names under refs/memory/ a fetch by name takes, sorted; the refs left out).

    Partitions are single names; anything else is no partition, nor is a name too
    long or one Windows cannot hold. Names this file system cannot tell apart (it
    folds case, and Unicode normalisation) share one file: one is taken, the one
    git mem writes (lower case, NFC), else the first by name, never by commit id
    (that let a teammate's look-alike, mined to sort first, hide the real one)."""
    folds = folds_case(refs_dir)
    take: list[str] = []
    left_out: list[str] = []
    seen: set[str] = set()
    for name in sorted(set(names), key=lambda n: (not _as_written(n), n)):
        key = unicodedata.normalize("NFC", name).casefold() if folds else name
        if (not _PARTITION.match(name) or len(name.encode()) > MAX_NAME_BYTES
                or name.split(".", 1)[0].upper() in _RESERVED or key in seen):
            left_out.append("refs/memory/" + name)
            continue
        seen.add(key)
        take.append(name)
    return sorted(take), left_out


# The config that makes a clone partial (`git config --get-regexp` reads it).
PROMISOR_KEYS = r"^(remote\..*\.promisor|extensions\.partialclone)$"


def partial_clone(config: str) -> bool:
    """Whether ``git config --get-regexp PROMISOR_KEYS``'s output names a promisor
    remote (a clone made with --filter)."""
    return any(line.split(" ", 1)[-1].strip().lower() not in ("", "false", "no", "off", "0")
               for line in config.splitlines())


def missing_pack_objects(repo: Any, commits: list[str]) -> list[str]:
    """The trees of ``commits`` this repository lacks, and the ``ops.jsonl`` blobs its
    trees name and it lacks; nothing else a memory commit holds (a big file beside
    the pack is never asked for). Fetching them, then asking again, fills a partial
    clone in two rounds."""
    want: dict[str, None] = {}
    for cid in commits:
        try:
            commit = repo.get(cid)
            tree_id = commit.tree_id
            if tree_id not in repo:
                want[str(tree_id)] = None
                continue
            entry = repo[tree_id][PACK_FILE]
        except (KeyError, ValueError, AttributeError, pygit2.GitError):
            continue  # no commit, or no pack in it: replay says what is wrong
        if entry.id not in repo:
            want[str(entry.id)] = None
    return list(want)
