"""The rows a recall leaves out of the spread and sets aside before it picks candidates
(vectors.Unseen, vectors.exact_hits): kept while the projection is unchanged, the same
rows as unseen_slots, and the same hits as picking among every row."""

from __future__ import annotations

import json
from array import array
from pathlib import Path

import gitmem
from conftest import gm, ok
from gitmem.projection import Scope
from gitmem.projection.vectors import exact_hits, skips, top_slot, unseen_slots


def _keyed_store(repo: Path, values: int = 60, notes: int = 20) -> None:
    lines = [{"text": f"note {i}: the deploy pipeline uses stage{i} owned by person{i}"}
             for i in range(notes)]
    lines += [{"text": f"build command for tool3 is make beta{i}", "key": "build.tool3"}
              for i in range(values)]
    ok(gm("import", "-", cwd=repo, input="\n".join(json.dumps(x) for x in lines)))


def _statements(c: object, run: object) -> list[str]:
    seen: list[str] = []
    c.set_trace_callback(seen.append)  # type: ignore[attr-defined]
    try:
        run()  # type: ignore[operator]
    finally:
        c.set_trace_callback(None)  # type: ignore[attr-defined]
    return seen


def test_the_present_s_unseen_rows_are_kept_until_the_tables_change(repo: Path) -> None:
    _keyed_store(repo)
    ok(gm("add", "the old proxy is used until spring", "--valid-until", "2030-03-01", cwd=repo))
    row = None
    with gitmem.open(repo) as s:
        s.refresh()
        p = s.projection
        c = p._c
        kept = p._vectors.unseen
        from gitmem.api.embedding import query_vector

        row = query_vector("build command for tool3")
        assert row is not None

        def same(scope: Scope) -> list[int]:
            c.execute("BEGIN")
            try:
                got = kept.slots(c, scope)
                assert got == unseen_slots(c, scope), scope
                return got
            finally:
                c.execute("COMMIT")

        before = same(Scope(now=1_800_000_000))
        assert len(before) == 59  # the key's replaced values
        # A second recall reads nothing again (it took ~26 ms at 10k rows mostly retired).
        p.vector(row, scope=Scope(now=1_800_000_000), limit=5)
        again = _statements(c, lambda: p.vector(row, scope=Scope(now=1_800_000_000), limit=5))
        assert not [q for q in again if "memories_past" in q]
        # The clock alone: past the proxy's valid_until, its row too.
        later = same(Scope(now=1_990_000_000))
        assert len(later) == 60 and set(before) < set(later)
        assert same(Scope()) == before  # (no now: nothing expires)
        # Another process writes: a new value replaces the current one.
        ok(gm("set", "build.tool3", "build command for tool3 is make gamma", cwd=repo))
        s.refresh()
        assert len(same(Scope(now=1_800_000_000))) == 60
        # This connection writes (total_changes): a forget of a note.
        note = s.recall("note 3 stage3 person3", k=1, record_use=False)[0]
        s.forget(note.id)
        s.refresh()
        assert len(same(Scope(now=1_800_000_000))) == 61
        # Looking back is never kept: asked each time, as before.
        assert same(Scope(as_of=2**40)) == unseen_slots(c, Scope(as_of=2**40))


def test_rows_set_aside_give_the_hits_of_picking_among_every_row(repo: Path) -> None:
    # A key set 300 times among 20 notes: the candidates grew eight-fold round after
    # round through the key's replaced values, each round a query the filters turned
    # down (~7 ms each at 10k rows); set aside first, one round.
    _keyed_store(repo, values=300)
    from gitmem.api.embedding import query_vector

    with gitmem.open(repo) as s:
        s.refresh()
        p = s.projection
        c = p._c
        import simsimd

        for question in ("build command for tool3", "deploy pipeline stage4", "who owns it"):
            row = query_vector(question)
            assert row is not None
            for scope in (Scope(), Scope(now=1_800_000_000), Scope(kinds=("note",)),
                          Scope(retired=True)):
                c.execute("BEGIN")
                try:
                    n = top_slot(c) + 1
                    dist = p._vectors.distances(c, simsimd, row, n)
                    assert dist is not None
                    gone = unseen_slots(c, scope)
                    want = exact_hits(c, array("d", dist), n, scope, 5)
                    rounds = _statements(c, lambda: exact_hits(
                        c, array("d", dist), n, scope, 5, gone if skips(scope) else None))
                    got = exact_hits(c, array("d", dist), n, scope, 5,
                                     gone if skips(scope) else None)
                finally:
                    c.execute("COMMIT")
                assert got == want, (question, scope)
                if skips(scope):
                    assert len([q for q in rounds if "FROM vec_rows r" in q]) == 1
