"""Concurrent readers and writers never take the vector files for damaged.

A false "vector file was damaged" is not harmless: the process that believes it
resets the generation and embeds every memory again (seconds at 100k), and a
process that warns without re-embedding says something untrue. Each test here
forces one interleaving of two processes' steps, played by two pools (two SQLite
connections, the same files on disk) in one test: one is stopped at a point in
its own code (a thread waiting there, or a SQLite trace callback between two of
its statements) while the other runs on. The first is the interleaving that made
tests/test_robustness.py's concurrent readers and writers flake once in many
runs; here it happens every time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import gitmem
from conftest import gm
from gitmem.api.pool import Pool
from gitmem.projection import connection

DAMAGED = "vector file was damaged; re-embedded every memory"


def ok(out: object) -> None:
    assert getattr(out, "returncode") == 0, getattr(out, "stderr")


class Paused:
    """Run ``fn`` in a thread that stops where it calls ``stop`` until ``go``."""

    def __init__(self, fn: Callable[[Callable[[], None]], None]) -> None:
        self.reached, self._go = threading.Event(), threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)

    def _run(self, fn: Callable[[Callable[[], None]], None]) -> None:
        try:
            fn(self._stop)
        except BaseException as exc:  # noqa: BLE001 - raised in the test's thread by finish
            self.error = exc
            self.reached.set()

    def _stop(self) -> None:
        self.reached.set()
        assert self._go.wait(60), "the test never let the thread go on"

    def start(self) -> None:
        self._thread.start()
        assert self.reached.wait(60), "the thread never reached its stop"
        if self.error is not None:
            raise self.error

    def finish(self) -> None:
        self._go.set()
        self._thread.join(60)
        assert not self._thread.is_alive()
        if self.error is not None:
            raise self.error


def test_a_new_generation_is_not_removed_by_a_refresh_that_committed_before_it(
        repo: Path) -> None:
    # The flake: the first read that embeds starts the first generation of the vector
    # file (a reset: a new file, named in meta when its transaction commits). A writer
    # that had committed its own refresh just before went on to tidy the directory:
    # it read the current name (still the old one: the reset had not committed) and
    # deleted every other vector file, the new one being written included. The reset
    # then committed a name whose file was gone, and the next read said "damaged" and
    # embedded everything again. Here the writer is stopped right after its commit,
    # the reader runs until it is writing the new generation's rows, and the writer
    # then finishes.
    for i in range(3):  # an add replays what it finds without embedding it
        ok(gm("add", f"the queue worker {i} retries three times", cwd=repo))
    writer, reader = Pool(repo), Pool(repo)

    def embedding(stop: Callable[[], None]) -> None:
        def progress(what: str, done: int, total: int | None) -> None:
            if what == "embedding memories":
                stop()  # the new file holds rows, its name is not committed yet

        reader.progress = progress
        reader.read(lambda p: None)  # embeds: a new generation
        reader.close()

    making = Paused(embedding)
    wal_bytes = writer.projection._wal_bytes

    def committed() -> int:  # (refresh._refresh asks it after its COMMIT, before it tidies)
        making.start()
        return wal_bytes()

    writer.projection._wal_bytes = committed  # type: ignore[method-assign]
    writer.read(lambda p: None, embed=False)  # replays the third add, then tidies
    making.finish()
    assert writer.warnings == [] and reader.warnings == []
    writer.close()

    later = Pool(repo)
    try:
        assert later.read(lambda p: p.vec_path.exists())
        assert later.warnings == [], later.warnings
        assert later.read(lambda p: p.all_embedded())
    finally:
        later.close()
    out = gm("recall", "queue worker retries", "--json", cwd=repo)
    ok(out)
    assert DAMAGED not in out.stdout + out.stderr


def test_a_reader_that_sees_a_rebuild_land_between_two_reads_does_not_cry_damage(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A read looks at the vector file before it decides to refresh, without the write
    # lock: the top slot in one statement, the file's name and size in the next. A
    # rebuild committed between them (a new generation, without the row of the
    # forgotten memory) put the old top slot past the end of the new file, and the
    # read warned "vector file was damaged; re-embedded every memory" although it
    # re-embedded nothing (under the lock the file was sound). Here the rebuild, in
    # another pool, runs exactly between the reader's two statements.
    with gitmem.open(repo) as s:
        ids = [s.add(f"the ingest worker {i} drains queue {i} at night").id for i in range(4)]
        s.refresh()  # embedded: one row each
        s.forget(ids[1])
        s.refresh()  # its row is blanked; its slot stays (the top slot is still 3)
        assert s.warnings == []
    reader = Pool(repo)
    reader.read(lambda p: None)  # open, and current
    # The rebuild replays a forget, so it empties the write-ahead log after its
    # commit, waiting for readers on older snapshots: the reader stopped in the
    # middle of its read is one. It gives up quickly here (the next refresh does it).
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 100)
    rebuilt: list[list[str]] = []
    seen: list[str] = []

    def between(statement: str) -> None:
        seen.append(statement)
        if "FROM meta WHERE key = 'vectors'" in statement and not rebuilt:
            assert any("max(slot)" in s for s in seen)  # the top slot is read already
            rebuilder = Pool(repo)
            try:
                rebuilder.rebuild()  # a new generation of 3 rows, committed
                rebuilt.append(rebuilder.warnings)
            finally:
                rebuilder.close()

    conn = reader.projection.conn
    assert conn is not None
    conn.set_trace_callback(between)
    try:
        reader.read(lambda p: None)
    finally:
        conn.set_trace_callback(None)
    assert rebuilt == [[]]  # the rebuild did land between the two reads, quietly
    assert reader.warnings == [], reader.warnings
    assert reader.read(lambda p: p.all_embedded())
    assert reader.warnings == [], reader.warnings
    reader.close()


def test_similar_pairs_read_while_a_rebuild_retires_their_generation(repo: Path) -> None:
    # 'similar' reads every vector row in one snapshot, from the file its snapshot
    # names. A rebuild committed meanwhile retires that generation and deletes its
    # file: the read's FileNotFoundError was taken for a damaged projection, which
    # was deleted and replayed ("projection was corrupt"), under every other process.
    with gitmem.open(repo) as s:
        s.add("the nightly deploy runs at two in the morning from the release branch")
        s.add("the nightly deploy runs at two in the morning from the release branch, "
              "and it pages the on-call engineer", force=True)
        s.add("the cafeteria serves soup on mondays")
        expected = [(p.older.id, p.newer.id) for p in s.similar()]
        assert expected, "the two deploy notes are similar"
        assert s.warnings == []
    reader = gitmem.open(repo)
    rebuilt: list[list[str]] = []
    seen: list[str] = []

    def between(statement: str) -> None:
        seen.append(statement)
        if "max(slot)" in statement and any("m.vec_slot IS NOT NULL" in s for s in seen) \
                and not rebuilt:
            rebuilder = Pool(repo)
            try:
                rebuilder.rebuild()  # a new generation; the reader's is deleted
                rebuilt.append(rebuilder.warnings)
            finally:
                rebuilder.close()

    try:
        reader.refresh()
        c = reader.projection.conn
        assert c is not None
        c.set_trace_callback(between)
        got = [(p.older.id, p.newer.id) for p in reader.similar()]  # (the trace fires once)
        assert rebuilt == [[]]  # the rebuild landed inside the read's snapshot
        assert reader.warnings == [], reader.warnings
        assert got == expected
    finally:
        reader.close()
