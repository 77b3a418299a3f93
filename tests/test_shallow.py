"""A shallow fetch of the memory refs (``git fetch --depth 1`` with the memory
refspec, as a CI job might) leaves each partition's tip without its history:
replay reads only what the clone has. ``status`` must say so, with the way out
(``git fetch --unshallow``), the next read must take in the history that brings
(it moves no tip), and nothing may hang or fail on what ``.git/shallow`` holds."""

from __future__ import annotations

import json
import time
from pathlib import Path

from conftest import git, gm, ok, texts

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


def _status(clone: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(ok(gm("status", "--json", cwd=clone)).stdout)["data"]
    return data


def test_status_says_a_shallow_fetch_cut_the_history(team: dict[str, Path], tmp_path: Path) -> None:
    ci = _shallow_clone(team, tmp_path)
    assert texts(ci, "spec deploy release notes") == ["release notes are written by the on-call person"]
    assert _status(ci)["shallow"] is True
    out = ok(gm("status", cwd=ci)).stdout
    assert "history cut" in out and "git fetch --unshallow" in out
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    # No rebuild: the history arrived under tips already replayed, and is read.
    assert len(texts(ci, "spec deploy release notes")) == 3
    assert _status(ci)["shallow"] is False


def test_history_a_deepen_brings_is_read_step_by_step(team: dict[str, Path], tmp_path: Path) -> None:
    """--deepen leaves the clone shallow (still cut), yet what it brings is read."""
    ci = _shallow_clone(team, tmp_path)
    assert len(texts(ci, "spec deploy release notes")) == 1
    git("fetch", "-q", "--deepen", "1", "origin", _SPEC, cwd=ci)
    assert len(texts(ci, "spec deploy release notes")) == 2
    assert _status(ci)["shallow"] is True
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    assert len(texts(ci, "spec deploy release notes")) == 3
    assert _status(ci)["shallow"] is False


def test_a_ci_clone_that_fetches_at_depth_one_each_time_keeps_what_it_read(
        team: dict[str, Path], tmp_path: Path) -> None:
    """A review of the first fix: each depth-1 fetch rewrites .git/shallow, and a replay
    of everything then stopped at the new tip and dropped what the clone had read. The
    old boundaries stay listed: no replay of everything, the memories add up."""
    a = team["a"]
    ci = _shallow_clone(team, tmp_path)
    assert len(texts(ci, "spec deploy release notes")) == 1
    for n, text in enumerate(("the cache is warmed by make warm", "lint runs with ruff"), start=2):
        ok(gm("add", text, cwd=a))
        ok(gm("push", cwd=a))
        git("fetch", "-q", "--depth", "1", "origin", _SPEC, cwd=ci)
        assert len(texts(ci, "spec deploy release notes cache warm lint ruff")) == n
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    assert len(texts(ci, "spec deploy release notes cache warm lint ruff")) == 5


def test_a_hook_after_the_history_arrives_leaves_the_replay_to_the_next_command(
        team: dict[str, Path], tmp_path: Path) -> None:
    """The prompt hook answers within its budget from the rows it has; it must not
    record the new .git/shallow as replayed, or no later read would take the history in."""
    ci = _shallow_clone(team, tmp_path)
    assert len(texts(ci, "spec deploy release notes")) == 1
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    prompt = json.dumps({"hook_event_name": "UserPromptSubmit", "cwd": str(ci),
                         "session_id": "s1", "prompt": "where do the tests live"})
    ok(gm("hook", "user-prompt", input=prompt, cwd=ci))
    # The hook answered from the rows it had and started a catch-up, which replays
    # everything. One run here in the foreground says "already running" while the
    # hook's own child holds the lock (CI saw it): ask until one has the lock.
    end = time.monotonic() + 60
    while not json.loads(ok(gm("refresh", "--catch-up", "--json", cwd=ci)).stdout)["data"]["caught_up"]:
        assert time.monotonic() < end, "the hook's catch-up never let go of its lock"
        time.sleep(0.1)
    import sqlite3

    # The catch-up's work, looked at in the file without a read that would redo it.
    db = sqlite3.connect(ci / ".git" / "mem" / "cache" / "projection.sqlite3")
    assert db.execute("SELECT value FROM meta WHERE key = 'shallow_cut'").fetchall() == []
    db.close()
    assert len(texts(ci, "spec deploy release notes")) == 3


def test_a_shallow_fetch_into_a_whole_clone_is_made_whole_again(team: dict[str, Path],
                                                                tmp_path: Path) -> None:
    """A clone that had the whole history takes a shallow fetch of newer tips (a CI
    cache, say): integration cannot prove the new tip descends from the old one, so
    its ops wait (nothing is lost meanwhile) and are read once the history arrives."""
    a, b = team["a"], team["b"]
    ok(gm("add", "the first memory of a", cwd=a))
    ok(gm("push", cwd=a))
    remote = git("remote", "get-url", "origin", cwd=a).stdout.strip()
    git("remote", "set-url", "origin", f"file://{remote}", cwd=b)
    ok(gm("pull", cwd=b))
    assert texts(b, "first memory") == ["the first memory of a"]
    for text in ("a second memory of a", "a third memory of a"):
        ok(gm("add", text, cwd=a))
    ok(gm("push", cwd=a))
    git("fetch", "-q", "--depth", "1", "origin", _SPEC, cwd=b)
    assert texts(b, "first second third memory") == ["the first memory of a"]
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=b)
    assert sorted(texts(b, "first second third memory")) == [
        "a second memory of a", "a third memory of a", "the first memory of a"]


def test_a_shallow_clone_of_the_code_alone_is_not_a_cut(team: dict[str, Path], tmp_path: Path) -> None:
    """CI clones the code at depth 1 and then pulls memory whole: nothing is cut."""
    a = team["a"]
    ok(gm("add", "one memory", cwd=a))
    ok(gm("push", cwd=a))
    remote = git("remote", "get-url", "origin", cwd=a).stdout.strip()
    ci = tmp_path / "ci"
    git("clone", "-q", "--depth", "1", f"file://{remote}", str(ci), cwd=tmp_path)
    assert (ci / ".git" / "shallow").exists()
    ok(gm("pull", cwd=ci))
    assert _status(ci)["shallow"] is False
    assert _status(team["b"])["shallow"] is False


def test_a_shallow_list_of_garbage_is_no_cut_and_no_failure(team: dict[str, Path]) -> None:
    """Ids that name nothing, short hex, binary bytes: status answers."""
    a = team["a"]
    ok(gm("add", "one memory", cwd=a))
    (a / ".git" / "shallow").write_bytes(b"0" * 40 + b"\n")  # an id that names nothing
    assert _status(a)["shallow"] is False
    # A line libgit2 cannot read: it refuses to open the repository. What needs it fails
    # with one typed line (was: an internal error and a traceback); the rest answers.
    (a / ".git" / "shallow").write_bytes(b"0" * 40 + b"\nabc\n" + bytes(range(256)) + b"\n")
    proc = gm("status", "--json", cwd=a)
    assert proc.returncode == 3 and "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["error"]["code"] == "repository_unreadable"
    assert "invalid graft" in proc.stderr and "hint:" in proc.stderr
    found = json.loads(ok(gm("recall", "memory", "--json", cwd=a)).stdout)["data"]["hits"]
    assert [h["text"] for h in found] == ["one memory"]


def test_a_shallow_tip_whose_ops_are_all_skipped_still_records_the_cut(
        team: dict[str, Path], tmp_path: Path) -> None:
    """A review of the mend: the cut was recorded only when ops were applied, and a tip
    whose ops are all skipped (garbage, a newer format) applies none, so the history
    under it was never read after --unshallow."""
    a = team["a"]
    remote = git("remote", "get-url", "origin", cwd=a).stdout.strip()
    ci = tmp_path / "ci"
    git("clone", "-q", "--depth", "1", f"file://{remote}", str(ci), cwd=tmp_path)
    assert texts(ci, "anything") == []  # a projection before any memory exists
    for text in ("memory one about tests", "memory two about deploy"):
        ok(gm("add", text, cwd=a))
    ref = git("for-each-ref", "--format=%(refname)", "refs/memory/", cwd=a).stdout.split()[0]
    tip = git("rev-parse", ref, cwd=a).stdout.strip()
    blob = git("hash-object", "-w", "--stdin", cwd=a, input='{"this is": not json\n').stdout.strip()
    tree = git("mktree", cwd=a, input=f"100644 blob {blob}\tops.jsonl\n").stdout.strip()
    new = git("commit-tree", tree, "-p", tip, "-m", "garbage", cwd=a).stdout.strip()
    git("update-ref", ref, new, cwd=a)
    git("push", "-q", "origin", f"{ref}:{ref}", cwd=a)
    git("fetch", "-q", "--depth", "1", "origin", _SPEC, cwd=ci)
    assert texts(ci, "memory tests deploy") == []  # only the garbage tip is here
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    assert texts(ci, "memory tests deploy") == ["memory one about tests", "memory two about deploy"]


def test_a_shallow_tip_without_ops_is_a_cut_too(team: dict[str, Path], tmp_path: Path) -> None:
    """A review of b3193ad: a teammate's tip whose tree holds no ops.jsonl (skipped on
    replay) is no memory commit to the pack lookup, so its cut was never recorded:
    status said whole, and the history a later --unshallow brought was never read."""
    a = team["a"]
    for text in ("memory one about tests", "memory two about deploy"):
        ok(gm("add", text, cwd=a))
    ref = git("for-each-ref", "--format=%(refname)", "refs/memory/", cwd=a).stdout.split()[0]
    blob = git("hash-object", "-w", "--stdin", cwd=a, input="hi\n").stdout.strip()
    tree = git("mktree", cwd=a, input=f"100644 blob {blob}\tREADME\n").stdout.strip()
    tip = git("rev-parse", ref, cwd=a).stdout.strip()
    odd = git("commit-tree", tree, "-p", tip, "-m", "no pack", cwd=a).stdout.strip()
    git("update-ref", ref, odd, cwd=a)
    remote = git("remote", "get-url", "origin", cwd=a).stdout.strip()
    git("push", "-q", "origin", f"{ref}:{ref}", cwd=a)
    ci = tmp_path / "ci"
    git("clone", "-q", "--depth", "1", f"file://{remote}", str(ci), cwd=tmp_path)
    git("fetch", "-q", "--depth", "1", "origin", _SPEC, cwd=ci)
    assert texts(ci, "memory tests deploy") == []
    assert _status(ci)["shallow"] is True
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    assert texts(ci, "memory tests deploy") == ["memory one about tests", "memory two about deploy"]
    assert _status(ci)["shallow"] is False


def test_a_cut_pushed_past_the_first_ten_thousand_ids_stays_a_cut(team: dict[str, Path],
                                                                   tmp_path: Path) -> None:
    """A review of b3193ad: only the first 10,000 ids of .git/shallow were read, so a cut
    that other entries sorted past them looked gone: a full replay dropped what was
    read, the cut was forgotten, and the history --unshallow brought was never read."""
    ci = _shallow_clone(team, tmp_path)
    assert len(texts(ci, "spec deploy release notes")) == 1
    shallow = ci / ".git" / "shallow"
    real = shallow.read_text()
    fake = [f"{i:040x}" for i in range(1, 10_001)]
    shallow.write_text("".join(f"{x}\n" for x in sorted(real.split() + fake)))
    assert len(texts(ci, "spec deploy release notes")) == 1
    shallow.write_text(real)
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=ci)
    assert len(texts(ci, "spec deploy release notes")) == 3


def test_a_linked_worktree_of_a_shallow_clone_reads_the_cut_partition(
        team: dict[str, Path], tmp_path: Path) -> None:
    """libgit2 reads .git/shallow from a linked worktree's own git directory, where
    git never writes it: there the shallow tip's missing parent made its op
    unreadable (skipped), and recall found nothing. History is walked through the
    common directory, where the list is."""
    ci = _shallow_clone(team, tmp_path)
    wt = tmp_path / "ci-wt"
    git("worktree", "add", "-q", str(wt), cwd=ci)
    assert texts(wt, "spec deploy release notes") == ["release notes are written by the on-call person"]
    status = _status(wt)
    assert status["shallow"] is True and not status["skipped_total"], status
    git("fetch", "-q", "--unshallow", "origin", _SPEC, cwd=wt)
    assert len(texts(wt, "spec deploy release notes")) == 3
    assert not _status(wt)["skipped_total"]
