"""``git mem --help`` finds the man page however git mem was installed.

git turns ``git mem --help`` into ``man git-mem``. Here the command is laid out
as ``uv tool install`` lays it out: a link in ``~/.local/bin`` to a script in
another environment, with no man page anywhere on the manual path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import GIT_MEM

pytestmark = pytest.mark.skipif(shutil.which("man") is None, reason="no man(1) here")


def _env(home: Path) -> dict[str, str]:
    git_dir = str(Path(shutil.which("git") or "/usr/bin/git").parent)
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH", "VIRTUAL_ENV")}
    env.update(HOME=str(home), PATH=f"{home / '.local' / 'bin'}{os.pathsep}{git_dir}"
               f"{os.pathsep}/usr/bin{os.pathsep}/bin",
               MANPAGER="cat", PAGER="cat", GIT_PAGER="cat", MANWIDTH="80")
    return env


def test_git_mem_help_works_after_a_uv_tool_style_install(tmp_path: Path) -> None:
    home = tmp_path / "uvhome"
    bin_dir = home / ".local" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "git-mem").symlink_to(Path(GIT_MEM).resolve())
    env = _env(home)
    page = home / ".local" / "share" / "man" / "man1" / "git-mem.1"

    before = subprocess.run(["git", "mem", "--help"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, check=False)
    assert before.returncode != 0 and "No manual entry" in before.stderr  # the layout's flaw
    built_in = subprocess.run(["git", "mem", "-h"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, check=False)
    assert built_in.returncode == 0 and "Usage: git mem" in built_in.stdout

    assert subprocess.run(["git", "mem", "--version"], cwd=tmp_path, env=env,
                          capture_output=True, check=False).returncode == 0
    assert page.exists()
    for argv in (["git", "mem", "--help"], ["git", "help", "mem"]):
        out = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                             check=False)
        assert out.returncode == 0, out.stderr
        assert "GIT-MEM(1)" in out.stdout


def test_nothing_is_written_outside_the_home(tmp_path: Path) -> None:
    """A bin directory outside the user's home (a system or shared install) is
    not ours to add files beside."""
    home = tmp_path / "home2"
    home.mkdir()
    prefix = tmp_path / "opt"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "git-mem").symlink_to(Path(GIT_MEM).resolve())
    env = _env(home)
    env["PATH"] = f"{prefix / 'bin'}{os.pathsep}{env['PATH']}"
    assert subprocess.run(["git", "mem", "--version"], cwd=tmp_path, env=env,
                          capture_output=True, check=False).returncode == 0
    assert not (prefix / "share").exists()
