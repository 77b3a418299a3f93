"""Embedding ahead (projection/ahead.py): a big pull's memories embedded in a forked
child while the replay runs must give exactly the rows the refresh would have made."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import gitmem
from conftest import dump, git, gm, ok
from gitmem.projection import ahead


def _records(n: int) -> str:
    """Varied memories: keys, tags, entities, long texts that are embedded in chunks,
    and the same text twice (one row shared by two memories)."""
    out = []
    for i in range(n):
        text = f"the worker {i} retries the queue after {i % 7} seconds; see lib/q{i}.py"
        if i % 25 == 0:
            text = "\n".join(f"step {j}: run tools/deploy-{i}-{j}.sh and check the logs"
                             for j in range(40))  # long: embedded whole and in chunks
        rec: dict[str, object] = {"text": text, "tags": [f"t{i % 5}"], "about": [f"svc{i % 3}"]}
        if i % 10 == 0:
            rec["key"] = f"setting.{i % 30}"
        out.append(json.dumps(rec))
    out.append(json.dumps({"text": "the worker 1 retries the queue after 1 seconds; see lib/q1.py"}))
    return "\n".join(out) + "\n"


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


def _refresh(clone: Path, ahead_bytes: int | None) -> int:
    with gitmem.open(clone) as s:
        s.projection.ahead_bytes = ahead_bytes
        s.refresh()
        return s.projection.embedded_ahead


@pytest.mark.skipif(not ahead.supported(), reason="forks on Linux only")
def test_rows_embedded_ahead_are_the_rows_made_in_process(team: dict[str, Path]) -> None:
    a, b, c = team["a"], team["b"], team["c"]
    _pulled(team, _records(400))
    assert _refresh(a, 0) > 400  # every memory and chunk came from the child
    assert _refresh(c, None) == 0  # the same pull, embedded in process
    rows_a, rows_c = _rows(a), _rows(c)
    assert len(rows_a) > 400 and rows_a == rows_c
    assert dump(a) == dump(c)


@pytest.mark.skipif(not ahead.supported(), reason="forks on Linux only")
def test_a_failed_child_changes_nothing(team: dict[str, Path]) -> None:
    a, c = team["a"], team["c"]
    _pulled(team, _records(200))
    with gitmem.open(a) as s:
        proj = s.projection
        make = proj._make_embedder
        assert make is not None

        def failing(chars: int) -> object:  # the child asks for every character
            if chars > 10**9:
                raise RuntimeError("no embedder in the child")
            return make(chars)

        proj._make_embedder = failing  # type: ignore[assignment]
        proj.ahead_bytes = 0
        s.refresh()
        assert proj.embedded_ahead == 0  # all made in process
    _refresh(c, None)
    assert _rows(a) == _rows(c) and dump(a) == dump(c)

