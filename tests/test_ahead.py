"""Embedding ahead (projection/ahead.py): a big pull's memories embedded in a forked
child while the replay runs must give exactly the rows the refresh would have made."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import craft
from conftest import dump, git, gm, ok


def _rows(clone: Path) -> list[tuple[str, int, bytes]]:
    """Every memory's vector rows (by id), as the file holds them."""
    cache = clone / ".git/mem/cache"
    c = sqlite3.connect(cache / "projection.sqlite3")
    try:
        name = c.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone()[0]
        data = (cache / name).read_bytes()
        dim = len(data) // c.execute("SELECT count(*) FROM vec_rows").fetchone()[0]
        rows = c.execute("SELECT m.id, r.slot - m.vec_slot, r.slot FROM vec_rows r "
                         "JOIN memories m ON m.rowid = r.memory ORDER BY m.id, r.slot").fetchall()
    finally:
        c.close()
    return [(mid, k, data[slot * dim:(slot + 1) * dim]) for mid, k, slot in rows]


def _pulled(team: dict[str, Path], records: str) -> None:
    """b imports ``records`` (and forgets one) and pushes; a and c, each with a
    projection built before, fetch b's refs without replaying them."""
    a, b, c = team["a"], team["b"], team["c"]
    for clone in (a, c):
        ok(gm("init", "--fetch-refspec", cwd=clone))
        ok(gm("recall", "cache", cwd=clone))
    ok(gm("import", "-", cwd=b, input=records))
    found = json.loads(ok(gm("recall", "worker 3 retries", "--json", cwd=b)).stdout)
    ok(gm("forget", found["data"]["hits"][0]["id"], cwd=b))
    ok(gm("push", cwd=b))
    for clone in (a, c):
        git("fetch", "-q", cwd=clone)


# A fresh interpreter refreshes: forking is only allowed in a single-threaded
# process, and pytest's own (its workers, numpy's BLAS pool) is not one.
_SCRIPT = """
import json, sys
import gitmem
from gitmem import forked
started = []
start = forked.Child.start
forked.Child.start = lambda work: started.append(1) or start(work)
ahead_bytes = json.loads(sys.argv[2])
with gitmem.open(sys.argv[1]) as s:
    s.projection.ahead_bytes = ahead_bytes
    s.projection.gate_ahead_bytes = None  # (judging ahead: test_gateahead.py)
    if sys.argv[3] == "failing":
        make = s.projection._make_embedder

        def failing(chars):  # the child asks for every character: no embedder there
            if chars > 10 ** 9:
                raise RuntimeError("no embedder in the child")
            return make(chars)

        s.projection._make_embedder = failing
    if sys.argv[3] == "deadline":  # as a hook's bounded read: it must not wait for a child
        import time
        s._pool.deadline = time.monotonic() + 60
    report = s.rebuild() if sys.argv[3] == "rebuild" else s.refresh()
    print(json.dumps([report.embedded_ahead, len(started)]))
"""


def _refresh(clone: Path, ahead_bytes: int | None, how: str = "") -> tuple[int, int]:
    """(rows taken from the child, children started) of one refresh of ``clone``."""
    proc = subprocess.run([sys.executable, "-c", _SCRIPT, str(clone), json.dumps(ahead_bytes),
                           how], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    taken, started = json.loads(proc.stdout)
    return taken, started


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_rows_embedded_ahead_are_the_rows_made_in_process(team: dict[str, Path]) -> None:
    a, b, c = team["a"], team["b"], team["c"]
    _pulled(team, craft.varied_records(400))
    taken, started = _refresh(a, 0)
    assert started == 1 and taken > 400  # every memory and chunk came from the child
    assert _refresh(c, None) == (0, 0)  # the same pull, embedded in process
    rows_a, rows_c = _rows(a), _rows(c)
    assert len(rows_a) > 400 and rows_a == rows_c
    assert dump(a) == dump(c)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_a_failed_child_changes_nothing(team: dict[str, Path]) -> None:
    a, c = team["a"], team["c"]
    _pulled(team, craft.varied_records(200))
    assert _refresh(a, 0, "failing") == (0, 1)  # a child started, nothing taken from it
    _refresh(c, None)
    assert _rows(a) == _rows(c) and dump(a) == dump(c)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_a_read_with_a_deadline_starts_no_child(team: dict[str, Path]) -> None:
    """A bounded read (a hook, a slice of a catch-up) would wait for the child past its
    deadline, or fork one per slice and kill it: it embeds in process."""
    a, c = team["a"], team["c"]
    _pulled(team, craft.varied_records(400))
    assert _refresh(a, 0, "deadline") == (0, 0)
    _refresh(c, None)
    assert _rows(a) == _rows(c) and dump(a) == dump(c)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_a_rebuild_embeds_ahead_and_makes_the_same_rows(team: dict[str, Path]) -> None:
    """A rebuild replays the whole log: its memories are embedded on the other core
    while the replay runs (100k: 10.0 -> 7.4 s), into the very rows made in process."""
    a, c = team["a"], team["c"]
    _pulled(team, craft.varied_records(400))
    _refresh(a, None)
    _refresh(c, None)
    before = _rows(a)
    taken, started = _refresh(a, 0, "rebuild")
    assert started == 1 and taken > 400
    assert _refresh(c, None, "rebuild") == (0, 0)
    assert _rows(a) == _rows(c) == before
    assert dump(a) == dump(c)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_no_child_where_the_process_may_use_one_cpu_only() -> None:
    """A child on the same CPU only adds its memory and a second read of the packs."""
    script = ("import os; from gitmem import forked; a = forked.supported(); "
              "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); print(a, forked.supported())")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    can_fork = len(os.sched_getaffinity(0)) > 1
    assert out.stdout.split() == [str(can_fork), "False"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")
def test_a_few_own_adds_beside_a_pull_embedded_ahead_load_no_numpy(team: dict[str, Path]) -> None:
    """A pull embedded ahead plus two adds of our own: the refresh embeds those two
    with the pure-Python embedder (the same bytes) rather than load numpy and the
    tokenizer (~65 ms) for them: what is left to embed decides, not the whole pull."""
    a, b = team["a"], team["b"]
    ok(gm("init", "--fetch-refspec", cwd=a))
    ok(gm("recall", "cache", cwd=a))
    ok(gm("add", "the nightly export job writes to s3://exports/nightly", cwd=a))
    ok(gm("add", "rotate the staging TLS certificate before it expires in March", cwd=a))
    ok(gm("import", "-", cwd=b, input=craft.varied_records(400)))
    ok(gm("push", cwd=b))
    git("fetch", "-q", cwd=a)
    script = _SCRIPT.replace(
        "print(json.dumps([report.embedded_ahead, len(started)]))",
        "from gitmem import embed\n"
        "print(json.dumps([report.embedded_ahead, len(started), embed.default_embedder_loaded()]))")
    proc = subprocess.run([sys.executable, "-c", script, str(a), "0", ""],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    taken, started, loaded = json.loads(proc.stdout)
    assert started == 1 and taken > 400
    assert loaded is False
    made = _rows(a)
    assert _refresh(a, None, "rebuild") == (0, 0)  # every row again, by the batch embedder
    assert _rows(a) == made
