"""With --json anywhere on the command line, a usage error prints the error
envelope on stdout and one line on stderr (docs/cli.md: every command with
--json prints exactly one envelope); the exit code stays click's 2. They used to
print nothing on stdout and click's four-line usage block on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import gm

from gitmem.cli.app import COMMANDS, load_all


def _usage(proc, command: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    assert proc.returncode == 2, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    env = json.loads(lines[0])
    assert env["ok"] is False and env["command"] == command and env["version"] == 1
    assert env["error"]["code"] == "usage" and env["error"]["exit_code"] == 2
    assert env["warnings"] == []
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: "), proc.stderr
    assert "; hint: see 'git mem " in proc.stderr and "Usage:" not in proc.stderr
    return env  # type: ignore[no-any-return]


def test_the_adversarial_cases(repo: Path) -> None:
    env = _usage(gm("import", "/nonexistent", "--json", cwd=repo), "import")
    assert "/nonexistent" in env["error"]["message"]
    env = _usage(gm("link", "person:a", "xx", "path:b", "--json", cwd=repo), "link")
    assert "'xx' is not one of" in env["error"]["message"]
    assert env["error"]["hint"] == "see 'git mem link --help'"


def test_json_before_the_error_or_after_it_nested_or_raised_by_the_command(repo: Path) -> None:
    _usage(gm("recall", "--json", "-k", "abc", "q", cwd=repo), "recall")
    _usage(gm("hooks", "install", "--agent", "nope", "--json", cwd=repo), "hooks install")
    _usage(gm("add", "x", "--keep", "--json", cwd=repo), "add")  # the command's own UsageError
    env = _usage(gm("recal", "q", "--json", cwd=repo), "recal")
    assert env["error"]["message"] == "No such command 'recal'"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_answers_a_bad_option_with_an_envelope(repo: Path, name: str) -> None:
    load_all()
    _usage(gm(name, "--no-such-option", "--json", cwd=repo), name)


def test_without_json_usage_errors_stay_clicks(repo: Path) -> None:
    proc = gm("link", "person:a", "xx", "path:b", cwd=repo)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "Usage: git mem link" in proc.stderr and "Error: Invalid value" in proc.stderr


def test_help_and_success_under_json_keep_their_exit_codes(repo: Path) -> None:
    assert gm("recall", "--help", "--json", cwd=repo).returncode == 0
    proc = gm("list", "--json", cwd=repo)
    assert proc.returncode == 0 and json.loads(proc.stdout)["ok"] is True
    proc = gm("show", "deadbeef", "--json", cwd=repo)  # a GitMemError: its own code
    assert proc.returncode == 5 and json.loads(proc.stdout)["error"]["code"] == "unknown_id"
