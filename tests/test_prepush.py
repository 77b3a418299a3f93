"""The opt-in pre-push hook: plain ``git push`` also pushes memory. Real remotes."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import git, gm, ok


def _remote_memory(team: dict[str, Path]) -> list[str]:
    out = git("ls-remote", "origin", "refs/memory/*", cwd=team["a"]).stdout
    return [line.split("\t")[1] for line in out.splitlines()]


def _commit(clone: Path, name: str) -> None:
    (clone / name).write_text(name + "\n")
    git("add", name, cwd=clone)
    git("commit", "-q", "-m", name, cwd=clone)


def test_git_push_pushes_memory_once_the_hook_is_installed(team: dict[str, Path]) -> None:
    a = team["a"]
    ok(gm("add", "the release branch is cut on fridays", cwd=a))
    _commit(a, "one")
    git("push", "-q", "origin", "main", cwd=a)
    assert _remote_memory(team) == []  # not opted in: git push is unchanged

    out = json.loads(ok(gm("init", "--pre-push", "--json", cwd=a)).stdout)["data"]
    assert out["pre_push"] == "installed"
    assert json.loads(ok(gm("init", "--pre-push", "--json", cwd=a)).stdout)["data"][
        "pre_push"] == "already"
    _commit(a, "two")
    pushed = git("push", "-q", "origin", "main", cwd=a)
    assert pushed.returncode == 0 and pushed.stderr == ""
    assert len(_remote_memory(team)) == 1
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert status["unpushed"]["ops"] == 0

    b = team["b"]
    ok(gm("sync", cwd=b))
    assert "fridays" in ok(gm("recall", "release branch", cwd=b)).stdout

    assert json.loads(ok(gm("init", "--no-pre-push", "--json", cwd=a)).stdout)["data"][
        "pre_push"] == "removed"
    assert not (a / ".git" / "hooks" / "pre-push").exists()


def test_an_existing_hook_runs_first_can_veto_and_is_restored(team: dict[str, Path],
                                                              tmp_path: Path) -> None:
    a = team["a"]
    hooks = a / ".git" / "hooks"
    log = tmp_path / "hook.log"
    mine = hooks / "pre-push"
    mine.write_text("#!/bin/sh\n"
                    f"echo \"$1 $(cat | wc -l)\" >> {log}\n"
                    f"[ -e {tmp_path / 'veto'} ] && exit 1\n"
                    "exit 0\n")
    mine.chmod(0o755)
    original = mine.read_text()
    out = json.loads(ok(gm("init", "--pre-push", "--json", cwd=a)).stdout)["data"]
    assert out["pre_push"] == "chained"
    ok(gm("add", "the worker retries three times", cwd=a))

    (tmp_path / "veto").write_text("")
    _commit(a, "vetoed")
    refused = git("push", "-q", "origin", "main", cwd=a, check=False)
    assert refused.returncode != 0
    assert _remote_memory(team) == []  # the veto stopped everything
    assert log.read_text().split() == ["origin", "1"]  # it saw the remote and the ref line

    os.unlink(tmp_path / "veto")
    ok(git("push", "-q", "origin", "main", cwd=a, check=False))
    assert len(_remote_memory(team)) == 1

    assert json.loads(ok(gm("init", "--no-pre-push", "--json", cwd=a)).stdout)["data"][
        "pre_push"] == "removed"
    assert mine.read_text() == original


def test_a_failing_memory_push_warns_and_the_code_push_goes_through(
        team: dict[str, Path], tmp_path: Path) -> None:
    a = team["a"]
    ok(gm("init", "--pre-push", cwd=a))
    ok(gm("add", "a note the remote will refuse", cwd=a))
    # The remote refuses memory refs (as some hosts do) but accepts branches.
    bare = tmp_path / "remote.git"
    update = bare / "hooks" / "update"
    update.write_text('#!/bin/sh\ncase "$1" in refs/memory/*) exit 1;; esac\nexit 0\n')
    update.chmod(0o755)
    _commit(a, "code")
    pushed = git("push", "-q", "origin", "main", cwd=a, check=False)
    assert pushed.returncode == 0
    assert "git mem: memory was not pushed to origin" in pushed.stderr
    heads = git("ls-remote", "origin", "refs/heads/main", cwd=a).stdout.split()[0]
    assert heads == git("rev-parse", "HEAD", cwd=a).stdout.strip()
    assert _remote_memory(team) == []


def test_the_hook_goes_where_core_hookspath_says(team: dict[str, Path], tmp_path: Path) -> None:
    a = team["a"]
    custom = tmp_path / "shared-hooks"
    git("config", "core.hooksPath", str(custom), cwd=a)
    ok(gm("init", "--pre-push", cwd=a))
    assert (custom / "pre-push").exists()
    assert not (a / ".git" / "hooks" / "pre-push").exists()
    ok(gm("add", "hooks live elsewhere here", cwd=a))
    _commit(a, "x")
    git("push", "-q", "origin", "main", cwd=a)
    assert len(_remote_memory(team)) == 1


def test_a_hooks_directory_in_the_work_tree_is_left_to_the_team(team: dict[str, Path]) -> None:
    """A committed .githooks (core.hooksPath=.githooks) holds the team's files: the
    hook is refused there, and nothing in the work tree changes."""
    a = team["a"]
    (a / ".githooks").mkdir()
    (a / ".githooks" / "pre-push").write_text("#!/bin/sh\nmake lint\n")
    git("add", "-A", cwd=a)
    git("commit", "-q", "-m", "team hooks", cwd=a)
    git("config", "core.hooksPath", ".githooks", cwd=a)
    out = gm("init", "--pre-push", cwd=a)
    assert out.returncode == 2, out.stderr
    assert "inside the work tree" in out.stderr and out.stderr.count("\n") == 1
    assert git("status", "--short", cwd=a).stdout == ""
    assert (a / ".githooks" / "pre-push").read_text() == "#!/bin/sh\nmake lint\n"
