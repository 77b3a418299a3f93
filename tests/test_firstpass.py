"""The first pass of a big store (projection/firstpass.py): sign bits pick candidates,
their int8 rows are compared exactly, the spread comes from stored moments.

It runs from FIRST_PASS_FROM rows (100k); here the constant is lowered so a few
hundred memories take it. The files must follow the vector file as the kept map
does (appends, a forget, a rebuild's new generation, a deleted cache), the hits
must be the exact scan's, and the answers a function of the memories.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import gitmem
from conftest import GIT_MEM, gm, init_repo
from gitmem.projection import distances, firstpass, vectors

WORDS = ("cache queue schema deploy parser worker token session router lock retry bucket "
         "release branch lint fixture index gateway socket thread kafka redis nginx "
         "postgres terraform").split()
QUERIES = ["why does the worker retry", "who owns the session token", "parser errors",
           "how is the cache invalidated", "release branch rules", "kafka topic for the gateway",
           "redis lock timeout", "postgres index on the queue"]


def notes(count: int, offset: int = 0) -> str:
    out = []
    for i in range(offset, offset + count):
        a, b, c = WORDS[i % 25], WORDS[(i * 7) % 25], WORDS[(i * 13 + 3) % 25]
        out.append(json.dumps({"text": f"the {a} calls the {b} when the {c} fails, case {i}"}))
    return "\n".join(out)


def on(monkeypatch: pytest.MonkeyPatch, rows: int = 100, candidates: int = 120) -> None:
    monkeypatch.setattr(firstpass, "FIRST_PASS_FROM", rows)
    monkeypatch.setattr(firstpass, "NEAREST_FROM", rows)
    monkeypatch.setattr(firstpass, "CANDIDATES", candidates)
    monkeypatch.setattr(firstpass, "LEVELS_SAMPLE", 8)  # (1 in 1024 of a few hundred: none)


def spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each vector scan from now on was answered by the first pass."""
    used: list[bool] = []
    real = vectors.VectorFile.first_pass_hits

    def wrapped(self: vectors.VectorFile, *args: Any, **kw: Any) -> Any:
        out = real(self, *args, **kw)
        used.append(out is not None)
        return out

    monkeypatch.setattr(vectors.VectorFile, "first_pass_hits", wrapped)
    return used


def answers(store: gitmem.Store, k: int = 10) -> list[list[tuple[str, float]]]:
    return [[(h.id, h.score) for h in store.recall(q, k=k, mode="vector", min_score=0)]
            for q in QUERIES]


def files(repo: Path) -> tuple[Path, Path, Path]:
    cache = repo / ".git" / "mem" / "cache"
    (vec,) = cache.glob("vectors*.i8")
    return vec, firstpass.sign_path(vec), firstpass.moments_path(vec)


def consistent(repo: Path) -> None:
    """The sign and moments files are what the vector file's rows give (numpy and
    Python computing the same bytes)."""
    vec, signs, moments = files(repo)
    raw = vec.read_bytes()
    dim = 384
    n = len(raw) // dim
    fresh = firstpass.Moments(dim)
    fresh.add(raw)  # (Python: a few hundred rows, fewer than 32 sampled)
    stored = firstpass.Moments.read(moments, dim)
    assert stored is not None and stored.covered == n
    assert (stored.live, stored.sampled, stored.leveled, stored.s, stored.c, stored.ps,
            stored.pd) == (fresh.live, fresh.sampled, fresh.leveled, fresh.s, fresh.c,
                           fresh.ps, fresh.pd)
    levels = fresh.levels()
    assert levels is not None
    off, wide = firstpass.sign_offset(dim), firstpass.width(dim)
    held = signs.read_bytes()
    assert firstpass.sign_levels(held, dim) == levels
    whole = firstpass.codes(raw, dim, levels)  # numpy (256 rows or more)
    assert held[off:off + n * wide] == whole
    assert whole == b"".join(firstpass.codes(raw[i * dim:(i + 1) * dim], dim, levels)
                             for i in range(n))


def test_the_files_follow_appends_a_forget_a_rebuild_and_a_deleted_cache(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on(monkeypatch)
    assert gm("import", "-", cwd=repo, input=notes(150)).returncode == 0
    with gitmem.open(repo) as store:
        assert len(answers(store)[0]) == 10
        assert store.projection._vectors._held_signs is not None  # the first pass ran
        consistent(repo)
        assert gm("import", "-", cwd=repo, input=notes(40, 150)).returncode == 0
        answers(store)
        consistent(repo)  # rows appended by another process's import
        gone = answers(store)[0][0][0]
        live = firstpass.Moments.read(files(repo)[2], 384).live  # type: ignore[union-attr]
        assert gm("forget", gone, cwd=repo).returncode == 0
        assert gone not in [mid for mid, _ in answers(store)[0]]
        consistent(repo)  # the zeroed row: no sign bit, out of the moments
        assert firstpass.Moments.read(files(repo)[2], 384).live == live - 1  # type: ignore[union-attr]
        before = files(repo)
        assert gm("rebuild", cwd=repo).returncode == 0  # a new generation
        answers(store)
        assert files(repo)[0] != before[0] and not before[1].exists() and not before[2].exists()
        consistent(repo)
        shutil.rmtree(repo / ".git" / "mem" / "cache")
        assert len(answers(store)[1]) == 10
        consistent(repo)
        (files(repo)[1]).unlink()  # the sign file alone lost: the next read makes it again
        answers(store)
        consistent(repo)


def test_the_first_pass_finds_what_the_exact_scan_finds(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert gm("import", "-", cwd=repo, input=notes(400)).returncode == 0
    with gitmem.open(repo) as store:
        exact = answers(store)
        assert store.projection._vectors._held_signs is None
        on(monkeypatch, candidates=120)
        used = spy(monkeypatch)
        first = answers(store)
        assert used == [True] * len(QUERIES)  # every answer came from the first pass
    # The hits are the exact scan's; only the scores move a little (the spread from
    # one row in eight, not from every row).
    assert [[mid for mid, _ in q] for q in first] == [[mid for mid, _ in q] for q in exact]


def test_the_spread_from_the_moments_is_the_spread_of_every_row(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on(monkeypatch)
    monkeypatch.setattr(firstpass, "SAMPLE", 1)  # every row in the sums
    assert gm("import", "-", cwd=repo, input=notes(300)).returncode == 0
    with gitmem.open(repo) as store:
        answers(store)
        vec, _, moments = files(repo)
        raw, sums = vec.read_bytes(), moments.read_bytes()
    from array import array

    import simsimd

    n = len(raw) // 384
    parsed = firstpass.parse(sums, 384)
    assert parsed is not None and parsed[0] == n
    from gitmem.api.embedding import query_vector

    for text in QUERIES:
        query = query_vector(text)
        assert query is not None
        dist = array("d", [0.0]) * n
        simsimd.cdist(memoryview(query).cast("b"), memoryview(raw).cast("b", shape=[n, 384]),
                      metric="cosine", out=memoryview(dist).cast("B").cast("d", shape=[1, n]))
        mean, std, live = distances.spread(dist, n)  # type: ignore[misc]
        got = firstpass.spread(parsed, 384, query)
        assert got is not None and got[2] == live
        assert abs(got[0] - mean) < 2e-3 and abs(got[1] - std) < 2e-3


def test_answers_are_the_same_after_a_rebuild_and_with_the_ops_in_another_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on(monkeypatch)
    used = spy(monkeypatch)
    a = init_repo(tmp_path / "a")
    b = init_repo(tmp_path / "b")
    first, second = notes(250), notes(250, 250)
    assert gm("import", "-", cwd=a, input=first).returncode == 0
    assert gm("import", "-", cwd=a, input=second).returncode == 0
    # a embeds every memory, then a forget zeroes one row; b replays the same ops in
    # one go (the forgotten memory never gets a row), and a rebuilds.
    with gitmem.open(a) as store:
        want = answers(store)
        gone = want[2][0][0]
    assert gm("forget", gone, cwd=a).returncode == 0
    with gitmem.open(a) as store:
        want = answers(store)
        assert gm("rebuild", cwd=a).returncode == 0
        assert answers(store) == want
    from conftest import git

    git("fetch", "-q", str(a), "refs/memory/*:refs/memory/*", cwd=b)
    with gitmem.open(b) as store:
        got = answers(store)
    assert got == want
    assert used and all(used)  # every answer above came from the first pass


def test_the_cut_is_the_same_with_numpy_and_without(monkeypatch: pytest.MonkeyPatch) -> None:
    """The candidates of a fresh process (no numpy) are those of a long-lived one,
    ties at the cut included, for distances on both sides of 256 and of 512."""
    import random
    import sys
    from array import array

    import numpy  # noqa: F401

    rnd = random.Random(5)
    for n, spread_, limit in ((5000, 60, 300), (5000, 700, 1200), (20000, 300, 4000),
                              (3000, 4, 50)):
        dist = array("H", [rnd.randrange(spread_) + (200 if spread_ > 100 else 0)
                           for _ in range(n)])
        with_numpy = firstpass.candidates(dist, n, limit, 10_000)
        with monkeypatch.context() as m:
            m.delitem(sys.modules, "numpy")
            without = firstpass.candidates(dist, n, limit, 10_000)
        assert with_numpy is not None and with_numpy == without
        cut = max(dist[i] for i in with_numpy)
        picked = set(with_numpy)
        assert len(with_numpy) >= limit and all(
            (d <= cut) == (i in picked) for i, d in enumerate(dist))
        assert sum(1 for d in dist if d < cut) < limit  # the smallest such cut
        assert firstpass.candidates(dist, n, limit, cut) is None  # zeroed rows would count


def test_a_refresh_under_a_deadline_leaves_a_big_build_of_the_files_for_later(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook reads under a deadline: building the files for a big store (~11 s at 1M
    rows) is not its to do. It scans exactly meanwhile; the next refresh without a
    deadline builds them."""
    import time

    from gitmem.projection import vectors as vectors_module

    on(monkeypatch)
    monkeypatch.setattr(vectors_module, "_QUICK_ROWS", 50)
    assert gm("import", "-", cwd=repo, input=notes(200)).returncode == 0
    with gitmem.open(repo) as store:
        answers(store)
        _, signs, moments = files(repo)
        signs.unlink()
        moments.unlink()
        p = store.projection
        p.refresh(store._pool.log, deadline=time.monotonic() + 30)
        assert not signs.exists() and not moments.exists()
        p.refresh(store._pool.log)
        consistent(repo)


def test_the_cut_in_blocks_is_the_cut_of_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without numpy the candidates are picked a block of rows at a time, from the
    bytearray the Hamming kernel writes into: the same rows as numpy's for cuts
    just below, at and above a multiple of 256 (the low byte 255 is its own case),
    rows split over several blocks, and distances from 0 to 1023."""
    import random
    import sys
    from array import array

    import numpy  # noqa: F401

    rnd = random.Random(9)
    n = 3 * firstpass._ROWS + 123
    cuts = set()
    for base, width_, share in ((0, 300, 0.05), (200, 112, 0.1), (250, 20, 0.2),
                                (500, 524, 0.03), (0, 1024, 0.4), (255, 2, 0.6),
                                (240, 20, 0.78), (496, 20, 0.78)):
        limit = int(share * n)
        dist = array("H", [base + rnd.randrange(width_) for _ in range(n)])
        with_numpy = firstpass.candidates(dist, n, limit, 10_000)
        assert with_numpy is not None
        cut = max(dist[i] for i in with_numpy)
        with monkeypatch.context() as m:
            m.delitem(sys.modules, "numpy")
            for given in (dist, bytearray(dist.tobytes())):
                assert firstpass.candidates(given, n, limit, 10_000) == with_numpy, (base, cut)
        assert with_numpy == [i for i, d in enumerate(dist) if d <= cut]
        assert sum(1 for d in dist if d < cut) < limit <= len(with_numpy)
        cuts.add(cut)
    assert {255, 256, 511} <= cuts, cuts


def test_a_long_lived_process_keeps_its_references_to_none(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """simsimd 6.5's cdist(out=...) returns None without a reference of its own:
    every scan lost one of None's references, and a long-lived process (the MCP
    server) aborted with "deallocating None" after ~7,000 scans on Python 3.11.
    Scans of both kinds (exact, and the first pass's two) now leave the count be."""
    import sys

    assert gm("import", "-", cwd=repo, input=notes(150)).returncode == 0
    with gitmem.open(repo) as store:
        answers(store)  # (loads everything once)
        for first in (False, True):
            if first:
                on(monkeypatch)
                answers(store)
            before = sys.getrefcount(None)
            for _ in range(25):
                answers(store)  # 8 scans each
            assert sys.getrefcount(None) >= before - 20, (first, before)


def test_a_process_that_scanned_many_times_exits_normally() -> None:
    """The references given back were held in a list, which the interpreter frees
    when it finalizes: a library user or the benchmark that ran ~6,000 scans died
    at a normal exit with "deallocating None" (exit 134)."""
    script = textwrap.dedent("""
        from array import array
        import simsimd
        from gitmem.projection.distances import cdist_into
        one, out = array("b", [1] * 8), array("d", [0.0])
        a = memoryview(one).cast("b", shape=[1, 8])
        o = memoryview(out).cast("B").cast("d", shape=[1, 1])
        for _ in range(30000):
            cdist_into(simsimd, a, a, metric="cosine", out=o)
        print("done")
    """)
    got = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert got.returncode == 0 and got.stdout == "done\n", got.stderr[-300:]


def test_the_program_keeps_its_quick_exit(repo: Path) -> None:
    """An exit hook for the references given back made every git-mem command that
    scanned vectors wait for the interpreter's teardown (cli._end leaves with
    os._exit only when no exit hook is registered): +5 ms a fresh recall at 100k.
    The hook imports ctypes when it runs: a one-shot process must not have one."""
    assert gm("import", "-", cwd=repo, input=notes(150)).returncode == 0
    got = subprocess.run([sys.executable, "-X", "importtime", GIT_MEM, "recall", "parser errors",
                          "--mode", "vector"], cwd=repo, capture_output=True, text=True)
    assert got.returncode == 0 and got.stdout, got.stderr[-300:]
    assert "gitmem.projection.distances" in got.stderr  # it scanned
    assert "ctypes" not in got.stderr


@pytest.mark.parametrize("sample", [1, 8])
def test_the_spread_from_the_moments_leaves_out_a_keys_replaced_values(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sample: int) -> None:
    # As the exact scan's (test_recall): the spread describes the memories that can
    # answer, not the 59 replaced values of a key (near-identical rows, which pulled
    # the mean up to the current value's cosine).
    on(monkeypatch)
    monkeypatch.setattr(firstpass, "SAMPLE", sample)
    used = spy(monkeypatch)
    values = "\n".join(json.dumps({"text": f"the worker retry limit is {i} attempts",
                                   "key": "worker.retry"}) for i in range(60))
    a, b = init_repo(tmp_path / "a"), init_repo(tmp_path / "b")
    assert gm("import", "-", cwd=a, input=notes(300) + "\n" + values).returncode == 0
    assert gm("import", "-", cwd=b, input=notes(300) + "\n" + values.splitlines()[-1]
              ).returncode == 0
    from gitmem.api.embedding import query_vector
    from gitmem.projection import Scope

    with gitmem.open(a) as history, gitmem.open(b) as fresh:
        for store in (history, fresh):
            store.refresh()
        for text in QUERIES[:3]:
            query = query_vector(text)
            assert query is not None
            _, got = history.projection.vector(query, scope=Scope(), limit=5)
            _, want = fresh.projection.vector(query, scope=Scope(), limit=5)
            # The rows the hash samples are b's, with its rows left out: b's sums.
            assert got[2] == want[2] == 301
            assert got[:2] == pytest.approx(want[:2], abs=1e-6)
            _, every = history.projection.vector(query, scope=Scope(retired=True), limit=5)
            assert every == got  # (--all: the background is the current memories still)
            if sample == 1:  # every row in the sums: the exact scan's figures
                monkeypatch.setattr(firstpass, "FIRST_PASS_FROM", 10**9)
                _, exact = history.projection.vector(query, scope=Scope(), limit=5)
                on(monkeypatch)
                assert exact[2] == 301
                assert abs(got[0] - exact[0]) < 2e-3 and abs(got[1] - exact[1]) < 2e-3
        assert used and all(used)  # (each figure above but the exact one: the first pass)
        hits = history.recall("worker retry limit", k=1, mode="vector")
        assert [h.text for h in hits] == ["the worker retry limit is 59 attempts"]


def test_a_100k_store_takes_the_first_pass_with_fewer_candidates() -> None:
    # At 100k rows the exact scan was ~5 ms of a ~14 ms warm recall; the first pass
    # with 4,096 candidates kept 99.5% of its top 10 (96.3% of its top 100) over 496
    # queries, in about half its time; 12,288 candidates took twice the exact scan.
    assert firstpass.FIRST_PASS_FROM <= 100_000
    assert firstpass.candidate_count(100_082) == 4096
    assert firstpass.candidate_count(249_999) == 4096
    assert firstpass.candidate_count(1_000_000) == firstpass.CANDIDATES == 12288
    # A near-duplicate check keeps the exact scan's cut below 250k (cheaper in a fresh add).
    assert firstpass.NEAREST_FROM == 250_000


def test_a_row_that_enters_no_sum_leaves_the_stored_sums_as_they_are(tmp_path: Path) -> None:
    # 7 rows in 8 enter no sum: a refresh adding one only changes the counts, and
    # turning the file's 148k sums into integers and back took ~10-20 ms of each add
    # from 100k rows. Read, count in, write: the same bytes as the integer path.
    import random
    import zlib

    dim = 384
    rnd = random.Random(5)

    def row() -> bytes:
        v = [rnd.randint(-100, 100) for _ in range(dim)]
        v[0] = 127
        return bytes(x & 0xFF for x in v)

    rows = [row() for _ in range(40)]
    spare = next(r for r in iter(row, None) if zlib.crc32(r) % firstpass.SAMPLE)
    sampled = next(r for r in iter(row, None) if zlib.crc32(r) % firstpass.SAMPLE == 0)
    base = firstpass.Moments(dim)
    base.add(b"".join(rows))
    base.covered = len(rows)
    path = tmp_path / "v.moments"
    base.write(path)
    for extra in (spare, sampled):
        lazy = firstpass.Moments.read(path, dim)
        assert lazy is not None
        lazy.add(extra)
        lazy.covered += 1
        assert (lazy._raw is None) == (extra is sampled)  # (only a sampled row converts)
        assert lazy.levels() == base.levels()
        lazy.write(tmp_path / "lazy.moments")
        whole = firstpass.Moments(dim)
        whole.add(b"".join(rows) + extra)
        whole.covered = len(rows) + 1
        whole.write(tmp_path / "whole.moments")
        assert (tmp_path / "lazy.moments").read_bytes() == (tmp_path / "whole.moments").read_bytes()
        again = firstpass.Moments.read(tmp_path / "lazy.moments", dim)
        assert again is not None
        assert (again.s, again.c, again.ps, again.pd) == (whole.s, whole.c, whole.ps, whole.pd)


def test_many_rows_left_out_take_the_exact_scan_not_a_read_of_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The spread from the moments reads every left-out row (a pread a row): with more of
    # them than the first pass rescores, the exact scan (which sets them aside in one
    # pass) is cheaper, and gives the exact figures.
    on(monkeypatch)
    read: list[int] = []
    real = vectors.VectorFile.first_pass_spread

    def counted(self: vectors.VectorFile, c: Any, query: bytes, n: int,
                leave_out: list[int]) -> Any:
        read.append(len(leave_out))
        return real(self, c, query, n, leave_out)

    monkeypatch.setattr(vectors.VectorFile, "first_pass_spread", counted)
    values = "\n".join(json.dumps({"text": f"the worker retry limit is {i} attempts",
                                   "key": "worker.retry"}) for i in range(200))
    a = init_repo(tmp_path / "a")
    assert gm("import", "-", cwd=a, input=notes(300) + "\n" + values).returncode == 0
    from gitmem.api.embedding import query_vector
    from gitmem.projection import Scope

    with gitmem.open(a) as store:
        store.refresh()
        for text in QUERIES[:3]:
            query = query_vector(text)
            assert query is not None
            got = store.projection.vector(query, scope=Scope(), limit=5)
            monkeypatch.setattr(firstpass, "FIRST_PASS_FROM", 10**9)
            exact = store.projection.vector(query, scope=Scope(), limit=5)
            on(monkeypatch)
            assert got == exact and got[1][2] == 301
    assert not read  # (199 left out, 120 candidates: never read one by one)
