"""A teammate's first run: a clone learns that the remote holds memory, and status
says what this clone has not pushed. Real bare remotes, real clones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import git, gm, ok


def _share(team: dict[str, Path]) -> None:
    a = team["a"]
    ok(gm("add", "deploys go out through the heron pipeline on tuesdays", cwd=a))
    ok(gm("add", "the staging database is rebuilt every night", cwd=a))
    ok(gm("push", cwd=a))


def _fresh_clone(team: dict[str, Path], tmp_path: Path, name: str = "newbie") -> Path:
    path = tmp_path / name
    git("clone", "-q", str(tmp_path / "remote.git"), str(path), cwd=tmp_path)
    git("config", "user.name", "New Bie", cwd=path)
    git("config", "user.email", "newbie@example.com", cwd=path)
    return path


def test_a_fresh_clone_is_told_once_that_the_remote_holds_memory(
        team: dict[str, Path], tmp_path: Path) -> None:
    _share(team)
    bob = _fresh_clone(team, tmp_path)
    first = ok(gm("recall", "deploy", cwd=bob))
    assert first.stdout.startswith("no memory matches")
    assert "'origin' holds team memory (1 partition(s))" in first.stderr
    assert "git mem sync" in first.stderr
    env = json.loads(ok(gm("recall", "deploy", "--json", cwd=bob)).stdout)
    assert any("git mem sync" in w for w in env["warnings"])
    status = json.loads(ok(gm("status", "--json", cwd=bob)).stdout)["data"]
    assert status["remote_memory"]["remote"] == "origin"
    assert status["remote_memory"]["partitions"] == 1
    human = ok(gm("status", cwd=bob))
    assert "git mem sync" in human.stderr

    # The answer is kept: with the remote gone, the next reads still know, without
    # asking it again (a probe of a missing path would find nothing).
    probe = bob / ".git" / "mem" / "remote-probe.json"
    checked = json.loads(probe.read_text())["origin"]["at"]
    shutil.move(str(tmp_path / "remote.git"), str(tmp_path / "moved.git"))
    again = ok(gm("recall", "deploy", cwd=bob))
    assert "holds team memory" in again.stderr
    assert json.loads(probe.read_text())["origin"]["at"] == checked
    shutil.move(str(tmp_path / "moved.git"), str(tmp_path / "remote.git"))

    ok(gm("sync", cwd=bob))
    after = ok(gm("recall", "deploy", cwd=bob))
    assert "heron pipeline" in after.stdout
    assert "holds team memory" not in after.stderr


def test_no_hint_when_the_remote_has_no_memory(team: dict[str, Path], tmp_path: Path) -> None:
    bob = _fresh_clone(team, tmp_path)
    out = ok(gm("recall", "deploy", cwd=bob))
    assert out.stderr == ""
    status = json.loads(ok(gm("status", "--json", cwd=bob)).stdout)["data"]
    assert status["remote_memory"] is None


def test_an_unreachable_remote_neither_fails_nor_hints(team: dict[str, Path],
                                                       tmp_path: Path) -> None:
    bob = _fresh_clone(team, tmp_path)
    git("remote", "set-url", "origin", str(tmp_path / "nowhere.git"), cwd=bob)
    out = ok(gm("recall", "deploy", cwd=bob))
    assert out.stderr == ""
    assert json.loads(ok(gm("status", "--json", cwd=bob)).stdout)["data"]["remote_memory"] is None


def test_a_clone_with_its_own_memory_is_not_probed_on_reads(team: dict[str, Path],
                                                            tmp_path: Path) -> None:
    _share(team)
    bob = _fresh_clone(team, tmp_path)
    ok(gm("add", "my own note about the build cache", cwd=bob))
    ok(gm("recall", "nothing matches this zebra", cwd=bob))
    assert not (bob / ".git" / "mem" / "remote-probe.json").exists()


def test_status_counts_what_was_not_pushed(team: dict[str, Path]) -> None:
    a = team["a"]
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert status["unpushed"] == {"remote": "origin", "commits": 0, "ops": 0,
                                  "fetched_before": False}
    ok(gm("add", "the cache warms at boot", cwd=a))
    ok(gm("add", "the queue drains at night", cwd=a))
    ok(gm("import", "-", cwd=a, input='{"text": "one"}\n{"text": "two"}\n{"text": "three"}\n'))
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert status["unpushed"]["commits"] == 3 and status["unpushed"]["ops"] == 5
    assert "not pushed to origin: 5 op(s) in 3 commit(s)" in ok(gm("status", cwd=a)).stdout
    ok(gm("push", cwd=a))
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert status["unpushed"] == {"remote": "origin", "commits": 0, "ops": 0,
                                  "fetched_before": True}
    ok(gm("add", "one more after the push", cwd=a))
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert (status["unpushed"]["commits"], status["unpushed"]["ops"]) == (1, 1)


def test_status_without_a_remote_says_nothing_about_pushing(repo: Path) -> None:
    ok(gm("add", "a local note", cwd=repo))
    status = json.loads(ok(gm("status", "--json", cwd=repo)).stdout)["data"]
    assert status["unpushed"] is None and status["remote_memory"] is None
    assert "not pushed" not in ok(gm("status", cwd=repo)).stdout


def test_the_kept_answer_holds_no_password_of_the_remote(team: dict[str, Path],
                                                         tmp_path: Path) -> None:
    # (A review, rev38b: .git/mem/remote-probe.json kept the remote's URL, password
    # included, in a file any process of the user reads.)
    _share(team)
    bob = _fresh_clone(team, tmp_path)
    git("remote", "set-url", "origin", "https://bob:s3cretpw@127.0.0.1:9/team.git", cwd=bob)
    ok(gm("recall", "deploy", cwd=bob))
    kept = (bob / ".git" / "mem" / "remote-probe.json").read_text()
    assert "origin" in kept and "s3cretpw" not in kept and "127.0.0.1" not in kept
