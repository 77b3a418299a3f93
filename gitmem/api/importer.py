"""Bulk import: many memories from JSON lines, many ops per commit, in memory that
grows with the memories, not the bytes.

Why this exists: seeding a repository's memory (from notes, another tool, a
migration) must be fast, safe on any input and all-or-nothing: nothing is
written if any line is bad, exact duplicates confirm the existing memory
instead of copying it, and each pack of ops is one atomic commit appended
with the same compare-and-swap as a single add.

Memory does not grow with the input's bytes (``/dev/zero``, a 300 MB file, a
pipe), only with its number of memories: ~130-200 bytes each for what the packs
share (the ids written and their lines, the signatures of the current ones, the
child's digest index; ~130 MB at a million memories):
1. (importcheck.py) the input is read line by line with a bounded ``readline``;
   a line longer than an op may be (``ops.MAX_OP_BYTES``) is refused by its
   number at once;
2. (importcheck.py) each line is decoded, validated, gated and trial-encoded as
   it streams, and the checked memory is spooled to an anonymous temporary
   file: a bad line anywhere stops the import before anything is written, for a
   seekable file and for stdin alike (the spool costs disk, about the input's
   size, not memory);
3. (here) the spool is read back in packs of at most ``pack_size`` memories and
   ``PACK_BYTES`` bytes, each deduplicated against the memories there before
   (the projection) and the earlier lines of this import (kept in memory, so
   the projection replays the packs only every ``FOLD_BYTES`` and at the end)
   and appended as one commit. A failure while writing (a full disk, a kill)
   leaves the packs already written, each complete. (A key another writer sets
   while the import runs is replaced by the import's next line of it as well: a
   pack that finds the ref moved asks the replayed projection again);
4. meanwhile a forked child (``importahead.EmbedAhead``) reads the same spool and
   embeds its memories on the other core, and the import's last read takes those rows
   (``Projection.keep_rows``): the memories are searchable, vectors included,
   when the import returns, and the next command has nothing left to embed.
   A row is a pure function of its text (exact integer sums), so the vector
   file holds the very bytes a read embedding them one by one would write; a
   child that fails or is late only leaves the embedding to that next read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, TypeVar

from .. import ops
from ..errors import GitMemError, InvalidInput
from ..model import Imported
from ..timefmt import now_from_env
from . import embedding, gating, heal, importahead, validate
from .importcheck import SPOOL_DECODER, Checked, check_lines, memory_of, numbered_lines, open_spool
from .pool import Pool

if TYPE_CHECKING:
    from ..projection import Projection

T = TypeVar("T")

# A pack (one commit) holds at most this many bytes of ops, whatever --pack-size
# says: a commit stays quick to write and replay, far below ops.MAX_PACK_BYTES.
PACK_BYTES = 2 << 20
# The projection replays the packs written every this many bytes of them (and at the
# end): not before every pack (an import keeps what its packs need to know), nor all
# at once (a replay holds its new full-text rows in memory until it ends; not so a
# first replay, which an import into an empty projection leaves to its end).
FOLD_BYTES = 8 << 20


def import_records(
    pool: Pool, lines: Iterable[str | bytes] | IO[bytes], *, pack_size: int = 5000,
    redact: bool = False,
) -> Imported:
    """Bulk-add memories from JSON lines, many ops per commit.

    Every line is checked (and spooled to a temporary file) before anything
    is written, so a bad line anywhere, even at the end of a pipe, leaves
    nothing behind. Each pack (one commit, at most ``pack_size`` memories and
    ``PACK_BYTES`` bytes) is atomic; the report lists the commits written.
    """
    if pack_size < 1:
        raise InvalidInput(f"pack size must be at least 1 (got {pack_size})", "use 5000")
    with pool.writing():
        author = pool.log.identity()
        partition = pool.log.partition_for(author)
        with open_spool() as spool:
            total, chars = check_lines(pool, numbered_lines(lines), spool, author, partition,
                                  redact)
            spool.flush()
            spool.seek(0)
            heal.rescue_skipped_clocks(pool)
            ahead = (importahead.EmbedAhead.start(spool.fileno(), memory_of)
                     if chars > embedding.SMALL_BATCH_CHARS else None)
            try:
                done = _write(pool, spool, total, author, partition, pack_size)
                # Replay the packs not replayed yet while the child still embeds (and
                # while the gate's verdicts are at hand: the next command would scan
                # their ops again, ~0.2 ms each); then take its rows.
                _settle(pool, embed=False)
                rows = ahead.rows() if ahead is not None else {}
            finally:
                if ahead is not None:
                    ahead.close()
    if rows:  # without them, embedding is left to the next command, as for any write
        pool.projection.keep_rows(rows)
        _settle(pool, embed=True)
    return done


def _settle(pool: Pool, *, embed: bool) -> None:
    """Bring the projection up to the packs written (and embed, with ``embed``)."""
    try:
        pool.read(lambda _: None, embed=embed)
    except GitMemError:
        pass  # the memories are written; the next read replays them and says why not



def _write(pool: Pool, spool: IO[bytes], total: int, author: ops.Author, partition: str,
           pack_size: int) -> Imported:
    """Append the spooled memories in packs, deduplicated (see _Writer)."""
    now = now_from_env()
    out = _Writer(pool, author, partition, now)
    batch: list[Checked] = []
    size = done = 0
    for raw in spool:
        checked = SPOOL_DECODER.decode(raw)
        if batch and (len(batch) >= pack_size or size + len(raw) > PACK_BYTES):
            out.pack(batch)
            done += len(batch)
            if pool.progress is not None:
                pool.progress("importing", done, total)
            batch, size = [], 0
        batch.append(checked)
        size += len(raw) + 256  # an op's envelope around its memory
    if batch:
        out.pack(batch)
        if pool.progress is not None:
            pool.progress("importing", done + len(batch), total)
    return Imported(count=len(out.written), ids=list(out.written), commits=out.commits,
                    partition=partition, duplicates=out.duplicates)


def _current_values(p: Projection, keys: Iterable[str]) -> dict[str, list[str]]:
    """Each key's current values (ids), shadowed ones included: what a line of the
    key replaces."""
    from ..projection import Scope

    return {k: [r.id for r in p.keyed(Scope(shadow=False), k)] for k in keys}


class _Writer:
    """What the packs of one import share: the ids written (with their line),
    the existing memories confirmed, the duplicates reported, the commits.

    The projection is not replayed before every pack: what a pack needs to know
    about the earlier packs of this import is kept here (``mine``: the current
    memories it added, by signature; ``latest``: a key's current values; the
    last clock written), and the projection is asked only about what was there
    before. It replays the packs every ``FOLD_BYTES`` (a replay's full-text rows
    wait in memory until it ends) and at the end of the import (only then, when
    nothing was replayed before: see ``fold_bytes``)."""

    def __init__(self, pool: Pool, author: ops.Author, partition: str,
                 now: tuple[int, int]) -> None:
        self.pool, self.author, self.partition, self.now = pool, author, partition, now
        self.written: dict[str, int] = {}  # memory id -> its line, in order
        self.version = gating.gate_version()  # what judged the lines (see _append)
        self.confirmed: set[str] = set()  # existing memories a line reinforced
        self.duplicates: list[dict[str, object]] = []
        self.commits: list[str] = []
        # (kind, key, text hash) of each current memory this import added -> its line;
        # a keyed one leaves when a later line of its key replaces it (mine_keyed).
        self.mine: dict[tuple[str, str | None, str], int] = {}
        self.mine_keyed: dict[str, tuple[str, str | None, str]] = {}
        # A key's current values (ids), from the first line of this import naming it.
        self.latest: dict[str, list[str]] = {}
        self.last_clock: int | None = None  # of the last op written
        self.unfolded = 0  # bytes of packs written since the projection replayed them
        # Replayed up to now once: what the first pack's lookups and clock start from.
        # No memory at all before: no line can duplicate one (no lookup per line).
        # Nothing replayed at all: the replay of the packs is a first replay, which
        # holds nothing per row in memory (fold.Fold._flush_fts) and is twice as fast
        # in one go (no index kept in order while it runs): only at the end.
        replayed, self.any_before = pool.read(lambda p: (p.watermarks(), p.size() > 0),
                                              embed=False)
        self.fold_bytes = FOLD_BYTES if replayed else None

    def _peek(self, fn: Callable[[Projection], T]) -> T:
        """``fn`` on the projection as it is, without replaying this import's packs
        (what they changed is known here)."""
        pool = self.pool
        pool.skip_refresh = True
        try:
            return pool.read(fn, embed=False)
        finally:
            pool.skip_refresh = False

    def pack(self, batch: list[Checked]) -> None:
        """Dedup ``batch`` (exact only: a near-duplicate check would embed every
        line) and append what is left as one commit."""
        keys = sorted({k for c in batch if (k := c.memory.key) is not None
                       and k not in self.latest})
        before = self.any_before

        def look(p: Projection) -> tuple[list[str | None], dict[str, list[str]]]:
            found: list[str | None] = [None] * len(batch)
            if before:
                found = [p.duplicate_of(c.memory.text, c.memory.kind, c.memory.key)
                         for c in batch]
            # A keyed line replaces the key's values, like set: the current ones, then
            # (self.latest) the previous line's. A key met for the first time was not
            # touched by the earlier packs: the projection knows its values.
            current = _current_values(p, keys)
            return found, current

        existing, current = self._peek(look) if before or keys else ([None] * len(batch), {})
        self.latest.update(current)
        items: list[tuple[ops.MemoryBody | str, tuple[int, int] | None, int]] = []
        for c, dup in zip(batch, existing):
            m = c.memory
            sig = (m.kind, m.key, ops.text_hash(m.text))
            if dup is not None and (dup in self.written or m.key in self.mine_keyed):
                # One of ours (replayed since: ``mine`` knows it), or a memory a line
                # of this import replaced already: not current any more.
                dup = None
            if dup is not None:  # a current memory: the first such line confirms it
                self.duplicates.append({"line": c.line, "id": dup})
                if dup not in self.confirmed:
                    self.confirmed.add(dup)
                    items.append((dup, c.at, c.line))
            elif sig in self.mine:  # a line of this import
                self.duplicates.append({"line": c.line, "line_of_first": self.mine[sig]})
            else:
                self.mine[sig] = c.line
                if m.key is not None:
                    replaced = self.mine_keyed.pop(m.key, None)
                    if replaced is not None:
                        self.mine.pop(replaced, None)
                    self.mine_keyed[m.key] = sig
                items.append((m, c.at, c.line))
        if items:
            self._append(items)
        if self.fold_bytes is not None and self.unfolded >= self.fold_bytes:
            self.pool.read(lambda _: None, embed=False)
            self.unfolded = 0

    def _next_clock(self, n: int, moved: Callable[[], None]) -> Callable[[], int]:
        """The first clock of the next pack of ``n`` ops: as ``Pool.next_clock`` gives
        it, with the packs not replayed yet counted in. When another writer moved
        the ref since our last pack (a lost race, an add meanwhile), from a replay
        of everything: the clocks along a partition's chain only ever increase."""
        from ..oplog import REF_PREFIX
        from ..replay import clock_jump, next_clock

        tries = 0
        ref = REF_PREFIX + self.partition

        def clock() -> int:
            nonlocal tries
            tries += 1
            last = self.last_clock
            if (last is None or tries > 1
                    or self.pool.log.tips([ref]).get(ref) != self.commits[-1]):
                first = self.pool.next_clock(self.partition, n)  # (replays everything)
                moved()
                return first
            top, own = self._peek(lambda p: p.clock_bounds(ref))
            first = next_clock(max(top, last), max(own, last), n)
            if clock_jump(max(own, last), first) is not None or first + n > ops.MAX_CLOCK:
                raise AssertionError(f"clock {first} after {last} would be skipped on replay")
            return first

        return clock

    def _append(self, items: list[tuple[ops.MemoryBody | str, tuple[int, int] | None, int]]
                ) -> None:
        author, partition, now = self.author, self.partition, self.now
        keys = {w.key for w, _, _ in items if isinstance(w, ops.MemoryBody) and w.key is not None}
        used: list[int] = []

        def make(clock: int) -> list[bytes]:
            used.append(clock)
            out = []
            state = {k: list(self.latest.get(k, [])) for k in keys}  # rebuilt on every retry
            for i, (what, at, _) in enumerate(items):
                common = dict(v=ops.FORMAT_VERSION, author=author, partition=partition,
                              clock=clock + i, at=(at or now)[0], tz=(at or now)[1])
                if isinstance(what, ops.MemoryBody):
                    op: ops.Op = ops.AddOp(**common, memory=what,  # type: ignore[arg-type]
                                           supersedes=state.get(what.key, [])
                                           if what.key is not None else [])
                else:
                    op = ops.ConfirmOp(**common, target=what,  # type: ignore[arg-type]
                                       reason="imported again")
                out.append(ops.encode(op))
                if isinstance(what, ops.MemoryBody) and what.key is not None:
                    state[what.key] = [ops.op_id(out[-1])]
            for line in out:
                validate.check_writable(line, partition)
            return out

        def moved() -> None:
            """The projection was just replayed whole (a first pack, or another writer
            moved the ref): a key another writer set since is current too, and this
            pack's line of it replaces that value as well (as ``set`` would). A key
            of no line here is asked again when a later pack meets it."""
            self.latest = self._peek(lambda p: _current_values(p, sorted(keys)))

        last_at = items[-1][1] or now
        adds = sum(isinstance(w, ops.MemoryBody) for w, _, _ in items)
        appended = self.pool.log.append(
            partition, author, last_at[0], last_at[1], f"import {adds} memories", make,
            next_clock=self._next_clock(len(items), moved),
        )
        self.last_clock = used[-1] + len(items) - 1
        self.unfolded += sum(map(len, appended.lines))
        added = []
        for line, (what, _, n) in zip(appended.lines, items):
            if isinstance(what, ops.MemoryBody):
                oid = ops.op_id(line)
                self.written[oid] = n
                added.append(oid)
                if what.key is not None:
                    self.latest[what.key] = [oid]
        self.commits.append(appended.commit)
        # Every memory of this pack passed the gate in _check: the replay of the pack
        # takes these verdicts instead of scanning each memory again. The scans' memo
        # cannot carry them: it keeps 32k entries, and an import checks every line
        # before replaying any pack (100k lines: 11 of the import's 33 s went to
        # scanning them a second time).
        verdict = gating.screened_add_verdict(author)
        self.pool.projection.keep_verdicts([(oid, self.version, verdict) for oid in added])
