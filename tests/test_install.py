"""Installing needs no compiler: the wheel and every dependency install from wheels.

hnswlib, which git mem used before 0.2, is published only as source, so
``pip install`` compiled it and failed wherever no C++ compiler was present.
This test builds git mem's wheel, installs it into a fresh virtualenv with
``--only-binary :all:`` (pip may not build anything from source) and no
compiler reachable (PATH holds only the venv and git; CC/CXX fail), then uses
the installed command. It uses whatever package index pip is configured with
(CI: the package registries; this machine: a local mirror).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_installs_from_wheels_only_without_a_compiler(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)],
        capture_output=True, text=True, check=False)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(dist.glob("git_mem-*.whl"))

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    tools = tmp_path / "tools"  # git, and nothing that could compile
    tools.mkdir()
    git = shutil.which("git")
    assert git is not None
    (tools / "git").symlink_to(git)
    for cc in ("cc", "gcc", "g++", "c++", "clang", "clang++"):
        assert not (bin_dir / cc).exists() and not (tools / cc).exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(PATH=f"{bin_dir}{os.pathsep}{tools}", CC="/bin/false", CXX="/bin/false",
               HOME=str(tmp_path / "install-home"), GIT_CONFIG_NOSYSTEM="1")
    (tmp_path / "install-home").mkdir()

    install = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--only-binary", ":all:",
         str(wheel)], env=env, capture_output=True, text=True, check=False)
    assert install.returncode == 0, install.stderr[-3000:]
    listed = subprocess.run([str(bin_dir / "python"), "-m", "pip", "list"], env=env,
                            capture_output=True, text=True, check=True).stdout.lower()
    assert "hnswlib" not in listed

    repo = tmp_path / "repo"
    ident = {"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
             "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com"}
    run_env = {**env, **ident}
    subprocess.run(["git", "init", "-q", str(repo)], env=run_env, check=True)

    def gm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "mem", *args], cwd=repo, env=run_env,
                              capture_output=True, text=True, check=False)

    assert gm("--version").returncode == 0
    added = gm("add", "the nightly build runs on the arm runners")
    assert added.returncode == 0, added.stderr
    found = gm("recall", "where does the nightly build run")
    assert found.returncode == 0, found.stderr
    assert "arm runners" in found.stdout
