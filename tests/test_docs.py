"""Docs stay true: the CLI reference and man page match --help, every command is documented."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from conftest import gm, init_repo
from gitmem import envelope, errors
from gitmem.cli import app, load_all

ROOT = Path(__file__).parent.parent


def test_cli_reference_and_man_page_are_generated_from_help() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def _error_classes() -> list[type[errors.GitMemError]]:
    """Every typed error: the classes of gitmem.errors and any subclass defined elsewhere."""
    import gitmem.api  # noqa: F401  (loads whatever the library defines)

    found: list[type[errors.GitMemError]] = []
    todo = [errors.GitMemError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_exit_code_is_in_the_documented_table() -> None:
    classes = _error_classes()
    assert len(classes) > 10
    for cls in classes:
        assert cls.exit_code in errors.EXIT_CODES, f"{cls.__name__} exits {cls.exit_code}"
    # ... and the table documents no code that nothing raises (0-2, 130, 141 are generic).
    used = {cls.exit_code for cls in classes} | {0, 1, 2, 130, 141}
    assert set(errors.EXIT_CODES) == used
    reference = (ROOT / "docs" / "cli.md").read_text()
    for code, meaning in errors.EXIT_CODES.items():
        assert f"| {code} | {meaning} |\n" in reference, code


def test_the_envelope_is_built_in_one_shape() -> None:
    ok = envelope.encode(envelope.ok("recall", {"query": "q"}, ["w"]))
    assert ok == '{"ok":true,"command":"recall","version":1,"data":{"query":"q"},"warnings":["w"]}'
    err = envelope.error("show", errors.UnknownId("x").to_dict(), [], label="tool")
    assert list(err) == ["ok", "tool", "version", "error", "warnings"]
    documented = (ROOT / "docs" / "cli.md").read_text().split("```json\n", 1)[1].splitlines()
    assert documented[0].startswith('{"ok": true, "command": "recall", "version": 1, "data": ')
    assert documented[1].startswith('{"ok": false, "command": "recall", "version": 1, "error": ')


def test_the_lazy_command_table_names_every_command_and_its_module() -> None:
    # The group imports only the module that COMMANDS names for a command; a
    # command missing there (or named with the wrong module) would not run.
    registered = load_all()
    assert set(registered) == set(app.COMMANDS)
    for name, cmd in registered.items():
        assert cmd.callback is not None
        assert cmd.callback.__module__ == f"gitmem.cli.{app.COMMANDS[name]}", name


def test_every_command_has_help_with_an_example_and_is_in_the_reference() -> None:
    reference = (ROOT / "docs" / "cli.md").read_text()
    for name, cmd in load_all().items():
        assert cmd.help and "Example:" in cmd.help, name
        assert f"## git mem {name}\n" in reference, name
        for param in cmd.params:
            if param.name != "help" and getattr(param, "help", None) is None and \
                    param.param_type_name == "option":
                raise AssertionError(f"{name} --{param.name} has no help")


def test_every_subcommand_has_help_with_an_example_and_is_in_the_reference() -> None:
    reference = (ROOT / "docs" / "cli.md").read_text()
    man = (ROOT / "gitmem" / "data" / "man" / "git-mem.1").read_text()
    groups = {n: c for n, c in load_all().items() if isinstance(c, click.Group)}
    assert {"hooks", "hook"} <= set(groups)
    for name, group in groups.items():
        for sub, cmd in group.commands.items():
            assert cmd.help and "Example:" in cmd.help, (name, sub)
            assert f"## git mem {name} {sub}\n" in reference, (name, sub)
            assert f".SS git mem {name} {sub}\n" in man, (name, sub)


@pytest.mark.skipif(shutil.which("man") is None, reason="no man(1) on this machine")
def test_git_help_mem_opens_the_man_page(tmp_path: Path) -> None:
    # The man page is installed to <prefix>/share/man/man1 next to <prefix>/bin/git-mem;
    # man finds it from PATH (manpath maps <dir>/bin to <dir>/share/man), so in a venv
    # 'git help mem' works as soon as the venv's bin is on PATH.
    env = {**os.environ, "MANPAGER": "cat", "GIT_PAGER": "cat", "PAGER": "cat",
           "MANWIDTH": "80"}
    env.pop("MANPATH", None)
    out = subprocess.run(["git", "help", "mem"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "GIT-MEM(1)" in out.stdout and "git-mem - a memory for coding agents" in out.stdout


def test_readme_quick_start_has_exactly_two_setup_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```", 2)[1]
    commands = [line for line in block.splitlines()[1:] if line.strip() and not line.startswith("#")]
    assert commands == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


_WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


@pytest.mark.parametrize("agent,doc,phrase", [
    ("claude-code", "README.md", r"`hooks install` merges (\w+) entries"),
    ("claude-code", "docs/agents.md", r"This adds (\w+) entries"),
    ("gemini-cli", "docs/agents.md", r"wired as (\w+) entries into the work tree's\s+`\.gemini"),
])
def test_the_docs_count_the_hook_entries_install_writes(
        agent: str, doc: str, phrase: str, tmp_path: Path) -> None:
    """The README and docs/agents.md said 'three entries' where Claude Code gets six."""
    repo = init_repo(tmp_path / "r")
    out = gm("hooks", "install", "--agent", agent, "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    written = json.loads(out.stdout)["data"]["events"]
    m = re.search(phrase, (ROOT / doc).read_text())
    assert m, phrase
    assert _WORDS[m.group(1)] == len(written), (doc, written)
