"""The remembered git config (oplog/gitconfig.py): answers as the git binary
gives them, asked again whenever anything they depend on changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import git

CACHE = Path(".git") / "mem" / "gitconfig.json"
OLD = time.time() - 3600


def _age(*paths: Path) -> None:
    """Make config files look an hour old, out of the racy window."""
    for p in paths:
        if p.exists():
            os.utime(p, (OLD, OLD))


def _settings(repo: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """The settings a fresh process reads (the library, as every command does)."""
    code = ("import json, sys, gitmem; s = gitmem.open(sys.argv[1]); "
            "print(json.dumps({'settings': s.log.settings(), 'remotes': s.log.remote_urls()}))")
    proc = subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True,
                          text=True, env=dict(os.environ, **(env or {})), check=True)
    out: dict[str, str] = json.loads(proc.stdout)
    return out


def _config_files(repo: Path, home: Path) -> list[Path]:
    return [repo / ".git" / "config", home / ".gitconfig"]


def test_a_remembered_answer_is_used_without_starting_git(repo: Path, hermetic: Path) -> None:
    git("config", "gitmem.minScore", "0.3", cwd=repo)
    git("remote", "add", "origin", "https://user:secret@example.test/r.git", cwd=repo)
    _age(*_config_files(repo, hermetic))
    first = _settings(repo)
    assert first["settings"]["gitmem.minscore"] == "0.3"
    assert first["remotes"] == {"origin": "https://example.test/r.git"}  # no credentials
    assert (repo / CACHE).is_file()
    # No git on PATH: only the remembered answer can give the settings now.
    no_git = {"PATH": str(Path(sys.executable).parent)}
    assert _settings(repo, no_git) == first


def test_every_change_git_would_see_is_seen(repo: Path, hermetic: Path) -> None:
    git("config", "gitmem.minScore", "0.3", cwd=repo)
    _age(*_config_files(repo, hermetic))
    assert _settings(repo)["settings"]["gitmem.minscore"] == "0.3"

    # A local change in the same second, and then aged to the old time: size differs.
    git("config", "gitmem.minScore", "0.45", cwd=repo)
    _age(*_config_files(repo, hermetic))
    assert _settings(repo)["settings"]["gitmem.minscore"] == "0.45"

    # A global file that did not exist when the answer was remembered.
    git("config", "--global", "gitmem.personal", "false", cwd=repo)
    _age(*_config_files(repo, hermetic))
    assert _settings(repo)["settings"]["gitmem.personal"] == "false"

    # An included file, changed on its own.
    extra = repo / ".git" / "extra.cfg"
    extra.write_text("[gitmem]\n\tcontextBudget = 100\n")
    git("config", "include.path", "extra.cfg", cwd=repo)
    _age(extra, *_config_files(repo, hermetic))
    assert _settings(repo)["settings"]["gitmem.contextbudget"] == "100"
    extra.write_text("[gitmem]\n\tcontextBudget = 2500\n")
    _age(extra)
    assert _settings(repo)["settings"]["gitmem.contextbudget"] == "2500"

    # The environment: another global file.
    other = hermetic / "other.cfg"
    other.write_text("[gitmem]\n\tpersonal = true\n")
    _age(other)
    assert _settings(repo, {"GIT_CONFIG_GLOBAL": str(other)})["settings"]["gitmem.personal"] == "true"
    assert _settings(repo)["settings"]["gitmem.personal"] == "false"


def test_a_branch_conditional_include_follows_head(repo: Path, hermetic: Path) -> None:
    extra = repo / ".git" / "on-topic.cfg"
    extra.write_text("[gitmem]\n\tminScore = 0.9\n")
    git("config", "includeIf.onbranch:topic.path", "on-topic.cfg", cwd=repo)
    _age(extra, *_config_files(repo, hermetic), repo / ".git" / "HEAD")
    assert "gitmem.minscore" not in _settings(repo)["settings"]
    git("switch", "-q", "-c", "topic", cwd=repo)
    _age(repo / ".git" / "HEAD")  # even with the old time: HEAD's size changed
    assert _settings(repo)["settings"]["gitmem.minscore"] == "0.9"


def test_a_racy_config_file_is_not_remembered(repo: Path) -> None:
    git("config", "gitmem.minScore", "0.3", cwd=repo)  # written just now
    assert _settings(repo)["settings"]["gitmem.minscore"] == "0.3"
    assert not (repo / CACHE).exists()


def test_a_damaged_cache_file_is_asked_again(repo: Path, hermetic: Path) -> None:
    git("config", "gitmem.minScore", "0.3", cwd=repo)
    _age(*_config_files(repo, hermetic))
    _settings(repo)
    for junk in ("", "{", '{"format": 1, "settings": [], "remotes": {}}', "null"):
        (repo / CACHE).write_text(junk)
        assert _settings(repo)["settings"]["gitmem.minscore"] == "0.3"


def test_the_identity_is_remembered_and_follows_the_config(repo: Path, hermetic: Path) -> None:
    env = {"GIT_AUTHOR_NAME": "", "GIT_AUTHOR_EMAIL": ""}
    git("config", "user.name", "Ada Lovelace", cwd=repo)
    git("config", "user.email", "ada@example.test", cwd=repo)
    _age(*_config_files(repo, hermetic))
    code = ("import sys, gitmem; a = gitmem.open(sys.argv[1]).log.identity(); "
            "print(a.name + '|' + a.email)")

    def who() -> str:
        e = {k: v for k, v in os.environ.items() if k not in env}
        return subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True,
                              text=True, env=e, check=True).stdout.strip()

    assert who() == "Ada Lovelace|ada@example.test"
    assert json.loads((repo / CACHE).read_text())["identity"] == ["Ada Lovelace", "ada@example.test"]
    git("config", "user.name", "Ada King", cwd=repo)
    _age(*_config_files(repo, hermetic))
    assert who() == "Ada King|ada@example.test"
