"""The opt-in pre-push hook: ``git push`` also pushes this clone's memory.

Why this exists: memory that is never pushed helps nobody else, and people
forget ``git mem push``. Git etiquette says plain ``git push`` does what it
always did unless the user opts in, so the hook is installed only by ``git mem
init --pre-push`` and removed by ``git mem init --no-pre-push``.

What the hook promises:
- It lives where git looks for hooks (``core.hooksPath`` honoured).
- An existing pre-push hook is never overwritten: it is kept beside ours as
  ``pre-push.before-git-mem``, runs first with the same arguments and input,
  and can still veto the push; uninstalling puts it back.
- A memory push that fails (no ``git mem`` on the hook's PATH, a host that
  refuses ``refs/memory/*``, no network) prints one warning and never blocks
  the code push.
- No recursion: ``git mem push`` pushes with ``--no-verify`` (so this hook
  does not run again), and the hook also skips itself under
  ``GIT_MEM_PRE_PUSH``.
"""

from __future__ import annotations

import os
from pathlib import Path

from .gitcmd import run_git

MARK = "# git-mem pre-push hook"
CHAINED = "pre-push.before-git-mem"

SCRIPT = f"""#!/bin/sh
{MARK} (installed by 'git mem init --pre-push'; remove: git mem init --no-pre-push)
# Pushes this clone's memory (refs/memory/*) along with the code. A memory push
# that fails only warns: it never blocks the code push.
hooks=$(dirname "$0")
if [ -x "$hooks/{CHAINED}" ]; then
    input=$(cat)
    if [ -n "$input" ]; then
        printf '%s\\n' "$input" | "$hooks/{CHAINED}" "$@" || exit $?
    else
        "$hooks/{CHAINED}" "$@" </dev/null || exit $?
    fi
fi
if [ -z "$GIT_MEM_PRE_PUSH" ]; then
    if ! GIT_MEM_PRE_PUSH=1 git mem push "$1" >/dev/null 2>&1 </dev/null; then
        echo "git mem: memory was not pushed to $1; run 'git mem push $1' to see why" >&2
    fi
fi
exit 0
"""


def hooks_dir(workdir: Path) -> Path:
    """Where git runs hooks from in this repository (``core.hooksPath`` honoured)."""
    proc = run_git("rev-parse", "--git-path", "hooks", cwd=workdir)
    path = Path(proc.stdout.strip() or ".git/hooks")
    return path if path.is_absolute() else workdir / path


def _in_work_tree(workdir: Path, d: Path) -> bool:
    """``d`` lies in the work tree, outside its .git (a linked worktree's .git is a
    file, and its hooks are in the common directory, outside the work tree)."""
    try:
        here, there = workdir.resolve(), d.resolve()
    except OSError:
        return False
    return (there == here or here in there.parents) and not (
        there == here / ".git" or (here / ".git") in there.parents)


def _ours(path: Path) -> bool:
    try:
        return MARK in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def state(workdir: Path) -> str:
    """'installed', 'chained' (installed, running an earlier hook first) or 'absent'."""
    d = hooks_dir(workdir)
    if not _ours(d / "pre-push"):
        return "absent"
    return "chained" if (d / CHAINED).exists() else "installed"


def install(workdir: Path) -> str:
    """Install the hook; what it did: 'installed', 'chained' or 'already'. Refused
    (FileExistsError) where ``core.hooksPath`` points into the work tree: those are
    the team's files (a committed .githooks), and a commit -a would ship ours."""
    d = hooks_dir(workdir)
    hook = d / "pre-push"
    if _ours(hook):
        return "already"
    if _in_work_tree(workdir, d):
        raise FileExistsError(
            f"core.hooksPath is {d}, inside the work tree: git mem does not change files "
            "the team shares; add 'git mem push \"$1\"' to that pre-push hook yourself")
    d.mkdir(parents=True, exist_ok=True)
    chained = False
    if hook.exists() or hook.is_symlink():
        if (d / CHAINED).exists() or (d / CHAINED).is_symlink():
            raise FileExistsError(f"{d / CHAINED} exists already")
        os.replace(hook, d / CHAINED)  # kept, and run first by ours
        chained = True
    tmp = d / "pre-push.git-mem-tmp"
    tmp.write_text(SCRIPT, encoding="utf-8")
    tmp.chmod(0o755)
    os.replace(tmp, hook)
    return "chained" if chained else "installed"


def uninstall(workdir: Path) -> str:
    """Remove the hook (putting an earlier one back); 'removed' or 'absent'."""
    d = hooks_dir(workdir)
    hook = d / "pre-push"
    if not _ours(hook):
        return "absent"
    if (d / CHAINED).exists() or (d / CHAINED).is_symlink():
        os.replace(d / CHAINED, hook)
    else:
        hook.unlink()
    return "removed"
