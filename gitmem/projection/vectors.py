"""The int8 vector file: appending embedded memories, zeroing rows, exact scans
(what a scan's distances then say is distances.py; the near-duplicate searches
over it, similar.py).

Why this exists: vectors live in a plain file beside SQLite, not in it, so a
query maps them and scans them in C (simsimd) in a few milliseconds. What
keeps the file and the tables consistent lives here.

vectors.i8 is a row-major matrix of int8 vectors (each row scaled so its
largest component is +-127; cosine ignores the scale), one row per embedded
memory, memories.vec_slot naming the row. The file only grows: rows are
appended before the transaction that assigns their slots commits, so every
committed slot has a complete row, and readers map only the rows their
snapshot knows. A reset (rebuild, new embedder) starts a new generation in the
same transaction as the cleared slots (generations.py: which file is current,
and who may delete the others); whether the file is damaged is decided only
under the lock (damaged), where no other writer is between its steps. simsimd and numpy are imported only where a scan
needs them: a fresh recall never loads numpy. The first pass's files beside it
(from 100k rows) are sidecars.py's; VectorFile calls it.
"""

from __future__ import annotations

import mmap
import os
import sqlite3
import time
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ..embed.text import embed_chunks
from . import firstpass, queries
from .damage import ProjectionCorrupt
from .distances import cdist_into, smallest
from .generations import Generations
from .sidecars import FirstPassFiles

from .scope import Scope, filters

EMBED_BATCH = 1024
_QUICK_ROWS = 4096  # rows a refresh under a deadline adds to the first pass's files
_POPULATE: int = getattr(mmap, "MAP_POPULATE", 0)  # (Linux only)


class DocEmbedder(Protocol):
    """What the projection needs to embed memories (gitmem.embed: StaticEmbedder, or
    QueryEmbedder for a few texts; both give the same bytes)."""

    version: str
    dim: int

    def doc_rows(self, texts: list[str]) -> bytes: ...


_decode_strings: Callable[[str], list[str]] | None = None


def _strings(raw: str) -> list[str]:
    """A JSON column holding a list of strings (msgspec, loaded when first needed: a
    read never embeds)."""
    global _decode_strings
    if _decode_strings is None:
        import msgspec

        _decode_strings = msgspec.json.Decoder(list[str]).decode
    try:
        return _decode_strings(raw)
    except ValueError as exc:  # msgspec.DecodeError: not what replay wrote
        raise ProjectionCorrupt(f"a list column holds {exc}") from exc


def top_slot(c: sqlite3.Connection) -> int | None:
    """The highest vector row any memory uses (None: no vectors)."""
    return c.execute("SELECT max(slot) FROM vec_rows").fetchone()[0]  # type: ignore[no-any-return]


def has_pending(c: sqlite3.Connection) -> bool:
    """Some memory with text has no vector yet."""
    return c.execute(
        "SELECT 1 FROM memories INDEXED BY memories_unembedded "
        "WHERE vec_slot IS NULL AND text IS NOT NULL LIMIT 1").fetchone() is not None


# What memories_past holds (tables.py): the memories that may not be current now.
PAST = ("(state != 0 OR shadowed_by IS NOT NULL OR quarantine IS NOT NULL "
        "OR valid_until IS NOT NULL)")


def unseen_slots(c: sqlite3.Connection, scope: Scope) -> list[int]:
    """The vector rows of the memories not current at the point ``scope`` asks about
    (its as_of, valid_at and now; not its narrowing by kind, tag, author..., nor
    its retired or quarantined): what the spread of a query's cosines leaves out.

    The vector file keeps a row for every value a memory ever had (--all and
    --as-of need them): a key set 400 times has 400 near-identical rows, one of
    them current, and counted in the spread they pulled its mean up to the
    current value's cosine. The spread is the background a similarity must stand
    out from: the memories current then, with or without --all (a value's
    history is copies of one memory, not more of the corpus; and a memory scores
    the same whether retired ones are asked for or not, which the hint of an
    empty recall compares: cli.render_recall.left_out). Now (no as_of, no valid_at) only the memories in
    memories_past may not be current: nearly none in an ordinary store, one look
    in a small index. Back in time, a memory current now that holds no key was
    current then if it was recorded (valid, for valid_at) by then: only the
    others are asked the scope's conditions (a row each), and the memories
    recorded later are found in memories_listed by time (valid_at: by a scan,
    ~20 ms at 100k). Every memory a retiring op names is in memories_past (fold
    sets its state from its links)."""
    corpus = Scope(as_of=scope.as_of, valid_at=scope.valid_at, now=scope.now)
    seen, args = filters("1", [], corpus)
    # INDEXED BY: a query can use a partial index only if it repeats its terms.
    sql = (f"SELECT v.slot FROM memories m INDEXED BY memories_past CROSS JOIN vec_rows v "
           f"ON v.memory = m.rowid WHERE {PAST} AND NOT ({seen})")
    if scope.as_of is None and scope.valid_at is None:
        return [slot for (slot,) in c.execute(sql, args)]
    # A keyed memory current now may have lost its key's conflict then.
    sql += (f" UNION SELECT v.slot FROM memories m INDEXED BY memories_key CROSS JOIN "
            f"vec_rows v ON v.memory = m.rowid WHERE m.key IS NOT NULL AND NOT ({seen})")
    later, later_args = [], list[object]()
    if scope.as_of is not None:
        later.append("m.at > ?")
        later_args.append(scope.as_of)
    if scope.valid_at is not None:
        later.append("coalesce(m.valid_from, m.at) > ?")
        later_args.append(scope.valid_at)
    current = ("m.text IS NOT NULL AND m.state = 0 AND m.quarantine IS NULL "
               "AND m.shadowed_by IS NULL")  # (memories_listed's terms)
    sql += (f" UNION SELECT v.slot FROM memories m "
            f"{'INDEXED BY memories_listed ' if scope.valid_at is None else ''}"
            f"CROSS JOIN vec_rows v ON v.memory = m.rowid WHERE {current} "
            f"AND ({' OR '.join(later)})")
    return [slot for (slot,) in c.execute(sql, [*args, *args, *later_args])]


class Unseen:
    """unseen_slots for the present (no as_of, no valid_at: every recall but a look back),
    kept while the projection is unchanged.

    Why: where most memories are retired (a key set 500 times: 20 current values among
    10k), the present's unseen rows are nearly every row, and selecting them again
    each recall took ~26 ms at 10k, twice the rest of the recall. They change only
    when the tables do, and with the clock only through valid_until: so the rows of
    memories_past are read once per state of the database (this connection, its
    data_version: another connection committed; its total_changes: it wrote), and a
    recall only compares the expiring ones' valid_until with its ``now``. Same slots,
    same order as unseen_slots; kept compactly (~17 bytes a row: a store of 1M
    retired rows keeps ~17 MB, not a tuple a row)."""

    def __init__(self) -> None:
        # (connection, data_version, total_changes), every row's slot in the query's
        # order, the slots never current, and valid_until of the rows current until
        # then (in memories_past, a current memory is one with a valid_until).
        self._kept: tuple[tuple[object, int, int], array[int], array[int],
                          dict[int, int]] | None = None

    def slots(self, c: sqlite3.Connection, scope: Scope) -> list[int]:
        """As unseen_slots(c, scope); the caller holds a read snapshot (BEGIN)."""
        if scope.as_of is not None or scope.valid_at is not None:
            return unseen_slots(c, scope)
        key = (c, *queries.tables_state(c))
        kept = self._kept
        if kept is None or kept[0][0] is not c or kept[0] != key:
            # (live(): current is active, not quarantined and not a losing value;
            # a time past valid_until is the only condition that moves with the clock)
            every, never, until = array("q"), array("q"), dict[int, int]()
            for slot, ends, current in c.execute(
                    "SELECT v.slot, m.valid_until, m.state = 0 AND m.quarantine IS NULL AND "
                    "m.shadowed_by IS NULL FROM memories m INDEXED BY memories_past CROSS "
                    f"JOIN vec_rows v ON v.memory = m.rowid WHERE {PAST}"):
                every.append(slot)
                if current:
                    until[slot] = ends
                else:
                    never.append(slot)
            kept = self._kept = (key, every, never, until)
        _, every, never, until = kept
        now = scope.now
        if now is None or not until:
            return never.tolist()
        return [slot for slot in every if slot not in until or until[slot] <= now]


def exact_hits(c: sqlite3.Connection, dist: array[float], n: int, scope: Scope,
               limit: int, unseen: list[int] | None = None) -> list[tuple[str, float]]:
    """(memory id, cosine) of the ``limit`` best memories under ``scope``.

    Candidates are taken best-first and filtered in SQL; if filters reject too
    many, the scan takes more candidates until ``limit`` pass or none are left.
    ``unseen``: rows the filters reject anyway (unseen_slots, when ``scope`` asks for
    the present and no more than it: see skips), set aside before the first pick:
    where most rows are a key's replaced values, the picks grew eight-fold round
    after round through rows the SQL then turned down (four rounds, ~7 ms each at 10k
    rows). ``dist`` is written over (at those rows): take its spread first.
    """
    live = n
    if unseen:
        far = float("inf")
        for slot in unseen:
            dist[slot] = far
        live -= len(unseen)
    want = 2 * limit + 16  # slack for filtered-out rows and several rows per memory
    while live > 0:
        # (at most ``live`` rows: the cut then stays below the rows set aside)
        cand = smallest(dist, min(want, live))
        hits = queries.best_per_memory(c, cand, dist.__getitem__, scope)
        if len(hits) >= limit or len(cand) >= live:
            return [(mid, 1.0 - d) for d, mid in hits[:limit] if d < 1.0]
        want *= 8
    return []


def skips(scope: Scope) -> bool:
    """Whether every row of unseen_slots(scope) is one ``scope``'s own filters reject:
    it asks for the present, without retired, quarantined or losing values (its
    narrowing by kind, tag, author... only rejects more)."""
    return (scope.as_of is None and scope.valid_at is None and not scope.retired
            and not scope.quarantined and scope.shadow)


class VectorFile:
    """The vector file of one projection directory (``dim`` int8 bytes a row).

    Methods take the caller's connection: the file's current name is read from
    ``meta`` in the caller's snapshot, so the rows and their slots agree.
    """

    def __init__(self, directory: Path, dim: int) -> None:
        self.directory = directory
        self.dim = dim
        # ((path, device, inode), map) of the file last scanned: see _mapping;
        # and of its sign file (firstpass.py).
        self._held: tuple[tuple[str, int, int], mmap.mmap] | None = None
        self._held_signs: tuple[tuple[str, int, int], mmap.mmap] | None = None
        self._sidecars = FirstPassFiles(self)  # the sign and moments files (sidecars.py)
        self._generations = Generations(directory)  # which file is current (generations.py)
        self.unseen = Unseen()  # the present's unseen_slots, kept while nothing changes

    def path(self, c: sqlite3.Connection) -> Path:
        """The vector file of the current generation (generations.py)."""
        return self._generations.path(c)

    def remove_stale(self, c: sqlite3.Connection) -> None:
        """A writer, under the write lock: delete older generations (generations.py)."""
        self._generations.remove_stale(c)

    def remove_retired(self, *, committed: bool) -> None:
        """After a reset's transaction: delete the generation it replaced, if it committed."""
        self._generations.remove_retired(committed=committed)

    def rows_in_file(self, c: sqlite3.Connection) -> int:
        try:
            return self.path(c).stat().st_size // max(self.dim, 1)
        except FileNotFoundError:
            return 0

    def truncated(self, c: sqlite3.Connection) -> bool:
        """Some committed slot has no complete row: the file was cut or lost."""
        top = top_slot(c)
        return top is not None and top >= self.rows_in_file(c)

    def damaged(self, c: sqlite3.Connection) -> bool:
        """Cut, lost, or overwritten with something that is not our rows.

        Every row this module writes is all zeros (a forgotten memory, a
        crash's padding) or has its largest component at exactly +-127 and
        never -128 (quantize_rows); three rows are sampled (first, middle,
        last: a few microseconds), which catches a file of random bytes.

        Exact only in a writer, under the write lock: elsewhere another writer
        may be between its steps (a reset's old generation deleted after its
        commit, a row being blanked in place), so a reader takes True as a
        reason to refresh, not as damage (Projection._vectors_current)."""
        if self.truncated(c) or self._sidecars.garbled:
            return True  # (garbled: changed on disk since its stamp, see check)
        top = top_slot(c)
        if top is None or not self.dim:
            return False
        try:
            with open(self.path(c), "rb") as fh:
                for slot in sorted({0, top // 2, top}):
                    row = os.pread(fh.fileno(), self.dim, slot * self.dim)
                    if any(row) and (b"\x80" in row or (b"\x7f" not in row and b"\x81" not in row)):
                        return True
        except OSError:
            return True
        return False

    def reset(self, c: sqlite3.Connection, embedder_version: str | None) -> None:
        """Start a new, empty generation: every memory will be embedded again."""
        self._sidecars.garbled = False  # (a new file, stamped at settle)
        c.execute("UPDATE memories SET vec_slot = NULL")
        c.execute("DELETE FROM vec_rows")
        self._generations.start(c)  # the old file is deleted once this commits
        c.execute(
            "INSERT INTO meta(key, value) VALUES ('embedder', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (embedder_version,),
        )

    def embed_pending(
        self,
        c: sqlite3.Connection,
        embedder: Callable[[int], DocEmbedder],  # characters to embed -> embedder
        progress: Callable[[str, int, int | None], None] | None,
        deadline: float | None = None,
        ready: dict[str, bytes] | None = None,
    ) -> tuple[int, int]:
        """Embed every memory that has text and no vector yet, in batches (until
        ``deadline``, time.monotonic, if given: the rest stays pending). ``ready``:
        rows already embedded, by text (see ahead.py); the others are made here.
        (memories embedded, rows taken from ``ready``).

        The rows are appended and fsynced before the caller commits the slots
        that name them; a crash before the commit leaves unnamed rows only.
        """
        # INDEXED BY: the few waiting memories, sorted (the planner would rather walk
        # every memory in id order than sort).
        pending = [
            (rowid, key, text, _strings(entities), _strings(tags))
            for rowid, key, text, entities, tags in c.execute(
                "SELECT rowid, key, text, entities, tags FROM memories INDEXED BY "
                "memories_unembedded WHERE vec_slot IS NULL AND text IS NOT NULL ORDER BY id")
        ]
        if not pending:
            return 0, 0
        ready = ready or {}
        taken = 0
        # How much is left to embed here: a little needs no numpy. Rows a child made
        # ahead do not count (a pull embedded ahead plus a few adds of our own loaded
        # numpy and the tokenizer, ~65 ms, for those few).
        pieces = [embed_chunks(*row[1:]) for row in pending] if ready else None
        chars = (sum(len(t) for texts in pieces for t in texts if t not in ready)
                 if pieces is not None else sum(len(row[2]) for row in pending))
        model: DocEmbedder | None = None

        def rows_of(texts: list[str]) -> bytes:
            """``texts``' rows: from ``ready`` (embedded ahead) or the model, loaded
            only when a text is missing there."""
            nonlocal model, taken
            missing = [t for t in texts if t not in ready]
            taken += len(texts) - len(missing)
            if not missing:
                return b"".join(ready[t] for t in texts)
            if model is None:
                model = embedder(chars)
            made = model.doc_rows(missing)
            if len(missing) == len(texts):
                return made
            out: list[bytes] = []
            at = 0
            for t in texts:
                if t in ready:
                    out.append(ready[t])
                else:
                    out.append(made[at:at + self.dim])
                    at += self.dim
            return b"".join(out)

        with open(self.path(c), "ab") as fh:
            if fh.tell() % self.dim:
                # A crash left half a row: pad it (never truncate under readers).
                fh.write(b"\0" * (self.dim - fh.tell() % self.dim))
            slot = fh.tell() // self.dim
            done = 0
            for start in range(0, len(pending), EMBED_BATCH):
                if deadline is not None and start and time.monotonic() > deadline:
                    break
                batch = pending[start : start + EMBED_BATCH]
                done += len(batch)
                texts: list[str] = []
                owners: list[int] = []
                firsts: list[tuple[int, int]] = []
                for n, row in enumerate(batch, start):
                    its = pieces[n] if pieces is not None else embed_chunks(*row[1:])
                    firsts.append((slot + len(texts), row[0]))
                    texts.extend(its)
                    owners.extend([row[0]] * len(its))
                fh.write(rows_of(texts))
                c.executemany(
                    "INSERT INTO vec_rows(slot, memory) VALUES (?, ?)",
                    [(slot + i, owner) for i, owner in enumerate(owners)],
                )
                c.executemany("UPDATE memories SET vec_slot = ? WHERE rowid = ?", firsts)
                slot += len(texts)
                if progress is not None:
                    progress("embedding memories", start + len(batch), len(pending))
            fh.flush()
            os.fsync(fh.fileno())
        return done, taken

    def zero_row(self, c: sqlite3.Connection, slot: int | None) -> None:
        """Blank a forgotten memory's row (its content must not linger anywhere), and
        its sign row; its old content leaves the moments at ``settle`` (writers only)."""
        if slot is None or not self.dim:
            return
        path = self.path(c)
        keep = self._sidecars.blanking(path, slot)
        try:
            with open(path, "r+b") as fh:
                if keep is not None:
                    keep.append(os.pread(fh.fileno(), self.dim, slot * self.dim))
                fh.seek(slot * self.dim)
                fh.write(b"\0" * self.dim)
        except FileNotFoundError:
            return
        self._sidecars.zero_sign(path, slot)

    def drop_blanked(self) -> None:
        """Forget what zero_row kept for ``settle`` (sidecars.py)."""
        self._sidecars.drop_blanked()

    def first_pass_current(self, c: sqlite3.Connection) -> bool:
        """The files are as their stamps say, and the sign and moments files cover
        every row and agree (or none are needed); or they cannot be written here."""
        return self._sidecars.current(c, top_slot(c))

    def check(self, c: sqlite3.Connection) -> None:
        """A writer, under the write lock, before it writes: the files changed since
        their stamps are compared with their sums (sidecars.py)."""
        if self.dim:
            self._sidecars.check(c)

    def take_notices(self) -> list[str]:
        """One-line warnings about the files since last asked (sidecars.py)."""
        return self._sidecars.take_notices()

    def settle(self, c: sqlite3.Connection, *, quick: bool = False) -> None:
        """Bring the first pass's files up to the committed rows (sidecars.py; a
        writer, under the write lock, at the end of a refresh; ``quick``: a refresh
        under a deadline adds at most _QUICK_ROWS rows to them)."""
        self._sidecars.settle(c, top_slot(c) if self.dim else None, quick=quick,
                              quick_rows=_QUICK_ROWS)

    def distances(self, c: sqlite3.Connection, simsimd: Any, query: bytes,
                  n: int) -> array[float] | None:
        """Cosine distance from ``query`` to each of the first ``n`` vector rows of the
        memory-mapped file; None when the file is shorter (a rebuild replaced it)."""
        mm = self._mapping(c, n * self.dim)
        if mm is None:
            return None
        whole = memoryview(mm)
        try:
            matrix = whole[: n * self.dim].cast("b", shape=[n, self.dim])
            q = memoryview(query).cast("b")
            # simsimd writes the distances straight into the array: one fresh 8n-byte
            # buffer where a result tensor copied into the array took two (~0.5 ms
            # of a fresh add at 100k rows, mostly first-touch page faults).
            out = array("d", [0.0]) * n
            cdist_into(simsimd, q, matrix, metric="cosine",
                       out=memoryview(out).cast("B").cast("d", shape=[1, n]))
            matrix.release()
            return out
        finally:
            whole.release()

    def first_pass_hits(self, c: sqlite3.Connection, simsimd: Any, query: bytes, n: int,
                        scope: Scope, limit: int,
                        ) -> tuple[list[tuple[str, float]], tuple[float, float, int]] | None:
        """As exact_hits and the spread, from the first pass (sidecars.py); None: scan
        every row."""
        return self._sidecars.first_pass_hits(c, simsimd, query, n, scope, limit)

    def first_pass_spread(self, c: sqlite3.Connection, query: bytes, n: int,
                          leave_out: list[int]) -> tuple[float, float, int] | None:
        """The spread from the moments (firstpass.spread) without the rows ``leave_out``
        (unseen_slots); None: scan every row (the files do not cover the ``n`` rows)."""
        files = self._sidecars.files(c, n)
        if files is None:
            return None
        try:
            fd = os.open(self.path(c), os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            return None
        try:
            rows = firstpass.gather(None, fd, self.dim, sorted(leave_out))
        finally:
            os.close(fd)
        return firstpass.spread(files[0], self.dim, query, rows)

    def first_pass(self, c: sqlite3.Connection, simsimd: Any, query: bytes, n: int,
                   ) -> tuple[list[int], array[float], tuple[float, float, int]] | None:
        """The first pass's candidate rows and their exact distances (sidecars.py);
        None: scan every row."""
        return self._sidecars.first_pass(c, simsimd, query, n)

    def _mapping(self, c: sqlite3.Connection, need: int,
                 path: Path | None = None) -> mmap.mmap | None:
        """The vector file mapped, at least ``need`` bytes of it; None when it is
        missing or shorter.

        Why kept between scans: mapping a file afresh faults in every page again
        on the next scan, and unmapping tears them down: at 100k rows 11.3 ms a
        scan against 2.6 ms with the map kept, at 1M ten times that. So a process
        that scans again (a library host, the MCP server) keeps the map while the
        file at this path is the same file (device and inode: a reset names a new
        generation, a rebuild may replace the directory) and long enough. The file
        only grows (rows are appended; a crash's half row is padded, never
        truncated under readers), so a kept map stays valid. ``path``: the sign file
        (firstpass.py), kept the same way."""
        signs = path is not None
        if path is None:
            path = self.path(c)
        try:
            st = os.stat(path)
        except OSError:
            return None
        if st.st_size < need:
            return None
        held = self._held_signs if signs else self._held
        if held is not None:
            ident, mm = held
            if ident == (str(path), st.st_dev, st.st_ino) and len(mm) >= need:
                return mm
            held[1].close()
            if signs:
                self._held_signs = None
            else:
                self._held = None
        try:
            with open(path, "rb") as fh:
                st = os.fstat(fh.fileno())
                if st.st_size < need:
                    return None
                if signs and _POPULATE:
                    # Every query reads the whole sign file: its pages are mapped in
                    # one call (MAP_POPULATE) rather than faulted in 64 kB at a time.
                    mm = mmap.mmap(fh.fileno(), st.st_size, flags=mmap.MAP_SHARED | _POPULATE,
                                   prot=mmap.PROT_READ)
                else:
                    mm = mmap.mmap(fh.fileno(), st.st_size, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        if signs:
            self._held_signs = ((str(path), st.st_dev, st.st_ino), mm)
        else:
            self._held = ((str(path), st.st_dev, st.st_ino), mm)
        return mm

    def close(self) -> None:
        """Unmap the files (Projection.close)."""
        for held in (self._held, self._held_signs):
            if held is not None:
                held[1].close()
        self._held = self._held_signs = None
