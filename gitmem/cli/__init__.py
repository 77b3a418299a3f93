"""The ``git mem`` command line: parse, make one library call, print.

Every command takes ``--json`` and then prints exactly one envelope on stdout
(gitmem/envelope.py):

    {"ok": true, "command": "recall", "version": 1, "data": ..., "warnings": [...]}
    {"ok": false, "command": "recall", "version": 1, "error": {...}, "warnings": [...]}

Errors also print one line on stderr, ``error: <message>; hint: <hint>``, and
exit with the code documented in gitmem/errors.py and docs/cli.md.

``app`` holds the group, the one run-and-print path and the error map;
``render`` every line of human output (``render_recall`` recall's); the other
modules the commands, by theme. Importing one registers its commands on
``cli``; the group imports a command's module only when that command runs
(``app.COMMANDS``), and ``load_all()`` registers every command.
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .app import COMPLETE_VAR, cli, load_all

__all__ = ["cli", "main", "load_all", "COMPLETE_VAR"]


def main() -> None:
    """The console script. ``git mem hook session-end`` is routed before click and
    the library load: it must hand off and return in milliseconds (agents/spawn.py).

    When git mem is the program (the console script, ``python -m gitmem``), the
    process ends as soon as the command is done (``_end``); called from other
    code, this raises SystemExit like any click program."""
    try:
        _main(sys.argv[1:])
    except SystemExit as done:
        if is_the_program():
            _end(done.code)
        raise


def _utf8_output() -> None:
    """Write UTF-8 whatever the locale says, as git does: memory text is UTF-8, and a
    Latin-1 or ASCII stream cannot hold all of it (a snowman in a memory made every
    recall on such a terminal fail). JSON stays valid for agents; a lone surrogate
    is written as an escape instead of failing. A closed stream (`2>&-`: Python
    leaves None) becomes /dev/null, so writing to it is not an error."""
    import codecs

    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process

    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        encoding = getattr(stream, "encoding", None)
        try:
            utf8 = isinstance(encoding, str) and codecs.lookup(encoding).name == "utf-8"
        except LookupError:
            utf8 = False
        if reconfigure is not None and not utf8:
            try:
                reconfigure(encoding="utf-8", errors="backslashreplace")
            except (ValueError, OSError):
                pass  # a stream that cannot change: write what it can, as before


def _main(args: list[str]) -> None:
    _utf8_output()
    if args[:2] == ["hook", "session-end"] and not {"-h", "--help"} & set(args):
        from ..agents.spawn import main as hand_off

        sys.exit(hand_off(args[2:]))
    # Start-up is mostly imports, which make objects that live as long as the
    # process and no garbage: the cyclic collector, left on, walks them again
    # and again while they load (~40 passes) and once more at exit. So it is
    # off while they load, and they are then frozen (gc.freeze: left out of
    # every later pass); the command runs with the collector on, as usual.
    gc.disable()
    try:
        _quick_pathlib()
        _quick_msgspec()
        run = _load(args)
    finally:
        gc.freeze()
        gc.enable()
    sys.exit(run())


def _quick_msgspec() -> None:
    """Import msgspec (every command past this point needs it) with typing_extensions
    hidden. msgspec tries typing_extensions first for ``get_type_hints``,
    ``Required`` and ``NotRequired`` and falls back to ``typing``, which has all
    three on Python 3.11+; typing_extensions loads ``inspect`` (with ``ast``,
    ``dis``, ``tokenize``): ~5.5 ms of a ~60 ms fresh recall. Our structs use
    ``typing``'s names only. Nothing changes when either is loaded already (a
    host process), and typing_extensions imports normally afterwards."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # an ImportError
    # msgspec also imports uuid, which imports platform for one platform.system()
    # (~1 ms), and textwrap for the docstrings of JSON schemas (~0.5 ms); and its
    # own inspect, _json_schema, toml and yaml modules, which we never use (~0.7
    # ms; msgspec.json takes schema and schema_components from _json_schema as
    # it loads): stand-ins.
    system: dict[str, object] | None = (
        {"system": lambda: os.uname().sysname} if hasattr(os, "uname") else None)
    schema = _StandIn("msgspec._json_schema", {})
    if schema.module is not None:
        for name in ("schema", "schema_components"):
            setattr(schema.module, name, schema.later(name))
    try:
        with (_StandIn("platform", system), _StandIn("textwrap", {}), schema,
              _StandIn("msgspec.inspect", {}), _StandIn("msgspec.toml", {}),
              _StandIn("msgspec.yaml", {})):
            import msgspec  # noqa: F401
    except ImportError:  # a msgspec that needs it after all: import it as usual
        for name in [m for m in sys.modules if m == "msgspec" or m.startswith("msgspec.")]:
            del sys.modules[name]
    finally:
        del sys.modules["typing_extensions"]


def _quick_pathlib() -> None:
    """Import pathlib (every command past this point needs it) without urllib.parse,
    which it imports for ``Path.as_uri`` alone, and which imports ipaddress: ~2 ms
    of a fresh command. ``as_uri`` imports it when called. (Python 3.13's pathlib
    imports it there itself.)"""
    if "pathlib" in sys.modules:
        return
    parse = _StandIn("urllib.parse", {})
    if parse.module is not None:
        parse.module.quote_from_bytes = parse.later("quote_from_bytes")
    with parse:
        import pathlib  # noqa: F401


class _StandIn:
    """While its ``with`` block runs, ``import <name>`` gets a module standing in for
    the real one: for a standard-library module that a module we import imports when
    it loads, for something it rarely uses. The stand-in holds ``attrs``; any other
    attribute imports the real module and is taken from it, so the importer keeps
    working whatever it uses later. ``attrs`` None, or the real module loaded
    already: nothing stands in. Afterwards ``import <name>`` gets the real module."""

    def __init__(self, name: str, attrs: dict[str, object] | None) -> None:
        self.name = name
        self.module: Any = None
        if attrs is not None and name not in sys.modules:
            self.module = _Lazy(name)
            self.module.__dict__.update(attrs)

    def later(self, attr: str) -> Callable[..., Any]:
        """The real module's function ``attr``, imported when first called."""
        module = self.module

        def call(*args: Any, **kwargs: Any) -> Any:
            return getattr(module.real(), attr)(*args, **kwargs)

        return call

    def __enter__(self) -> None:
        if self.module is not None:
            sys.modules[self.name] = self.module

    def __exit__(self, *exc: object) -> None:
        if self.module is not None and sys.modules.get(self.name) is self.module:
            del sys.modules[self.name]


class _Lazy(type(sys)):  # type: ignore[misc]  # types.ModuleType, without importing types
    def real(self) -> Any:
        name = self.__name__
        if sys.modules.get(name) is self:
            del sys.modules[name]
        __import__(name)
        return sys.modules[name]

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):  # the import system's questions (__path__, ...)
            raise AttributeError(attr)
        return getattr(self.real(), attr)


def is_the_program() -> bool:
    """The process runs git mem itself: the console script (its ``__main__`` is the
    ``git-mem`` script) or ``python -m gitmem``, not code that calls ``main()``.
    Such a process ends with ``os._exit`` once its command is done (``_end``), so
    the stores it opens are ``one_shot`` (``api.Store``): their SQLite connections
    are left open until the exit instead of checkpointed and closed."""
    top = sys.modules.get("__main__")
    spec = getattr(top, "__spec__", None)
    if spec is not None:
        return getattr(spec, "name", None) == "gitmem.__main__"
    file = getattr(top, "__file__", None)
    return isinstance(file, str) and file.replace("\\", "/").rsplit("/", 1)[-1] == "git-mem"


def _end(code: object) -> None:
    """End the process now, with ``code``, once its output is out: skip tearing
    down what start-up built (every module, freed one object at a time: ~5 ms,
    more than some commands' work). Returns, for the usual exit, when anything
    else might still need the interpreter: a thread, an atexit callback, an
    exit code that is a message, output that cannot be written."""
    import atexit

    if code is not None and not isinstance(code, int):
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return
    callbacks = getattr(atexit, "_ncallbacks", None)
    if callbacks is None or callbacks():
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001 - the usual exit reports it (and exits 120)
        return
    os._exit(code or 0)


def _load(args: list[str]) -> Callable[[], int | None]:
    """Import what the command in ``args`` needs; return what runs it."""
    if len(args) == 2 and args[0] == "hook" and args[1] in ("pre-tool", "user-prompt",
                                                           "session-start"):
        # As installed (no options): the answer without click, which is a quarter
        # of a hook's time and runs before every file an agent opens.
        from ..agents import hooks

        return lambda: hooks.run(args[1], one_shot=is_the_program())
    from . import fast

    quick = fast.route(args)  # recall, add, context in their usual forms: no click
    if quick is not None:
        return quick
    from .app import main as run_cli, preload

    preload(args)
    return run_cli


def __getattr__(name: str) -> Any:
    if name in ("cli", "load_all", "COMPLETE_VAR"):
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
