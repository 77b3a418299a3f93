"""Finding the repository, and what git says about it: identity, settings, times.

Every command starts by finding its repository, so the ordinary case (a
``.git`` folder or file above the working directory) is read from the file
system without loading libgit2; anything unusual goes to libgit2, whose
rules and errors are complete. The identity, the ``gitmem.*`` settings and
revision times come from the git binary itself, so they are exactly what git
would use.

A repository that belongs to another user is refused, as git refuses it
(CVE-2022-24765, ``safe.directory``): whoever owns a ``.git`` above your
working folder would otherwise brief your agent, receive your writes and
name the commands git mem runs (``gitmem.extractor``). git's rule
(setup.c ``ensure_valid_ownership``): the work tree, the git dir and a
``.git`` file, when there is one, must each be owned by the user running
(``lstat``; root also accepts root's own files, and a root running under sudo
the files of ``SUDO_UID``), unless ``safe.directory`` (read from the system
and global config and the command line, never the repository's own) names
the repository or is ``*``; a repository named by ``GIT_DIR`` is not
checked. The ordinary case costs an ``lstat`` of each path. When an owner
differs, the git binary decides (``git rev-parse`` in the same place), so
every rule of the installed git applies (its version's ``safe.directory``
syntax, ``SUDO_UID``) and the two never disagree; libgit2, whose own check
differs (it accepts root's files for everyone and reads ``safe.directory``
its own way), is told on load to leave the decision to discovery
(libgit2.py).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

import msgspec

from .. import ops
from ..errors import BareRepository, DubiousOwnership, NoIdentity, NotARepository
from .gitconfig import GitConfig, latin1_reading, not_utf8
from .libgit2 import pygit2
from .state import STATE_DIR



class Location(msgspec.Struct, frozen=True):
    """Where a repository keeps what the op-log touches."""

    gitdir: Path  # this work tree's git dir (its HEAD)
    workdir: Path
    commondir: Path  # refs, objects and state, shared by linked worktrees
    state_dir: Path  # <commondir>/mem


def discover(start: str) -> tuple[Location, Any]:
    """The repository containing ``start``, and the libgit2 repository if
    discovery had to open one (else None: it opens later, if ever)."""
    opened: Any = None
    if "\0" in start:  # no directory has one: the OS would refuse it with a ValueError
        raise NotARepository("not a git repository: the path given has a NUL character",
                             "give the path of a directory inside the repository")
    fast = _discover_plain(Path(start))
    if fast is not None:
        gitdir, workdir, gitfile, dotgit_uid = fast
        if not _owned_plain(dotgit_uid, gitfile, workdir, gitdir):
            _ask_git_about_owner(start, workdir)
    else:
        opened = _open_with_libgit2(start)
        workdir = Path(opened.workdir)
        gitdir = Path(opened.path)
    common = gitdir / "commondir"
    # Linked worktrees share refs and state with the main repository.
    if common.exists():
        commondir = (gitdir / common.read_text().strip()).resolve()
    else:
        commondir = gitdir
    return Location(gitdir, workdir, commondir, commondir / STATE_DIR), opened


def _discover_plain(start: Path) -> tuple[Path, Path, Path | None, int] | None:
    """Find ``(gitdir, workdir, gitfile, owner)`` by walking up for ``.git``, as
    git does: ``gitfile`` is the ``.git`` file that named the git dir, if one
    did, and ``owner`` the uid owning ``.git`` itself (``lstat``: the one stat
    both the walk and git's owner check need).

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
            mode, owner = _lstat(dotgit)
            if stat.S_ISLNK(mode):  # a link to the git dir (or file): what it leads to
                mode = _lstat(dotgit, follow=True)[0]
            if stat.S_ISDIR(mode):
                return (dotgit, d, None, owner) if (dotgit / "HEAD").is_file() else None
            if stat.S_ISREG(mode):
                text = dotgit.read_text().strip()
                if not text.startswith("gitdir:"):
                    return None
                gitdir = (d / text[len("gitdir:"):].strip()).resolve()
                return (gitdir, d, dotgit, owner) if (gitdir / "HEAD").is_file() else None
            if (d / "HEAD").is_file() and (d / "objects").is_dir():
                return None  # a bare repository (or a .git dir itself): libgit2 says so
        except OSError:
            return None
    return None


def _lstat(path: Path, follow: bool = False) -> tuple[int, int]:
    """``(st_mode, st_uid)`` of ``path``; ``(0, -1)`` when nothing is there (what
    pathlib's is_dir and is_file take as False; other errors are raised)."""
    try:
        st = os.stat(path, follow_symlinks=follow)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.EBADF):
            return 0, -1
        raise
    return st.st_mode, st.st_uid


def _open_with_libgit2(start_path: str) -> Any:
    git_dir_env = os.environ.get("GIT_DIR")
    try:
        found = git_dir_env or pygit2.discover_repository(start_path)
    except (pygit2.GitError, OSError):  # OSError: a name too long for the system, say
        found = None
    if not found:
        raise NotARepository(f"not a git repository (or any parent): {start_path}")
    # Opened without libgit2's own owner check, which differs from git's
    # (libgit2.py turns it off on load); git's is applied below, before
    # anything of the repository is used.
    try:
        repo = pygit2.Repository(found)
    except pygit2.GitError as exc:
        raise NotARepository(f"cannot open git repository at {found}: {exc}") from exc
    if not git_dir_env:  # git trusts a repository named by GIT_DIR: so do we
        gitdir = Path(repo.path)
        workdir = Path(repo.workdir) if repo.workdir else None
        dotgit = workdir / ".git" if workdir is not None else None
        gitfile = dotgit if dotgit is not None and dotgit.is_file() else None
        if not _owned(gitfile, workdir, gitdir):
            _ask_git_about_owner(start_path, workdir or gitdir)
    if repo.is_bare:
        raise BareRepository(f"{repo.path} is a bare repository")
    return repo


def _owned_plain(dotgit_uid: int, gitfile: Path | None, workdir: Path, gitdir: Path) -> bool:
    """``_owned`` for what ``_discover_plain`` found, its ``lstat`` of ``.git``
    reused: one more ``lstat`` (the work tree) for a ``.git`` folder, two (and
    the git dir) for a ``.git`` file."""
    if not hasattr(os, "geteuid"):
        return True  # Windows: owners are SIDs, not checked here (a known gap, see the docs)
    if dotgit_uid != os.geteuid():
        return False
    return _owned(None, workdir, None if gitfile is None else gitdir)


def _owned(gitfile: Path | None, workdir: Path | None, gitdir: Path | None) -> bool:
    """Whether each path given is owned by the user running, by git's rule for
    the ordinary case (``is_path_owned_by_current_uid``: ``lstat``, and root's
    files are root's). False sends the question to git (``_ask_git_about_owner``)."""
    if not hasattr(os, "geteuid"):
        return True  # Windows: see _owned_plain
    euid = os.geteuid()
    for path in (gitfile, workdir, gitdir):
        if path is None:
            continue
        try:
            if os.lstat(path).st_uid != euid:
                return False
        except OSError:
            return False
    return True


def _ask_git_about_owner(start: str, top: Path) -> None:
    """A path of the repository has another owner: git decides, as it would
    for ``git status`` here. Returns when git uses the repository (a
    ``safe.directory`` names it, or sudo's ``SUDO_UID`` owns it); else raises
    DubiousOwnership with git's own hint. Never on the ordinary path: it starts
    a process."""
    from .gitcmd import last_line, run_git  # subprocess: only when an owner differs

    where = _real(top)
    try:
        proc = run_git("rev-parse", "--absolute-git-dir", cwd=Path(start), errors="replace")
    except OSError as exc:
        raise DubiousOwnership(
            f"{where} is owned by another user, and git could not be run to check "
            f"safe.directory: {exc}", _trust_hint(where)) from None
    if proc.returncode == 0:
        return  # libgit2, if it is ever loaded, follows (libgit2.py)
    owner = _owner(top)
    said = last_line(proc.stderr) if "dubious ownership" not in proc.stderr else ""
    raise DubiousOwnership(
        f"detected dubious ownership in repository at '{where}' (owned by "
        f"{owner}, not by you: uid {os.geteuid()}); git refuses it too"
        + (f" ({said})" if said else ""), _trust_hint(where))


def _real(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return str(path)


def _owner(path: Path) -> str:
    try:
        return f"uid {os.lstat(path).st_uid}"
    except OSError:
        return "someone else"


def _trust_hint(where: str) -> str:
    import shlex  # only for this refusal

    return ("if you trust the user who owns it, add an exception as git says: "
            f"git config --global --add safe.directory {shlex.quote(where)}")


def create(path: Path) -> None:
    """Make ``path`` a new git repository (the personal pool), if it is not one."""
    if (path / ".git").exists():
        return
    from .gitcmd import last_line, run_git  # subprocess: off the read path

    path.mkdir(parents=True, exist_ok=True)
    try:
        proc = run_git("init", "-q", str(path))
    except OSError as exc:
        raise NotARepository(f"cannot run git to create {path}: {exc}") from exc
    if proc.returncode != 0:
        raise NotARepository(f"cannot create a repository at {path}: "
                             f"{last_line(proc.stderr)}")


def identity(config: GitConfig) -> ops.Author:
    """The author, resolved exactly as git resolves it for a commit.

    ``git var GIT_AUTHOR_IDENT`` honours GIT_AUTHOR_NAME/EMAIL and every
    config level; ``user.useConfigOnly`` stops git from inventing an
    address from the host name, which would split one person's partition
    (gitconfig.py asks it, and remembers the answer). When both variables are
    set git uses them as they are, so git is not asked.
    """
    env_name = os.environ.get("GIT_AUTHOR_NAME", "").strip()
    env_email = os.environ.get("GIT_AUTHOR_EMAIL", "").strip()
    if env_name and env_email and not any(c in env_name + env_email for c in "<>\n"):
        return _usable(ops.Author(name=env_name, email=env_email), from_env=True)
    name, email = config.identity()
    from_env = bool(os.environ.get("GIT_AUTHOR_NAME") or os.environ.get("GIT_AUTHOR_EMAIL"))
    return _usable(ops.Author(name=name, email=email), from_env=from_env)


def _usable(author: ops.Author, *, from_env: bool = False) -> ops.Author:
    """The identity, if replay would accept it on an op (ops.author_problem):
    it is printed on terminals and beside every memory in agents' context.

    An identity whose bytes are not UTF-8 (a legacy Latin-1 ``user.name``;
    read with surrogateescape) is refused, not stored with U+FFFD in place of
    its letters: an op is never rewritten, so a mangled name would stand in the
    team's log for good, and the email names the partition. The hint gives the
    Latin-1 reading as the value to set."""
    for field, value, var in (("name", author.name, "GIT_AUTHOR_NAME"),
                              ("email", author.email, "GIT_AUTHOR_EMAIL")):
        if not_utf8(value):
            raw = value.encode("utf-8", "surrogateescape")
            import shlex  # only for this refusal: off every command's import path

            meant = shlex.quote(latin1_reading(value))
            where = (f"set {var} in UTF-8 (or unset it to use user.{field}), e.g. "
                     f"{var}={meant} (its Latin-1 reading)" if from_env else
                     f"store it in UTF-8, e.g. git config user.{field} {meant} (its Latin-1 "
                     f"reading); 'git config --show-origin user.{field}' shows where it is set")
            raise NoIdentity(f"the git identity's {field} is not UTF-8: {raw!r}", where)
    problem = ops.author_problem(author)
    if problem is not None:
        raise NoIdentity(
            f"the git identity cannot be used: {problem}",
            'set a plain one: git config user.name "Your Name" && git config user.email '
            "you@example.com (or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL)",
        )
    return author


def revision_time(workdir: Path, revision: str) -> int | None:
    """The committer time of a revision (tag, branch, commit), or None."""
    if not revision or revision.startswith("-") or "\n" in revision or "\0" in revision:
        return None  # (no revision has a NUL, and no argument can carry one)
    from .gitcmd import run_git

    try:
        proc = run_git("show", "-s", "--format=%ct", "--end-of-options",
                       f"{revision}^{{commit}}", cwd=workdir)
    except OSError:
        return None
    text = proc.stdout.strip()
    return int(text) if proc.returncode == 0 and text.isdigit() else None


def tag_times(workdir: Path, limit: int = 200) -> list[tuple[str, int]]:
    """The repository's tags and their commits' committer times, newest first."""
    from .gitcmd import run_git

    try:
        proc = run_git("for-each-ref", "--sort=-committerdate", f"--count={limit}",
                       "--format=%(refname:short)%00%(*committerdate:unix)%00%(committerdate:unix)",
                       "refs/tags", cwd=workdir, errors="replace")  # a tag named in Latin-1
    except OSError:
        return []
    out = []
    for line in proc.stdout.splitlines() if proc.returncode == 0 else []:
        name, peeled, direct = (line.split("\0") + ["", ""])[:3]
        when = peeled or direct  # an annotated tag's commit, or a lightweight tag's
        if name and when.isdigit():
            out.append((name, int(when)))
    return out


def without_credentials(urls: dict[str, str]) -> dict[str, str]:
    """Remote URLs without their user, password, query string and fragment
    (remotes.recorded: a password may hold "@", "/" or a space; a signed URL's
    query string is a credential too). The personal pool records them in an op."""
    from .remotes import recorded

    return {name: recorded(url) for name, url in urls.items()}
