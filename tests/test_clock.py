"""Lamport clocks a hostile teammate cannot poison (issue 13, item 1).

A writer takes its next clock only from ops replay accepts, and never writes an
op its own replay would skip. Each case pushes a crafted partition to a real
bare remote; another clone syncs it, then adds: the new memory must be
readable everywhere, now and after the projection is rebuilt.
"""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

import craft
from conftest import git, gm, ok
from gitmem import ops

BIG = 9007199254740000  # just under 2**53


def _push_partition(clone: Path, packs: list[tuple[list[bytes], int]], partition: str) -> None:
    """Commit packs (op lines, trailer clock) on ``partition`` in ``clone`` and push it."""
    repo = pygit2.Repository(str(clone))
    sig = pygit2.Signature("Mallory", "mallory@example.com", 1768471200, 0)
    ref = f"refs/memory/{partition}"
    prev = repo.references.get(ref)
    parent = prev.target if prev is not None else None
    for lines, trailer in packs:
        tb = repo.TreeBuilder()
        tb.insert("ops.jsonl", repo.create_blob(ops.encode_pack(lines)), FileMode.BLOB)
        msg = (f"add note: crafted\n\nGitmem-Format: 1\nGitmem-Ops: {len(lines)}\n"
               f"Gitmem-Clock: {trailer}\n")
        parent = repo.create_commit(None, sig, sig, msg, tb.write(),
                                    [parent] if parent is not None else [])
    repo.references.create(ref, parent, force=True)
    git("push", "-q", "origin", f"{ref}:{ref}", cwd=clone)


def _mallory_ops(clocks: list[int]) -> list[bytes]:
    return [craft.add_op("mallory", c, f"mallory note {i}") for i, c in enumerate(clocks)]


def _add_and_read(clone: Path, text: str) -> str:
    out = ok(gm("add", text, "--json", cwd=clone))
    mid = json.loads(out.stdout)["data"]["id"]
    ok(gm("show", mid, cwd=clone))  # exit 5 when replay skipped the op
    hits = json.loads(ok(gm("recall", text, "--json", "--mode", "lexical", cwd=clone)).stdout)
    assert mid in [h["id"] for h in hits["data"]["hits"]]
    return mid


CASES = {
    # one valid op whose commit trailer lies about its clock
    "huge trailer": [([0], BIG)],
    # a trailer at or above 2**53: once refused every add everywhere
    "trailer over 2**53": [([1], 2**53 + 5)],
    # valid steps, each within the jump bound, that climb far
    "four valid steps of 2**32": [([k * 2**32], k * 2**32) for k in range(1, 5)],
    # one op that replay itself skips (first op of a partition far above 0)
    "one skipped op at 2**52": [([2**52], 2**52)],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_crafted_clock_cannot_make_later_adds_vanish(case: str, team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    ok(gm("add", "a first note from alice", cwd=a))
    ok(gm("sync", cwd=a))
    mallory = craft.partition("mallory@example.com")
    _push_partition(b, [(_mallory_ops(clocks), trailer) for clocks, trailer in CASES[case]],
                    mallory)
    ok(gm("sync", cwd=a))
    mine = _add_and_read(a, "alice writes after the crafted push")
    ok(gm("sync", cwd=a))
    # Every clone that syncs reads it, and a rebuilt projection too.
    ok(gm("sync", cwd=b))
    ok(gm("show", mine, cwd=b))
    ok(gm("rebuild", cwd=a))
    ok(gm("show", mine, cwd=a))
    # And the next add after that, and a keyed fact set twice, still land in order.
    ok(gm("set", "db.engine", "postgres", cwd=a))
    ok(gm("set", "db.engine", "cockroach", cwd=a))
    assert json.loads(ok(gm("get", "db.engine", "--json", cwd=a)).stdout)["data"]["value"] \
        == "cockroach"


def test_a_clone_poisoned_before_the_fix_heals(team: dict[str, Path]) -> None:
    """Its own tip already carries a huge clock (an op its replay skipped): the
    next add is accepted again, and the op that was skipped is not lost."""
    a = team["a"]
    ok(gm("add", "written before the poisoning", cwd=a))
    cid = (a / ".git/mem/clone-id").read_text().strip()
    own = ops.partition_name("alice@example.com", cid)
    lost = ops.encode(ops.AddOp(
        v=1, author=ops.Author(name="Alice Doe", email="alice@example.com"), partition=own,
        clock=2**40, at=1768471200, memory=ops.MemoryBody(text="written while poisoned")))
    repo = pygit2.Repository(str(a))
    ref = repo.references.get(f"refs/memory/{own}")
    tb = repo.TreeBuilder()
    tb.insert("ops.jsonl", repo.create_blob(ops.encode_pack([lost])), FileMode.BLOB)
    sig = pygit2.Signature("Alice Doe", "alice@example.com", 1768471200, 0)
    tip = repo.create_commit(None, sig, sig, f"add note: x\n\nGitmem-Clock: {2**40}\n",
                             tb.write(), [ref.target])
    ref.set_target(tip)
    status = json.loads(ok(gm("status", "--json", cwd=a)).stdout)["data"]
    assert any("clock jump" in s["reason"] for s in status["skipped"])
    _add_and_read(a, "written after the upgrade")
    # The op the old code wrote with a poisoned clock is re-appended with a valid
    # one (content and author kept), so nothing the user added is lost.
    hits = json.loads(ok(gm("recall", "written while poisoned", "--json", "--mode", "lexical",
                            cwd=a)).stdout)["data"]["hits"]
    assert [h["text"] for h in hits][:1] == ["written while poisoned"]


def test_a_write_never_produces_an_op_its_replay_would_skip(repo: Path) -> None:
    """The guard in the write path: the chosen clock obeys replay's jump rule."""
    import gitmem
    from gitmem import replay

    with gitmem.open(repo) as s:
        added = s.add("a note to check the clock of")
        assert replay.clock_jump(0, added.clock) is None
        again = s.add("a second note, clock one more")
        assert again.clock == added.clock + 1
