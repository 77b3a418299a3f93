"""The disposable local projection: the only module that talks to SQLite.

The projection is a cache of the fold over every op in ``refs/memory/*``. It
lives in ``<git-common-dir>/mem/cache/`` and can be deleted at any time: the
next read rebuilds it. It stores, per partition ref, the tip it has replayed,
so a refresh costs one ref listing when nothing moved and replays only the new
commits when something did.

Determinism: the state of a memory is recomputed from the *set* of ops that
touch it (``links``), never patched by whichever op happened to arrive last,
so any arrival order of partitions and commits gives the same rows.
``dump()`` prints that state canonically for tests.
"""

from __future__ import annotations

import heapq
import json
import mmap
import os
import sqlite3
import dataclasses
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol, TypeVar

from .. import ops, replay
from ..model import Anchor, OpInfo, Record, RefreshReport, Skipped
from ..embed.text import embed_chunks, quantize_rows
from ..timefmt import iso

# Bump when the tables change: a mismatch rebuilds from the log, never migrates.
SCHEMA_VERSION = 8
DB_NAME = "projection.sqlite3"
VEC_NAME = "vectors.i8"
HNSW_NAME = "vectors.hnsw"
EMBED_BATCH = 1024
# When the HNSW index is used (benchmarks/latency.py measures the crossover).
# Loading an index costs far more than an exact int8 scan for a fresh process,
# and building one far more than a refresh may take, so fresh processes scan
# exactly (and use a persisted index only for very large corpora); a
# long-lived process (the MCP server) builds or updates the persisted index in
# the background and queries it once it covers the corpus.
HNSW_FRESH_MIN = 500_000
HNSW_WARM_MIN = 20_000
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


class ProjectionCorrupt(Exception):
    """The SQLite file is damaged; the caller resets and rebuilds it."""


F = TypeVar("F", bound=Callable[..., Any])


def _guarded(fn: F) -> F:
    """Turn SQLite's corruption errors into ProjectionCorrupt for the caller."""

    def wrapper(self: Projection, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except sqlite3.DatabaseError as exc:
            if _is_corrupt(exc):
                raise ProjectionCorrupt(str(exc)) from exc
            raise

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper  # type: ignore[return-value]


class DocEmbedder(Protocol):
    """What the projection needs to embed memories (gitmem.embed.StaticEmbedder)."""

    version: str
    dim: int

    def embed(self, texts: list[str]) -> Any: ...


class LogSource(Protocol):
    """What a refresh needs from the op-log (implemented by oplog.Oplog)."""

    def partitions(self) -> dict[str, str]: ...

    def is_ancestor(self, old: str, new: str) -> bool: ...

    def iter_packs(self, tip: str, since: str | None = None) -> Iterator[object]: ...


_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE partitions(
    ref TEXT PRIMARY KEY, tip TEXT NOT NULL, last_clock INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE ops(
    id TEXT PRIMARY KEY, type TEXT NOT NULL, ref TEXT NOT NULL,
    commit_id TEXT NOT NULL, clock INTEGER NOT NULL, at INTEGER NOT NULL,
    tz INTEGER NOT NULL, author_name TEXT NOT NULL, author_email TEXT NOT NULL,
    target TEXT, reason TEXT
) WITHOUT ROWID;
CREATE INDEX ops_order ON ops(clock, id);
CREATE INDEX ops_ref ON ops(ref);
CREATE INDEX ops_target ON ops(target);
-- One row per (retired memory, op retiring it): invalidate, forget, supersede.
-- at: when the log learned of the retirement (the op's time; transaction
-- time, for --as-of); closes: when the memory stopped being true in the world
-- (valid time, for --valid-at): the replacement's valid_from for a supersede,
-- the op's time otherwise.
CREATE TABLE links(
    target TEXT NOT NULL, op TEXT NOT NULL, type TEXT NOT NULL,
    at INTEGER NOT NULL, closes INTEGER NOT NULL,
    PRIMARY KEY(target, op)
) WITHOUT ROWID;
CREATE INDEX links_op ON links(op);
CREATE TABLE memories(
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, text TEXT, key TEXT,
    tags TEXT NOT NULL, entities TEXT NOT NULL, importance REAL NOT NULL,
    valid_from INTEGER, valid_until INTEGER, source TEXT, session TEXT,
    anchor_commit TEXT, paths TEXT NOT NULL, supersedes TEXT NOT NULL,
    ref TEXT NOT NULL, commit_id TEXT NOT NULL, clock INTEGER NOT NULL,
    at INTEGER NOT NULL, tz INTEGER NOT NULL,
    author_name TEXT NOT NULL, author_email TEXT NOT NULL,
    status TEXT NOT NULL, retired_by TEXT, retired_at INTEGER,
    retired_tz INTEGER, retired_reason TEXT,
    vec_slot INTEGER,  -- first row in vectors.i8, NULL until embedded
    quarantine TEXT,  -- why the write gate would refuse it, NULL when it passes
    -- A keyed value that loses a conflict: the id of the current winner (the
    -- greatest (clock, id) among the key's active values), NULL otherwise.
    shadowed_by TEXT,
    norm TEXT  -- ops.text_hash(text): finds exact duplicates on write
);
CREATE INDEX memories_key ON memories(key) WHERE key IS NOT NULL;
CREATE INDEX memories_top ON memories(kind, importance DESC, clock DESC, id);
CREATE INDEX memories_shadowed ON memories(shadowed_by) WHERE shadowed_by IS NOT NULL;
CREATE INDEX memories_norm ON memories(norm);
CREATE UNIQUE INDEX memories_vec ON memories(vec_slot);
-- Every vector row and the memory it belongs to: a long memory has a row for
-- the whole and one per chunk, its similarity is the best of them.
CREATE TABLE vec_rows(slot INTEGER PRIMARY KEY, memory INTEGER NOT NULL);
CREATE INDEX vec_rows_memory ON vec_rows(memory);
CREATE INDEX memories_ref ON memories(ref);
CREATE INDEX memories_status ON memories(status, kind);
CREATE INDEX memories_session ON memories(session, clock, id);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, key, tags, entities, tokenize = 'porter unicode61 remove_diacritics 2'
);
-- The write gate's verdict per op id: a pure function of the op's bytes and the
-- gate's version, so it survives rebuilds (only deleting the cache clears it).
CREATE TABLE gate_verdicts(
    op_id TEXT PRIMARY KEY, version TEXT NOT NULL, reason TEXT
) WITHOUT ROWID;
CREATE TABLE skipped(
    ref TEXT NOT NULL, commit_id TEXT NOT NULL, line INTEGER NOT NULL,
    op_id TEXT, reason TEXT NOT NULL, PRIMARY KEY(ref, commit_id, line)
) WITHOUT ROWID;
"""

_MEMORY_COLS = (
    "id, kind, text, key, tags, entities, importance, valid_from, valid_until, "
    "source, session, anchor_commit, paths, supersedes, ref, commit_id, clock, at, "
    "tz, author_name, author_email, status, retired_by, retired_at, retired_tz, "
    "retired_reason, quarantine, shadowed_by"
)


def _rollback(c: sqlite3.Connection) -> None:
    try:
        c.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # the transaction is gone already (e.g. the file is corrupt)


def _partition(ref: str) -> str:
    return ref.rsplit("/", 1)[-1]


def _is_corrupt(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in _CORRUPT_CODES:
        return True
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


class Projection:
    """One clone's projection file and every query on it."""

    def __init__(
        self,
        directory: Path,
        *,
        embedder_version: str | None = None,
        embedder_dim: int = 0,
        make_embedder: Callable[[], DocEmbedder] | None = None,
    ) -> None:
        self.directory = directory
        self.path = directory / DB_NAME
        # Vectors are optional: without an embedder the projection is lexical only.
        self.embedder_version = embedder_version
        self.dim = embedder_dim
        self._make_embedder = make_embedder
        self._embedder: DocEmbedder | None = None
        # The write gate, applied to replayed memories too (injected by the api so
        # the projection does not depend on it): a reason, or None when it passes.
        self.quarantine_check: Callable[[Any], str | None] | None = None
        self.quarantine_version: Callable[[], str] = lambda: ""  # asked only when replaying
        self._qv: str | None = None
        self.long_lived = False  # set by long-lived front ends: prefer the HNSW index
        self.hnsw_warm_min = HNSW_WARM_MIN
        self.hnsw_fresh_min = HNSW_FRESH_MIN
        self._hnsw: Any = None
        self._hnsw_tag: dict[str, object] | None = None
        self._hnsw_thread: Any = None
        self.hnsw_path = directory / HNSW_NAME
        self.conn: sqlite3.Connection | None = None
        self.created = False  # True when open() had to make a new file
        self.vectors_damaged = False
        self.reset_reason: str | None = None
        self._scrubbed = False  # content was removed in this refresh: compact the index
        self._dirty_keys: set[str] = set()  # keys whose conflict winner must be recomputed
        # Long refreshes report (what, done, total or None) here; front ends draw it.
        self.progress: Callable[[str, int, int | None], None] | None = None

    # -- lifecycle ----------------------------------------------------------------

    def open(self) -> None:
        """Open (creating or resetting as needed). Raises ProjectionCorrupt."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.created = not self.path.exists()
        try:
            self._connect()
            assert self.conn is not None
            have = dict(self.conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            have = {}
        except sqlite3.DatabaseError as exc:
            if _is_corrupt(exc):
                raise ProjectionCorrupt(str(exc)) from exc
            raise
        want = {"schema": str(SCHEMA_VERSION), "format": str(ops.FORMAT_VERSION)}
        if {k: have.get(k) for k in want} != want:
            if have:
                self.reset_reason = "projection schema changed"
            self._reset_schema(want)

    def _connect(self) -> None:
        conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None)
        conn.execute("PRAGMA busy_timeout = 60000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        # Forgotten text must not linger in free pages of the file.
        conn.execute("PRAGMA secure_delete = ON")
        self.conn = conn

    def _reset_schema(self, meta: dict[str, str]) -> None:
        c = self._c
        c.execute("BEGIN IMMEDIATE")
        try:
            try:
                have = dict(c.execute("SELECT key, value FROM meta").fetchall())
            except sqlite3.OperationalError:
                have = {}
            if {k: have.get(k) for k in meta} == meta:
                c.execute("COMMIT")  # another process set it up while we waited
                self.reset_reason = None
                return
            tables = [
                r[0]
                for r in c.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%'"
                )
            ]
            for t in tables:
                c.execute(f'DROP TABLE IF EXISTS "{t}"')
            for stmt in _SCHEMA.split(";\n"):  # statements end a line, comments never do
                if stmt.strip():
                    c.execute(stmt)
            c.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(meta.items()))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

    def destroy(self) -> None:
        """Delete the projection files (used when the file is corrupt)."""
        self.close()
        for suffix in ("", "-wal", "-shm", "-journal"):
            try:
                os.unlink(str(self.path) + suffix)
            except FileNotFoundError:
                pass

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            finally:
                self.conn = None

    @property
    def vec_path(self) -> Path:
        """The vector file of the current generation (named in meta, so a reset
        and the slots that refer to it commit or roll back together)."""
        row = self._c.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone()
        return self.directory / (row[0] if row else VEC_NAME)

    def _remove_stale_vector_files(self) -> None:
        keep = self.vec_path.name
        for f in self.directory.glob("vectors*.i8"):
            if f.name != keep:
                f.unlink(missing_ok=True)  # readers that mapped it keep their inode

    @property
    def _c(self) -> sqlite3.Connection:
        if self.conn is None:
            raise RuntimeError("projection is not open")
        return self.conn

    # -- refresh --------------------------------------------------------------

    @_guarded
    def watermarks(self) -> dict[str, str]:
        return dict(self._c.execute("SELECT ref, tip FROM partitions").fetchall())

    @_guarded
    def refresh(self, source: LogSource, *, full: bool = False, embed: bool = True) -> RefreshReport:
        """Bring the projection up to the refs; replay only what moved.

        ``embed=False`` replays without embedding new memories (a writer's quick
        look before appending): their rows stay pending until the next read.
        """
        start = time.perf_counter()
        report = RefreshReport(full_rebuild=full)
        current = source.partitions()
        if not full and current == self.watermarks() and (not embed or self._vectors_current()):
            return report  # the common case: nothing moved, nothing walked
        c = self._c
        c.execute("BEGIN IMMEDIATE")
        try:
            # List again under the lock: another process may have refreshed
            # past our first listing, and replaying an older listing would look
            # like a rewrite and move the projection backwards.
            current = source.partitions()
            stored = {} if full else self.watermarks()
            if full:
                self._clear()
            if current != stored:
                self._apply_moves(source, current, stored, report)
            if embed or full:
                report.embedded = self._embed_pending(reset=full)
            if self._scrubbed:
                # FTS5 keeps deleted terms in its segments until they merge:
                # merge them now, so forgotten words leave the index's pages.
                c.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
            c.execute("COMMIT")
        except BaseException:
            _rollback(c)
            raise
        finally:
            scrubbed, self._scrubbed = self._scrubbed, False
        if scrubbed:
            try:  # and out of the write-ahead log (best effort: readers may hold it)
                c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error:
                pass
        self._remove_stale_vector_files()
        report.seconds = time.perf_counter() - start
        return report

    def _clear(self) -> None:
        for t in ("partitions", "ops", "links", "memories", "memories_fts", "skipped", "vec_rows"):
            self._c.execute(f"DELETE FROM {t}")

    # -- vectors ----------------------------------------------------------------
    #
    # vectors.i8 is a row-major matrix of int8 vectors (each row scaled so its
    # largest component is +-127; cosine ignores the scale), one row per
    # embedded memory, memories.vec_slot naming the row. The file only grows:
    # rows are appended before the transaction that assigns their slots
    # commits, so every committed slot has a complete row, and readers map
    # only the rows their snapshot knows. A reset (rebuild, new embedder)
    # writes a new file and renames it into place, so a reader holding the
    # old mapping keeps reading the old inode.

    def _vectors_current(self) -> bool:
        if self.embedder_version is None:
            return True
        top = self._c.execute("SELECT max(slot) FROM vec_rows").fetchone()[0]
        if top is not None and top >= self._rows_in_file():
            self.vectors_damaged = True  # truncated or lost: re-embed on this refresh
            return False
        return self.meta().get("embedder") == self.embedder_version and not self._c.execute(
            "SELECT 1 FROM memories WHERE vec_slot IS NULL AND text IS NOT NULL LIMIT 1"
        ).fetchone()

    def _reset_vectors(self) -> None:
        c = self._c
        c.execute("UPDATE memories SET vec_slot = NULL")
        c.execute("DELETE FROM vec_rows")
        self._drop_hnsw()
        name = f"vectors-{os.urandom(6).hex()}.i8"
        (self.directory / name).write_bytes(b"")
        c.execute(
            "INSERT INTO meta(key, value) VALUES ('vectors', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (name,),
        )
        c.execute(
            "INSERT INTO meta(key, value) VALUES ('embedder', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (self.embedder_version,),
        )

    def _embed_pending(self, *, reset: bool = False) -> int:
        """Embed every memory that has text and no vector yet, in batches."""
        if self.embedder_version is None or self._make_embedder is None:
            return 0
        c = self._c
        rows_in_file = self._rows_in_file()
        top = c.execute("SELECT max(slot) FROM vec_rows").fetchone()[0]
        if (reset or self.meta().get("embedder") != self.embedder_version
                or (top is not None and top >= rows_in_file)):
            self._reset_vectors()  # new model, rebuild, or a damaged file: re-embed all
            rows_in_file = 0
        pending = [
            (rowid, key, text, json.loads(entities), json.loads(tags))
            for rowid, key, text, entities, tags in c.execute(
                "SELECT rowid, key, text, entities, tags FROM memories "
                "WHERE vec_slot IS NULL AND text IS NOT NULL ORDER BY id")
        ]
        if not pending:
            return 0
        if self._embedder is None:
            self._embedder = self._make_embedder()
        with open(self.vec_path, "ab") as fh:
            if fh.tell() % self.dim:
                # A crash left half a row: pad it (never truncate under readers).
                fh.write(b"\0" * (self.dim - fh.tell() % self.dim))
            slot = fh.tell() // self.dim
            for start in range(0, len(pending), EMBED_BATCH):
                batch = pending[start : start + EMBED_BATCH]
                texts: list[str] = []
                owners: list[int] = []
                firsts: list[tuple[int, int]] = []
                for row in batch:
                    pieces = embed_chunks(*row[1:])
                    firsts.append((slot + len(texts), row[0]))
                    texts.extend(pieces)
                    owners.extend([row[0]] * len(pieces))
                fh.write(quantize_rows(self._embedder.embed(texts)))
                c.executemany(
                    "INSERT INTO vec_rows(slot, memory) VALUES (?, ?)",
                    [(slot + i, owner) for i, owner in enumerate(owners)],
                )
                c.executemany("UPDATE memories SET vec_slot = ? WHERE rowid = ?", firsts)
                slot += len(texts)
                if self.progress is not None:
                    self.progress("embedding memories", start + len(batch), len(pending))
            fh.flush()
            os.fsync(fh.fileno())
        return len(pending)

    # -- the HNSW index (hnswlib), for large corpora and long-lived processes --
    #
    # vectors.hnsw holds the graph, labels = vector slots; vectors.hnsw.json
    # says what it covers: the embedder, the number of slots (slots only grow,
    # so new rows are simply added) and the number of forgotten memories when
    # it was built (a new forget rebuilds it from the file, where the row is
    # zeroed). Both are written to temp files and renamed, so readers see an
    # old index or a new one, never half of one. Candidates from the graph are
    # re-ranked by exact cosine; only the candidate set is approximate.

    def _drop_hnsw(self) -> None:
        self._hnsw, self._hnsw_tag = None, None
        self.hnsw_path.unlink(missing_ok=True)
        Path(str(self.hnsw_path) + ".json").unlink(missing_ok=True)

    def _hnsw_wanted_tag(self, n: int) -> dict[str, object]:
        forgotten = self._c.execute(
            "SELECT count(*) FROM memories WHERE status = 'forgotten'"
        ).fetchone()[0]
        return {"embedder": self.embedder_version, "slots": n, "forgotten": forgotten,
                "vectors": self.vec_path.name}

    def _read_hnsw_tag(self) -> dict[str, object] | None:
        try:
            return json.loads(Path(str(self.hnsw_path) + ".json").read_text())  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    def _hnsw_for(self, n: int) -> Any:
        """A loaded index covering exactly the current ``n`` slots, or None."""
        want = self._hnsw_wanted_tag(n)
        if self._hnsw is not None and self._hnsw_tag == want:
            return self._hnsw
        tag = self._read_hnsw_tag()
        if tag == want:
            import hnswlib

            index = hnswlib.Index(space="cosine", dim=self.dim)
            index.load_index(str(self.hnsw_path))
            self._hnsw, self._hnsw_tag = index, tag
            return index
        if self.long_lived:
            self._start_hnsw_build(want, tag)
        return None

    def _start_hnsw_build(self, want: dict[str, object], have: dict[str, object] | None) -> None:
        import threading

        if self._hnsw_thread is not None and self._hnsw_thread.is_alive():
            return
        self._hnsw_thread = threading.Thread(
            target=self._build_hnsw, args=(want, have), name="gitmem-hnsw", daemon=True
        )
        self._hnsw_thread.start()

    def _build_hnsw(self, want: dict[str, object], have: dict[str, object] | None) -> None:
        """Bring the persisted index up to ``want`` (runs in a background thread)."""
        import hnswlib
        import numpy as np

        n = int(want["slots"])  # type: ignore[call-overload]
        index = hnswlib.Index(space="cosine", dim=self.dim)
        start = 0
        incremental = (
            have is not None
            and have.get("embedder") == want["embedder"]
            and have.get("vectors") == want["vectors"]
            and have.get("forgotten") == want["forgotten"]
            and int(have.get("slots", 0)) <= n  # type: ignore[call-overload]
        )
        if incremental:
            index.load_index(str(self.hnsw_path), max_elements=n)
            start = index.get_current_count()
        else:
            index.init_index(max_elements=max(n, 1), ef_construction=100, M=16, random_seed=100)
        index.set_num_threads(1)  # same rows in the same order, same graph
        # The file named in the tag, read in this thread (never the SQLite
        # connection, which belongs to the main thread).
        path = self.directory / str(want["vectors"])
        rows = np.fromfile(path, dtype=np.int8, count=n * self.dim).reshape(n, self.dim)
        for lo in range(start, n, 8192):
            hi = min(n, lo + 8192)
            index.add_items(rows[lo:hi].astype(np.float32), np.arange(lo, hi))
        token = os.urandom(16).hex()
        tmp = self.directory / f".{HNSW_NAME}.{token}"
        index.save_index(str(tmp))
        os.replace(tmp, self.hnsw_path)
        tmp_tag = self.directory / f".{HNSW_NAME}.json.{token}"
        tmp_tag.write_text(json.dumps(want, sort_keys=True))
        os.replace(tmp_tag, Path(str(self.hnsw_path) + ".json"))
        self._hnsw, self._hnsw_tag = index, want

    def _best_per_memory(
        self,
        slots: list[int],
        distance: Callable[[int], float],
        scope: Scope,
    ) -> list[tuple[float, str]]:
        """Candidate rows -> (best distance, memory id) per memory passing the filters."""
        marks = ",".join("?" * len(slots))
        # CROSS JOIN fixes the order: look rows up by slot, then their memory (the
        # planner would otherwise walk every active memory via the status index).
        sql = (f"SELECT r.slot, m.id FROM vec_rows r CROSS JOIN memories m ON m.rowid = r.memory "
               f"WHERE r.slot IN ({marks})")
        sql, args = _filters(sql, list(slots), scope)
        best: dict[str, float] = {}
        for slot, mid in self._c.execute(sql, args):
            d = round(distance(slot), 6)
            if d < best.get(mid, 2.0):
                best[mid] = d
        return sorted((d, mid) for mid, d in best.items())

    def wait_for_index(self, timeout: float | None = None) -> None:
        """Block until a background index build finishes (tests, benchmarks)."""
        if self._hnsw_thread is not None:
            self._hnsw_thread.join(timeout)

    def _hnsw_search(self, index: Any, query: bytes, n: int, limit: int,
                     scope: Scope) -> list[tuple[str, float]]:
        import numpy as np

        q = np.frombuffer(query, dtype=np.int8).astype(np.float32)
        want = max(limit * 4, 64)
        while True:
            k = min(want, n)
            index.set_ef(max(k, 200))
            labels, dists = index.knn_query(q, k=k)
            cand = [int(x) for x in labels[0]]
            dist = dict(zip(cand, (float(d) for d in dists[0])))
            hits = self._best_per_memory(cand, dist.__getitem__, scope)
            if len(hits) >= limit or k >= n:
                return [(mid, 1.0 - d) for d, mid in hits[:limit] if d < 1.0]
            want *= 8

    def _rows_in_file(self) -> int:
        try:
            return self.vec_path.stat().st_size // max(self.dim, 1)
        except FileNotFoundError:
            return 0

    def _zero_vector(self, slot: int | None) -> None:
        """Blank a forgotten memory's row (its content must not linger anywhere)."""
        if slot is None or not self.dim:
            return
        try:
            with open(self.vec_path, "r+b") as fh:
                fh.seek(slot * self.dim)
                fh.write(b"\0" * self.dim)
        except FileNotFoundError:
            pass

    @_guarded
    def vector(
        self,
        query: bytes,
        *,
        scope: Scope,
        limit: int,
    ) -> tuple[list[tuple[str, float]], tuple[float, float, int]]:
        """Exact cosine scan of the memory-mapped vectors: (memory id, cosine), best first,
        and (mean, standard deviation, count) of the cosines over every vector.

        ``query`` is an int8 vector (see quantize_rows). Candidates are taken
        best-first and filtered in SQL; if filters reject too many, the scan
        takes more candidates until ``limit`` pass or none are left.
        """
        import simsimd  # a SIMD kernel: scans 100k int8 rows in ~2 ms, no numpy

        none: tuple[list[tuple[str, float]], tuple[float, float, int]] = ([], (0.0, 0.0, 0))
        if not self.dim or len(query) != self.dim or not any(query):
            return none
        c = self._c
        c.execute("BEGIN")  # one snapshot: the rows, their slots and the file name agree
        try:
            return self._vector_in_snapshot(simsimd, query, scope, limit, none)
        finally:
            c.execute("COMMIT")

    def _vector_in_snapshot(
        self,
        simsimd: Any,
        query: bytes,
        scope: Scope,
        limit: int,
        none: tuple[list[tuple[str, float]], tuple[float, float, int]],
    ) -> tuple[list[tuple[str, float]], tuple[float, float, int]]:
        top = self._c.execute("SELECT max(slot) FROM vec_rows").fetchone()[0]
        if top is None:
            return none
        n = top + 1
        dist = self._distances(simsimd, query, n)
        if dist is None:
            return none  # replaced under us by a rebuild: lexical only this time
        use_hnsw = n >= (self.hnsw_warm_min if self.long_lived else self.hnsw_fresh_min)
        index = self._hnsw_for(n) if use_hnsw else None
        # How unusual a similarity is for this query in this corpus: static
        # embeddings give any two texts a sizeable cosine, so relevance is
        # judged against the spread. Over every non-zero row (zeroed rows are
        # forgotten or dropped memories, at distance exactly 1): a function of
        # the set of memories, not of the order they arrived in.
        zero = dist.count(1.0)  # every step here runs in C: ~1 ms for 100k rows
        live = n - zero
        if not live:
            return none
        mean = (sum(dist) - zero) / live
        std = max((sum(map(float.__mul__, dist, dist)) - zero) / live - mean * mean, 0.0) ** 0.5
        stats = (1.0 - mean, std, live)
        if index is not None:
            return self._hnsw_search(index, query, n, limit, scope), stats
        want = 2 * limit + 16  # slack for filtered-out rows and several rows per memory
        while True:
            cand = _smallest(dist, min(want, n))
            hits = self._best_per_memory(cand, dist.__getitem__, scope)
            if len(hits) >= limit or len(cand) >= n:
                return [(mid, 1.0 - d) for d, mid in hits[:limit] if d < 1.0], stats
            want *= 8

    def _apply_moves(
        self,
        source: LogSource,
        current: dict[str, str],
        stored: dict[str, str],
        report: RefreshReport,
    ) -> None:
        c = self._c
        gone = sorted(set(stored) - set(current))
        rewritten = [
            ref
            for ref, tip in sorted(current.items())
            if ref in stored and stored[ref] != tip and not source.is_ancestor(stored[ref], tip)
        ]
        for ref in gone + rewritten:
            if not self._drop_partition(ref):
                # A dropped forget may un-forget content we already scrubbed:
                # only a full replay can restore it correctly.
                self._clear()
                report.full_rebuild = True
                stored = {}
                break
        else:
            stored = {r: t for r, t in stored.items() if r not in gone and r not in rewritten}
        report.partitions_rewritten = len(rewritten)
        for ref, tip in sorted(current.items()):
            since = stored.get(ref)
            if since == tip:
                continue
            report.partitions_changed += 1
            partition = _partition(ref)
            last = 0
            if since is not None:
                row = c.execute("SELECT last_clock FROM partitions WHERE ref = ?", (ref,)).fetchone()
                last = row[0] if row else 0
            for pack in source.iter_packs(tip, since):
                commit = getattr(pack, "commit")
                data = getattr(pack, "data")
                if data is None:
                    self._skip(ref, commit, -1, None, getattr(pack, "error") or "unreadable")
                    report.ops_skipped += 1
                    continue
                for item in replay.decode_pack(data, partition):
                    if isinstance(item, replay.Decoded) and item.op.clock > last + ops.MAX_CLOCK_JUMP:
                        item = replay.Skip(item.line, f"implausible Lamport clock jump from {last} "
                                           f"to {item.op.clock} (bound {ops.MAX_CLOCK_JUMP})", item.id)
                    if isinstance(item, replay.Skip):
                        self._skip(ref, commit, item.line, item.id, item.reason)
                        report.ops_skipped += 1
                    else:
                        last = max(last, item.op.clock)
                        self._apply(ref, commit, item)
                        report.ops_applied += 1
                        if self.progress is not None and report.ops_applied % 500 == 0:
                            self.progress("replaying ops", report.ops_applied, None)
            c.execute(
                "INSERT INTO partitions(ref, tip, last_clock) VALUES (?, ?, ?) "
                "ON CONFLICT(ref) DO UPDATE SET tip = excluded.tip, last_clock = excluded.last_clock",
                (ref, tip, last),
            )
        for ref in gone:
            c.execute("DELETE FROM partitions WHERE ref = ?", (ref,))
        self._rekey_dirty()

    def _skip(self, ref: str, commit: str, line: int, oid: str | None, reason: str) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO skipped(ref, commit_id, line, op_id, reason) "
            "VALUES (?, ?, ?, ?, ?)",
            (ref, commit, line, oid, reason),
        )

    def _insert_op(self, ref: str, commit: str, d: replay.Decoded, target: str | None,
                   reason: str | None) -> bool:
        """Record an op; False if it was already known (set union)."""
        op = d.op
        cur = self._c.execute(
            "INSERT INTO ops(id, type, ref, commit_id, clock, at, tz, author_name, "
            "author_email, target, reason) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
            "ON CONFLICT(id) DO NOTHING",
            (d.id, ops.op_type(op), ref, commit, op.clock, op.at, op.tz,
             op.author.name, op.author.email, target, reason),
        )
        if cur.rowcount == 0:
            # The same op reached us twice: keep the smallest commit id so the
            # result does not depend on which copy came first.
            self._c.execute(
                "UPDATE ops SET commit_id = min(commit_id, ?) WHERE id = ?", (commit, d.id)
            )
            self._c.execute(
                "UPDATE memories SET commit_id = min(commit_id, ?) WHERE id = ?", (commit, d.id)
            )
            return False
        return True

    def _apply(self, ref: str, commit: str, d: replay.Decoded) -> None:
        op = d.op
        c = self._c
        if isinstance(op, ops.AddOp):
            if not self._insert_op(ref, commit, d, None, None):
                return
            m = op.memory
            # A replacement closes the old memory's validity when it starts.
            closes = m.valid_from if m.valid_from is not None else op.at
            for old in op.supersedes:
                c.execute(
                    "INSERT OR IGNORE INTO links(target, op, type, at, closes) "
                    "VALUES (?, ?, 'supersede', ?, ?)",
                    (old, d.id, op.at, closes),
                )
            c.execute(
                f"INSERT INTO memories({_MEMORY_COLS}, norm) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'active',NULL,NULL,NULL,NULL,?,NULL,?)",
                (d.id, m.kind, m.text, m.key, json.dumps(m.tags), json.dumps(m.entities),
                 m.importance, m.valid_from, m.valid_until, m.source, m.session,
                 m.anchors.commit, json.dumps(m.anchors.paths), json.dumps(op.supersedes),
                 ref, commit, op.clock, op.at, op.tz, op.author.name, op.author.email,
                 self._verdict(d.id, m), ops.text_hash(m.text)),
            )
            rowid = c.execute("SELECT rowid FROM memories WHERE id = ?", (d.id,)).fetchone()[0]
            c.execute(
                "INSERT INTO memories_fts(rowid, text, key, tags, entities) VALUES (?,?,?,?,?)",
                (rowid, m.text, m.key or "", " ".join(m.tags), " ".join(m.entities)),
            )
            # Ops that retire this memory may have arrived before it.
            if c.execute("SELECT 1 FROM links WHERE target = ? LIMIT 1", (d.id,)).fetchone():
                self._recompute(d.id)
            for old in op.supersedes:
                self._recompute(old)
            if m.key is not None:
                self._dirty_keys.add(m.key)
        elif isinstance(op, (ops.InvalidateOp, ops.ForgetOp)):
            if not self._insert_op(ref, commit, d, op.target, op.reason):
                return
            c.execute(
                "INSERT OR IGNORE INTO links(target, op, type, at, closes) VALUES (?, ?, ?, ?, ?)",
                (op.target, d.id, ops.op_type(op), op.at, op.at),
            )
            self._recompute(op.target)
        elif isinstance(op, ops.ConfirmOp):
            # Reinforcement only: counted by ranking straight from the ops table.
            self._insert_op(ref, commit, d, op.target, op.reason)

    def _rekey_dirty(self) -> None:
        """Recompute conflict winners once per key touched by this refresh (per op
        would be quadratic in the number of values a key has)."""
        for key in sorted(self._dirty_keys):
            self._rekey(key)
        self._dirty_keys.clear()

    def _rekey(self, key: str) -> None:
        """Mark the losers of a keyed conflict: among a key's active values, the
        greatest (clock, id) is current and the others are shadowed by it.

        A function of the set of values, so every clone picks the same winner
        whatever order the ops arrived in; a later set supersedes them all.
        """
        c = self._c
        live = [r[0] for r in c.execute(
            "SELECT id FROM memories WHERE key = ? AND status = 'active' "
            "AND quarantine IS NULL ORDER BY clock DESC, id DESC", (key,))]
        c.execute("UPDATE memories SET shadowed_by = NULL WHERE key = ? AND shadowed_by IS NOT NULL",
                  (key,))
        if len(live) > 1:
            c.executemany("UPDATE memories SET shadowed_by = ? WHERE id = ?",
                          [(live[0], loser) for loser in live[1:]])

    def _verdict(self, op_id: str, memory: ops.MemoryBody) -> str | None:
        """Why the gate would refuse this memory (None: it passes), cached by op id."""
        if self.quarantine_check is None:
            return None
        c = self._c
        if self._qv is None:
            self._qv = self.quarantine_version()
        row = c.execute(
            "SELECT reason FROM gate_verdicts WHERE op_id = ? AND version = ?",
            (op_id, self._qv),
        ).fetchone()
        if row is not None:
            return row[0]  # type: ignore[no-any-return]
        reason = self.quarantine_check(memory)
        c.execute(
            "INSERT OR REPLACE INTO gate_verdicts(op_id, version, reason) VALUES (?, ?, ?)",
            (op_id, self._qv, reason),
        )
        return reason

    def _recompute(self, memory_id: str) -> None:
        """Set a memory's status from every op that retires it (order-free)."""
        c = self._c
        row = c.execute(
            "SELECT rowid, status, key FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            return  # not replayed yet: its add will call us when it arrives
        rowid, old_status, key = row
        effects = [
            replay.Effect(op_id, typ, clock, at, tz, reason)
            for op_id, typ, clock, at, tz, reason in c.execute(
                "SELECT o.id, l.type, o.clock, o.at, o.tz, o.reason FROM links l "
                "JOIN ops o ON o.id = l.op WHERE l.target = ?",
                (memory_id,),
            )
        ]
        st = replay.fold_status(effects)
        by = st.by
        c.execute(
            "UPDATE memories SET status = ?, retired_by = ?, retired_at = ?, "
            "retired_tz = ?, retired_reason = ? WHERE rowid = ?",
            (st.status, by.op_id if by else None, by.at if by else None,
             by.tz if by else None, by.reason if by else None, rowid),
        )
        if st.status == "forgotten" and old_status != "forgotten":
            # Tombstone: scrub every content field, here and in the index.
            c.execute(
                "UPDATE memories SET text = NULL, key = NULL, tags = '[]', "
                "entities = '[]', source = NULL, session = NULL, paths = '[]', norm = NULL, "
                "shadowed_by = NULL "
                "WHERE rowid = ?",
                (rowid,),
            )
            c.execute("DELETE FROM memories_fts WHERE rowid = ?", (rowid,))
            self._scrubbed = True
            for (slot,) in c.execute("SELECT slot FROM vec_rows WHERE memory = ?", (rowid,)).fetchall():
                self._zero_vector(slot)
        if key is not None:
            self._dirty_keys.add(key)

    def _drop_partition(self, ref: str) -> bool:
        """Remove every row a partition contributed. False if a full replay is needed."""
        c = self._c
        if c.execute(
            "SELECT 1 FROM ops WHERE ref = ? AND type = 'forget' LIMIT 1", (ref,)
        ).fetchone():
            return False
        targets = [
            r[0]
            for r in c.execute(
                "SELECT DISTINCT l.target FROM links l JOIN ops o ON o.id = l.op "
                "WHERE o.ref = ?",
                (ref,),
            )
        ]
        c.execute(
            "DELETE FROM memories_fts WHERE rowid IN (SELECT rowid FROM memories WHERE ref = ?)",
            (ref,),
        )
        self._scrubbed = True  # a rewritten partition may have dropped content (a purge)
        for (slot,) in c.execute(
            "SELECT slot FROM vec_rows WHERE memory IN (SELECT rowid FROM memories WHERE ref = ?)",
            (ref,),
        ).fetchall():
            self._zero_vector(slot)  # orphaned rows must not weigh on anything
        c.execute(
            "DELETE FROM vec_rows WHERE memory IN (SELECT rowid FROM memories WHERE ref = ?)",
            (ref,),
        )
        keys = [r[0] for r in c.execute(
            "SELECT DISTINCT key FROM memories WHERE ref = ? AND key IS NOT NULL", (ref,))]
        c.execute("DELETE FROM memories WHERE ref = ?", (ref,))
        c.execute("DELETE FROM links WHERE op IN (SELECT id FROM ops WHERE ref = ?)", (ref,))
        c.execute("DELETE FROM ops WHERE ref = ?", (ref,))
        c.execute("DELETE FROM skipped WHERE ref = ?", (ref,))
        c.execute("DELETE FROM partitions WHERE ref = ?", (ref,))
        for t in targets:
            self._recompute(t)
        self._dirty_keys.update(keys)
        return True

    # -- queries ----------------------------------------------------------------

    @_guarded
    def resolve_prefix(self, prefix: str) -> list[str]:
        """Memory ids starting with ``prefix`` (at most 11, enough to report)."""
        hi = prefix + "g"  # 'g' sorts after every hex digit
        return [
            r[0]
            for r in self._c.execute(
                "SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT 11",
                (prefix, hi),
            )
        ]

    @_guarded
    def record(self, memory_id: str) -> Record | None:
        row = self._c.execute(
            f"SELECT {_MEMORY_COLS} FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        return _record(row) if row else None

    @_guarded
    def records(self, ids: Iterable[str]) -> dict[str, Record]:
        return {
            row[0]: _record(row)
            for row in self._by_ids(f"SELECT {_MEMORY_COLS} FROM memories WHERE id IN", ids)
        }

    def _by_ids(self, sql: str, ids: Iterable[object],
                prefix_args: list[object] | None = None) -> Iterator[tuple]:  # type: ignore[type-arg]
        """Rows of ``sql + (?, ?, ...)`` over ids, in chunks SQLite accepts."""
        ids = list(ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            yield from self._c.execute(f"{sql} ({','.join('?' * len(chunk))})",
                                       [*(prefix_args or []), *chunk])

    @_guarded
    def ops_touching(self, memory_id: str) -> list[OpInfo]:
        """The add op of a memory and every op that targets it, in replay order."""
        rows = self._c.execute(
            f"SELECT {_OP_COLS} FROM ops o LEFT JOIN memories m ON m.id = o.id "
            "WHERE o.id = ? OR o.target = ? OR o.id IN (SELECT op FROM links WHERE target = ?) "
            "ORDER BY o.clock, o.id",
            (memory_id, memory_id, memory_id),
        ).fetchall()
        return [_opinfo(r) for r in rows]

    @_guarded
    def log(self, limit: int | None = None, author: str | None = None) -> list[OpInfo]:
        """Ops in replay order; with ``limit``, the last ``limit`` of them."""
        where, args = "", []
        if author:
            where = "WHERE (o.author_name LIKE ? OR o.author_email LIKE ?)"
            args = [f"%{author}%", f"%{author}%"]
        sql = f"SELECT {_OP_COLS} FROM ops o LEFT JOIN memories m ON m.id = o.id {where} "
        if limit is not None:
            sql += "ORDER BY o.clock DESC, o.id DESC LIMIT ?"
            rows = self._c.execute(sql, [*args, limit]).fetchall()[::-1]
        else:
            rows = self._c.execute(sql + "ORDER BY o.clock, o.id", args).fetchall()
        return [_opinfo(r) for r in rows]

    @_guarded
    def lexical(
        self,
        match: str,
        *,
        scope: Scope,
        limit: int,
    ) -> list[tuple[str, float]]:
        """FTS5 bm25 candidates as (memory id, bm25); lower bm25 is better."""
        sql = (
            "SELECT m.id, bm25(memories_fts, 1.0, 0.6, 0.4, 0.4) AS r "
            "FROM memories_fts JOIN memories m ON m.rowid = memories_fts.rowid "
            "WHERE memories_fts MATCH ?"
        )
        args: list[object] = [match]
        sql, args = _filters(sql, args, scope)
        sql += " ORDER BY r, m.id LIMIT ?"
        args.append(limit)
        return [(r[0], float(r[1])) for r in self._c.execute(sql, args)]

    @_guarded
    def salience_inputs(
        self, ids: Iterable[str], until: int | None = None
    ) -> dict[str, tuple[str, float, int, int, int | None]]:
        """What salience needs of each memory: (kind, importance, recorded at,
        confirmations, time of the last one), counting confirm ops up to ``until``."""
        when = "" if until is None else " AND c.at <= ?"
        extra = [] if until is None else [until]
        out: dict[str, tuple[str, float, int, int, int | None]] = {}
        ids = list(ids)
        for i in range(0, len(ids), 400):
            chunk = ids[i : i + 400]
            marks = ",".join("?" * len(chunk))
            for mid, kind, imp, at, n, last in self._c.execute(
                "SELECT m.id, m.kind, m.importance, m.at, count(c.id), max(c.at) "
                f"FROM memories m LEFT JOIN ops c ON c.target = m.id AND c.type = 'confirm'{when} "
                f"WHERE m.id IN ({marks}) GROUP BY m.id",
                [*extra, *chunk],
            ):
                out[mid] = (kind, float(imp), int(at), int(n), last)
        return out

    @_guarded
    def keyed(self, scope: Scope, key: str | None = None) -> list[Record]:
        """Keyed memories under ``scope`` (one key, or every key), by key, newest first."""
        sql = f"SELECT {_MEMORY_COLS} FROM memories m WHERE m.key IS NOT NULL"
        args: list[object] = []
        if key is not None:
            sql += " AND m.key = ?"
            args.append(key)
        sql, args = _filters(sql, args, scope)
        sql += " ORDER BY m.key, m.clock DESC, m.id DESC"
        return [_record(r) for r in self._c.execute(sql, args)]

    @_guarded
    def top(self, scope: Scope, *, keyed: bool | None = None, limit: int = 200) -> list[Record]:
        """Memories under ``scope``, most important first, then newest (candidates
        for the context profile; the caller ranks them by salience)."""
        if len(scope.kinds) > 1:  # one indexed walk per kind, then merged
            rows = [r for kind in scope.kinds for r in self.top(
                dataclasses.replace(scope, kinds=(kind,)), keyed=keyed, limit=limit)]
            rows.sort(key=lambda r: (-r.importance, -r.clock, r.id))
            return rows[:limit]
        sql = f"SELECT {_MEMORY_COLS} FROM memories m WHERE 1 = 1"
        if keyed is not None:
            sql += " AND m.key IS NOT NULL" if keyed else " AND m.key IS NULL"
        sql, args = _filters(sql, [], scope)
        sql += " ORDER BY m.importance DESC, m.clock DESC, m.id LIMIT ?"
        return [_record(r) for r in self._c.execute(sql, [*args, limit])]

    @_guarded
    def standing(self, ids: Iterable[str]) -> dict[str, bool]:
        """For each id: is it current truth (active and not a conflict's loser)?"""
        return {mid: st == "active" and sh is None for mid, st, sh in self._by_ids(
            "SELECT id, status, shadowed_by FROM memories WHERE id IN", ids)}

    @_guarded
    def live_ids(self, ids: list[str], scope: Scope) -> list[str]:
        """Those of ``ids`` that are current under ``scope``."""
        sql, args = _filters("SELECT m.id FROM memories m WHERE m.id IN "
                             f"({','.join('?' * len(ids))})", list(ids), scope)
        return [r[0] for r in self._c.execute(sql, args)] if ids else []

    @_guarded
    def key_history(self, key: str) -> list[Record]:
        """Every memory ever recorded under ``key`` (forgotten ones have lost it), oldest first."""
        return [_record(r) for r in self._c.execute(
            f"SELECT {_MEMORY_COLS} FROM memories WHERE key = ? ORDER BY clock, id", (key,))]

    @_guarded
    def conflicted_keys(self) -> list[str]:
        """Keys that have more than one current value (a recorded conflict)."""
        return [r[0] for r in self._c.execute(
            "SELECT DISTINCT key FROM memories "
            "WHERE shadowed_by IS NOT NULL AND key IS NOT NULL ORDER BY key")]

    @_guarded
    def duplicate_of(self, text: str, kind: str, key: str | None) -> str | None:
        """The oldest current memory with the same normalised text, kind and key."""
        row = self._c.execute(
            "SELECT id FROM memories WHERE norm = ? AND kind = ? AND key IS ? "
            "AND status = 'active' AND quarantine IS NULL ORDER BY clock, id LIMIT 1",
            (ops.text_hash(text), kind, key),
        ).fetchone()
        return row[0] if row else None

    @_guarded
    def nearest(
        self, query: bytes, *, kind: str, min_cos: float, exclude: Iterable[str] = (),
        limit: int = 5,
    ) -> list[tuple[str, float]]:
        """Current memories of ``kind`` whose whole-text vector has cosine >= ``min_cos``
        with ``query`` (chunk vectors are not compared), best first."""
        import simsimd

        if not self.dim or len(query) != self.dim or not any(query):
            return []
        c = self._c
        c.execute("BEGIN")
        try:
            top = c.execute("SELECT max(slot) FROM vec_rows").fetchone()[0]
            if top is None:
                return []
            dist = self._distances(simsimd, query, top + 1)
            if dist is None:
                return []
            close = {i: d for i, d in enumerate(dist) if 1.0 - d >= min_cos - 1e-9 and d < 1.0}
            if not close:
                return []
            skip = set(exclude)
            found: list[tuple[float, str]] = []
            for mid, slot in self._by_ids(
                "SELECT id, vec_slot FROM memories WHERE kind = ? AND status = 'active' "
                "AND quarantine IS NULL AND key IS NULL AND vec_slot IN", list(close),
                prefix_args=[kind]
            ):
                if mid not in skip:
                    found.append((round(1.0 - close[slot], 6), mid))
            found.sort(key=lambda x: (-x[0], x[1]))
            return [(mid, cos) for cos, mid in found[:limit]]
        finally:
            c.execute("COMMIT")

    @_guarded
    def unembedded(
        self, kind: str, limit: int
    ) -> list[tuple[str, str | None, str, list[str], list[str]]] | None:
        """Current memories of ``kind`` without a vector yet: (id, key, text,
        entities, tags); None when there are more than ``limit``."""
        rows = self._c.execute(
            "SELECT id, key, text, entities, tags FROM memories WHERE vec_slot IS NULL "
            "AND text IS NOT NULL AND kind = ? AND status = 'active' AND quarantine IS NULL "
            "ORDER BY id LIMIT ?", (kind, limit + 1)).fetchall()
        if len(rows) > limit:
            return None
        return [(mid, key, text, json.loads(ents), json.loads(tags))
                for mid, key, text, ents, tags in rows]

    @_guarded
    def embedding_pending(self) -> int:
        """How many memories with text have no vector yet."""
        return int(self._c.execute(
            "SELECT count(*) FROM memories WHERE vec_slot IS NULL AND text IS NOT NULL"
        ).fetchone()[0])

    def _distances(self, simsimd: Any, query: bytes, n: int) -> list[float] | None:
        """Cosine distance from ``query`` to each of the first ``n`` vector rows of the
        memory-mapped file; None when the file is shorter (a rebuild replaced it)."""
        try:
            with open(self.vec_path, "rb") as fh:
                if os.fstat(fh.fileno()).st_size < n * self.dim:
                    return None
                mm = mmap.mmap(fh.fileno(), n * self.dim, access=mmap.ACCESS_READ)
        except (FileNotFoundError, ValueError):
            return None
        try:
            matrix = memoryview(mm).cast("b", shape=[n, self.dim])
            q = memoryview(query).cast("b")
            out = memoryview(simsimd.cdist(q, matrix, metric="cosine")).cast("B").cast("d").tolist()
            matrix.release()
            return out  # type: ignore[no-any-return]
        finally:
            mm.close()

    @_guarded
    def similar_pairs(
        self, *, min_cos: float, kinds: Iterable[str] = (), since: int | None = None,
        limit: int = 50,
    ) -> list[tuple[str, str, float]]:
        """Pairs of current memories of the same kind whose whole-text vectors have
        cosine >= ``min_cos``: (older id, newer id, cosine), most similar first.

        Exact: every pair is compared (with ``since``, only pairs with at least
        one memory recorded since then), about 2 s per 10k x 10k memories.
        """
        import numpy as np
        import simsimd

        c = self._c
        c.execute("BEGIN")
        try:
            sql = ("SELECT m.id, m.kind, m.vec_slot, m.at FROM memories m "
                   "WHERE m.vec_slot IS NOT NULL AND m.key IS NULL")  # keyed values replace
            sql, args = _filters(sql, [], Scope(kinds=tuple(kinds)))
            rows = c.execute(sql + " ORDER BY m.clock, m.id", args).fetchall()
            top = c.execute("SELECT max(slot) FROM vec_rows").fetchone()[0]
            if not rows or top is None:
                return []
            n = top + 1
            raw = np.fromfile(self.vec_path, dtype=np.int8, count=n * self.dim)
            if raw.size < n * self.dim:
                return []
            matrix = raw.reshape(n, self.dim)
        finally:
            c.execute("COMMIT")
        pairs: list[tuple[float, str, str]] = []
        by_kind: dict[str, list[tuple[str, int, int]]] = {}
        for mid, kind, slot, at in rows:
            by_kind.setdefault(kind, []).append((mid, slot, at))
        for members in by_kind.values():
            vecs = np.ascontiguousarray(matrix[[slot for _, slot, _ in members]])
            recent = [i for i, (_, _, at) in enumerate(members) if since is None or at >= since]
            for lo in range(0, len(recent), 256):
                block = recent[lo : lo + 256]
                dist = np.asarray(simsimd.cdist(vecs[block], vecs, metric="cosine"))
                for bi, j in zip(*np.nonzero(dist <= 1.0 - min_cos + 1e-9)):
                    i = block[bi]
                    if i == j:
                        continue
                    a, b = (i, j) if i < j else (j, i)
                    pairs.append((round(1.0 - float(dist[bi, j]), 6), members[a][0],
                                  members[b][0]))
        pairs = sorted(set(pairs), key=lambda p: (-p[0], p[1], p[2]))
        return [(a, b, cos) for cos, a, b in pairs[:limit]]

    @_guarded
    def neighbours(
        self, ids: list[str], *, scope: Scope
    ) -> dict[str, list[str]]:
        """For each memory with a session: the previous and next memory of that
        session in log order (clock, id) that pass the filters."""
        out: dict[str, list[str]] = {}
        c = self._c
        for mid in ids:
            row = c.execute("SELECT session, clock FROM memories WHERE id = ?", (mid,)).fetchone()
            if row is None or row[0] is None:
                continue
            session, clock = row
            found = []
            for cmp, order in ((">", "ASC"), ("<", "DESC")):
                sql = (
                    "SELECT m.id FROM memories m WHERE m.session = ? AND "
                    f"(m.clock {cmp} ? OR (m.clock = ? AND m.id {cmp} ?))"
                )
                sql, args = _filters(sql, [session, clock, clock, mid], scope)
                sql += f" ORDER BY m.clock {order}, m.id {order} LIMIT 1"
                r = c.execute(sql, args).fetchone()
                if r:
                    found.append(r[0])
            out[mid] = found
        return out

    @_guarded
    def counts(self) -> dict[str, object]:
        c = self._c
        by_type = dict(c.execute("SELECT type, count(*) FROM ops GROUP BY type").fetchall())
        by_status = dict(
            c.execute("SELECT status, count(*) FROM memories GROUP BY status").fetchall()
        )
        quarantined = c.execute(
            "SELECT count(*) FROM memories WHERE quarantine IS NOT NULL").fetchone()[0]
        if quarantined:
            by_status["quarantined"] = quarantined
        per_ref: dict[str, dict[str, object]] = {}
        for ref, name, email, n in c.execute(
            "SELECT ref, author_name, author_email, count(*) FROM ops "
            "GROUP BY ref, author_name, author_email ORDER BY ref, author_name, author_email"
        ):
            entry = per_ref.setdefault(_partition(ref), {"ops": 0, "authors": []})
            entry["ops"] = int(entry["ops"]) + n  # type: ignore[call-overload]
            entry["authors"].append(f"{name} <{email}>")  # type: ignore[union-attr]
        return {"ops": by_type, "memories": by_status, "per_partition": per_ref}

    @_guarded
    def skipped(self) -> list[Skipped]:
        return [
            Skipped(partition=_partition(ref), commit=commit, line=line, id=oid, reason=reason)
            for ref, commit, line, oid, reason in self._c.execute(
                "SELECT ref, commit_id, line, op_id, reason FROM skipped "
                "ORDER BY ref, commit_id, line"
            )
        ]

    @_guarded
    def meta(self) -> dict[str, str]:
        return dict(self._c.execute("SELECT key, value FROM meta").fetchall())

    @_guarded
    def dump(self) -> str:
        """Every row that carries meaning, in a canonical order (for tests)."""
        c = self._c
        out: list[str] = []
        queries = [
            ("partitions", "SELECT ref, tip, last_clock FROM partitions ORDER BY ref"),
            ("ops", "SELECT * FROM ops ORDER BY id"),
            ("links", "SELECT target, op, type, at, closes FROM links ORDER BY target, op"),
            ("memories", f"SELECT {_MEMORY_COLS}, norm FROM memories ORDER BY id"),
            ("fts", "SELECT m.id, f.text, f.key, f.tags, f.entities FROM memories_fts f "
                    "JOIN memories m ON m.rowid = f.rowid ORDER BY m.id"),
            ("skipped", "SELECT * FROM skipped ORDER BY ref, commit_id, line"),
        ]
        for name, sql in queries:
            for row in c.execute(sql):
                out.append(name + " " + json.dumps(list(row), ensure_ascii=False))
        return "\n".join(out) + "\n"


_OP_COLS = (
    "o.id, o.type, o.ref, o.commit_id, o.clock, o.at, o.tz, o.author_name, "
    "o.author_email, o.target, o.reason, m.text"
)


@dataclass(frozen=True)
class Scope:
    """Which memories a query may return.

    By default: current truth (active, not the losing value of a keyed
    conflict) and not quarantined. ``as_of`` (unix seconds) answers with what
    the log believed then: memories recorded by then and not yet retired then.
    ``valid_at`` answers with what was true in the world then: validity
    intervals, closed by replacements and retirements. Both may be combined.
    """

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    retired: bool = False  # also invalidated, superseded and losing values
    quarantined: bool = False  # also memories the write gate would refuse
    as_of: int | None = None
    valid_at: int | None = None
    shadow: bool = True  # hide losing values of keyed conflicts
    # Current truth also leaves out what expired (valid_until) before ``now``.
    now: int | None = None


def _live(a: str, scope: Scope) -> tuple[str, list[object]]:
    """SQL on memory alias ``a``: current under ``scope`` (conflicts aside)."""
    conds = [f"{a}.status != 'forgotten'"]
    args: list[object] = []
    if not scope.quarantined:
        conds.append(f"{a}.quarantine IS NULL")
    if scope.as_of is None and scope.valid_at is None:
        if not scope.retired:
            conds.append(f"{a}.status = 'active'")
            if scope.now is not None:
                conds.append(f"({a}.valid_until IS NULL OR {a}.valid_until > ?)")
                args.append(scope.now)
        return " AND ".join(conds), args
    known = ""  # retirements the log knew of at as_of (all of them without it)
    if scope.as_of is not None:
        conds.append(f"{a}.at <= ?")
        args.append(scope.as_of)
        known = " AND l.at <= ?"
        if not scope.retired:
            conds.append("NOT EXISTS (SELECT 1 FROM links l WHERE l.target = "
                         f"{a}.id AND l.type != 'forget' AND l.at <= ?)")
            args.append(scope.as_of)
    if scope.valid_at is not None and scope.retired:
        # --all: whatever its own interval covers, retired since or not.
        conds.append(f"coalesce({a}.valid_from, {a}.at) <= ? AND "
                     f"({a}.valid_until IS NULL OR ? < {a}.valid_until)")
        args.extend([scope.valid_at, scope.valid_at])
    if scope.valid_at is not None and not scope.retired:
        w = scope.valid_at
        conds.append(f"coalesce({a}.valid_from, {a}.at) <= ? AND "
                     f"({a}.valid_until IS NULL OR ? < {a}.valid_until) AND "
                     f"NOT EXISTS (SELECT 1 FROM links l WHERE l.target = {a}.id "
                     f"AND l.closes <= ?{known})")
        args.extend([w, w, w] + ([scope.as_of] if known else []))
    return " AND ".join(conds), args


def _filters(sql: str, args: list[object], scope: Scope) -> tuple[str, list[object]]:
    """Append the conditions of ``scope`` on alias ``m`` to ``sql``."""
    live, live_args = _live("m", scope)
    sql += " AND " + live
    args.extend(live_args)
    if scope.shadow and not scope.retired:
        if scope.as_of is None and scope.valid_at is None:
            sql += " AND m.shadowed_by IS NULL"
        else:
            # The winner of a key is recomputed among the values live then.
            inner, inner_args = _live("m2", scope)
            sql += (" AND (m.key IS NULL OR NOT EXISTS (SELECT 1 FROM memories m2 "
                    "WHERE m2.key = m.key AND (m2.clock > m.clock OR "
                    f"(m2.clock = m.clock AND m2.id > m.id)) AND {inner}))")
            args.extend(inner_args)
    if scope.kinds:
        sql += f" AND m.kind IN ({','.join('?' * len(scope.kinds))})"
        args.extend(scope.kinds)
    for tag in scope.tags:
        sql += " AND EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)"
        args.append(tag)
    return sql, args


def _record(row: tuple) -> Record:  # type: ignore[type-arg]
    (mid, kind, text, key, tags, entities, importance, vfrom, vuntil, source, session,
     anchor_commit, paths, supersedes, ref, commit, clock, at, tz, aname, aemail,
     status, retired_by, retired_at, retired_tz, retired_reason, quarantine, shadowed_by) = row
    return Record(
        id=mid, kind=kind, text=text, key=key, tags=json.loads(tags),
        entities=json.loads(entities), importance=importance,
        valid_from=iso(vfrom, tz) if vfrom is not None else None,
        valid_until=iso(vuntil, tz) if vuntil is not None else None,
        source=source, session=session,
        anchors=Anchor(commit=anchor_commit, paths=json.loads(paths)),
        supersedes=json.loads(supersedes), author=aname, author_email=aemail,
        partition=_partition(ref), clock=clock, recorded_at=iso(at, tz) or "",
        status=status, retired_at=iso(retired_at, retired_tz or 0),
        retired_by=retired_by, retired_reason=retired_reason, commit=commit,
        quarantine=quarantine, conflict_with=shadowed_by,
    )


def _opinfo(row: tuple) -> OpInfo:  # type: ignore[type-arg]
    (oid, typ, ref, commit, clock, at, tz, aname, aemail, target, reason, text) = row
    summary = None
    if typ == "add" and text:
        summary = text.strip().splitlines()[0][:120] if text.strip() else ""
    return OpInfo(
        id=oid, type=typ, author=aname, author_email=aemail, partition=_partition(ref),
        clock=clock, recorded_at=iso(at, tz) or "", commit=commit, target=target,
        reason=reason, summary=summary,
    )


def _smallest(values: list[float], k: int) -> list[int]:
    """Indices of the k smallest values (all ties at the cut included), in C-speed steps."""
    if k >= len(values):
        return list(range(len(values)))
    cut = heapq.nsmallest(k, values)[-1]  # floats compare in C: no key function
    return [i for i, v in enumerate(values) if v <= cut]


class Usage:
    """This clone's record of which memories recall handed out: a salience signal.

    Local and never pushed (what one agent looked at is nobody else's
    business), and kept beside the projection rather than in it, so deleting
    the projection and replaying still gives identical answers. Failures
    never break a read: they leave ``error`` set and the signal out.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=0.5, isolation_level=None)
            conn.execute("PRAGMA journal_mode = WAL")
            # A weak, local signal: losing the last uses to a power cut is fine,
            # paying an fsync on every recall is not.
            conn.execute("PRAGMA synchronous = OFF")
            conn.execute("CREATE TABLE IF NOT EXISTS uses(memory TEXT PRIMARY KEY, "
                         "count INTEGER NOT NULL, last INTEGER NOT NULL) WITHOUT ROWID")
            self._conn = conn
        return self._conn

    def read(self, ids: Iterable[str]) -> dict[str, tuple[int, int]]:
        """memory id -> (times returned, last time)."""
        if not self.path.exists():
            return {}
        out: dict[str, tuple[int, int]] = {}
        try:
            ids = list(ids)
            for i in range(0, len(ids), 400):
                chunk = ids[i : i + 400]
                for mid, n, last in self._db().execute(
                    f"SELECT memory, count, last FROM uses WHERE memory IN "
                    f"({','.join('?' * len(chunk))})", chunk,
                ):
                    out[mid] = (int(n), int(last))
        except sqlite3.Error as exc:
            self.error = f"usage record unreadable ({exc}); ranked without it"
            return {}
        return out

    def record(self, ids: Iterable[str], at: int) -> None:
        rows = [(mid, at) for mid in dict.fromkeys(ids)]
        if not rows:
            return
        try:
            db = self._db()
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO uses(memory, count, last) VALUES (?, 1, ?) ON CONFLICT(memory) "
                    "DO UPDATE SET count = count + 1, last = max(last, excluded.last)", rows)
                db.execute("COMMIT")
            except BaseException:
                _rollback(db)
                raise
        except sqlite3.Error as exc:
            self.error = f"could not record use ({exc})"

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
