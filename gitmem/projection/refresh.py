"""A refresh that found something moved: the replay and the embedding, in one write
transaction.

Why a module of its own: ``Projection.refresh`` is asked on every read, and almost
every time it only looks at the refs and finds nothing moved (store.py). When
something did, this runs the work under the write lock: list the refs again,
replay what moved (``fold``, by ``gitmem.replay``'s rules), record the refs mark,
embed the new memories (in batches, or taking the rows a forked child embedded
meanwhile: ahead.py), keep the full-text index and the write-ahead log in shape,
and commit. Loaded only then, like fold.py, and working on the ``Projection`` it
is handed (its connection, vector file, carried verdicts and rows): one object's
state, split from the facade by job, not a layer of its own.
"""

from __future__ import annotations

import sqlite3
import time
from typing import TYPE_CHECKING

from ..model import RefreshReport
from . import connection, marks
from .marks import RefsMark
from .vectors import has_pending

if TYPE_CHECKING:
    from .ahead import Ahead
    from .gateahead import GateAhead
    from .logsource import LogSource
    from .store import Projection

# A replay of this many ops merges the full-text index into one segment when it
# holds more than MAX_SEGMENTS (FTS5's own merging keeps about a dozen at 100k).
OPTIMIZE_FROM = 5000
MAX_SEGMENTS = 4
# After a catch-up's slice commits with more to do, the write lock stays free this
# long before the next slice takes it. SQLite's busy handler retries every 100 ms
# at most, so each waiting process gets a try in the gap: without it the next slice
# took the lock again within a millisecond, every time, and a 'recall' or 'add'
# waited for the whole catch-up (48 s; past the 60 s busy timeout it was "database
# is locked"; issue 13, adv39 07). A catch-up of a minute pays ~3 s for it.
SLICE_GAP = 0.15


def fts_segments(c: sqlite3.Connection) -> int:
    """How many segments the full-text index has (each is searched for every word)."""
    return int(c.execute("SELECT count(DISTINCT segid) FROM memories_fts_idx").fetchone()[0])


def replay_moved(p: Projection, source: LogSource, report: RefreshReport, start: float,
                 current: dict[str, str], stored: dict[str, str], *, full: bool, embed: bool,
                 deadline: float | None, mark: RefsMark | None, budget: bool) -> RefreshReport:
    """The rest of ``Projection.refresh`` once its first listing (``current`` against
    ``stored``) found something to do (see there for the arguments)."""
    # Not under a deadline: a read that must answer in time (a hook, a slice of a
    # catch-up) would wait for a child or fork one per slice for nothing. Nor after
    # this process wrote (an add, an import): it has the rows and verdicts of its own
    # ops already. Nor in a read that does not embed (an add's look for duplicates,
    # which replays the last add's op): it must not pay for reading packs twice.
    ahead = gate = None
    try:
        if deadline is None and not p._kept_rows and (embed or full):
            packs = _moved(p, source, current, {} if full else stored)
            ahead = _embed_ahead(p, packs)
            gate = _judge_ahead(p, packs, full)  # (inside: a failure here stops the first)
        return _refresh(p, source, report, start, full=full, embed=embed,
                        deadline=deadline, ahead=ahead, gate=gate, mark=mark, budget=budget)
    finally:
        if ahead is not None:
            ahead.close()
        if gate is not None:
            report.judged_ahead = gate.taken
            gate.close()


def _refresh(p: Projection, source: LogSource, report: RefreshReport, start: float, *,
             full: bool, embed: bool, deadline: float | None, ahead: Ahead | None,
             gate: GateAhead | None = None, mark: RefsMark | None = None,
             budget: bool = False) -> RefreshReport:
    from .fold import Fold  # (here: loaded once the child embedding ahead has forked)
    from .verdicts import Verdicts

    c = p._c
    verdicts = Verdicts(c, p.quarantine_check, p.quarantine_version, p._carried)
    replaying = Fold(c, verdicts=verdicts,
                     zero_row=lambda slot: p._vectors.zero_row(c, slot),
                     progress=p.progress, gate_ahead=gate)
    c.execute("BEGIN IMMEDIATE")
    try:
        p._vectors.check(c)  # files changed on disk since stamped (sidecars.py)
        p._vectors.remove_stale(c)  # older generations: only under the lock (vectors.py)
        # List again under the lock: another process may have refreshed
        # past our first listing, and replaying an older listing would look
        # like a rewrite and move the projection backwards. Narrowed to the
        # refs the mark names only while the recorded mark is still the one
        # it was narrowed from (every transaction that moves tips records or
        # deletes it), and only for refs that were added or moved forward.
        only = marks.narrowed(mark, full, marks.recorded(c))
        current, stored = (marks.listing(p.watermarks, source, only) if not full
                           else (source.partitions(), {}))
        if only is not None and marks.lost_any(source, current, stored):
            only = None  # a partition gone or rewritten: dropped rows, so all are compared
            current, stored = marks.listing(p.watermarks, source, None)
        if full:
            replaying.clear()
        if current != stored:
            report.complete = replaying.apply_moves(source, current, stored, report,
                                                    None if full else deadline,
                                                    budget=budget and not full)
        marks.settle(c, mark, report.complete, current, only)
        if (embed or full) and report.complete:
            report.embedded, report.embedded_ahead = _embed_pending(
                p, reset=full, deadline=None if full else deadline, ahead=ahead)
            if deadline is not None and not full and has_pending(c):
                report.complete = False
        # (The replay's own rows are not in a segment yet: one more at COMMIT.)
        if replaying.scrubbed:
            connection.mark_log_scrub(c)  # cleared once the log is emptied below
        if replaying.scrubbed or (report.ops_applied >= OPTIMIZE_FROM
                                  and fts_segments(c) + 1 > MAX_SEGMENTS):
            # FTS5 keeps deleted terms in its segments until they merge: merge
            # them now, so forgotten words leave the index's pages. And a big
            # replay leaves a dozen segments, each looked up for every word of
            # every query (warm recall at 100k: ~11.5 -> ~8.5 ms); one merge
            # costs ~0.15 s at 100k, so only a replay of many ops pays it.
            c.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
        # The first pass's files (firstpass.py), from 100k rows.
        p._vectors.settle(c, quick=deadline is not None and not full)
        c.execute("COMMIT")
    except BaseException:
        p._vectors.drop_blanked()
        p._vectors.remove_retired(committed=False)
        connection.rollback(c)
        raise
    if report.complete:
        p._carried.clear()  # every op replayed has its verdict in the file now
    if report.complete and (embed or full):
        p._kept_rows = {}  # every memory replayed has its row in the file now
    p._log_scrub = p._log_scrub or replaying.scrubbed
    if p._log_scrub or p._wal_bytes() > connection.WAL_KEEP_BYTES:
        # Forgotten text out of the write-ahead log; or a big replay's pages,
        # which the log would keep on disk after this process (connection.release).
        # Only a scrub waits for readers on older snapshots (a long 'similar'
        # holds one for minutes): for the size, the next refresh tries again.
        emptied = connection.empty_log(c, scrub=p._log_scrub, wait=p._log_scrub)
        p._log_scrub = p._log_scrub and not emptied
    p._vectors.remove_retired(committed=True)  # a reset's old generation
    report.seconds = time.perf_counter() - start
    if deadline is not None and not budget and not full and not report.complete:
        time.sleep(SLICE_GAP)  # a catch-up's slice, another to follow: let waiters in
    return report


def _moved(p: Projection, source: LogSource, current: dict[str, str],
           stored: dict[str, str]) -> list[tuple[str, str, bytes]]:
    """The packs that moved (ahead.moved_packs), read when a child may take them:
    enough of them, and a process that may fork. The watermarks before the lock: a
    guess is enough here."""
    wanted = [b for b in (p.ahead_bytes, p.gate_ahead_bytes) if b is not None]
    if not wanted:
        return []
    from . import ahead

    if not ahead.supported():
        return []
    packs = ahead.moved_packs(source, current, stored)
    return packs if _size(packs) >= min(wanted) else []


def _size(packs: list[tuple[str, str, bytes]]) -> int:
    return sum(len(data) for _, _, data in packs)


def _embed_ahead(p: Projection, packs: list[tuple[str, str, bytes]]) -> Ahead | None:
    """Start embedding the adds of what moved in a forked child (ahead.py) when
    there is enough of it and this process has no batch embedder loaded yet
    (then it embeds fast itself)."""
    if (p.ahead_bytes is None or p._make_embedder is None
            or p.embedder_version is None or p._embedder_loaded()
            or _size(packs) < max(p.ahead_bytes, 1)):
        return None
    from . import ahead

    return ahead.Ahead.start(packs, p._make_embedder, p.dim)


def _judge_ahead(p: Projection, packs: list[tuple[str, str, bytes]],
                 full: bool) -> GateAhead | None:
    """Start judging the second half of what moved in a forked child (gateahead.py)
    when there is enough of it."""
    if (p.gate_ahead_bytes is None or p.quarantine_check is None
            or _size(packs) < max(p.gate_ahead_bytes, 1)):
        return None
    from .gateahead import GateAhead

    # (The version first: it loads the gate, which the child then has already.)
    version = p.quarantine_version()
    if full and p._c.execute(
            "SELECT 1 FROM memories m JOIN gate_versions v ON v.id = m.gate "
            "WHERE v.version = ? LIMIT 1", (version,)).fetchone():
        # A rebuild in place carries the verdicts of the rows it replaces (Fold.clear,
        # after the fork): a child would judge them all again, and the replay wait.
        return None
    return GateAhead.start(packs, p.quarantine_check, version, p._carried)


def _embed_pending(p: Projection, *, reset: bool = False, deadline: float | None = None,
                   ahead: Ahead | None = None) -> tuple[int, int]:
    """Embed every memory that has text and no vector yet, in batches: (memories
    embedded, rows taken from the ``ahead`` child)."""
    make = p._make_embedder  # (it picks, and keeps, the embedder for so many characters)
    if p.embedder_version is None or make is None:
        return 0, 0
    # Under the write lock: no writer is between its steps (see Projection._vectors_current).
    damaged = not reset and p._vectors.damaged(p._c)
    if damaged:
        p.vectors_damaged = True  # cut, lost or garbled: said, and re-embedded here
    if reset or damaged or p.meta().get("embedder") != p.embedder_version:
        # A rebuild, a damaged file, or a new model: re-embed all.
        p._vectors.reset(p._c, p.embedder_version)
    ready = ahead.rows() if ahead is not None else {}
    if p._kept_rows and not ready:  # (a refresh holding kept rows forks no child)
        ready = p._kept_rows
    return p._vectors.embed_pending(p._c, make, p.progress, deadline, ready)
