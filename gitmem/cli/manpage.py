"""Putting the man page where ``man`` looks, so ``git mem --help`` works.

Why this exists: git turns ``git mem --help`` into ``man git-mem`` before git
mem runs, and has no fallback. The wheel ships the page as
``share/man/man1/git-mem.1``, which a virtualenv, ``pip install --user`` and
pipx put where man finds it (man derives its path from PATH: ``<dir>/bin`` ->
``<dir>/share/man``). ``uv tool install`` does not: the command is a link in
``~/.local/bin`` while the page stays inside the tool's own environment. So
the first time the command runs from a bin directory in the user's home with
no page beside it, it copies its page to ``<bin>/../share/man/man1`` (what
pipx does) - one stat on every later run. The very first ``git mem --help``
before any other git mem command still finds nothing; ``git mem -h`` and
``git-mem --help`` always print the built-in help.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "data" / "man" / "git-mem.1"


def ensure() -> None:
    """Copy the man page next to the running command's bin directory if missing
    or of another version; silent, and never a failure."""
    try:
        argv0 = Path(sys.argv[0])
        if not argv0.is_absolute() or argv0.name != "git-mem":
            return
        prefix = argv0.parent.parent
        target = prefix / "share" / "man" / "man1" / "git-mem.1"
        size = PAGE.stat().st_size
        if target.exists() and target.stat().st_size == size:
            return
        home = Path.home()
        # Only under the user's home, and never inside our own environment (pip put
        # the page there already): distribution and system directories are not ours.
        if home not in prefix.parents or Path(sys.prefix) == prefix:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".git-mem.1.{os.getpid()}")
        import shutil  # once per install: every other run stops at the stat above

        shutil.copyfile(PAGE, tmp)
        os.replace(tmp, target)
    except (OSError, RuntimeError, ValueError):
        return
