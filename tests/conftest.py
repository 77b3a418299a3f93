"""Hermetic fixtures: real git repositories in temp dirs, a fixed identity and clock.

Every test runs with a temporary HOME, no system git config, a fixed author and
``GIT_COMMITTER_DATE``, and UTC, so results never depend on the machine.
Subprocess helpers run the installed ``git-mem`` console script (and real
``git``) with the same environment.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

BIN_DIR = str(Path(sys.executable).parent)
GIT_MEM = shutil.which("git-mem", path=BIN_DIR) or "git-mem"
FIXED_DATE = "2026-01-15T10:00:00+00:00"
FIXED_TS = 1768471200
AUTHOR = ("Ada Lovelace", "ada@example.com")

def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite fixtures/golden/*.txt from the current output")


_CLEAR = [
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_MEM_SESSION", "EMAIL",
    "GITMEM_DEBUG", "XDG_DATA_HOME", "GITMEM_SESSION", "GITMEM_CONCEPTS", "GITMEM_BY", "CLAUDECODE", "GEMINI_CLI",
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


# -- teams: a bare remote and three clones, for sync tests ------------------------------

PEOPLE = {"a": ("Alice Doe", "alice@example.com"), "b": ("Bob Roe", "bob@example.com"),
          "c": ("Chen Li", "chen@example.com")}


def no_env_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(var, raising=False)


def make_team(root: Path, url: str | None = None, bare: Path | None = None) -> dict[str, Path]:
    """A bare remote with one commit on main and three clones, one person each."""
    bare = bare or root / "remote.git"
    if not bare.exists():
        git("init", "-q", "--bare", "-b", "main", str(bare), cwd=root)
        seed = root / "seed"
        git("init", "-q", "-b", "main", str(seed), cwd=root)
        git("-c", "user.name=Seed", "-c", "user.email=seed@example.com", "commit", "-q",
            "--allow-empty", "-m", "seed", cwd=seed)
        git("push", "-q", str(bare), "main", cwd=seed)
    clones = {}
    for key, (name, email) in PEOPLE.items():
        path = root / key
        git("clone", "-q", url or str(bare), str(path), cwd=root)
        git("config", "user.name", name, cwd=path)
        git("config", "user.email", email, cwd=path)
        clones[key] = path
    return clones


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    no_env_identity(monkeypatch)
    return make_team(tmp_path)


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, proc.stderr
    return proc


def texts(clone: Path, query: str, *extra: str) -> list[str]:
    out = ok(gm("recall", query, "--json", "-k", "50", *extra, cwd=clone))
    return sorted(r["text"] for r in json.loads(out.stdout)["data"]["hits"])


def dump(clone: Path) -> str:
    """The whole projection of a clone, refreshed, as text (to compare clones)."""
    import gitmem

    with gitmem.open(clone) as s:
        s.refresh()
        return s.projection.dump()


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail the test (TimeoutError) when the body blocks, on a FIFO say, past ``seconds``."""
    def hung(signum: int, frame: object) -> None:
        raise TimeoutError(f"no answer in {seconds} s: the read blocked")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
