"""A shallow fetch of the memory refs (``git fetch --depth 1`` with the memory
refspec, as a CI job might): the clone holds each partition's tip without its
history. Replay reads what the clone has; once the history arrives
(``git fetch --unshallow`` or ``--deepen``), the next read must replay it,
without a ``git mem rebuild``, and ``status`` must say the history is cut
while it is."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import dump, git, gm, ok, texts

_SPEC = "+refs/memory/*:refs/memory-remotes/origin/*"


def _shallow_clone(team: dict[str, Path], tmp_path: Path) -> Path:
    """a adds three memories (three commits on one partition) and pushes; ci fetches
    the memory refs at depth 1 from a file:// url (a local path ignores --depth)."""
    a = team["a"]
    for text in ("tests live in spec/, run with make spec",
                 "the staging deploy needs the vpn up",
                 "release notes are written by the on-call person"):
        ok(gm("add", text, cwd=a))
    ok(gm("push", cwd=a))
    remote = git("remote", "get-url", "origin", cwd=a).stdout.strip()
    ci = tmp_path / "ci"
    git("clone", "-q", "--depth", "1", f"file://{remote}", str(ci), cwd=tmp_path)
    git("config", "user.name", "CI", cwd=ci)
    git("config", "user.email", "ci@example.com", cwd=ci)
    git("fetch", "-q", "--depth", "1", "origin", _SPEC, cwd=ci)
    return ci


def test_history_fetched_after_a_shallow_fetch_is_replayed(team: dict[str, Path],
                                                             tmp_path: Path) -> None:
    ci = _shallow_clone(team, tmp_path)
    seen = texts(ci, "spec deploy release notes")
    assert seen == ["release notes are written by the on-call person"]  # the tip's op only
    status = json.loads(ok(gm("status", "--json", cwd=ci)).stdout)["data"]
    assert status["shallow"] is True
    assert "unshallow" in ok(gm("status", cwd=ci)).stdout
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    assert not (ci / ".git" / "shallow").exists()
    assert len(texts(ci, "spec deploy release notes")) == 3  # no 'git mem rebuild' asked for
    status = json.loads(ok(gm("status", "--json", cwd=ci)).stdout)["data"]
    assert status["shallow"] is False
    # The same projection as a clone that never was shallow.
    full = tmp_path / "full"
    git("clone", "-q", str(git("remote", "get-url", "origin", cwd=ci).stdout.strip()).removeprefix("file://"),
        str(full), cwd=tmp_path)
    git("fetch", "-q", "origin", _SPEC, cwd=full)
    assert texts(full, "spec deploy release notes") == texts(ci, "spec deploy release notes")


def test_deepening_replays_what_arrives(team: dict[str, Path], tmp_path: Path) -> None:
    ci = _shallow_clone(team, tmp_path)
    assert len(texts(ci, "spec deploy release notes")) == 1
    git("fetch", "-q", "--deepen", "1", "origin", _SPEC, cwd=ci)
    assert len(texts(ci, "spec deploy release notes")) == 2
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    assert len(texts(ci, "spec deploy release notes")) == 3
    assert dump(ci)  # still sound


def test_a_clone_that_is_not_shallow_says_so(team: dict[str, Path]) -> None:
    a = team["a"]
    ok(gm("add", "one memory", cwd=a))
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert status["shallow"] is False


def test_a_bounded_read_leaves_the_walk_to_the_next_read(team: dict[str, Path],
                                                        tmp_path: Path) -> None:
    """A hook or MCP read under a deadline does not walk every partition again: it
    answers from what it has, says it is behind, and the next read does the walk."""
    import time

    import gitmem

    ci = _shallow_clone(team, tmp_path)
    assert len(texts(ci, "spec deploy release notes")) == 1
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    with gitmem.open(ci) as s:
        s._pool.deadline = time.monotonic() + 60
        report = s.refresh()
        assert not report.complete and report.walk_again and not report.full_rebuild
        assert len(s.recall("spec deploy release notes", k=10)) == 1
    # The background catch-up (slices under a deadline) does the walk, and finishes.
    ok(gm("refresh", "--catch-up", cwd=ci))
    with gitmem.open(ci) as s:
        s._pool.deadline = time.monotonic() + 60
        assert s.refresh().complete
        assert len(s.recall("spec deploy release notes", k=10)) == 3
