"""Hermetic fixtures: real git repositories in temp dirs, a fixed identity and clock.

Every test runs with a temporary HOME, no system git config, a fixed author and
``GIT_COMMITTER_DATE``, and UTC, so results never depend on the machine.
Subprocess helpers run the installed ``git-mem`` console script (and real
``git``) with the same environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

BIN_DIR = str(Path(sys.executable).parent)
GIT_MEM = shutil.which("git-mem", path=BIN_DIR) or "git-mem"
FIXED_DATE = "2026-01-15T10:00:00+00:00"
FIXED_TS = 1768471200
AUTHOR = ("Ada Lovelace", "ada@example.com")

_CLEAR = [
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_MEM_SESSION", "EMAIL",
    "GITMEM_DEBUG", "XDG_DATA_HOME",
]


@pytest.fixture(autouse=True)
def hermetic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    for var in _CLEAR:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_AUTHOR_NAME", AUTHOR[0])
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", AUTHOR[1])
    monkeypatch.setenv("GIT_COMMITTER_NAME", AUTHOR[0])
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", AUTHOR[1])
    monkeypatch.setenv("GIT_COMMITTER_DATE", FIXED_DATE)
    monkeypatch.setenv("TZ", "UTC")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("PATH", BIN_DIR + os.pathsep + os.environ.get("PATH", ""))
    return home


def git(*args: str, cwd: Path | str, check: bool = True, **kw: object) -> subprocess.CompletedProcess[str]:
    """Run the real git binary."""
    return subprocess.run(
        ["git", *args], cwd=cwd, check=check, capture_output=True, text=True, **kw  # type: ignore[arg-type]
    )


def init_repo(path: Path) -> Path:
    """A non-bare repository with one commit on main."""
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=path)
    (path / "README").write_text("demo\n")
    git("add", "README", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo")


@pytest.fixture
def chdir_repo(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(repo)
    return repo


def gm(
    *args: str,
    cwd: Path | str,
    input: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``git-mem`` console script in a fresh process."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [GIT_MEM, *args], cwd=cwd, input=input, capture_output=True, text=True, env=full_env,
        check=False,
    )


@pytest.fixture
def store(repo: Path) -> Iterator[object]:
    import gitmem

    s = gitmem.open(repo)
    yield s
    s.close()
