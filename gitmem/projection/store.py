"""``Projection``: one clone's disposable projection, composed of the package's parts.

The projection is a cache of the fold over every op in ``refs/memory/*``. It
lives in ``<git-common-dir>/mem/cache/`` and can be deleted at any time: the
next read rebuilds it. It stores, per partition ref, the tip it has replayed,
so a refresh costs one ref listing when nothing moved and replays only the new
commits when something did.

Why this module: front ends and recall need one object with one lifecycle
(open, refresh, query, close). It owns the connection and the transactions;
the work is done by its collaborators: ``tables`` and ``connection`` (the
file), ``refresh`` (a refresh that found something moved: the replay and the
embedding, in one transaction), ``fold`` (the SQL that writes), ``queries``
(the SQL that reads), ``vectors`` (the int8 file and its exact scan) and
``similar`` (memories close to one another). The rules themselves live in
``gitmem.replay``. ``dump()`` prints the state canonically for tests.
"""

from __future__ import annotations

import gc
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from ..model import RefreshReport
from . import code, connection, firstpass, graph, marks, queries, signals, tables
from . import lexical as lexical_channel
from .damage import ProjectionCorrupt, guarded, guarded_read
from .marks import RefsMark
from .tables import DB_NAME
from .scope import Scope
from . import distances
from .distances import spread
from .vectors import DocEmbedder, VectorFile, exact_hits, has_pending, skips, top_slot

# From this many vector rows, a process that scans more than once loads numpy for
# the candidate pick (distances.smallest): below it, heapq is as fast as the import is long.
NUMPY_FROM = 20_000

if TYPE_CHECKING:
    from .logsource import LogSource
    from .verdicts import Carried

P = ParamSpec("P")
R = TypeVar("R")


def _query(fn: Callable[Concatenate[sqlite3.Connection, P], R]) -> Callable[Concatenate[Projection, P], R]:
    """``fn`` of ``gitmem.projection.queries`` as a method: run on the open
    connection, any failure to read raised as ProjectionCorrupt (see
    ``damage.damage``). (Type checkers see ``fn``'s parameters; ``help()``
    shows its docstring.)"""

    def method(self: Projection, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return fn(self._c, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__qualname__ = f"Projection.{fn.__name__}"
    method.__doc__ = fn.__doc__
    return guarded_read(method)


def _kept_query(fn: Callable[Concatenate[sqlite3.Connection, P], R]
                ) -> Callable[Concatenate[Projection, P], R]:
    """As ``_query``, for a query that keeps what it read while the tables are
    unchanged (its ``kept`` argument: the projection's queries.Kept)."""

    def method(self: Projection, /, *args: P.args, **kwargs: P.kwargs) -> R:
        kwargs.setdefault("kept", self._kept)
        return fn(self._c, *args, **kwargs)

    method.__name__ = fn.__name__
    method.__qualname__ = f"Projection.{fn.__name__}"
    method.__doc__ = fn.__doc__
    return guarded_read(method)


# Below this much pack data a refresh embeds by itself: the child's ~100 ms of
# loading would not hide behind a replay that short (~350 ordinary ops).
AHEAD_BYTES = 128 * 1024
# Below this much a refresh judges every op itself (~400 ordinary ops: the fork and
# the child's decoding would save a few milliseconds).
GATE_AHEAD_BYTES = 128 * 1024


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Projection:
    """One clone's projection file and every query on it."""

    def __init__(
        self,
        directory: Path,
        *,
        embedder_version: str | None = None,
        embedder_dim: int = 0,
        make_embedder: Callable[[int], DocEmbedder] | None = None,
        embedder_loaded: Callable[[], bool] = lambda: False,
        one_shot: bool = False,
    ) -> None:
        self.directory = directory
        # This process ends with os._exit once its command is done (the git-mem
        # program; the api's Store option): close() leaves the connection open
        # until then (connection.release). False: a host, which closes what it opens.
        self.one_shot = one_shot
        if one_shot:
            distances.ends_without_teardown()
        self.path = directory / DB_NAME
        # Vectors are optional: without an embedder the projection is lexical only.
        self.embedder_version = embedder_version
        self._make_embedder = make_embedder
        self._embedder_loaded = embedder_loaded
        # Pack bytes from which a refresh embeds the new memories in a forked child
        # while it replays them (ahead.py); None: never.
        self.ahead_bytes: int | None = AHEAD_BYTES
        # Pack bytes from which a refresh has the second half of the ops judged by the
        # write gate in a forked child while it replays the first (gateahead.py).
        self.gate_ahead_bytes: int | None = GATE_AHEAD_BYTES
        self._vectors = VectorFile(directory, embedder_dim)
        # The write gate, applied to replayed memories too (injected by the api so
        # the projection does not depend on it): a reason, or None when it passes.
        self.quarantine_check: Callable[[Any], str | None] | None = None
        self.quarantine_version: Callable[[], str] = lambda: ""  # asked only when replaying
        # Verdicts carried to the next replay from rows it replaces (verdicts.Verdicts).
        self._carried: Carried = {}
        # Vector rows by text, made before the refresh that needs them (keep_rows).
        self._kept_rows: dict[str, bytes] = {}
        # What some queries read, kept while the tables are unchanged (queries.Kept).
        self._kept = queries.Kept()
        self.long_lived = False  # set by long-lived front ends (the MCP server)
        self._scans = 0  # vector scans this process has run
        self.numpy_from = NUMPY_FROM  # rows from which a repeat scanner loads numpy
        self.conn: sqlite3.Connection | None = None
        # (device, inode) of the file the connection opened: see replaced().
        self._identity: tuple[int, int] | None = None
        self.created = False  # True when open() had to make a new file
        self.vectors_damaged = False
        self.reset_reason: str | None = None
        # The write-ahead log may hold forgotten content's old pages (connection.LOG_SCRUB).
        self._log_scrub = False
        # Long refreshes report (what, done, total or None) here; front ends draw it.
        self.progress: Callable[[str, int, int | None], None] | None = None

    @property
    def dim(self) -> int:
        """Bytes (int8 components) per vector; 0 without an embedder."""
        return self._vectors.dim

    @dim.setter
    def dim(self, value: int) -> None:
        self._vectors.dim = value

    # -- lifecycle ----------------------------------------------------------------

    @guarded
    def open(self) -> None:
        """Open (creating or resetting as needed).

        Raises ProjectionCorrupt when the files cannot be used as they are
        (the caller deletes them with ``destroy`` and opens again), and
        ProjectionUnwritable when the directory cannot be written."""
        self.close()
        self.directory.mkdir(parents=True, exist_ok=True)  # a file there: damage
        self.created = not self.path.exists()
        self.conn = connection.connect(self.path)
        self._identity = _identity(self.path)
        have = tables.read_meta(self.conn)
        if not tables.meta_current(have):
            want = tables.wanted_meta()
            if have:
                self.reset_reason = "projection schema changed"
            if not tables.reset(self._c, want):
                self.reset_reason = None  # another process rebuilt it while we waited
        else:
            tables.check(self._c)
        self._log_scrub = connection.LOG_SCRUB in have
        if self._log_scrub:  # a scrub's checkpoint was held back or cut short: finish it
            self._log_scrub = not connection.empty_log(self._c, scrub=True, wait=False)

    @guarded
    def destroy(self) -> None:
        """Delete every file of the projection, whatever state they are in (a
        cache path that is a file, a database that is a directory, ...)."""
        import shutil  # damage only: off the read path

        gc.collect()  # finalise the failed query's cursors while the connection is open
        self.close(park=False)  # its files go next: nothing of them may stay open
        d = self.directory
        if d.is_symlink() or (d.exists() and not d.is_dir()):
            d.unlink()
            return
        if not d.exists():
            return
        for f in d.iterdir():
            if f.is_dir() and not f.is_symlink():
                shutil.rmtree(f)
            else:
                f.unlink(missing_ok=True)

    def intact(self, *, pages_only: bool = False) -> bool:
        """SQLite's full check of the file: every page, and every index against
        its table (a byte flipped inside a row shows as a row missing from an
        index). Slow (a scan of everything): asked only after a failure that
        nothing else explains. ``pages_only``: the structure of every page, not
        indexes against tables (quick_check; whether the file can be written in
        place)."""
        check = "quick_check" if pages_only else "integrity_check"
        try:
            return self._c.execute(f"PRAGMA {check}(1)").fetchall() == [("ok",)]
        except (sqlite3.DatabaseError, UnicodeError, RuntimeError):
            return False

    def copy_into(self, target: Path) -> bool:
        """Copy the projection's files (database, write-ahead log, vector file)
        into the empty directory ``target``, as a starting point a reader can
        bring up to date when this one cannot be written. False when there was
        nothing readable to copy (the copy is checked when opened)."""
        import shutil  # a read-only .git only

        copied = False
        names = [DB_NAME, DB_NAME + "-wal"]
        try:
            # (With the first pass's files: made again they take ~11 s at 1M rows.)
            names += sorted(f.name for f in self.directory.glob("vectors*")
                            if f.suffix in (".i8", ".sign", ".moments"))
        except OSError:
            pass
        for name in names:
            try:
                shutil.copyfile(self.directory / name, target / name)
                copied = copied or name == DB_NAME
            except OSError:
                continue
        return copied

    @guarded_read
    def gate_verdicts(self) -> list[tuple[str, str, str | None]]:
        """Every cached verdict of the write gate: (op id, gate version, reason)."""
        rows = self._c.execute(
            "SELECT m.id, v.version, m.quarantine FROM memories m "
            "JOIN gate_versions v ON v.id = m.gate UNION ALL "
            "SELECT lower(hex(g.op)), v.version, g.reason FROM gate_verdicts g "
            "JOIN gate_versions v ON v.id = g.version").fetchall()
        return [(str(o), str(v), None if r is None else str(r)) for o, v, r in rows]

    def keep_verdicts(self, rows: list[tuple[str, str, str | None]]) -> None:
        """Verdicts (as ``gate_verdicts`` returns them, from the file a rebuild
        replaces) for the next refresh of this object to use."""
        self._carried.update((op, (version, reason)) for op, version, reason in rows)

    def keep_rows(self, rows: dict[str, bytes]) -> None:
        """Vector rows by embedded text (``DocEmbedder.doc_rows`` rows of an exact
        embedder, each a pure function of its text), made ahead of the refresh
        that embeds their memories (a bulk import embeds on the other core while
        it writes): that refresh takes them instead of embedding those texts,
        and forks no child of its own (ahead.py). ``rows`` is only asked ``in``
        and ``[]`` (it may be a view over a file); it replaces rows kept before."""
        self._kept_rows = rows

    def replaced(self) -> bool:
        """The file at ``path`` is no longer the one this connection reads: another
        process deleted the projection (``rebuild`` of a damaged file, ``rm -rf``)
        and maybe built a new one. A long-lived reader (the MCP server) would go
        on answering from the deleted file, and writing its refreshes there, for
        as long as it lives; it reopens instead (one stat per read)."""
        return self.conn is not None and _identity(self.path) != self._identity

    def close(self, *, park: bool = True) -> None:
        """Close the file; a ``one_shot`` projection parks it open instead, unless
        ``park`` is False (connection.release)."""
        self._vectors.close()
        if self.conn is not None:
            try:
                # With forgotten content maybe still in the log, close: the last
                # connection to close checkpoints it and deletes it.
                if park and not self._log_scrub:
                    connection.release(self.conn, self.path, one_shot=self.one_shot)
                else:
                    self.conn.close()
            finally:
                self.conn = None

    def _wal_bytes(self) -> int:
        try:
            return os.path.getsize(f"{self.path}-wal")
        except OSError:
            return 0

    @property
    def vec_path(self) -> Path:
        """The vector file of the current generation (named in meta, so a reset
        and the slots that refer to it commit or roll back together)."""
        return self._vectors.path(self._c)

    @property
    def _c(self) -> sqlite3.Connection:
        if self.conn is None:
            raise RuntimeError("projection is not open")
        return self.conn

    # -- refresh --------------------------------------------------------------

    @guarded_read
    def refs_mark(self) -> str | None:
        """The mark of the refs the replayed tips are the listing of (marks.py), or None."""
        return marks.recorded(self._c)

    @guarded
    def set_shallow_cut(self, value: list[str]) -> None:
        c = self._c
        c.execute("BEGIN IMMEDIATE")
        try:
            marks.set_shallow_cut(c, value)
            c.execute("COMMIT")
        except BaseException:
            connection.rollback(c)
            raise

    @guarded
    def refresh(self, source: LogSource, *, full: bool = False, embed: bool = True,
                deadline: float | None = None, mark: RefsMark | None = None,
                budget: bool = False) -> RefreshReport:
        """Bring the projection up to the refs; replay only what moved.

        ``embed=False`` replays without embedding new memories (a writer's quick
        look before appending): their rows stay pending until the next read.
        ``deadline`` (time.monotonic) bounds the work: what was replayed by then
        is committed and ``report.complete`` is False; the next refresh resumes.
        ``budget``: the deadline is a front end's (fold.apply_moves): even a first
        commit that would overrun it is left for later.
        ``mark``: what the refs are made of now (see RefsMark): with it, only the
        refs it names are listed and compared, and it is recorded once the
        replayed tips are what it stands for.
        """
        start = time.perf_counter()
        report = RefreshReport(full_rebuild=full)
        recorded = self.refs_mark() if mark is not None else None
        only = marks.narrowed(mark, full, recorded)
        current, stored = marks.listing(self.watermarks, source, only)
        if not full and current == stored and (not embed or self._vectors_current()) and (
                mark is None or recorded == mark.value or not mark.expected(current, only)):
            return report  # the common case: nothing moved, nothing walked
        if not tables.meta_current(tables.read_meta(self._c)):
            # Another process rebuilt the file under another schema or thesaurus since
            # this one opened it (a long-lived server after an upgrade): e.g. the words
            # its rows were indexed with are not ours, and FTS5 deletes a row by its
            # words as they were indexed. Start again under ours, as open() does.
            self.open()
            if tables.meta_current(tables.read_meta(self._c)):
                return self.refresh(source, full=True, embed=embed, deadline=deadline,
                                    mark=mark, budget=budget)
            raise ProjectionCorrupt("another process keeps rebuilding the projection under "
                                    "another schema or thesaurus")
        from .refresh import replay_moved  # here: a read that finds nothing moved never loads it

        return replay_moved(self, source, report, start, current, stored, full=full, embed=embed,
                            deadline=deadline, mark=mark, budget=budget)

    # -- vectors --------------------------------------------------------------

    def _vectors_current(self) -> bool:
        """Nothing for a refresh to do about vectors (a read asks before it takes the
        write lock). Only a hint: without the lock another writer may be between its
        steps (a new generation committed, the one it replaced deleted, a row blanked
        in place), so a file that looks damaged from here sends the read into a
        refresh, where ``refresh._embed_pending`` looks again under the lock and alone says
        it is damaged. (Said from here, a rebuild landing between two reads was
        reported as damage, and nothing was embedded again.)"""
        if self.embedder_version is None:
            return True
        c = self._c
        c.execute("BEGIN")  # one snapshot: the top slot, the file it names and its stamps
        try:
            return (not self._vectors.damaged(c)
                    and self.meta().get("embedder") == self.embedder_version
                    and not has_pending(c) and self._vectors.first_pass_current(c))
        finally:
            connection.rollback(c)  # (a read: nothing to commit)

    def take_notices(self) -> list[str]:
        """One-line warnings about the vector files since last asked (sidecars.py)."""
        return self._vectors.take_notices()

    @guarded_read
    def forked(self, ids: list[str]) -> dict[str, list[str]]:
        """For each of ``ids`` in a fork, the fork's other heads (forks.py, loaded only
        when a hit replaced something: a read rarely needs it)."""
        from . import forks
        return forks.heads(self._c, ids)

    @guarded_read
    def forks(self) -> list[tuple[str, list[str]]]:
        """Every fork: its fork point and heads (forks.py)."""
        from . import forks
        return forks.all_forks(self._c)

    @guarded_read
    def all_embedded(self) -> bool:
        """Every memory with text has its vector: the vector channel sees them all
        (not so while a read under a deadline, or a new embedder, leaves some waiting)."""
        return not has_pending(self._c)

    @guarded_read
    def vector(
        self,
        query: bytes,
        *,
        scope: Scope,
        limit: int,
    ) -> tuple[list[tuple[str, float]], tuple[float, float, int]]:
        """Exact cosine scan of the memory-mapped vectors: (memory id, cosine), best first,
        and (mean, standard deviation, count) of the cosines over the vectors of the
        memories current at the point ``scope`` asks about (vectors.unseen_slots).

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
            top = top_slot(c)
            if top is None:
                return none
            n = top + 1
            self._scans += 1
            if n >= self.numpy_from and (self.long_lived or self._scans > 1):
                # A process that keeps asking (the MCP server, a library user) pays
                # numpy's import once and picks candidates ~4x faster from then on;
                # a one-shot CLI process never does. Same hits either way.
                import numpy  # noqa: F401
            if n >= firstpass.FIRST_PASS_FROM:  # sign bits, then the best rows exactly (firstpass.py)
                found = self._vectors.first_pass_hits(c, simsimd, query, n, scope, limit)
                gone = self._vectors.unseen.slots(c, scope) if found is not None else []
                if gone and found is not None:
                    # Each row left out is read (a pread a row): past as many as the
                    # first pass rescores, the exact scan is cheaper (it sets them aside
                    # in one pass; 50k of 100k rows left out: ~190 ms of reads, load ~4).
                    stats = (self._vectors.first_pass_spread(c, query, n, gone)
                             if len(gone) <= firstpass.candidate_count(n) else None)
                    found = (found[0], stats) if stats is not None else None
                if found is not None:
                    return found
            dist = self._vectors.distances(c, simsimd, query, n)
            if dist is None:
                return none  # replaced under us by a rebuild: no vector channel this time
            # Over the corpus, not just the hits: the memories current at the point
            # asked about, without a key's replaced values (vectors.unseen_slots).
            gone = self._vectors.unseen.slots(c, scope)
            stats = spread(dist, n, gone)
            if stats is None:
                return none
            return exact_hits(c, dist, n, scope, limit, gone if skips(scope) else None), stats
        finally:
            c.execute("COMMIT")

    @guarded
    def set_code_states(self, head: str, states: dict[Any, Any], *,
                        complete: bool = True) -> None:
        """Replace how every code anchor compares with HEAD (computed by the api)."""
        c = self._c
        c.execute("BEGIN IMMEDIATE")
        try:
            code.set_code_states(c, head, states, complete=complete)
            c.execute("COMMIT")
        except BaseException:
            connection.rollback(c)
            raise

    @guarded_read
    def nearest(
        self, query: bytes, *, kind: str, min_cos: float, exclude: Iterable[str] = (),
        limit: int = 5,
    ) -> list[tuple[str, float]]:
        """Current memories of ``kind`` whose whole-text vector has cosine >= ``min_cos``
        with ``query`` (chunk vectors are not compared), best first."""
        from .similar import nearest  # (dedup and similar only: not on a plain read)

        return nearest(self._vectors, self._c, query, kind=kind, min_cos=min_cos,
                       exclude=exclude, limit=limit)

    @guarded_read
    def similar_pairs(
        self, *, min_cos: float, kinds: Iterable[str] = (), since: int | None = None,
        limit: int = 50,
    ) -> list[tuple[str, str, float]]:
        """Pairs of current memories of the same kind whose whole-text vectors have
        cosine >= ``min_cos``: (older id, newer id, cosine), most similar first.

        Exact: every pair is compared (with ``since``, only pairs with at least
        one memory recorded since then), about 2 s per 10k x 10k memories.
        """
        from .similar import similar_pairs

        return similar_pairs(self._vectors, self._c, min_cos=min_cos, kinds=kinds,
                             since=since, limit=limit)

    # -- queries (gitmem.projection.queries, on this connection) ----------------

    watermarks = _query(queries.watermarks)
    shallow_cut = _query(marks.shallow_cut)  # the memory commits a shallow fetch cut (marks.SHALLOW_KEY)
    clock_bounds = _query(queries.clock_bounds)
    meta = _query(queries.meta)
    resolve_prefix = _query(queries.resolve_prefix)
    record = _query(queries.record)
    records = _query(queries.records)
    ops_touching = _query(queries.ops_touching)
    log = _query(queries.log)
    lexical = _kept_query(lexical_channel.lexical)
    size = _query(queries.size)
    term_frequencies = _kept_query(signals.term_frequencies)
    term_presence = _query(signals.term_presence)
    browse = _query(queries.browse)
    code_head = _query(code.code_head)
    code_anchor_rows = _query(code.code_anchor_rows)
    code_states = _query(code.code_states)
    partial_code_states = _query(code.partial_code_states)
    anchored_to = _query(code.anchored_to)
    ties = _query(code.ties)
    bootstrapped = _query(code.bootstrapped)
    current_anchors = _query(code.current_anchors)
    salience_inputs = _query(signals.salience_inputs)
    paths_of = _query(signals.paths_of)
    unvouched = _kept_query(signals.unvouched)
    procedures_naming = _query(signals.procedures_naming)
    procedure_outcomes = _query(signals.procedure_outcomes)
    graph_walk = _query(graph.walk)
    any_edges = _query(graph.any_edges)
    keyed = _query(queries.keyed)
    top = _query(queries.top)
    standing = _query(queries.standing)
    future_dated = _query(queries.future_dated)
    live_ids = _query(queries.live_ids)
    key_history = _query(queries.key_history)
    conflicted_keys = _query(queries.conflicted_keys)
    duplicate_of = _query(queries.duplicate_of)
    unembedded = _query(queries.unembedded)
    embedding_pending = _query(queries.embedding_pending)
    neighbours = _query(signals.neighbours)
    questions = _query(signals.questions)
    counts = _query(queries.counts)
    partition_page = _query(queries.partition_page)
    skipped = _query(queries.skipped)
    skipped_count = _query(queries.skipped_count)
    dump = _query(queries.dump)
