"""The projection's SQLite file: the tables it holds and the version they are stamped with.

Why this exists: what the file holds is defined in one place (the DDL, the
numbers kinds and statuses are stored as, the history of SCHEMA_VERSION), so
one stamp says whether a file can be used. The projection is disposable: the
file carries a schema version and the op format it was replayed with, and on
a mismatch every table is dropped and recreated empty (``reset``; the next
refresh replays the log), never migrated. ``check`` compares the file's schema
with the one this version creates and queries every table, so damage is found
on open rather than in the middle of a command.
"""

from __future__ import annotations

import sqlite3

from .. import ops
from . import code, connection
from .damage import ProjectionCorrupt

# Bump when the tables change: a mismatch rebuilds from the log, never migrates.
# 9: memories_norm covers (norm, kind, key), the exact-duplicate lookup.
# 10: memories.fts, a memory's FTS5 rowid: its id's first 60 bits (bm25 ties in id order).
# 11: code anchors and their state against HEAD (projection/code.py).
# 12: who wrote a memory or confirm (by), a confirm's outcome, links (edges).
# 13: memories_author (the context profile looks past a crowd author by author);
#     ops_target and memories_session partial (NULLs left out).
# 14: memories_fts indexes the memories table (external content, through the
#     memories_text view): the text is stored once. An add's op is its memory's
#     row (ops holds the other ops); memories_clock orders the log. An add's
#     gate verdict is on its memory's row, versions named once (gate_versions).
#     Partitions and authors by number, commit ids as bytes, norm in 64 bits;
#     memories_top, memories_part (was memories_ref) without the id. A memory's
#     row in memories_fts: 32 bits of its id, kept in id order (was 60 bits).
#     No memories_status; memories_top and memories_author ascending;
#     memories_unembedded (partial) instead of memories_vec.
# 15: commit ids (a memory's anchor commit, the commit of a pack of several ops)
#     named once in commits, rows hold their number; memories.importance holds twice the importance;
#     memories.paths and supersedes NULL when empty; memories.room; norm in 32 bits,
#     memories_norm on it alone; memories.digest (the id's bytes; memories.id is
#     computed from it); memories.fts of 24 bits of the id (was 32); kind and status
#     computed from numbers (kind_code, state).
# 16: memories_top, memories_author and memories_clock end in fts, which follows
#     the id: ties of clock are ordered by the index (a flood of 20,000 partitions
#     puts 20,000 memories at clock 1; the context's walks sorted them all).
# 17: memories_fts has a concepts column: the words the thesaurus adds to a memory
#     (gitmem/concepts.py), computed in memories_text by the concepts() function;
#     meta holds the thesaurus's digest.
# 18: keys and tags are stored folded (ops.folded, NFKC): look-alike spellings of a
#     key are one key, and conflict.
# 19: the thesaurus reads a key's dotted parts as words ("oncall.primary": "oncall",
#     then "on call" is found), as the full-text index splits them.
# 20: memories_listed, the live memories by time: `list` pages and counts from it.
# 21: memories_past, the memories that may not be current (the vector channel leaves
#     their rows out of its statistics: vectors.unseen_slots).
SCHEMA_VERSION = 21
DB_NAME = "projection.sqlite3"


def wanted_meta() -> dict[str, str]:
    """What ``meta`` must say for the file to be used as it is."""
    from .. import concepts

    return {"schema": str(SCHEMA_VERSION), "format": str(ops.FORMAT_VERSION),
            "concepts": concepts.version()}


def meta_current(have: dict[str, str]) -> bool:
    """Whether ``meta`` (read_meta) says what this process wants (wanted_meta)."""
    want = wanted_meta()
    return {k: have.get(k) for k in want} == want


def read_meta(c: sqlite3.Connection) -> dict[str, str]:
    """The ``meta`` table; {} for a new, empty file. ProjectionCorrupt when the
    file holds tables but no usable meta."""
    # One statement, one snapshot: "no meta table" and "other tables exist" read in
    # two statements could straddle another process's first commit of the schema,
    # and a file being made looked like a damaged one (which is then deleted). Once
    # made, meta exists in every committed state (a reset drops and makes it again
    # in one transaction), so reading it next cannot miss it.
    entries, has_meta = c.execute(
        "SELECT count(*), coalesce(sum(type = 'table' AND name = 'meta'), 0) "
        "FROM sqlite_master").fetchone()
    if not has_meta:
        if entries:
            raise ProjectionCorrupt("the meta table is missing")
        return {}
    rows = c.execute("SELECT key, value FROM meta").fetchall()
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in rows):
        raise ProjectionCorrupt("the meta table holds values of the wrong type")
    return dict(rows)


_EXPECTED: set[tuple[str, str, str, str | None]] | None = None


def _expected() -> set[tuple[str, str, str, str | None]]:
    """Every row ``sqlite_master`` holds in a file this version created."""
    global _EXPECTED
    if _EXPECTED is None:
        mem = sqlite3.connect(":memory:")
        try:
            _create(mem)
            _EXPECTED = set(mem.execute(_MASTER).fetchall())
        finally:
            mem.close()
    return _EXPECTED


_MASTER = ("SELECT type, name, tbl_name, sql FROM sqlite_master "
           "WHERE name NOT LIKE 'sqlite_stat%'")


def _stamp(rows: list[tuple[str, str, str, str | None]]) -> str:
    """What a passed check is stamped with: the versions and the schema's rows."""
    from .. import hashes

    text = "\0".join("\1".join(map(str, r)) for r in sorted(rows, key=str))
    digest = hashes.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    return f"{SCHEMA_VERSION} {sqlite3.sqlite_version} {digest}"


def check(c: sqlite3.Connection) -> None:
    """ProjectionCorrupt unless the file has exactly this version's tables,
    columns and indexes, and every table answers a query (~2 ms: the expected
    schema is built in memory first).

    Once passed, the check is stamped in ``meta`` with a digest of what
    ``sqlite_master`` held: until that changes (a CREATE, DROP or ALTER, an edit
    with writable_schema; or another SQLite or schema version reads the file), a
    process reads the ~40 rows and compares the digest (~0.1 ms). Damage to pages
    is still found by the query that reads them. (A stamp forged to match a
    tampered schema is not caught: whoever can write .git can do worse.)"""
    rows = c.execute(_MASTER).fetchall()
    stamp = _stamp(rows)
    row = c.execute("SELECT value FROM meta WHERE key = 'checked'").fetchone()
    if row is not None and row[0] == stamp:
        return
    have = set(rows)
    want = _expected()
    if have != want:
        names = sorted({r[1] for r in have ^ want})
        raise ProjectionCorrupt(f"the schema differs from this version's ({', '.join(names[:5])})")
    for typ, name, _, _ in sorted(want):
        if typ == "table":
            c.execute(f'SELECT * FROM "{name}" LIMIT 1').fetchall()
    # Never wait for the lock to write the stamp (a read behind a rebuild would):
    # read-only or busy, the next process checks in full again.
    c.execute("PRAGMA busy_timeout = 0")
    try:
        c.execute("INSERT INTO meta(key, value) VALUES ('checked', ?) "
                  "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (stamp,))
    except sqlite3.OperationalError:
        pass
    finally:
        c.execute(f"PRAGMA busy_timeout = {connection.BUSY_TIMEOUT_MS}")


def _create(c: sqlite3.Connection) -> None:
    for stmt in (SCHEMA + code.SCHEMA).split(";\n"):  # statements end a line, comments never do
        if stmt.strip():
            c.execute(stmt)


# Secondary indexes a replay into empty tables does not read: dropped for it and made
# again at its end, a sort per index instead of a random B-tree insert per row (with
# them in place the ops and memories inserts of a 100k replay take twice as long).
DEFERRABLE = ("memories_key", "memories_top", "memories_author", "memories_norm", "memories_part",
              "memories_clock", "memories_session", "memories_fts_row",
              "ops_order", "ops_part", "ops_target",
              # (read after the replay only: by list, the embedding, recall)
              "memories_listed", "memories_unembedded", "memories_past")


def drop_deferrable(c: sqlite3.Connection) -> list[str]:
    """Drop the DEFERRABLE indexes (inside the caller's transaction); the statements
    that make them again."""
    marks = ",".join("?" * len(DEFERRABLE))
    made = [sql for (sql,) in c.execute(
        f"SELECT sql FROM sqlite_master WHERE type = 'index' AND name IN ({marks}) ORDER BY name",
        DEFERRABLE)]
    for name in DEFERRABLE:
        c.execute(f'DROP INDEX IF EXISTS "{name}"')
    return made


def reset(c: sqlite3.Connection, meta: dict[str, str]) -> bool:
    """Drop every table and create the schema empty, stamped with ``meta``.

    False when another process did it while we waited for the lock (nothing
    was dropped then)."""
    c.execute("BEGIN IMMEDIATE")
    try:
        try:
            have = read_meta(c)
        except (sqlite3.OperationalError, ProjectionCorrupt):
            have = {}
        if {k: have.get(k) for k in meta} == meta:
            check(c)  # whatever is there must be whole, or the caller rebuilds the file
            c.execute("COMMIT")  # another process set it up while we waited
            return False
        dropped = c.execute(
            "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%'"
        ).fetchall()
        for typ, name in dropped:
            c.execute(f'DROP {typ.upper()} IF EXISTS "{name}"')
        _create(c)
        c.executemany("INSERT INTO meta(key, value) VALUES (?, ?)", sorted(meta.items()))
        c.execute("COMMIT")
        return True
    except BaseException:
        connection.rollback(c)
        raise


# The text below, comments included, is what sqlite_master holds and ``check``
# compares: an edit is a schema change (bump SCHEMA_VERSION) even when only a
# comment changes. (So "fold.FTS_BITS" below stays: it is ftsrows.FTS_BITS now.)
SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
-- Each partition replayed: the tip replayed (NULL while its first commit is) and
-- the last clock accepted. Rows name their partition by id (part) and their
-- author by an authors row: a ref or an author's name and email, repeated on
-- every row, were a fifth of the file. Commits too are named by number (commits).
CREATE TABLE partitions(
    id INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE, tip TEXT,
    last_clock INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE authors(
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL, UNIQUE(email, name)
);
-- Commit ids that many rows share, stored once as their bytes: rows name them by
-- number. An import writes a thousand ops per commit, and a memory's anchor
-- commit is the HEAD it was written at, shared with every memory written there
-- (two 20-byte ids on every memory row were 4 MB at 100k). A commit of a single
-- op (an add) is named by its row as its bytes: a row here and in the index would
-- take three times that. Numbers follow arrival order and are never shown: queries
-- read the bytes (rows.py). A row nothing names any more (its partition was
-- rewritten) stays until the next rebuild.
CREATE TABLE commits(id INTEGER PRIMARY KEY, oid BLOB NOT NULL UNIQUE);
-- Every op but adds: an add's op row is its memory's row (memories holds its id,
-- partition, commit, clock, time and author), so ops holds the few that target a
-- memory (invalidate, forget, confirm).
CREATE TABLE ops(
    id TEXT PRIMARY KEY, type TEXT NOT NULL, part INTEGER NOT NULL,
    commit_id BLOB NOT NULL,  -- the commit's bytes, or its commits row (see commits)
    clock INTEGER NOT NULL, at INTEGER NOT NULL,
    tz INTEGER NOT NULL, author INTEGER NOT NULL,
    target TEXT, reason TEXT,
    by TEXT,  -- "agent:NAME" when an agent wrote it for the author, NULL: a person
    outcome TEXT  -- a confirm's "worked" or "failed" (a procedure followed)
) WITHOUT ROWID;
CREATE INDEX ops_order ON ops(clock, id);
CREATE INDEX ops_part ON ops(part);
-- Partial: most ops (every add) have no target, most memories no session, and every
-- query reads them by "= ?", which the planner knows is never NULL (14 MB at 100k).
CREATE INDEX ops_target ON ops(target) WHERE target IS NOT NULL;
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
    -- The memory's id (its add op's) as its 32 bytes, in the row and in its unique
    -- index; ``id`` reads it as the 64 hex digits records show (computed, never
    -- stored: look a memory up by digest, see rows.digest). Text ids were 6.5 MB
    -- more at 100k.
    digest BLOB NOT NULL UNIQUE,
    id TEXT GENERATED ALWAYS AS (lower(hex(digest))) VIRTUAL,
    -- Its kind and status as numbers (KINDS, STATES), which ``kind`` and ``status``
    -- read as their names: the names on every row and in two indexes were 2 MB at
    -- 100k. A query that walks an index by kind names kind_code.
    kind_code INTEGER NOT NULL,
    kind TEXT GENERATED ALWAYS AS (@KIND@) VIRTUAL,
    text TEXT, key TEXT,
    tags TEXT NOT NULL, entities TEXT NOT NULL,
    -- Twice the memory's importance: exact (halving and doubling a float are), in the
    -- same order, and a whole REAL is stored as an integer, so the default 0.5 takes
    -- no byte (in the row and in two indexes: 8 bytes each, 2.5 MB at 100k).
    importance REAL NOT NULL,
    valid_from INTEGER, valid_until INTEGER, source TEXT, session TEXT,
    -- JSON lists, NULL when empty (as most are). Tags and entities stay "[]": the
    -- full-text index and the embedder read them as they are.
    anchor_commit INTEGER, paths TEXT, supersedes TEXT,
    part INTEGER NOT NULL,
    commit_id BLOB NOT NULL,  -- the commit's bytes, or its commits row (see commits)
    clock INTEGER NOT NULL,
    at INTEGER NOT NULL, tz INTEGER NOT NULL, author INTEGER NOT NULL,
    state INTEGER NOT NULL,
    status TEXT GENERATED ALWAYS AS (@STATUS@) VIRTUAL,
    retired_by TEXT, retired_at INTEGER,
    retired_tz INTEGER, retired_reason TEXT,
    vec_slot INTEGER,  -- first row in vectors.i8, NULL until embedded
    -- Room for the slot: 3 bytes while vec_slot is NULL, none once it is set, so a
    -- row does not grow when its memory is embedded (a slot below 2^23 takes 3 bytes
    -- at most). Rows are written packed into their pages; growing by their slot
    -- afterwards, they split an eighth of the table's pages into half-empty ones
    -- (3 MB at 100k).
    room BLOB GENERATED ALWAYS AS (CASE WHEN vec_slot IS NULL THEN x'000000' END) STORED,
    quarantine TEXT,  -- why the write gate would refuse it, NULL when it passes
    -- A keyed value that loses a conflict: the id of the current winner (the
    -- greatest (clock, id) among the key's active values), NULL otherwise.
    shadowed_by TEXT,
    norm INTEGER,  -- rows.norm(text), 32 bits of ops.text_hash: finds exact duplicates
    -- Its row in memories_fts: rows increase with ids (fold.FTS_BITS), so FTS5
    -- breaks bm25 ties in id order whatever order ops arrived in. (The table's own
    -- rowid stays sequential: random rowids would half-fill its pages.)
    fts INTEGER,
    by TEXT,  -- "agent:NAME" when an agent wrote it, NULL: a person
    link TEXT,  -- an edge's {"src", "predicate", "dst"} as JSON, NULL otherwise
    gate INTEGER  -- the gate_versions row that judged quarantine, NULL: no gate ran
);
CREATE INDEX memories_key ON memories(key) WHERE key IS NOT NULL;
-- The context profile's walks, most important and newest first: backwards. Ties of
-- importance and clock are in id order through fts (which follows the id, in 3 or 4
-- bytes where the id takes 32), descending in the index so that the backward walk
-- reads them ascending: a flood of partitions puts thousands of memories at one
-- clock, and sorting those after the walk cost the context ~50 ms at 20,000.
-- Ascending, a new memory's entry goes after the others of its kind and
-- importance, so pages fill up: descending, it went first and left pages half
-- empty (5.3 MB at 100k memories added in packs, 3.0 ascending).
CREATE INDEX memories_top ON memories(kind_code, importance, clock, fts DESC);
CREATE INDEX memories_author ON memories(author, kind_code, importance, clock, fts DESC);
CREATE INDEX memories_shadowed ON memories(shadowed_by) WHERE shadowed_by IS NOT NULL;
-- The exact-duplicate lookup (by norm alone: texts that share it are a handful at
-- most, whatever their kind and key; the query names the index, as the planner
-- would rather walk memories_top through every memory of the kind).
CREATE INDEX memories_norm ON memories(norm);
CREATE UNIQUE INDEX memories_fts_row ON memories(fts);
-- The memories waiting for a vector (every read asks whether there are any): once
-- embedded, a memory leaves it. A vector row's memory is found through vec_rows.
CREATE INDEX memories_unembedded ON memories(kind_code) WHERE vec_slot IS NULL;
-- Every vector row and the memory it belongs to: a long memory has a row for
-- the whole and one per chunk, its similarity is the best of them.
CREATE TABLE vec_rows(slot INTEGER PRIMARY KEY, memory INTEGER NOT NULL);
CREATE INDEX vec_rows_memory ON vec_rows(memory);
CREATE INDEX memories_part ON memories(part, clock);
-- The log's order (clock, id) among adds, ties of a clock in id order through fts
-- (a flood of partitions makes them many).
CREATE INDEX memories_clock ON memories(clock, fts);
CREATE INDEX memories_session ON memories(session, clock, digest) WHERE session IS NOT NULL;
-- `list`'s default view, newest first: the live memories in its order (time,
-- clock, then fts, which follows the id). A page is a backward walk of it with no
-- sort, a count a scan of it alone, a kind filter included: at 100k, 0.1 and
-- ~13 ms where the table's scan and sort took ~90-200 each (an import puts
-- thousands of memories in one second). Partial, so that it holds only what the
-- default view shows (2.3 MB at 100k); a query can use it only if its WHERE
-- repeats these terms (scope.filters writes them, queries.browse adds the text's).
CREATE INDEX memories_listed ON memories(at, clock, fts, kind_code, valid_until)
    WHERE text IS NOT NULL AND state = 0 AND quarantine IS NULL AND shadowed_by IS NULL;
-- The memories that may not be current: retired (superseded, invalidated,
-- forgotten), a conflict's losing value, quarantined, or with an end of validity.
-- The vector file holds a row for every value a key ever had; the vector channel
-- leaves these memories' rows out of its mean and spread (vectors.unseen_slots).
-- Partial, so that in a store of current memories it is nearly empty; a query can
-- use it only if its WHERE repeats these terms (vectors.PAST).
CREATE INDEX memories_past ON memories(fts)
    WHERE state != 0 OR shadowed_by IS NOT NULL OR quarantine IS NOT NULL
    OR valid_until IS NOT NULL;
-- The full-text index holds no copy of the text (external content): FTS5 reads a
-- memory's indexed columns from this view only when it needs them (to delete its
-- row from the index, or in an integrity check); ranking never does. Tags and
-- entities are indexed as their JSON text: no tag or entity holds a control
-- character, so JSON's escapes add no word. The view holds exactly the rows the
-- index holds: a forgotten memory's row leaves the index before it is scrubbed.
CREATE VIEW memories_text(fts, text, key, tags, entities, concepts) AS
    SELECT fts, text, key, tags, entities, concepts(text, key, tags, entities)
    FROM memories WHERE status != 'forgotten';
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, key, tags, entities, concepts, content = 'memories_text', content_rowid = 'fts',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
-- The write gate's verdicts (verdicts.Verdicts): a pure function of the op's bytes and
-- the gate's version, so a replay asks the gate once per op. An add's verdict is
-- on its memory's row (memories.gate, memories.quarantine); any other op's is here,
-- by its id's 32 bytes. The versions are named once.
CREATE TABLE gate_versions(id INTEGER PRIMARY KEY, version TEXT NOT NULL UNIQUE);
CREATE TABLE gate_verdicts(
    op BLOB PRIMARY KEY, version INTEGER NOT NULL, reason TEXT
) WITHOUT ROWID;
-- The live graph's raw material: one row per edge memory (its status is the
-- memory's). Node names compare without case.
-- src_name, dst_name: the node names without their type ("billing" of
-- "component:billing"), what a query's words are matched against.
CREATE TABLE edges(
    memory TEXT PRIMARY KEY, src TEXT NOT NULL COLLATE NOCASE,
    predicate TEXT NOT NULL, dst TEXT NOT NULL COLLATE NOCASE,
    src_name TEXT NOT NULL COLLATE NOCASE, dst_name TEXT NOT NULL COLLATE NOCASE
) WITHOUT ROWID;
CREATE INDEX edges_src ON edges(src);
CREATE INDEX edges_dst ON edges(dst);
CREATE INDEX edges_src_name ON edges(src_name);
CREATE INDEX edges_dst_name ON edges(dst_name);
CREATE TABLE skipped(
    ref TEXT NOT NULL, commit_id TEXT NOT NULL, line INTEGER NOT NULL,
    op_id TEXT, reason TEXT NOT NULL, PRIMARY KEY(ref, commit_id, line)
) WITHOUT ROWID;
"""

# memories.kind_code and memories.state: a kind's and a status's number is its place
# here (the two most frequent first: 0 and 1 take no byte in a row or an index).
KINDS = ("note", "fact", "procedure", "edge", "persona")
STATES = ("active", "invalidated", "superseded", "forgotten")
KIND_CODE = {name: code for code, name in enumerate(KINDS)}
STATE_CODE = {name: code for code, name in enumerate(STATES)}


def _names(column: str, names: tuple[str, ...]) -> str:
    return f"CASE {column} " + " ".join(f"WHEN {code} THEN '{name}'"
                                        for code, name in enumerate(names)) + " END"


SCHEMA = SCHEMA.replace("@KIND@", _names("kind_code", KINDS)).replace(
    "@STATUS@", _names("state", STATES))
