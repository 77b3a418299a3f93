"""Finding a program on PATH, never in the work tree.

git mem starts programs (git, the user's model extractor) in the user's work
tree, which is a clone of someone else's repository. Windows looks for a
program in the current directory before PATH, and on POSIX an empty or
relative PATH entry (``::``, a trailing ``:``, ``.``, ``bin``) means a folder
relative to the current directory too: a committed ``git.exe``, ``git.bat`` or
executable ``git`` would run with the user's rights. So a bare program name is
resolved here, to an absolute path, from PATH's absolute entries only.
"""

from __future__ import annotations

import errno
import os

# Windows: what a bare name may be completed with. Not PATHEXT's .js, .vbs, .wsf
# (run by a script host, not a program), and for git only .exe: git for Windows is
# git.exe, and a .bat or .cmd is run through cmd.exe, which re-parses arguments
# ("BatBadBut").
WINDOWS_EXTENSIONS = (".exe", ".com", ".bat", ".cmd")

_found: dict[tuple[str, str, tuple[str, ...]], str] = {}


def find(name: str, *, extensions: tuple[str, ...] = WINDOWS_EXTENSIONS) -> str:
    """``name`` as given when it names a path (it holds a separator: the user's own
    choice), else the first match on PATH's absolute entries, as an absolute path.
    FileNotFoundError (an OSError, as when starting a missing program) when there
    is none: the bare name would have searched the relative entries after all.

    A hit is remembered per PATH and checked again (one ``stat``) before it is
    used: a long-lived process (the MCP server) whose git went away (a shim
    uninstalled, a tool manager switching versions) looks again, as execvp would."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return name
    path = os.environ.get("PATH", os.defpath)
    key = (name, path, extensions)
    hit = _found.get(key)
    if hit is not None and _runnable(hit):
        return hit
    names = [name]
    if os.name == "nt" and not os.path.splitext(name)[1]:
        names = [name + ext for ext in extensions]
    for folder in path.split(os.pathsep):
        folder = folder.strip('"') if os.name == "nt" else folder
        if not folder or not os.path.isabs(folder):
            continue
        for candidate in names:
            full = os.path.join(folder, candidate)
            if _runnable(full):
                _found[key] = full
                return full
    raise FileNotFoundError(errno.ENOENT,
                            f"{name} is not on PATH (relative PATH entries are skipped)", name)


def _runnable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def absolute_only(path: str) -> str:
    """``path`` (a PATH value) without its empty and relative entries: for code that
    searches PATH itself (``webbrowser`` finds a browser with ``shutil.which`` and
    starts it by name, from the current directory when an entry says so)."""
    return os.pathsep.join(e for e in path.split(os.pathsep) if e and os.path.isabs(e.strip('"')))
