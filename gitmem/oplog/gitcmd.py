"""Running the git binary: the package's one way to start a subprocess.

Some answers only git itself gives exactly: the identity ``git commit`` would
use, config with its include rules, revisions by any name, and above all
fetch and push with the user's transports and credential helpers. Those go
through ``run_git``; sync goes through ``Git``, which also keeps git from
prompting (an agent has nobody to type a password).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import RemoteError

if TYPE_CHECKING:
    import subprocess

# subprocess is imported in each function, not here: a read answered from the
# projection and the remembered config (gitconfig.py) starts no process, and
# importing subprocess is a measurable part of a fresh `git mem recall`.


def git_binary() -> str:
    """The git to run, by its absolute path from PATH (pathsearch.py: never one in the
    work tree; git.exe only on Windows)."""
    from ..pathsearch import find

    return find("git", extensions=(".exe",))


def run_git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            input: str | None = None,
            errors: str = "strict") -> subprocess.CompletedProcess[str]:
    """``git args...`` with text output captured; OSError (no git) is the caller's.

    ``errors``: how bytes that are not UTF-8 are decoded. git passes config
    values, identities and remote messages through as they are, whatever their
    encoding, so callers reading those choose "surrogateescape" (keep the bytes,
    decide later) or "replace" (messages only shown to a person)."""
    import subprocess

    return subprocess.run([git_binary(), *args], cwd=cwd, capture_output=True, text=True,
                          encoding="utf-8", errors=errors, env=env, check=False,
                          input=input)


class Bounded:
    """What ``run_git_bounded`` read: ``out`` (decoded), whether git succeeded, and
    whether it was stopped (``cut``: its output passed the limit, or it ran past
    the timeout; ``out`` then holds what came before)."""

    __slots__ = ("out", "ok", "cut")

    def __init__(self, out: str, ok: bool, cut: bool) -> None:
        self.out, self.ok, self.cut = out, ok, cut


def run_git_bounded(*args: str, cwd: Path, timeout: float, limit: int,
                    input: str | None = None, errors: str = "replace") -> Bounded | None:
    """``git args...`` whose output is read as it comes, up to ``limit`` bytes, for at
    most ``timeout`` seconds: past either, git is killed and ``cut`` is set. None
    when git cannot be started (OSError). Never inflates more than ``limit`` bytes
    into memory however much git would print (a diff of a 120 MB blob a teammate
    named: issue 13)."""
    import subprocess
    import threading

    try:
        proc = subprocess.Popen([git_binary(), *args], cwd=cwd, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL,
                                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                start_new_session=os.name != "nt")
    except OSError:
        return None

    def stop() -> None:  # git and whatever it started (a filter, an alias's shell)
        if os.name != "nt":
            _kill_session(proc.pid)
        proc.kill()

    chunks: list[bytes] = []
    state = {"size": 0, "cut": False}

    def read() -> None:
        assert proc.stdout is not None
        while True:
            chunk = os.read(proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return
            room = limit - state["size"]
            chunks.append(chunk[:room])
            state["size"] += min(len(chunk), room)
            if len(chunk) > room:
                state["cut"] = True
                stop()
                return

    def write() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write((input or "").encode("utf-8", "surrogateescape"))
            proc.stdin.close()
        except OSError:
            pass  # git went away (killed, or done without reading it all)

    workers = [threading.Thread(target=read, daemon=True)]
    if input is not None:
        workers.append(threading.Thread(target=write, daemon=True))
    for w in workers:
        w.start()
    import time

    end = time.monotonic() + timeout
    workers[0].join(timeout)
    if workers[0].is_alive() or time.monotonic() > end:
        state["cut"] = True
        stop()
    for w in workers:
        w.join(1.0)
    try:
        code = proc.wait(1.0)
    except subprocess.TimeoutExpired:
        stop()
        code = -1
    for pipe in (proc.stdout, proc.stdin):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
    out = b"".join(chunks).decode("utf-8", errors)
    cut = bool(state["cut"])
    return Bounded(out, code == 0 and not cut, cut)


def last_line(text: str) -> str:
    """The last non-blank line of git's output: where it says what went wrong."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def what_git_said(text: str, limit: int = 240) -> str:
    """git's complaint, on one line: its ``fatal:``/``error:`` lines (each once),
    else the last non-blank line, clipped to ``limit`` characters.

    Why not only the last line: git ends a failed fetch with advice ("Please make
    sure you have the correct access rights / and the repository exists."), and
    the last line alone read "failed: and the repository exists." with the cause
    ("fatal: '...' does not appear to be a git repository") dropped. ssh says its
    cause on a line of its own ("ssh: connect to host ...: Connection refused"),
    before git's "fatal: Could not read from remote repository.": kept too."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    said: list[str] = []
    for line in lines:
        if line.lower().startswith(("fatal:", "error:", "ssh:")) and line not in said:
            said.append(line)
    joined = "; ".join(said) if said else (lines[-1] if lines else "no output")
    return joined if len(joined) <= limit else joined[:limit - 1].rstrip() + "\u2026"


def _git_env() -> dict[str, str]:
    env = dict(os.environ)
    if not (os.isatty(0) and os.isatty(2)):
        env["GIT_TERMINAL_PROMPT"] = "0"  # never hang an agent on a password prompt
    return env


class Git:
    """git in one work tree, for talking to remotes: never prompts, RemoteError if absent."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    def __call__(self, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
        try:
            # What a remote says (its hooks' messages) is any bytes it likes: a byte
            # that is not UTF-8 is replaced, it never fails the command.
            return run_git(*args, cwd=self.workdir, env=_git_env(), errors="replace",
                           input=input)
        except OSError as exc:
            raise RemoteError(f"cannot run git: {exc}",
                              "install git, or put the folder that holds it on PATH"
                              if isinstance(exc, FileNotFoundError) else None) from exc


def probe_memory(remote: str, cwd: Path, timeout: float) -> int | None:
    """How many ``refs/memory/*`` refs ``remote`` holds, or None when it cannot tell
    within ``timeout`` seconds (offline, no access, a password wanted).

    Never prompts: no terminal (a new session, stdin closed), no askpass, no
    credential prompt; a probe that hangs is killed at the timeout."""
    import subprocess

    from .remotes import option_like

    if option_like(remote):
        return None  # git would read it as an option ('--upload-pack=<command>' runs it)
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", SSH_ASKPASS_REQUIRE="never",
               GCM_INTERACTIVE="never")
    try:
        proc = subprocess.Popen([git_binary(), "ls-remote", "--refs", "--end-of-options", remote,
                                 "refs/memory/*"],
                                cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                encoding="utf-8", errors="replace", start_new_session=True)
    except OSError:
        return None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # The whole session: git's ssh child outlived a kill of git alone (a review
        # found it still connecting to a dead host after the probe gave up).
        _kill_session(proc.pid)
        proc.kill()
        proc.communicate()
        return None
    if proc.returncode != 0:
        return None
    return sum(1 for line in out.splitlines() if "\trefs/memory/" in line)


def _kill_session(pid: int) -> None:
    """Kill the process group ``pid`` leads (start_new_session made one); never raises."""
    import signal

    killpg = getattr(os, "killpg", None)
    if killpg is None:
        return
    try:
        killpg(pid, getattr(signal, "SIGKILL", signal.SIGTERM))
    except OSError:
        pass


def spawn_detached(argv: list[str], cwd: Path, log: Path | None = None) -> bool:
    """Start ``argv`` in the background, detached from this process and its terminal
    (the background catch-up of the projection). True if it started."""
    import subprocess

    try:
        out = open(log, "ab") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    except OSError:
        out = subprocess.DEVNULL
    try:
        kwargs: dict[str, object] = {"start_new_session": True} if os.name != "nt" else {
            "creationflags": getattr(subprocess, "DETACHED_PROCESS", 0)}
        subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,  # type: ignore[call-overload]
                         close_fds=True, **kwargs)
        return True
    except OSError:
        return False
    finally:
        if out is not subprocess.DEVNULL:
            out.close()  # type: ignore[union-attr]
