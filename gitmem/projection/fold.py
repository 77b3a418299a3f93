"""Replaying the op-log into the tables: the SQL that writes.

Why this exists: a refresh turns partition moves (new commits, rewritten or
vanished partitions) into rows. The rules that decide the outcome live in
``gitmem.replay`` (pure); this module only reads their inputs from the tables
and writes their results back, inside the transaction the caller holds.

Determinism: the state of a memory is recomputed from the *set* of ops that
touch it (``links``), never patched by whichever op happened to arrive last,
so any arrival order of partitions and commits gives the same rows.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from .. import ops, replay
from ..model import RefreshReport
from . import code, tables
from .ftsrows import FtsRows
from .logsource import LogSource
from .rows import digest, norm, partition
from .verdicts import Verdicts

if TYPE_CHECKING:
    from .gateahead import GateAhead


# The columns an add fills, in the order Fold._apply gives them.
_MEMORY_INSERT = (
    "digest, kind_code, text, key, tags, entities, importance, valid_from, valid_until, source, "
    "session, anchor_commit, paths, supersedes, part, commit_id, clock, at, tz, author, "
    "state, quarantine, by, link, norm, gate, fts"
)
_INSERT = (f"INSERT INTO memories({_MEMORY_INSERT}) VALUES "
           "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0,?,?,?,?,?,?)")  # 0: active
_BULK_INSERT = _INSERT + " ON CONFLICT(digest) DO NOTHING"


# What replaying a commit may cost, by its pack's size, to judge under a front end's
# budget whether it fits. Ordinary ops cost about a microsecond a byte (120k ops,
# 30 MB: 15 s; 1k ops, ~300 KB: 0.25 s), but text built against the gate's rules
# costs it up to ~7 (docs/security.md: 1.3 MB of "password <token>" took 8.5 s), and
# a teammate chooses the text: so the worst case is assumed, and a hook's 1.5 s
# replays commits up to ~190 KB itself (a few hundred ops), leaving larger ones to
# the background catch-up.
REPLAY_SECONDS_PER_BYTE = 8e-6


class Commit:
    """A replayed pack's commit: its id's bytes, and what its ops' rows hold to name
    it (the bytes, or a commits row: see Fold._pack_commit)."""

    __slots__ = ("oid", "stored")

    def __init__(self, oid: bytes, stored: bytes | int) -> None:
        self.oid = oid
        self.stored = stored


_encode = msgspec.json.Encoder()


def _json(value: object) -> str:
    """A JSON column's text (msgspec: a tenth of json.dumps' cost on a rebuild)."""
    return _encode.encode(value).decode()


def clear(c: sqlite3.Connection) -> None:
    """Empty every table the log fills (gate verdicts and meta survive)."""
    # The index first, in one step: it holds no text of its own, so deleting its
    # rows one by one would read each from the memories table.
    c.execute("INSERT INTO memories_fts(memories_fts) VALUES ('delete-all')")
    for t in ("partitions", "authors", "commits", "ops", "links", "memories", "skipped",
              "vec_rows", "edges"):
        c.execute(f"DELETE FROM {t}")


class Fold:
    """One refresh's replay into the tables, inside the caller's transaction.

    ``verdicts(op_id, op)`` is the write gate's reason to quarantine an op (or
    None), asked about every free field that reaches an agent, the author's
    name included: an add that fails is kept with its memory quarantined
    (hidden unless asked for); an invalidate, forget or confirm that fails
    (its author's name or reason) is not applied and is listed as skipped.
    ``zero_row(slot)`` blanks a vector row whose memory was forgotten or
    dropped. After ``apply_moves``, ``scrubbed`` says content was removed, so
    the caller compacts the full-text index.
    """

    def __init__(
        self,
        c: sqlite3.Connection,
        *,
        verdicts: Verdicts,
        zero_row: Callable[[int], None],
        progress: Callable[[str, int, int | None], None] | None = None,
        gate_ahead: GateAhead | None = None,
    ) -> None:
        self._c = c
        self._verdict = verdicts
        self._gate_ahead = gate_ahead  # a child judging the later packs (gateahead.py)
        self._zero_row = zero_row
        self._progress = progress
        self.scrubbed = False  # content was removed: compact the index
        self._dirty_keys: set[str] = set()  # keys whose conflict winner must be recomputed
        self._authors: dict[tuple[str, str], int] = {}  # (name, email) -> authors row
        self._commits: dict[bytes, int] = {}  # a commit id's bytes -> commits row
        self._fts = FtsRows(c)  # each memory's row in the full-text index (ftsrows.py)

    def clear(self) -> None:
        self._fts.clear()
        self._verdict.carry("1", ())
        self._authors.clear()
        self._commits.clear()
        clear(self._c)

    def apply_moves(
        self,
        source: LogSource,
        current: dict[str, str],
        stored: dict[str, str],
        report: RefreshReport,
        deadline: float | None = None,
        budget: bool = False,
    ) -> bool:
        """Replay what moved from the ``stored`` tips to the ``current`` ones; False
        when ``deadline`` (time.monotonic) stopped it early. Under a deadline at least
        one commit is replayed (a catch-up's slice always progresses), unless
        ``budget``: a front end's time budget (a hook, MCP), where a commit whose
        replay would overrun it is left to the background catch-up, however early.

        Stopping early is safe to resume: a partition's stored tip is then the
        last commit replayed whole, an ancestor of its real tip, so the next
        refresh goes on from there; replay is order-independent, so the end
        state is the one a single refresh would reach."""
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
                self.clear()
                report.full_rebuild = True
                stored = {}
                break
        else:
            stored = {r: t for r, t in stored.items() if r not in gone and r not in rewritten}
        report.partitions_rewritten = len(rewritten)
        # A first replay (nothing stored, empty tables) builds the indexes it does not
        # read at its end; the same transaction holds the drop, so a failure keeps them.
        remake = (tables.drop_deferrable(c) if not stored and c.execute(
            "SELECT 1 FROM memories UNION ALL SELECT 1 FROM ops LIMIT 1").fetchone() is None
            else [])
        if remake:  # a first replay's random-order inserts: a page cache of 64 MiB for it
            c.execute("PRAGMA cache_size = -65536")
            self._fts.bulk = True
        complete = True
        progressed = budget  # a bounded refresh replays at least one commit (see above)
        for ref, tip in sorted(current.items()):
            since = stored.get(ref)
            if since == tip:
                continue
            if deadline is not None and progressed and time.monotonic() > deadline:
                complete = False
                break
            report.partitions_changed += 1
            name = partition(ref)
            c.execute("INSERT INTO partitions(ref) VALUES (?) ON CONFLICT(ref) DO NOTHING", (ref,))
            part, last = c.execute("SELECT id, last_clock FROM partitions WHERE ref = ?",
                                   (ref,)).fetchone()
            # The clock bound is checked against this partition's own history,
            # whose last accepted clock is stored with its tip (see ClockGuard).
            guard = replay.ClockGuard(last)
            reached = since
            for pack in source.iter_packs(tip, since):
                if deadline is not None and progressed and time.monotonic() > deadline:
                    complete = False
                    break  # at a commit boundary: every op of ``reached`` is in
                commit = getattr(pack, "commit")
                data = getattr(pack, "data")
                # From this line on, a child judged the ops (gateahead.py): take its verdicts.
                split = (self._gate_ahead.first_line(commit) if self._gate_ahead is not None
                         else None)
                if (budget and deadline is not None and data is not None
                        and time.monotonic() + len(data) * REPLAY_SECONDS_PER_BYTE > deadline):
                    complete = False
                    break  # one teammate's 30 MB commit took 15 s: every prompt hook died
                if data is None:
                    self._skip(ref, commit, -1, None, getattr(pack, "error") or "unreadable")
                    report.ops_skipped += 1
                    reached, progressed = commit, True
                    continue
                here = self._pack_commit(commit, data)
                for item in replay.decode_pack(data, name):
                    if split is not None and item.line >= split:
                        assert self._gate_ahead is not None
                        self._gate_ahead.join(self._verdict.carried)
                        split = None
                    item = guard.admit(item)
                    if not isinstance(item, replay.Skip):
                        item = self._screen(item)
                    if isinstance(item, replay.Skip):
                        self._skip(ref, commit, item.line, item.id, item.reason)
                        report.ops_skipped += 1
                    else:
                        self._apply(part, here, item)
                        report.ops_applied += 1
                        if self._progress is not None and report.ops_applied % 500 == 0:
                            self._progress("replaying ops", report.ops_applied, None)
                reached, progressed = commit, True
            if reached is None:  # stopped before this partition's first commit
                c.execute("DELETE FROM partitions WHERE id = ? AND tip IS NULL", (part,))
                continue
            c.execute("UPDATE partitions SET tip = ?, last_clock = ? WHERE id = ?",
                      (reached, guard.last, part))
            if not complete:
                break
        for ref in gone:
            c.execute("DELETE FROM partitions WHERE ref = ?", (ref,))
        if self._fts.bulk:
            self._settle_bulk()
        self._fts.flush()
        if remake and c.execute("SELECT 1 FROM memories_fts_idx LIMIT 1").fetchone():
            # FTS5 wrote segments as its buffer filled: merge them now (a refresh of
            # many ops would at its end), so that the indexes made next take the pages
            # the merge frees, rather than leaving them free in the file (4 MB at 100k).
            c.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
        for sql in remake:
            c.execute(sql)
        if remake:  # back to SQLite's default: other commands keep a small footprint
            c.execute("PRAGMA cache_size = -2000")
        self._rekey_dirty()
        return complete

    def _screen(self, d: replay.Decoded) -> replay.Decoded | replay.Skip:
        """An op that retires or confirms is not applied if the gate refuses
        its author's name or reason (an add is quarantined where it is stored).
        A function of the op alone, so arrival order does not matter."""
        if isinstance(d.op, ops.AddOp):
            return d
        reason = self._verdict(d.id, d.op)
        return replay.Skip(d.line, f"quarantined: {reason}", d.id) if reason else d

    def _skip(self, ref: str, commit: str, line: int, op_id: str | None, reason: str) -> None:
        self._c.execute(
            "INSERT OR REPLACE INTO skipped(ref, commit_id, line, op_id, reason) "
            "VALUES (?, ?, ?, ?, ?)",
            (ref, commit, line, op_id, reason),
        )

    def _known_add(self, commit: Commit, key: bytes) -> bool:
        """An add already replayed (set union; ``key``: its id's bytes): True, its
        memory row keeping the smallest commit id, so the result does not depend on
        which copy came first. (An add's op row is its memory's row: the ops table
        holds the others.)"""
        return self._keep_first("memories", "digest", commit, key)

    def _keep_first(self, table: str, column: str, commit: Commit, key: object) -> bool:
        """The row of ``table`` whose ``column`` is ``key`` names the smaller of its
        commit and ``commit`` (compared as ids, however stored); False: no such row."""
        c = self._c
        row = c.execute(f"SELECT t.commit_id, cm.oid FROM {table} t LEFT JOIN commits cm "
                        f"ON cm.id = t.commit_id WHERE t.{column} = ?", (key,)).fetchone()
        if row is None:
            return False
        if commit.oid < (row[0] if isinstance(row[0], bytes) else row[1]):
            c.execute(f"UPDATE {table} SET commit_id = ? WHERE {column} = ?",
                      (commit.stored, key))
        return True

    def _pack_commit(self, hex_commit: str, data: bytes) -> Commit:
        """How the rows of a pack's ops name its commit: a pack of several ops (an
        import writes thousands) by its commits row, a pack of one op (an add) by
        the commit's own bytes, fewer than a commits row and its index would take."""
        oid = bytes.fromhex(hex_commit)
        several = data.count(b"\n", 0, len(data) - 1) > 0  # (the last line ends the pack)
        return Commit(oid, self._commit(oid) if several else oid)

    def _commit(self, oid: bytes) -> int:
        """The commits row of a commit id's bytes (made on first sight)."""
        number = self._commits.get(oid)
        if number is None:
            c = self._c
            c.execute("INSERT INTO commits(oid) VALUES (?) ON CONFLICT(oid) DO NOTHING", (oid,))
            number = int(c.execute("SELECT id FROM commits WHERE oid = ?", (oid,)).fetchone()[0])
            self._commits[oid] = number
        return number

    def _author(self, author: ops.Author) -> int:
        """The authors row of a name and email (made on first sight)."""
        number = self._authors.get((author.name, author.email))
        if number is None:
            c = self._c
            c.execute("INSERT INTO authors(name, email) VALUES (?, ?) "
                      "ON CONFLICT(email, name) DO NOTHING", (author.name, author.email))
            number = int(c.execute("SELECT id FROM authors WHERE email = ? AND name = ?",
                                   (author.email, author.name)).fetchone()[0])
            self._authors[(author.name, author.email)] = number
        return number

    def _insert_op(self, part: int, commit: Commit, d: replay.Decoded, target: str,
                   reason: str | None) -> bool:
        """Record an op that targets a memory; False if it was already known (set union)."""
        op = d.op
        cur = self._c.execute(
            "INSERT INTO ops(id, type, part, commit_id, clock, at, tz, author, target, reason, "
            "by, outcome) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(id) DO NOTHING",
            (d.id, ops.op_type(op), part, commit.stored, op.clock, op.at, op.tz,
             self._author(op.author), target, reason, getattr(op, "by", None),
             getattr(op, "outcome", None)),
        )
        if cur.rowcount == 0:
            # The same op reached us twice: keep the smallest commit id (as _known_add).
            self._keep_first("ops", "id", commit, d.id)
            return False
        return True

    def _apply(self, part: int, commit: Commit, d: replay.Decoded) -> None:
        op = d.op
        c = self._c
        # A first replay (empty tables) settles every status once, at its end
        # (_settle_bulk): an op's target may arrive after it in any order anyway.
        bulk = self._fts.bulk
        if isinstance(op, ops.AddOp):
            key = bytes.fromhex(d.id)  # (replay computed it: 64 hex digits)
            if not bulk and self._known_add(commit, key):
                return
            m = op.memory
            quarantine = self._verdict(d.id, op)
            # What the gate refuses retires nothing, as a refused invalidate
            # is not applied: a quarantined add supersedes no memory.
            replaces = [] if quarantine else op.supersedes
            # A replacement closes the old memory's validity when it starts.
            closes = m.valid_from if m.valid_from is not None else op.at
            for old in replaces:
                c.execute(
                    "INSERT OR IGNORE INTO links(target, op, type, at, closes) "
                    "VALUES (?, ?, 'supersede', ?, ?)",
                    (old, d.id, op.at, closes),
                )
            # Keys and tags as writers store them (ops.folded): a teammate's look-alike
            # spelling is the same key, and conflicts visibly.
            mkey = None if m.key is None else ops.folded(m.key)
            tags, entities = _json(list(dict.fromkeys(map(ops.folded, m.tags)))), _json(m.entities)
            named = self._verdict.version()  # the version that judged quarantine
            values = (key, tables.KIND_CODE[m.kind], m.text, mkey, tags, entities,
                      m.importance * 2, m.valid_from, m.valid_until, m.source, m.session,
                      None if m.anchors.commit is None else self._commit(
                          bytes.fromhex(m.anchors.commit)),
                      _json(m.anchors.paths) if m.anchors.paths else None,
                      _json(op.supersedes) if op.supersedes else None,
                      part, commit.stored, op.clock, op.at, op.tz, self._author(op.author),
                      quarantine, m.by,
                      _json(m.link) if m.link is not None else None,
                      norm(m.text), named[1] if named else None)
            fts_row = self._fts.place(d.id, key)
            if bulk:
                # One statement for a new add and the look for a copy (a first replay
                # places rows without moving others: see FtsRows.place).
                cur = c.execute(_BULK_INSERT, (*values, fts_row))
                if cur.rowcount == 0:
                    self._known_add(commit, key)
                    return
            else:
                cur = c.execute(_INSERT, (*values, fts_row))
            rowid = cur.lastrowid
            assert rowid is not None
            self._fts.add(rowid, (fts_row, m.text, mkey, tags, entities))
            if m.link is not None and m.kind == "edge":  # before a forget that came first
                c.execute("INSERT OR IGNORE INTO edges(memory, src, predicate, dst, src_name, "
                          "dst_name) VALUES (?, ?, ?, ?, ?, ?)",
                          (d.id, m.link.src, m.link.predicate, m.link.dst,
                           ops.node_name(m.link.src), ops.node_name(m.link.dst)))
            if m.anchors.code or m.anchors.paths:  # before a forget that came first scrubs it
                code.record(c, d.id, d.id, op.clock, m.anchors)
            # Ops that retire this memory may have arrived before it.
            if not bulk and c.execute("SELECT 1 FROM links WHERE target = ? LIMIT 1",
                                      (d.id,)).fetchone():
                self._recompute(d.id)
            for old in replaces if not bulk else ():
                self._recompute(old)
            if mkey is not None:
                self._dirty_keys.add(mkey)
        elif isinstance(op, (ops.InvalidateOp, ops.ForgetOp)):
            if not self._insert_op(part, commit, d, op.target, op.reason):
                return
            c.execute(
                "INSERT OR IGNORE INTO links(target, op, type, at, closes) VALUES (?, ?, ?, ?, ?)",
                (op.target, d.id, ops.op_type(op), op.at, op.at),
            )
            if not bulk:
                self._recompute(op.target)
        elif isinstance(op, ops.ConfirmOp):
            # Reinforcement (counted by ranking straight from the ops table), and
            # with anchors a re-anchoring at the code as it was then.
            if (self._insert_op(part, commit, d, op.target, op.reason) and op.anchors is not None
                    and c.execute("SELECT 1 FROM memories WHERE digest = ? "
                                  "AND status = 'forgotten'", (digest(op.target),)).fetchone()
                    is None):
                # (A forgotten memory keeps no paths, whichever op came first.)
                code.record(c, op.target, d.id, op.clock, op.anchors, reanchor=True)

    def _settle_bulk(self) -> None:
        """End a first replay: the status of every memory an op retires, worked out
        once from all of them (a first replay skips it per op: 100k lookups)."""
        for (target,) in self._c.execute("SELECT DISTINCT target FROM links").fetchall():
            self._recompute(target)

    def _rekey_dirty(self) -> None:
        """Recompute conflict winners once per key touched by this refresh (per op
        would be quadratic in the number of values a key has)."""
        for key in sorted(self._dirty_keys):
            self._rekey(key)
        self._dirty_keys.clear()

    def _rekey(self, key: str) -> None:
        """Mark the losers of a keyed conflict (rule: replay.keyed_winner)."""
        c = self._c
        winner, losers = replay.keyed_winner(
            replay.KeyedValue(mid, clock, status, bool(quarantined))
            for mid, clock, status, quarantined in c.execute(
                "SELECT id, clock, status, quarantine IS NOT NULL FROM memories WHERE key = ?",
                (key,)))
        c.execute("UPDATE memories SET shadowed_by = NULL WHERE key = ? AND shadowed_by IS NOT NULL",
                  (key,))
        if losers:
            c.executemany("UPDATE memories SET shadowed_by = ? WHERE digest = ?",
                          [(winner, digest(loser)) for loser in losers])

    def _recompute(self, memory_id: str) -> None:
        """Set a memory's status from every op that retires it (rule: replay.fold_status)."""
        c = self._c
        row = c.execute(
            "SELECT rowid, status, key FROM memories WHERE digest = ?", (digest(memory_id),)
        ).fetchone()
        if row is None:
            return  # not replayed yet: its add will call us when it arrives
        rowid, old_status, key = row
        # The retiring op is an invalidate or a forget (in ops), or a superseding add
        # (its row in memories).
        effects = [
            replay.Effect(op_id, typ, clock, at, tz, reason)
            for op_id, typ, clock, at, tz, reason in c.execute(
                "SELECT o.id, l.type, o.clock, o.at, o.tz, o.reason FROM links l "
                "JOIN ops o ON o.id = l.op WHERE l.target = ? UNION ALL "
                "SELECT m.id, l.type, m.clock, m.at, m.tz, NULL FROM links l "
                "JOIN memories m ON m.digest = unhex(l.op) WHERE l.target = ?",
                (memory_id, memory_id),
            )
        ]
        st = replay.fold_status(effects)
        by = st.by
        forgetting = st.status == "forgotten" and old_status != "forgotten"
        if forgetting and not self._fts.drop_pending(rowid):
            # Out of the index first (unless it never went in: still pending, or a row
            # of a first replay, none of which is in yet): it finds the words to
            # delete in the row as it was indexed (memories_text), before the row is
            # scrubbed and forgotten.
            c.execute("DELETE FROM memories_fts WHERE rowid = "
                      "(SELECT fts FROM memories WHERE rowid = ?)", (rowid,))
        c.execute(
            "UPDATE memories SET state = ?, retired_by = ?, retired_at = ?, "
            "retired_tz = ?, retired_reason = ? WHERE rowid = ?",
            (tables.STATE_CODE[st.status], by.op_id if by else None, by.at if by else None,
             by.tz if by else None, by.reason if by else None, rowid),
        )
        if forgetting:
            # Tombstone: scrub every content field.
            c.execute(
                "UPDATE memories SET text = NULL, key = NULL, tags = '[]', "
                "entities = '[]', source = NULL, session = NULL, paths = NULL, norm = NULL, "
                "shadowed_by = NULL, link = NULL "
                "WHERE rowid = ?",
                (rowid,),
            )
            code.drop_memory(c, memory_id)
            c.execute("DELETE FROM edges WHERE memory = ?", (memory_id,))
            self.scrubbed = True
            for (slot,) in c.execute("SELECT slot FROM vec_rows WHERE memory = ?", (rowid,)).fetchall():
                self._zero_row(slot)
        if key is not None:
            self._dirty_keys.add(key)

    def _drop_partition(self, ref: str) -> bool:
        """Remove every row a partition contributed. False if a full replay is needed."""
        c = self._c
        row = c.execute("SELECT id FROM partitions WHERE ref = ?", (ref,)).fetchone()
        part = row[0] if row else None
        if c.execute(
            "SELECT 1 FROM ops WHERE part = ? AND type = 'forget' LIMIT 1", (part,)
        ).fetchone():
            return False
        targets = [
            r[0]
            for r in c.execute(
                "SELECT l.target FROM links l JOIN ops o ON o.id = l.op WHERE o.part = ? "
                "UNION SELECT l.target FROM links l JOIN memories m ON m.id = l.op "
                "WHERE m.part = ?",
                (part, part),
            )
        ]
        self._fts.flush()
        # (A forgotten memory's row is no longer in the index, nor in memories_text:
        # deleting it again is a no-op, never a second removal of its words.)
        c.execute(
            "DELETE FROM memories_fts WHERE rowid IN (SELECT fts FROM memories WHERE part = ?)",
            (part,),
        )
        self.scrubbed = True  # a rewritten partition may have dropped content (a purge)
        for (slot,) in c.execute(
            "SELECT slot FROM vec_rows WHERE memory IN (SELECT rowid FROM memories WHERE part = ?)",
            (part,),
        ).fetchall():
            self._zero_row(slot)  # orphaned rows must not weigh on anything
        c.execute(
            "DELETE FROM vec_rows WHERE memory IN (SELECT rowid FROM memories WHERE part = ?)",
            (part,),
        )
        keys = [r[0] for r in c.execute(
            "SELECT DISTINCT key FROM memories WHERE part = ? AND key IS NOT NULL", (part,))]
        self._verdict.carry("m.part = ?", (part,))  # the partition is replayed next
        c.execute("DELETE FROM edges WHERE memory IN (SELECT id FROM memories WHERE part = ?)",
                  (part,))
        code.drop_ops_of(c, part)  # (before the rows that say which ops are the partition's)
        c.execute("DELETE FROM links WHERE op IN (SELECT id FROM ops WHERE part = ?) "
                  "OR op IN (SELECT id FROM memories WHERE part = ?)", (part, part))
        c.execute("DELETE FROM memories WHERE part = ?", (part,))
        c.execute("DELETE FROM ops WHERE part = ?", (part,))
        c.execute("DELETE FROM skipped WHERE ref = ?", (ref,))
        c.execute("DELETE FROM partitions WHERE ref = ?", (ref,))
        for t in targets:
            self._recompute(t)
        self._dirty_keys.update(keys)
        return True
