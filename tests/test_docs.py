"""Docs stay true: the CLI reference and man page match --help, every command is documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gitmem.cli import cli

ROOT = Path(__file__).parent.parent


def test_cli_reference_and_man_page_are_generated_from_help() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


def test_every_command_has_help_with_an_example_and_is_in_the_reference() -> None:
    reference = (ROOT / "docs" / "cli.md").read_text()
    for name, cmd in cli.commands.items():
        assert cmd.help and "Example:" in cmd.help, name
        assert f"## git mem {name}\n" in reference, name
        for param in cmd.params:
            if param.name != "help" and getattr(param, "help", None) is None and \
                    param.param_type_name == "option":
                raise AssertionError(f"{name} --{param.name} has no help")


def test_readme_quick_start_has_exactly_two_setup_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```", 2)[1]
    commands = [line for line in block.splitlines()[1:] if line.strip() and not line.startswith("#")]
    assert commands == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text()
