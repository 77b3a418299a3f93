"""The session-end hook's hand-off: start capture in the background, return at once.

Why this exists: an agent waits for its hooks. ``git mem hook session-end``
(Claude Code's and Codex CLI's Stop, SessionEnd and PreCompact; Gemini CLI's
SessionEnd and PreCompress) must give control back in milliseconds, so it imports nothing of
git mem's (no pygit2, no SQLite, no click: ``gitmem.cli.main`` routes here
before anything loads), reads the agent's JSON, and starts ``python -m gitmem
capture`` detached in its own session, with the transcript path, session id
and event as arguments. The capture's output goes to ``.git/mem/capture.log``.
If anything fails it says so in one line on stderr and exits 0: a hook never
blocks the agent, and a capture that never ran loses only its proposals.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

from .. import selfexec

MAX_PAYLOAD = 1 << 20
_FIELDS = (("transcript_path", "--transcript"), ("session_id", "--session"),
           ("hook_event_name", "--event"))


def main(argv: list[str]) -> int:
    """Run the hook: ``argv`` holds the options after ``hook session-end``."""
    agent = "claude-code"
    for i, arg in enumerate(argv):
        if arg == "--agent" and i + 1 < len(argv):
            agent = argv[i + 1]
        elif arg.startswith("--agent="):
            agent = arg.split("=", 1)[1]
    try:
        raw = sys.stdin.buffer.read(MAX_PAYLOAD)
        payload = json.loads(raw) if raw.strip() else {}
        if not isinstance(payload, dict):
            raise ValueError("the hook input is not a JSON object")
        start(payload, agent)
    except Exception as exc:  # never block the agent
        sys.stderr.write(f"git mem hook: skipped ({type(exc).__name__}: {exc})\n")
    return 0


def start(payload: dict[str, object], agent: str) -> None:
    """Start the background capture for a hook payload."""
    cwd = payload.get("cwd")
    where = cwd if isinstance(cwd, str) and os.path.isdir(cwd) else os.getcwd()
    argv = selfexec.argv("gitmem", "capture", "--log", f"--agent={_safe(agent)}")
    for key, flag in _FIELDS:
        value = payload.get(key)
        if isinstance(value, str) and value and len(value) <= 4096 and "\0" not in value:
            argv.append(f"{flag}={value}")  # one token: a value never reads as an option
    log = _log_file(where)
    out = append_fd(log) if log is not None else subprocess.DEVNULL
    try:
        kwargs: dict[str, object] = {"start_new_session": True} if os.name != "nt" else {
            "creationflags": getattr(subprocess, "DETACHED_PROCESS", 0)}
        subprocess.Popen(argv, cwd=where, stdin=subprocess.DEVNULL, stdout=out,  # type: ignore[call-overload]
                         stderr=out, close_fds=True, **kwargs)
    finally:
        if out >= 0:
            os.close(out)


def append_fd(path: str) -> int:
    """The log opened for appending (a file descriptor): never through a link, and
    only a file of the user running (whoever else can write .git/mem could point it
    at any of their files); subprocess.DEVNULL otherwise."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT
                     | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_BINARY", 0), 0o600)
    except OSError:
        return subprocess.DEVNULL
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or (hasattr(os, "geteuid") and info.st_uid != os.geteuid()):
        os.close(fd)
        return subprocess.DEVNULL
    return fd


def _safe(agent: str) -> str:
    return "".join(c for c in agent if c.isalnum() or c in "-_.")[:64] or "agent"


def _ours(*paths: str) -> bool:
    """Each path is owned by the user running (git's rule, the ordinary case; the
    capture itself runs discovery, which applies the rest of it)."""
    if not hasattr(os, "geteuid"):
        return True  # Windows: owners are SIDs (not checked: docs/security.md)
    try:
        return all(os.lstat(p).st_uid == os.geteuid() for p in paths)
    except OSError:
        return False


def _log_file(start: str) -> str | None:
    """``<git dir>/mem/capture.log`` for the work tree around ``start`` (found the
    cheap way: the nearest ``.git`` folder, or a worktree's ``.git`` file)."""
    here = os.path.abspath(start)
    while True:
        dot = os.path.join(here, ".git")
        gitdir = None
        if os.path.isdir(dot):
            gitdir = dot
        elif os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as fh:
                    line = fh.readline().strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                gitdir = os.path.join(here, line[len("gitdir:"):].strip())
        if gitdir is not None:
            if not _ours(here, gitdir):
                return None  # another user's repository: discovery refuses it (no log there)
            mem = os.path.join(gitdir, "mem")
            try:
                os.makedirs(mem, exist_ok=True)
            except OSError:
                return None
            return os.path.join(mem, "capture.log")
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
