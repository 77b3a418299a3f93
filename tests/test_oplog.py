"""The op-log's reading of git: packed refs, linked worktrees, lazily loaded libgit2."""

from __future__ import annotations

import json
import os
import subprocess
import time
import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest

from conftest import git, gm, ok
from gitmem.oplog import Oplog


def _libgit2_refs(repo: Path, prefix: str) -> dict[str, str]:
    r = pygit2.Repository(str(repo))
    return {n: str(r.references[n].target) for n in r.listall_references() if n.startswith(prefix)}


def test_packed_and_loose_refs_read_like_libgit2(repo: Path) -> None:
    gm("add", "first memory about gc", cwd=repo)
    git("pack-refs", "--all", cwd=repo)
    git("gc", "-q", cwd=repo)  # the tip commit now lives in a pack, not a loose object
    assert not list((repo / ".git" / "refs" / "memory").iterdir())  # all packed now
    packed_tip = next(iter(Oplog(repo).partitions().values()))
    gm("add", "second memory about gc", cwd=repo)  # loose again, shadowing the packed one
    ref, tip = next(iter(Oplog(repo).partitions().items()))
    assert git("rev-parse", f"{tip}^", cwd=repo).stdout.strip() == packed_tip  # chain kept
    assert git("fsck", "--strict", cwd=repo).returncode == 0
    log = Oplog(repo)
    assert log.partitions() == _libgit2_refs(repo, "refs/memory/")
    out = json.loads(gm("recall", "memory gc", "--json", cwd=repo).stdout)
    assert len(out["data"]["hits"]) == 2


def test_linked_worktree_shares_the_log_and_partition(repo: Path, tmp_path: Path) -> None:
    first = gm("add", "written in the main work tree", "--json", cwd=repo)
    wt = tmp_path / "wt"
    git("worktree", "add", "-q", str(wt), cwd=repo)
    second = gm("add", "written in the linked work tree", "--json", cwd=wt)
    assert json.loads(first.stdout)["data"]["partition"] == json.loads(second.stdout)["data"]["partition"]
    for where in (repo, wt):
        res = json.loads(gm("recall", "written work tree", "--json", cwd=where).stdout)
        assert len(res["data"]["hits"]) == 2
    assert not (wt / ".git" / "mem").exists() and (repo / ".git" / "mem" / "cache").is_dir()


def test_a_read_that_finds_nothing_moved_never_loads_libgit2(repo: Path) -> None:
    ok(gm("add", "warm the projection", cwd=repo))
    ok(gm("recall", "warm", cwd=repo))
    code = (
        "import sys, gitmem; s = gitmem.open(sys.argv[1]); s.recall('warm'); "
        "print('pygit2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_discovery_honours_git_dir(repo: Path, tmp_path: Path) -> None:
    gm("add", "found through GIT_DIR", cwd=repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = gm("recall", "GIT_DIR", "--json", cwd=elsewhere,
             env={"GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)})
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["data"]["hits"][0]["text"] == "found through GIT_DIR"


def test_add_keeps_history_when_packed_refs_hold_non_utf8_names(repo: Path) -> None:
    gm("add", "first", cwd=repo)
    gm("add", "second", cwd=repo)
    # A ref name with a byte that is not UTF-8 (git allows it), then packed.
    subprocess.run(["git", "update-ref", b"refs/heads/caf\xe9", "HEAD"], cwd=repo, check=True)
    git("pack-refs", "--all", cwd=repo)
    gm("add", "third", cwd=repo)
    ref = next(iter(Oplog(repo).partitions()))
    assert git("rev-list", "--count", ref, cwd=repo).stdout.strip() == "3"


def test_a_partition_ref_that_is_not_a_commit_is_skipped_not_fatal(repo: Path) -> None:
    gm("add", "a good memory about queues", cwd=repo)
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, input="junk",
                          capture_output=True, text=True, check=True).stdout.strip()
    git("update-ref", "refs/memory/mallory-00000000-000000000000", blob, cwd=repo)
    out = gm("recall", "queues", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["data"]["hits"][0]["text"] == "a good memory about queues"
    assert "partition tip is not a commit" in gm("status", cwd=repo).stdout


def test_a_ref_lock_left_by_a_crash_is_cleared(repo: Path) -> None:
    first = json.loads(gm("add", "before the crash", "--json", cwd=repo).stdout)["data"]
    lock = repo / ".git" / "refs" / "memory" / (first["partition"] + ".lock")
    lock.write_text("")
    old = time.time() - 60
    os.utime(lock, (old, old))
    out = gm("add", "after the crash", cwd=repo)
    assert out.returncode == 0, out.stderr
    assert not lock.exists()
    assert "after the crash" in gm("log", cwd=repo).stdout


def test_loose_history_is_read_without_libgit2_and_matches_it(repo: Path) -> None:
    for i in range(5):
        gm("add", f"memory {i} about the plain reader", "--force", cwd=repo)
    log = Oplog(repo)
    tip = next(iter(log.partitions().values()))
    plain = [(p.commit, p.data) for p in log._plain_packs(tip, [])]  # type: ignore[union-attr]
    r = pygit2.Repository(str(repo))
    walked = [(str(c.id), r[c.tree["ops.jsonl"].id].data)
              for c in r.walk(tip, pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.REVERSE)]
    assert plain == walked and len(plain) == 5
    assert [p.commit for p in log._plain_packs(tip, [walked[1][0]])] == [c for c, _ in walked[2:]]
    assert log.is_ancestor(walked[0][0], tip) and not log.is_ancestor(tip, walked[0][0])
    # After a gc the objects are packed: libgit2 answers, the same.
    git("gc", "-q", cwd=repo)
    assert log._plain_packs(tip, []) is None
    assert [(p.commit, p.data) for p in Oplog(repo).iter_packs(tip)] == walked
    # A read right after a write loads no libgit2.
    gm("add", "one more after the gc", cwd=repo)
    probe = ("import sys\nsys.argv = ['git-mem', 'recall', 'plain reader']\n"
             "from gitmem.cli import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('pygit2' in sys.modules, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", probe], cwd=repo, capture_output=True, text=True)
    assert out.stderr.strip().splitlines()[-1] == "False"


def test_only_answers_that_needed_libgit2_are_remembered(repo: Path) -> None:
    # Every read after an add asks whether the new tip is a commit and whether the
    # old tip is its ancestor: loose objects answer that faster than the memo is
    # read, so nothing is written (the memo was rewritten twice per add).
    facts = repo / ".git" / "mem" / "facts"
    for i in range(3):
        ok(gm("add", f"memory {i} about the facts memo", "--force", cwd=repo))
        ok(gm("recall", "facts memo", cwd=repo))
    assert not facts.exists()
    # Packed objects need libgit2: that answer is remembered, and reused.
    git("gc", "-q", cwd=repo)
    log = Oplog(repo)
    tip = next(iter(log.partitions().values()))
    assert log.is_commit(tip)
    assert f"commit {tip}" in json.loads(facts.read_text())
    assert Oplog(repo).is_commit(tip)


def test_objects_are_written_together_and_only_once_all_are_flushed(repo: Path,
                                                                    monkeypatch: Any) -> None:
    from gitmem.oplog import objects as objects_module
    from gitmem.oplog.objects import Objects

    store = Objects(repo / ".git")
    items = [(b"blob", b"one\n"), (b"blob", b"two\n"), (b"blob", b"one\n")]
    flushed: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        flushed.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(objects_module.os, "fsync", fsync)
    staged = store.stage(items)
    staged.flush_and_publish()
    oids = staged.oids
    assert len(flushed) == 2  # each new object once, the repeat not again
    assert oids[0] == oids[2] == git("hash-object", "--stdin", cwd=repo, input="one\n").stdout.strip()
    assert git("cat-file", "-p", oids[1], cwd=repo).stdout == "two\n"
    # One flush fails: nothing is renamed into place, no temp file is left.
    calls: list[int] = []

    def failing(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(objects_module.os, "fsync", failing)
    fresh = [(b"blob", b"three\n"), (b"blob", b"four\n"), (b"blob", b"five\n")]
    with pytest.raises(OSError):
        store.stage(fresh).flush_and_publish()
    assert len(calls) == 3
    for kind, data in fresh:
        oid = Objects.oid(kind, data)
        assert not (repo / ".git" / "objects" / oid[:2] / oid[2:]).exists()
    assert not list((repo / ".git" / "objects").glob("*/tmp_obj_*"))


def test_an_append_whose_flush_fails_leaves_the_ref_objects_and_locks_as_they_were(
        repo: Path, monkeypatch: Any) -> None:
    import gitmem
    from gitmem.oplog import objects as objects_module

    ok(gm("add", "the first memory, on disk", cwd=repo))
    before = Oplog(repo).partitions()
    loose = sorted(p for p in (repo / ".git" / "objects").glob("??/*"))
    real_fsync = os.fsync
    flushed: list[int] = []

    def failing(fd: int) -> None:
        flushed.append(fd)
        if len(flushed) == 3:
            raise OSError(5, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(objects_module.os, "fsync", failing)
    with gitmem.open(repo) as store, pytest.raises(Exception):
        store.add("a second memory, never on disk", force=True)
    monkeypatch.setattr(objects_module.os, "fsync", real_fsync)
    assert len(flushed) == 4  # blob, tree, commit and the ref's lock, side by side
    assert Oplog(repo).partitions() == before
    assert sorted(p for p in (repo / ".git" / "objects").glob("??/*")) == loose
    assert not list((repo / ".git" / "refs").rglob("*.lock"))
    ok(gm("add", "a second memory, on disk", cwd=repo))
    assert "a second memory, on disk" in gm("log", cwd=repo).stdout
