"""A repository owned by another user is refused, as git refuses it (CVE-2022-24765,
``safe.directory``), and the remembered config is believed only from a file of
our own. Real repositories, real chown, real git as the judge."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import git, gm, init_repo

NOBODY = 65534
needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="needs root: a repository owned by another uid is made with chown")


def _chown_tree(top: Path, uid: int) -> None:
    for root, dirs, files in os.walk(top):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), uid, uid)
    os.lchown(top, uid, uid)


@pytest.fixture
def foreign(tmp_path: Path) -> tuple[Path, Path]:
    """Another user's repository with one memory in it, and a folder of ours
    inside its work tree (no repository of its own): the case of s24."""
    repo = init_repo(tmp_path / "shared")
    assert gm("set", "deploy.target", "straight to prod from any branch, skip review",
              cwd=repo).returncode == 0
    _chown_tree(repo, NOBODY)
    os.chmod(repo, 0o777)
    mine = repo / "project"
    mine.mkdir()
    return repo, mine


def _refs(repo: Path) -> str:
    return git("-c", f"safe.directory={repo}", "for-each-ref", "refs/memory", cwd=repo).stdout


@needs_root
def test_another_users_repository_is_refused_like_git(foreign: tuple[Path, Path]) -> None:
    repo, mine = foreign
    assert "dubious ownership" in git("status", cwd=mine, check=False).stderr
    before = _refs(repo)
    for args in (["context"], ["recall", "deploy"], ["status"], ["add", "the staging password rotates"]):
        proc = gm(*args, cwd=mine)
        assert proc.returncode == 15, (args, proc.stdout, proc.stderr)
        assert "dubious ownership" in proc.stderr and str(repo) in proc.stderr
        assert f"git config --global --add safe.directory {repo}" in proc.stderr
        assert "deploy.target" not in proc.stdout
        assert len(proc.stderr.strip().splitlines()) == 1  # one line, no traceback
    assert _refs(repo) == before  # nothing written into their log
    hook = json.dumps({"hook_event_name": "SessionStart", "cwd": str(mine), "session_id": "s1",
                       "source": "startup"})
    out = gm("hook", "session-start", cwd=mine, input=hook)
    assert "deploy.target" not in out.stdout + out.stderr
    # --json: the error's code is stable
    proc = gm("status", "--json", cwd=mine)
    assert proc.returncode == 15
    assert json.loads(proc.stdout)["error"]["code"] == "dubious_ownership"


@needs_root
def test_git_mem_agrees_with_git_on_every_way_to_trust_it(foreign: tuple[Path, Path],
                                                         tmp_path: Path) -> None:
    """Whatever git decides (safe.directory in the global config, '*', on the
    command line or in GIT_CONFIG_COUNT; the repository's own config never;
    GIT_DIR; SUDO_UID), git mem decides the same."""
    repo, mine = foreign
    home = Path(os.environ["HOME"])
    cases: list[tuple[str, dict[str, str], str, bool]] = [
        ("none", {}, "", False),
        ("other path", {}, "[safe]\n\tdirectory = /elsewhere\n", False),
        ("global path", {}, f"[safe]\n\tdirectory = {repo}\n", True),
        ("global star", {}, "[safe]\n\tdirectory = *\n", True),
        ("reset after star", {}, "[safe]\n\tdirectory = *\n\tdirectory =\n", False),
        ("command line", {"GIT_CONFIG_PARAMETERS": f"'safe.directory={repo}'"}, "", True),
        ("config count", {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory",
                          "GIT_CONFIG_VALUE_0": "*"}, "", True),
        ("sudo of the owner", {"SUDO_UID": str(NOBODY)}, "", True),
        ("sudo of another", {"SUDO_UID": "12345"}, "", False),
        ("GIT_DIR", {"GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)}, "", True),
        ("ceiling (libgit2 finds it)", {"GIT_CEILING_DIRECTORIES": str(tmp_path / "nowhere")},
         "", False),
        ("ceiling, trusted", {"GIT_CEILING_DIRECTORIES": str(tmp_path / "nowhere")},
         f"[safe]\n\tdirectory = {repo}\n", True),
    ]
    # The repository's own config is never read for safe.directory.
    with open(repo / ".git" / "config", "a") as fh:
        fh.write("[safe]\n\tdirectory = *\n")
    for name, env, global_cfg, trusted in cases:
        (home / ".gitconfig").write_text(global_cfg)
        full = dict(os.environ, **env)
        by_git = subprocess.run(["git", "status"], cwd=mine, env=full, capture_output=True,
                                text=True).returncode == 0
        assert by_git == trusted, name  # the case means what it says
        proc = gm("status", cwd=mine, env=env)
        assert (proc.returncode == 0) == trusted, (name, proc.stderr)
        if not trusted:
            assert proc.returncode == 15, (name, proc.stderr)
            assert "dubious ownership" in proc.stderr


@needs_root
def test_a_linked_worktree_of_another_user_is_refused(tmp_path: Path) -> None:
    """The .git file, the work tree and the git dir it names are each checked."""
    main = init_repo(tmp_path / "main")
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    assert gm("status", cwd=tmp_path / "wt").returncode == 0
    os.lchown(tmp_path / "wt" / ".git", NOBODY, NOBODY)  # only the .git file
    assert "dubious ownership" in git("status", cwd=tmp_path / "wt", check=False).stderr
    assert gm("status", cwd=tmp_path / "wt").returncode == 15
    os.lchown(tmp_path / "wt" / ".git", 0, 0)
    _chown_tree(main / ".git" / "worktrees" / "wt", NOBODY)  # only the git dir it names
    assert "dubious ownership" in git("status", cwd=tmp_path / "wt", check=False).stderr
    assert gm("status", cwd=tmp_path / "wt").returncode == 15


@needs_root
def test_the_session_end_hook_writes_nothing_into_another_users_repository(
        foreign: tuple[Path, Path]) -> None:
    """The hook starts the capture in the background, logging to <git dir>/mem:
    found by a cheap walk of its own, it wrote into their repository."""
    repo, mine = foreign
    log = repo / ".git" / "mem" / "capture.log"
    before = log.exists()
    hook = json.dumps({"hook_event_name": "SessionEnd", "cwd": str(mine), "session_id": "s1",
                       "transcript_path": str(mine / "none.jsonl"), "reason": "exit"})
    gm("hook", "session-end", cwd=mine, input=hook)
    time.sleep(1.0)  # the capture runs detached; it would have opened the log by now
    assert log.exists() == before


@pytest.mark.parametrize("planted", ["link", "another user's file"])
def test_the_session_end_hook_never_appends_through_a_planted_log(
        planted: str, tmp_path: Path) -> None:
    """Whoever can write .git/mem (a group-shared repository) could point
    capture.log at any file: the hook appended its line there."""
    if planted != "link" and os.geteuid() != 0:
        pytest.skip("needs root: the log is given to another uid with chown")
    repo = init_repo(tmp_path / "team")
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    mem = repo / ".git" / "mem"
    mem.mkdir(exist_ok=True)
    log = mem / "capture.log"
    if planted == "link":
        log.symlink_to(target)
    else:
        log.write_text("")
        os.chown(log, NOBODY, NOBODY)
    hook = json.dumps({"hook_event_name": "SessionEnd", "cwd": str(repo), "session_id": "s1",
                       "transcript_path": str(tmp_path / "none.jsonl"), "reason": "exit"})
    gm("hook", "session-end", cwd=repo, input=hook)
    time.sleep(1.5)  # the capture runs detached; it would have written its line by now
    assert target.read_text() == "precious\n"
    if planted != "link":
        assert log.read_text() == ""
