"""The one run-and-print path every command ends in, without click.

``run`` opens the store, makes one library call and prints the result or the
error; ``internal_error`` is what a bug looks like to a user. They live apart
from the click group (app.py) so that the fast path (fast.py), which answers
the hot, simple forms of ``recall``, ``add`` and ``context`` without loading
click (~6-10 ms of every fresh process), prints through the very same code.
Lines are written by ``stdio.echo`` (click's echo, or the same bytes without it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from .. import api, envelope
from ..errors import DiskFull, GitMemError, busy_error, from_os_error
from . import is_the_program, render
from .progress import Progress
from .stdio import echo

T = TypeVar("T")

# Environment variables the agents set in the shells they run commands in.
AGENT_ENV = (("CLAUDECODE", "claude-code"), ("GEMINI_CLI", "gemini-cli"))


def who(by: str | None) -> str | None:
    """``--by``, else GITMEM_BY, else the agent whose shell this is, else a person."""
    if by:
        return by
    if os.environ.get("GITMEM_BY"):
        return os.environ["GITMEM_BY"]
    for var, name in AGENT_ENV:
        if os.environ.get(var) == "1":
            return f"agent:{name}"
    return None


def emit_json(payload: dict[str, Any]) -> None:
    echo(envelope.encode(payload))


def print_warnings(warnings: list[str]) -> None:
    for w in warnings:
        echo(render.safe(f"warning: {w}"), err=True)


def run(
    command: str,
    as_json: bool,
    action: Callable[[api.Store], T],
    human: Callable[[T], str | None],
    personal: bool | str = False,
) -> None:
    """Open the store, run one action, print the result or the error.

    ``personal``: True reads the personal pool; "write" also creates it and
    records the repository the command runs in (a pointer)."""
    store: api.Store | None = None
    warnings: list[str] = []
    bar = Progress() if not as_json and Progress.wanted() else None
    one_shot = is_the_program()  # its connections may stay open until os._exit
    try:
        if personal == "write":
            store = api.open_personal_from(one_shot=one_shot)
        elif personal:
            store = api.open_personal(create=False, one_shot=one_shot)
        else:
            store = api.open(one_shot=one_shot)
        store.progress = bar
        try:
            result = action(store)
        finally:
            if bar is not None:
                bar.done()
        warnings = store.warnings
    except (GitMemError, OSError) as caught:
        exc = caught if isinstance(caught, GitMemError) else from_os_error(caught, writing=False)
        if exc is None:
            raise
        fail(command, as_json, exc, store.warnings if store else [])
    except Exception as caught:
        busy = busy_error(caught)  # the projection's lock, held past the busy timeout
        if busy is None:
            raise
        fail(command, as_json, busy, store.warnings if store else [])
    finally:
        if store is not None:
            store.close()
    print_warnings(warnings)
    if as_json:
        emit_json(envelope.ok(command, result, warnings))
    else:
        text = human(result)
        if text:
            echo(render.safe(text))


def fail(command: str, as_json: bool, exc: GitMemError,
         warnings: list[str] | None = None) -> NoReturn:
    """Print ``exc`` (its envelope with --json, its one line on stderr) and exit with its code."""
    print_warnings(warnings or [])
    if as_json:
        emit_json(envelope.error(command, exc.to_dict(), warnings or []))
    echo(render.safe(exc.one_line()), err=True)
    sys.exit(exc.exit_code)


def usage_error(args: list[str], exc: Any, prog: str = "git mem") -> NoReturn:
    """A usage error (click's: an unknown option, a bad value) under ``--json``: the
    error envelope on stdout, like every other error, and one line on stderr,
    instead of click's usage block. ``exc`` is a ``click.ClickException``."""
    names: list[str] = []
    ctx = getattr(exc, "ctx", None)
    while ctx is not None and ctx.parent is not None:  # up to the group: "hooks install"
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    command = " ".join(names)
    hint = f"see '{prog} {command} --help'" if command else f"see '{prog} --help'"
    if not command:  # the group's own error ("no such command"): the word typed
        command = next((a for a in args if not a.startswith("-")), "")
    message = " ".join(exc.format_message().split()).rstrip(".") or "invalid usage"
    emit_json(envelope.error(command, {"code": "usage", "message": message, "hint": hint,
                                       "exit_code": exc.exit_code}, []))
    echo(render.safe(f"error: {message}; hint: {hint}"), err=True)
    sys.exit(exc.exit_code)


def internal_error(exc: BaseException) -> NoReturn:
    """A bug: one line on stderr (the traceback only with GITMEM_DEBUG), exit 1.

    Not a bug, though it lands here from wherever output is written: a reader that
    went away (``git mem context | head -1``) ends the command quietly, as git does
    (exit 141, SIGPIPE's); output to a full device is the full-disk error."""
    if isinstance(exc, BrokenPipeError):
        try:  # the exit's own flush must not fail again on the closed pipe
            os.dup2(os.open(os.devnull, os.O_WRONLY | getattr(os, "O_BINARY", 0)), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        sys.exit(141)
    if isinstance(exc, OSError) and isinstance(from_os_error(exc), DiskFull):
        full = DiskFull(f"cannot write the output: {exc.strerror or exc}",
                        "free some space where the output goes, or send it elsewhere")
        echo(render.safe(full.one_line()), err=True)
        sys.exit(full.exit_code)
    busy = busy_error(exc)  # (reached from outside run: a lock held past the timeout)
    if busy is not None:
        echo(render.safe(busy.one_line()), err=True)
        sys.exit(busy.exit_code)
    if os.environ.get("GITMEM_DEBUG"):
        import traceback  # here only: its import costs ~9 ms on every run

        traceback.print_exc()
    echo(render.safe(
        f"error: internal error: {type(exc).__name__}: {exc}; hint: this is a bug; "
        "rerun with GITMEM_DEBUG=1 and report the traceback"),
        err=True,
    )
    sys.exit(1)
