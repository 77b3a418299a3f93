"""The ``git mem`` group, its error map, and what the click commands share.

Every command is ``run(command, as_json, action, human)`` (output.py, shared
with the click-free fast path): open the store, make one library call, print.
Errors are mapped there and nowhere else: a ``GitMemError`` prints ``error:
<message>; hint: <hint>`` on stderr (and the error envelope with --json) and
exits with its documented code (``errors.EXIT_CODES``); a write the file system
refused that reached it untyped (a full disk, a read-only mount) gets its typed
error the same way; anything else is a bug (``Group.invoke``), reported in one
line, exit 1; Ctrl-C exits 130. Usage errors stay click's (exit 2), but with
``--json`` they print the error envelope too (``LazyGroup.main``).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from .. import __version__, envelope
from . import render
from .output import emit_json, fail, internal_error, run, usage_error, who
from .stdio import echo

__all__ = ["cli", "main", "run", "who", "emit", "emit_json", "read_stdin", "stdin_bytes",
           "Group", "COMMANDS", "COMPLETE_VAR", "load_all", "preload"]

# click reads the completion request from this variable ('git-mem' is the
# console script's name, '_GIT_MEM_COMPLETE' what its scripts set).
COMPLETE_VAR = "_GIT_MEM_COMPLETE"

personal_option = click.option(
    "--personal", is_flag=True,
    help="Use your personal pool (outside any repository, never pushed to a team).")

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON envelope on stdout (for agents)."
)

as_of_option = click.option(
    "--as-of", "as_of", metavar="WHEN",
    help="What the log believed then: a date, datetime or git revision (tag, commit).")
valid_at_option = click.option(
    "--valid-at", "valid_at", metavar="WHEN",
    help="What was true in the world then: a date, datetime or git revision.")


class KindChoice(click.Choice[str]):
    """``--kind``: click's choice, whose error also says where a decision, a
    convention or a gotcha goes (a tag on a note: export's "Decisions" and
    "Conventions" sections read #decision and #convention), since people reach
    for --kind first."""

    AS_TAGS = ("decision", "convention", "gotcha")

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            word = str(value).strip().lower().removesuffix("s")
            if word not in self.AS_TAGS:
                raise
            self.fail(f"{exc.message} A {word} is a tag, not a kind: use --tag {word} "
                      f"(to add one: --kind note --tag {word})", param, ctx)


by_option = click.option(
    "--by", metavar="WHO",
    help="Who writes it: 'person', or 'agent:NAME' when an agent does [env GITMEM_BY; "
         "default: agent:claude-code or agent:gemini-cli inside those agents, else person].")


def stdin_bytes(limit: int | None = None) -> bytes:
    """Stdin, from click's binary stdin (the one CliRunner also replaces): all of
    it, or at most ``limit + 1`` bytes (enough to tell that it is too long).

    click.open_file('-') and not click.get_binary_stream, which click 8.5
    deprecates: both hand back the same stream."""
    if sys.stdin is None:  # closed (`<&-`): Python leaves None, click cannot open it
        raise click.UsageError("stdin is closed: pipe the text in, or pass it as an argument")
    data: bytes = click.open_file("-", "rb").read(-1 if limit is None else limit + 1)
    return data


def read_stdin(command: str, as_json: bool, what: str = "memory text") -> str:
    """The '-' argument: stdin as text, undecodable bytes kept (the gate judges
    them). At most a memory's limit is read: a longer stream (a file piped in
    by mistake, /dev/zero) is refused as soon as it passes the limit, so memory
    stays bounded whatever the input."""
    from ..errors import InvalidInput
    from ..ops import MAX_TEXT_BYTES

    data = stdin_bytes(MAX_TEXT_BYTES)
    if len(data) > MAX_TEXT_BYTES:
        fail(command, as_json, InvalidInput(
            f"{what} on stdin is over {MAX_TEXT_BYTES} bytes, the limit",
            "split it into several memories"))
    return data.decode("utf-8", errors="surrogateescape")


def emit(command: str, as_json: bool, data: Any, human: str) -> None:
    """Print the result of a command that needs no repository."""
    if as_json:
        emit_json(envelope.ok(command, data, []))
    else:
        echo(render.safe(human), nl=not human.endswith("\n"))


class Group(click.Group):
    """A group that never shows a user a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, SystemExit, click.Abort):
            raise
        except KeyboardInterrupt:
            sys.exit(130)
        except Exception as exc:  # never a traceback for users
            internal_error(exc)


# Which module defines each top-level command. A process imports only the
# module of the command it runs: a fresh `git mem recall` is mostly import time,
# and the MCP server, hooks and sync code are not on its path. A test checks
# this table against what the modules register.
COMMANDS = {
    "add": "memories", "import": "memories", "show": "memories", "log": "memories",
    "invalidate": "memories", "forget": "memories",
    "recall": "recall", "list": "recall", "context": "recall", "similar": "recall",
    "set": "facts", "get": "facts", "keys": "facts", "history": "facts",
    "conflicts": "facts", "confirm": "facts",
    "init": "sync", "status": "sync", "sync": "sync", "pull": "sync", "push": "sync",
    "rebuild": "sync", "refresh": "sync", "rekey": "sync",
    "mcp": "agents", "hooks": "agents", "hook": "agents", "agents-md": "agents",
    "doctor": "agents", "ui": "ui",
    "completion": "completion",
    "stale": "code", "about": "code", "bootstrap": "code", "export": "code",
    "capture": "growth", "inbox": "growth", "accept": "growth", "reject": "growth",
    "session": "growth", "link": "growth", "related": "growth", "skills": "growth",
}


class LazyGroup(Group):
    """The top-level group: loads a command's module when the command is asked for.
    With ``--json`` anywhere on the command line a usage error prints the error
    envelope too (``output.usage_error``); without it, click's usage text."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if not standalone_mode or "--json" not in argv:
            return super().main(argv, prog_name, complete_var, standalone_mode, **extra)
        try:
            rv = super().main(argv, prog_name, complete_var, False, **extra)
        except click.ClickException as exc:
            usage_error(argv, exc, prog_name or "git mem")
        except click.Abort:
            echo("Aborted!", err=True)
            sys.exit(1)
        # As standalone click ends: the code of a ctx.exit (--help: 0), else 0.
        sys.exit(rv if isinstance(rv, int) and not isinstance(rv, bool) else 0)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is not None and cmd_name not in self.commands:
            importlib.import_module(f"{__package__}.{module}")
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_all()
        return super().list_commands(ctx)


def preload(args: list[str]) -> None:
    """Import the module of the command ``args`` name, if any, as ``get_command``
    would: with the rest of start-up (see ``gitmem.cli.main``)."""
    name = next((a for a in args if not a.startswith("-")), None)
    module = COMMANDS.get(name) if name is not None else None
    if module is not None:
        importlib.import_module(f"{__package__}.{module}")


def load_all() -> dict[str, click.Command]:
    """Every command, registered (help, completion, the docs generator)."""
    for module in sorted(set(COMMANDS.values())):
        importlib.import_module(f"{__package__}.{module}")
    return dict(cli.commands)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="git-mem")
def cli() -> None:
    """A memory for coding agents that lives in this git repository.

    Memories are ops appended to refs/memory/* (one partition per author and
    clone); every read replays them into a local projection under .git/mem/.

    \b
    Example:
      git mem add "tests live in spec/, run with make spec" --kind procedure
      git mem recall "how do I run the tests"
    """


def main() -> None:
    from . import manpage

    manpage.ensure()  # so that git's own 'git mem --help' finds the page (see manpage.py)
    cli(prog_name="git mem", complete_var=COMPLETE_VAR)
