"""libgit2 (pygit2), loaded only when something needs it.

Importing pygit2 costs tens of milliseconds, and most commands never need
it: a read that finds no ref moved lists refs from files, and ``git mem add``
writes loose objects and moves the ref itself. libgit2 stays the reference
for everything else (packed objects, history walks, sha256 or reftable
repositories, remotes and config), so every module of this package reaches
it through the stand-in below, and the repository handle opens it on first
use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import RepositoryUnreadable, RepositoryUnsupported


class _LazyPygit2:
    """Stands in for the pygit2 module until first use.

    The first attribute access imports the real module (and puts it in this
    module's globals); any other module holding the stand-in keeps going
    through it, which costs a dictionary lookup.
    """

    def __getattr__(self, name: str) -> Any:
        import pygit2 as real

        # libgit2's own owner check (CVE-2022-24765) differs from git's: it
        # accepts root's files for every user and reads safe.directory its own
        # way. Every repository git mem opens was found by discover.py, which
        # applies git's rule (the git binary deciding when an owner differs),
        # so libgit2 follows that decision instead of making another.
        real.option(real.enums.Option.SET_OWNER_VALIDATION, False)
        globals()["pygit2"] = real
        return getattr(real, name)


# Any: the stand-in takes every attribute of the module it stands for.
pygit2: Any = _LazyPygit2()


class Libgit2:
    """The libgit2 repository, opened on first use (or handed over by discovery)."""

    def __init__(self, gitdir: Path, opened: Any = None) -> None:
        self._gitdir = gitdir
        self._repo: Any = opened

    @property
    def repo(self) -> Any:
        """The ``pygit2.Repository`` (typed Any: it comes through the lazy stand-in)."""
        if self._repo is None:
            try:
                self._repo = pygit2.Repository(str(self._gitdir))
            except pygit2.GitError as exc:
                said = str(exc)
                if "unknown object format" in said or "unsupported extension" in said:
                    # (libgit2 1.9 reads neither sha256 ids nor reftable.)
                    raise RepositoryUnsupported(
                        f"this repository's format is not supported: {said}") from None
                raise RepositoryUnreadable(f"libgit2 cannot open the repository: {said}") from None
        return self._repo
