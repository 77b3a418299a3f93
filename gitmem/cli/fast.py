"""The hot forms of ``recall``, ``add`` and ``context``, answered without click.

Why: agents run ``git mem recall "..." --json`` and ``git mem add "..."`` as
fresh processes many times a day, and loading click (click.core, its types,
the gettext and locale its decorators pull in) is ~6-10 ms of a ~75 ms run.
So ``gitmem.cli.main`` offers the arguments here first. ``parse`` accepts only
a strict subset of what the click command accepts and returns exactly the
parameters click would pass the command (tests/test_fastpath.py checks this
against click's own parser over many argument lists); then ``actions`` runs
them, as the click command would. Anything else - another option, ``-h``,
``--``, ``-``, an option given twice that click would not collect, a value
that needs more than a trivial check, a value starting with ``-`` - returns
None and click runs as always, with its own errors and help. The subset:

    recall QUERY [--json] [-k N | --limit N] [--format full|brief]
                 [--mode hybrid|lexical|vector] [--min-score X]
                 [--kind KIND]... [--tag TAG]... [--path PATH]... [--personal]
    add TEXT     [--json] [--force] [--kind KIND] [--tag TAG]... [--path PATH]...
                 [--personal]
    context      [--json] [--budget N] [--personal]

with options before or after the argument, ``--opt=VALUE`` or ``--opt VALUE``;
N is at most 9 ASCII digits, X the same with at most one dot. ``--session`` comes from
GITMEM_SESSION / GIT_MEM_SESSION as click reads it. The fast path also steps
aside for shell completion (``_GIT_MEM_COMPLETE``), on Windows, for streams
click would re-wrap (``plain_streams``) and when GITMEM_NO_FAST_PATH is set
(the tests compare both paths with it).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from ..ops import KINDS

FLAG, INT, FLOAT, CHOICE, MULTI, MULTI_CHOICE = range(6)
MODES = ("hybrid", "lexical", "vector")

# Per command: the positional parameter (None: takes none), the accepted
# options (token -> parameter, how its value is read, choices) and every
# parameter click passes the command with its default (a test compares these
# with click's own: a changed default there fails it).
Spec = tuple[str | None, dict[str, tuple[str, int, tuple[str, ...]]], dict[str, Any]]
SPECS: dict[str, Spec] = {
    "recall": ("query", {
        "--json": ("as_json", FLAG, ()), "-k": ("k", INT, ()), "--limit": ("k", INT, ()),
        "--format": ("fmt", CHOICE, ("full", "brief")), "--mode": ("mode", CHOICE, MODES),
        "--min-score": ("min_score", FLOAT, ()), "--kind": ("kinds", MULTI_CHOICE, KINDS),
        "--tag": ("tags", MULTI, ()), "--path": ("paths", MULTI, ()),
        "--personal": ("personal", FLAG, ()),
    }, {
        "query": None, "diff": None, "k": 10, "kinds": (), "tags": (), "authors": (),
        "about": (), "paths": (), "min_score": None, "include_retired": False,
        "mode": "hybrid", "fmt": "full", "explain": False, "include_quarantined": False,
        "as_of": None, "valid_at": None, "personal": False, "session": None, "as_json": False,
    }),
    "add": ("text", {
        "--json": ("as_json", FLAG, ()), "--force": ("force", FLAG, ()),
        "--kind": ("kind", CHOICE, KINDS), "--tag": ("tags", MULTI, ()),
        "--path": ("paths", MULTI, ()), "--personal": ("personal", FLAG, ()),
    }, {
        "text": None, "kind": None, "key": None, "tags": (), "about": (), "paths": (),
        "importance": 0.5, "valid_from": None, "valid_until": None, "source": None,
        "session": None, "supersedes": (), "redact": False, "force": False, "symbol": None,
        "no_anchor": False, "ephemeral": False, "keep": False, "by": None, "personal": False,
        "as_json": False,
    }),
    "context": (None, {
        "--json": ("as_json", FLAG, ()), "--budget": ("budget", INT, ()),
        "--personal": ("personal", FLAG, ()),
    }, {"budget": 500, "fmt": "md", "personal": False, "as_json": False}),
}
SESSION_ENV = ("GITMEM_SESSION", "GIT_MEM_SESSION")  # the --session option's envvar


def parse(args: list[str]) -> dict[str, Any] | None:
    """The parameters click would pass the command ``args`` name, or None when
    ``args`` is not in the subset (click then parses them)."""
    if not args or args[0] not in SPECS:
        return None
    positional, options, defaults = SPECS[args[0]]
    params = dict(defaults)
    seen: set[str] = set()
    rest = args[1:]
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if token[:1] != "-":  # "" too: click takes it as the argument
            if positional is None or positional in seen:
                return None
            seen.add(positional)
            params[positional] = token
            continue
        # '--opt=VALUE' is click's for long options only ('-k=5' is -k with '=5')
        name, eq, value = token.partition("=") if token[:2] == "--" else (token, "", "")
        if name not in options:
            return None  # '-', '--', '-h', '-k5', another option: click's
        param, how, choices = options[name]
        if how == FLAG:
            if eq or param in seen:
                return None
            seen.add(param)
            params[param] = True
            continue
        if not eq:
            if i == len(rest):
                return None
            value = rest[i]
            i += 1
        if value[:1] == "-":  # click would take it; declining keeps this simple
            return None
        if how in (MULTI, MULTI_CHOICE):
            if how == MULTI_CHOICE and value not in choices:
                return None
            params[param] = (*params[param], value)
            continue
        if param in seen:
            return None  # click: the last one wins, silently; leave that to it
        seen.add(param)
        converted = _convert(value, how, choices)
        if converted is None:
            return None
        params[param] = converted
    if positional is not None and positional not in seen:
        return None
    if "session" in params:
        params["session"] = next((v for v in map(os.environ.get, SESSION_ENV) if v), None)
    return params


def _convert(value: str, how: int, choices: tuple[str, ...]) -> int | float | str | None:
    """``value`` as click's type would convert it, or None: not trivially valid."""
    if how == CHOICE:
        return value if value in choices else None
    digits = value.replace(".", "", 1) if how == FLOAT else value
    if not value.isascii() or not digits.isdigit() or len(value) > 9:
        return None  # (a long one: int() refuses past 4,300 digits, click says why)
    return int(value) if how == INT else float(value)


def plain_streams() -> bool:
    """click.echo would write to sys.stdout and sys.stderr as they are: not on
    Windows (its console streams), each a text stream with an encoding and an
    error handler, the encoding not ASCII (which click re-wraps as UTF-8)."""
    import codecs
    import io

    if sys.platform.startswith("win"):
        return False
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper) or not stream.encoding or not stream.errors:
            return False
        try:
            if codecs.lookup(stream.encoding).name == "ascii":
                return False
        except LookupError:
            return False
    return True


def route(args: list[str]) -> Callable[[], int] | None:
    """What runs ``args`` without click, or None: click's to run."""
    if os.environ.get("GITMEM_NO_FAST_PATH") or "_GIT_MEM_COMPLETE" in os.environ:
        return None
    params = parse(args)
    if params is None or not plain_streams():
        return None
    from . import actions, manpage, stdio
    from .output import internal_error

    commands: dict[str, Callable[..., None]] = {
        "recall": actions.recall, "add": actions.add, "context": actions.context}
    command = commands[args[0]]

    def run() -> int:
        manpage.ensure()  # as app.main does
        stdio.plain = True
        try:  # what the click group's invoke does with what escapes a command
            command(**params)
        except KeyboardInterrupt:
            sys.exit(130)
        except Exception as exc:  # noqa: BLE001 - never a traceback for users
            internal_error(exc)
        return 0

    return run
