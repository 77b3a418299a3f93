"""The personal pool: a person's own memory, outside every project, never shared.

Why this exists: some memory belongs to a person, not a team (preferences,
habits, where they work). It lives in a git repository of its own (pushed, if
at all, to a private remote) and is read beside each project's pool. The rules
that keep it from leaking into a project are here: it is never inside a
repository it would then be shared with, never used while GIT_DIR and friends
point git elsewhere, and a broken pool never breaks a project read.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BareRepository, GitMemError, InvalidInput, NotARepository, UnknownId
from ..oplog import Oplog
from . import settings
from .pool import Pool

PERSONAL_ENV = "GITMEM_PERSONAL_DIR"
REPO_KEY = "repo:"  # the personal pool's pointer to a repository the person works in
REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")


def personal_dir() -> Path:
    """Where the personal pool lives: $GITMEM_PERSONAL_DIR, else
    $XDG_DATA_HOME/git-mem/personal, else ~/.local/share/git-mem/personal."""
    env = os.environ.get(PERSONAL_ENV)
    if env:
        path = Path(env).expanduser()
        if not path.is_absolute():
            raise InvalidInput(f"{PERSONAL_ENV}={env} is not an absolute path",
                               "give the personal pool's full path, or unset it")
        return path
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "git-mem" / "personal"


def redirected() -> list[str]:
    """The GIT_DIR-like variables set now (git hooks and 'git --git-dir' set them)."""
    return [v for v in REDIRECTS if os.environ.get(v)]


def open_pool(*, create: bool = True, one_shot: bool = False) -> Pool:
    """Open the personal pool (created on first use when ``create``; ``one_shot``
    as ``Pool``'s).

    Refused while GIT_DIR and friends point git elsewhere: the pool's writes
    would land in that repository.
    """
    path = personal_dir()
    found = redirected()
    if found:
        raise InvalidInput(f"the personal pool cannot be used while {found[0]} is set",
                           f"unset {' and '.join(found)} for this command")
    try:
        if create:
            Oplog.create(path)
        elif not (path / ".git").is_dir():
            raise NotARepository(f"there is no personal pool yet (at {path})",
                                 "create it with: git mem add --personal TEXT")
        pool = Pool(path, name="personal", one_shot=one_shot)
    except OSError as exc:
        raise NotARepository(f"cannot use the personal pool at {path}: {exc}",
                             f"fix or move that directory, or point {PERSONAL_ENV} elsewhere"
                             ) from None
    if pool.log.workdir.resolve() != path.resolve():
        pool.close()
        raise NotARepository(f"{path} is inside another repository ({pool.log.workdir}), "
                             "not a personal pool of its own",
                             f"point {PERSONAL_ENV} at a directory outside any repository")
    return pool


def beside(project: Pool) -> Pool | None:
    """The personal pool to read beside ``project``, or None: none yet, disabled
    with gitmem.personal=false, redirected, or it would be the project itself.
    Raises what opening it raises (the caller skips the pool with a warning)."""
    if not project.setting("gitmem.personal", settings.boolean, True, "use true or false"):
        return None
    if redirected():
        return None
    path = personal_dir()
    pool = path.resolve()
    mine = project.log.workdir.resolve()
    if ((path / ".git").is_dir() and pool != mine and mine not in pool.parents
            and project.log.commondir.resolve() not in pool.parents):
        found = open_pool(create=False, one_shot=project.one_shot)
        lend_identity(project, found)  # a write by id lands here (pools.owner)
        return found
    return None


def pool_from(path: str | os.PathLike[str] | None, *, one_shot: bool = False) -> Pool:
    """The personal pool, for a write made from ``path``: when that is inside a
    repository, the pool records (once) that the person works there. Refused
    when the pool would be that repository or lie inside it."""
    mine = (open_pool(create=False, one_shot=one_shot)
            if (personal_dir() / ".git").is_dir() else None)
    try:
        project: Pool | None = Pool(path, one_shot=one_shot)
    except (NotARepository, BareRepository):
        project = None
    if project is not None:
        try:
            check_outside(project)
        except GitMemError:
            project.close()
            if mine is not None:
                mine.close()
            raise
    if mine is None:
        mine = open_pool(create=True, one_shot=one_shot)
    if project is None:
        return mine
    lend_identity(project, mine)
    try:
        remember_repository(project, mine)
    except GitMemError as exc:
        mine.warnings.append(f"could not record this repository in the personal pool: "
                             f"{exc.message}")
    finally:
        project.close()
    return mine


def lend_identity(project: Pool, mine: Pool) -> None:
    """Let the personal pool write with the identity git gives in ``project`` when
    git gives none in the pool's own repository (Oplog.identity, asked only when a
    write needs it).

    Why: the pool is a repository of its own, so it saw only the global identity;
    a person whose name and email are set only in the project's config was refused
    ("no git identity configured") while git commits worked there: on a personal
    add, and on a forget, confirm or invalidate of a personal memory by its id."""
    mine.log.identity_from = project.log


def check_outside(project: Pool) -> None:
    """Refuse a personal write from inside the repository that holds the pool."""
    pool = personal_dir().resolve()
    for inside in (project.log.workdir.resolve(), project.log.commondir.resolve()):
        if pool == inside or inside in pool.parents:
            raise InvalidInput(f"the personal pool ({pool}) is inside this repository; "
                               "personal memories would be shared with it",
                               f"point {PERSONAL_ENV} at a directory outside any repository")


def remember_repository(project: Pool, personal: Pool) -> None:
    """Record in the personal pool that the person works in this repository
    (a pointer: its path and remotes, never its content). Written once."""
    from . import facts, write
    root = str(project.log.workdir.resolve())
    key = f"{REPO_KEY}{root}"
    remotes = project.log.remote_urls()
    text = f"I work in the repository at {root}" + (
        " (remotes: " + ", ".join(f"{n} {u}" for n, u in sorted(remotes.items())) + ")"
        if remotes else "")
    try:
        if facts.get(personal, key).value == text:
            return
    except UnknownId:
        pass
    write.add(personal, text, key=write.key_for_set(key), kind="edge", tags=["repository"],
              source="git mem")
