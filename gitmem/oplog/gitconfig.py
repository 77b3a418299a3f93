"""git's configuration and identity as the git binary reports them, remembered
between processes.

Why this exists: every command reads the ``gitmem.*`` settings, reads look at
the remotes and ``add`` needs the identity. Asking git costs a process start
and the import of ``subprocess``, a large share of a fresh ``git mem recall``.
So the answers are kept in ``mem/gitconfig.json`` in the work tree's own git
dir (``.git/mem/`` for the main work tree, ``.git/worktrees/<id>/mem/`` for a
linked one: each has its own ``config.worktree``, ``HEAD`` and ``gitdir:``
includes, so one answer cannot serve them all, and two work trees never
overwrite each other's) beside a fingerprint of everything they depend on,
and git is asked again when any of it differs:

- the stat (mtime, size, inode) of every file git read config from, as
  ``--show-origin`` names it (included files too), and of every standard
  location even while it is absent, so a file created later is noticed
  (``config.worktree`` is this work tree's);
- the git dir's path, which ``includeIf "gitdir:..."`` matches (a repository
  moved or copied elsewhere is asked again);
- ``HEAD`` when a conditional include could depend on the branch;
- the environment git consults (``GIT_*``, ``HOME``, ``XDG_CONFIG_HOME``, ``EMAIL``).

The file names commands git mem runs (``gitmem.extractor``), so it is used
only when it is a regular file owned by the user running and writable by no
one else (it is written with mode 0600); anything else is ignored and git is
asked, whatever the fingerprint says.

Racy files are not trusted, as git does with its index: when a config file
changed within the last ``RACY_SECONDS``, nothing is saved, because a second
change in the same clock tick would leave the stat unchanged. The fingerprint
is taken before git is asked, so a change made while git runs is never
recorded as the state the answer came from.

Known limit: a system config file at a non-standard place (not
``/etc/gitconfig`` nor ``$GIT_CONFIG_SYSTEM``) that did not exist when the
answers were saved is not noticed until anything else changes.
"""

from __future__ import annotations

import json
import os
import re
import stat
import time
from pathlib import Path
from typing import Any

import msgspec

from ..errors import NoIdentity
from .state import MEMO_BYTES, STATE_DIR, State

CACHE_FILE = "gitconfig.json"
FORMAT = 2  # 2: kept per work tree, the git dir's path in the fingerprint
RACY_SECONDS = 2.0
_ENV_NAMES = ("HOME", "XDG_CONFIG_HOME", "EMAIL", "PREFIX")
_IDENT = re.compile(r"^(.*) <(.*)> (\d+) ([+-]\d{4})$")


class GitConfig:
    """The ``gitmem.*`` settings, remote URLs and identity of one repository."""

    def __init__(self, workdir: Path, gitdir: Path, commondir: Path, state: State) -> None:
        self._workdir = workdir
        self._gitdir = gitdir
        self._commondir = commondir
        # This work tree's own folder: the clone's state folder for the main
        # work tree (the same file as ever), its git dir's for a linked one.
        own = gitdir is commondir or gitdir == commondir
        self._state = state if own else State(gitdir / STATE_DIR)
        self._entry: dict[str, Any] | None = None

    # -- what callers ask ------------------------------------------------------------

    def settings(self) -> dict[str, str]:
        """Every ``gitmem.*`` value (all levels, includes applied), names lower-cased."""
        return dict(self._current()["settings"])

    def remote_urls(self) -> dict[str, str]:
        """Each remote's fetch URL as configured (the last value wins, as before)."""
        return dict(self._current()["remotes"])

    def identity(self) -> tuple[str, str]:
        """``git var GIT_AUTHOR_IDENT``'s name and email (NoIdentity when git has none)."""
        entry = self._current()
        found = entry.get("identity")
        if isinstance(found, list) and len(found) == 2 and all(isinstance(x, str) for x in found):
            return found[0], found[1]
        name, email = _ask_identity(self._workdir)
        entry["identity"] = [name, email]
        self._save(entry)
        return name, email

    # -- the cache -------------------------------------------------------------------

    def _current(self) -> dict[str, Any]:
        if self._entry is not None:
            return self._entry
        env = _environment()
        saved = self._load()
        if (saved is not None and saved.get("env") == env
                and saved.get("gitdir") == str(self._gitdir) and _unchanged(saved.get("files"))):
            self._entry = saved
            return saved
        watched = self._standard_files()
        before = {p: _signature(p) for p in watched}
        listing = _ask_config(self._workdir)
        files = dict(before)
        for origin in listing.origins:
            path = str((self._workdir / origin).resolve()) if not os.path.isabs(origin) else origin
            if path not in files:
                files[path] = _signature(path)
        if listing.conditional:
            head = str(self._gitdir / "HEAD")
            files.setdefault(head, _signature(head))
        entry = {"format": FORMAT, "env": env, "gitdir": str(self._gitdir), "files": files,
                 "settings": listing.settings, "remotes": listing.remotes, "identity": None}
        self._entry = entry
        self._save(entry)
        return entry

    def _standard_files(self) -> list[str]:
        env = os.environ
        home = Path(env.get("HOME") or "~").expanduser()
        xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
        paths = [env.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig"]
        if env.get("GIT_CONFIG_GLOBAL"):
            paths.append(env["GIT_CONFIG_GLOBAL"])
        else:
            paths += [str(home / ".gitconfig"), str(xdg / "git" / "config")]
        paths += [str(self._commondir / "config"), str(self._gitdir / "config.worktree")]
        return paths

    def _load(self) -> dict[str, Any] | None:
        data = _read_own(self._state.path / CACHE_FILE)
        ok = (isinstance(data, dict) and data.get("format") == FORMAT
              and isinstance(data.get("settings"), dict) and isinstance(data.get("remotes"), dict)
              and all(isinstance(k, str) and isinstance(v, str)
                      for part in ("settings", "remotes") for k, v in data[part].items()))
        return data if ok else None  # anything else (hand-edited, truncated) is asked again

    def _save(self, entry: dict[str, Any]) -> None:
        now = time.time()
        for sig in entry["files"].values():
            if sig is not None and now - sig[0] / 1e9 < RACY_SECONDS:
                return  # too fresh to trust the stat: ask git again next time
        try:
            _write_own(self._state.path, CACHE_FILE, json.dumps(entry, sort_keys=True) + "\n")
        except OSError:
            pass  # a read-only .git: ask git every time


def _read_own(path: Path) -> Any:
    """The JSON in the file at ``path``, or None: absent, not a regular file (a
    FIFO there hung every command: opened without blocking), a link, too big,
    not JSON, nested too deep, or not owned by the user running or writable by
    others (it names commands that would run as us: a file someone else could
    write is never believed). Checked with fstat on what was opened: no race
    between a check and the read."""
    flags = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
             | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0))
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        # Windows has neither uids nor these mode bits: there only the kind is checked.
        mine = (st.st_uid == os.geteuid() and not st.st_mode & 0o022
                if hasattr(os, "geteuid") else True)
        if not stat.S_ISREG(st.st_mode) or not mine or st.st_size > MEMO_BYTES:
            return None
        data = os.read(fd, st.st_size + 1)  # one read: the size was checked
        return msgspec.json.decode(data) if len(data) <= st.st_size else None
    except (OSError, ValueError, RecursionError, msgspec.DecodeError):
        return None
    finally:
        os.close(fd)


def _write_own(folder: Path, name: str, text: str) -> None:
    """Write ``folder/name`` whole (a temp file renamed over it), readable and
    writable by its owner only, whatever the umask."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.{os.getpid()}.{os.urandom(16).hex()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_BINARY", 0), 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, folder / name)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class _Listing:
    def __init__(self) -> None:
        self.settings: dict[str, str] = {}
        self.remotes: dict[str, str] = {}
        self.origins: list[str] = []
        self.conditional = False


def _ask_config(workdir: Path) -> _Listing:
    from .gitcmd import run_git  # only on a cache miss: it loads subprocess

    out = _Listing()
    try:
        # Any value may hold bytes that are not UTF-8 (a Latin-1 user.name, an
        # alias): kept as surrogates here, so file names stay exact and no value
        # we do not use can fail a command.
        proc = run_git("config", "--list", "--show-origin", "--includes", "-z", cwd=workdir,
                       errors="surrogateescape")
        text = proc.stdout if proc.returncode == 0 else ""
    except OSError:
        text = ""
    fields = text.split("\0")
    for origin, entry in zip(fields[0::2], fields[1::2]):
        key, _, value = entry.partition("\n")
        name = key.lower()  # git prints sections and names lower-cased, subsections as written
        if origin.startswith("file:"):
            path = origin[len("file:"):]
            if path not in out.origins:
                out.origins.append(path)
        if name.startswith("gitmem."):
            out.settings[_text(name)] = _text(value)
        elif name.startswith("remote.") and name.endswith(".url"):
            out.remotes[_text(key[len("remote."):-len(".url")])] = _text(value)
        elif name.startswith("includeif."):
            out.conditional = True
    return out


def _text(value: str) -> str:
    """A value read with surrogateescape, its bytes that are not UTF-8 replaced
    (U+FFFD): what settings and remote URLs hold, never an exception."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def not_utf8(value: str) -> bool:
    """True when ``value`` (read with surrogateescape) held bytes that are not UTF-8."""
    return any("\udc80" <= c <= "\udcff" for c in value)


def latin1_reading(value: str) -> str:
    """``value`` with each byte that is not UTF-8 read as Latin-1 (what a legacy
    config most likely meant: b"Jos\\xe9" -> "José"), for a hint."""
    return "".join(chr(ord(c) - 0xDC00) if "\udc80" <= c <= "\udcff" else c for c in value)


def _ask_identity(workdir: Path) -> tuple[str, str]:
    from .gitcmd import run_git

    try:
        # surrogateescape: an identity that is not UTF-8 reaches discover.identity,
        # which refuses it with a hint (a write's concern, never a read's).
        proc = run_git("-c", "user.useConfigOnly=true", "var", "GIT_AUTHOR_IDENT", cwd=workdir,
                       errors="surrogateescape")
    except OSError as exc:
        raise NoIdentity(f"cannot run git to read the identity: {exc}",
                         "install git, or put the folder that holds it on PATH"
                         if isinstance(exc, FileNotFoundError) else None) from exc
    m = _IDENT.match(proc.stdout.strip())
    if proc.returncode != 0 or not m or not m.group(1).strip() or not m.group(2):
        raise NoIdentity("no git identity configured (user.name and user.email)")
    return m.group(1).strip(), m.group(2).strip()


def _environment() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith("GIT_") or k in _ENV_NAMES}


def _signature(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _unchanged(files: object) -> bool:
    if not isinstance(files, dict) or not files:
        return False
    return all(_signature(p) == (list(sig) if isinstance(sig, list) else sig)
               for p, sig in files.items())
