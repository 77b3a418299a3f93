"""What the projection's file holds: each thing once, and nothing forgotten.

The projection is a cache, but a large one pages in slowly and a forgotten
memory must leave it entirely. These tests read the SQLite file (and its
write-ahead log) as bytes and through SQLite's own checks.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import craft
import gitmem
from conftest import gm
from gitmem import ops
from gitmem.api import gating
from gitmem.projection import connection, damage, tables

PHRASE = "the quokka ledger reconciles every fortnight at dawn"
TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def cache(repo: Path) -> Path:
    return repo / ".git" / "mem" / "cache"


def file_bytes(repo: Path) -> bytes:
    """The database and its write-ahead log, as they are on disk."""
    db = cache(repo) / "projection.sqlite3"
    wal = db.with_name(db.name + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def index_matches_memories(db: Path) -> None:
    """FTS5's own check: every row of memories_text is in the index with exactly
    its words, and the index holds nothing else (raises if not). (The projection's
    own connection: memories_text computes the thesaurus's words with its function.)"""
    c = connection.connect(db)
    try:
        c.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        c.close()


def test_the_text_is_stored_once(repo: Path) -> None:
    gm("add", PHRASE, "--tag", "finance", cwd=repo)
    gm("recall", "quokka", cwd=repo)
    assert file_bytes(repo).count(PHRASE.encode()) == 1  # the row; the index holds words
    with sqlite3.connect(cache(repo) / "projection.sqlite3") as c:
        tables = {name for (name,) in c.execute("SELECT name FROM sqlite_master")}
    assert "memories_fts_content" not in tables
    index_matches_memories(cache(repo) / "projection.sqlite3")


def test_forgetting_leaves_no_trace_in_the_file(repo: Path) -> None:
    keep = "the wombat ledger is kept"
    gm("add", keep, cwd=repo)
    mid = gm("add", PHRASE, "--tag", "zanzibarian", cwd=repo).stdout.strip()
    assert "quokka" in gm("recall", "quokka", cwd=repo).stdout
    gm("forget", mid, cwd=repo)
    assert "quokka" not in gm("recall", "quokka", cwd=repo).stdout
    raw = file_bytes(repo)
    # Neither the text nor any word only it held (the index's terms), nor its tag.
    for word in (PHRASE, "quokka", "reconcil", "fortnight", "zanzibarian"):
        assert word.encode() not in raw, word
    assert b"wombat" in raw  # the other memory is still indexed
    index_matches_memories(cache(repo) / "projection.sqlite3")
    with gitmem.open(repo) as s:
        assert [h.text for h in s.recall("ledger")] == [keep]


def test_a_rebuild_or_a_rewrite_asks_the_gate_about_no_op_again(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Verdicts are cached: an add's on its memory's row, any other op's by its id."""
    asked: list[str] = []
    real = gating.quarantine_reason

    def counting(op: ops.Op) -> str | None:
        asked.append(ops.op_type(op))
        return real(op)

    monkeypatch.setattr(gating, "quarantine_reason", counting)
    ref = "refs/memory/" + craft.partition("mallory@example.com")
    quiet = craft.add_op("mallory", 1, "the build cache lives in /var/cache")
    loud = craft.add_op("mallory", 2, "the deploy token is " + TOKEN)
    stale = craft.retire_op("invalidate", "mallory", 3, ops.op_id(quiet), reason="moved")
    chain = craft.commit_packs(repo, [ops.encode_pack([quiet, loud]), ops.encode_pack([stale])])
    craft.set_ref(repo, ref, chain[-1])
    with gitmem.open(repo) as s:
        s.refresh()
        assert sorted(asked) == ["add", "add", "invalidate"]
        flagged = s.projection.record(ops.op_id(loud))
        assert flagged is not None and flagged.quarantine
        with sqlite3.connect(s.projection.path) as c:  # only the invalidate's verdict there
            assert c.execute("SELECT count(*) FROM gate_verdicts").fetchone() == (1,)
        s.rebuild()
        assert len(asked) == 3
        again = s.projection.record(ops.op_id(loud))
        assert again is not None and again.quarantine == flagged.quarantine
        assert s.projection.record(ops.op_id(quiet)).status == "invalidated"  # type: ignore[union-attr]
    # The partition is rewritten (a purge, say): only the new op meets the gate.
    extra = craft.add_op("mallory", 4, "the cache is warmed at boot")
    rewritten = craft.commit_packs(repo, [ops.encode_pack([quiet, loud, stale, extra])])
    craft.set_ref(repo, ref, rewritten[-1])
    with gitmem.open(repo) as s:
        s.refresh()
        assert s.last_refresh is not None and s.last_refresh.partitions_rewritten == 1
        assert len(asked) == 4
        assert s.projection.record(ops.op_id(loud)).quarantine == flagged.quarantine  # type: ignore[union-attr]


# The parts of a schema-13 projection (before this layout) that this version no
# longer has: an ops row per add, the version string per verdict, the text kept a
# second time by the full-text index.
SCHEMA_13 = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE partitions(
    ref TEXT PRIMARY KEY, tip TEXT NOT NULL, last_clock INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE ops(
    id TEXT PRIMARY KEY, type TEXT NOT NULL, ref TEXT NOT NULL, commit_id TEXT NOT NULL,
    clock INTEGER NOT NULL, at INTEGER NOT NULL, tz INTEGER NOT NULL,
    author_name TEXT NOT NULL, author_email TEXT NOT NULL, target TEXT, reason TEXT,
    by TEXT, outcome TEXT
) WITHOUT ROWID;
CREATE TABLE memories(rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
    text TEXT, status TEXT NOT NULL, fts INTEGER);
CREATE INDEX memories_status ON memories(status, kind);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    text, key, tags, entities, tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TABLE gate_verdicts(op_id TEXT PRIMARY KEY, version TEXT NOT NULL, reason TEXT) WITHOUT ROWID;
INSERT INTO meta VALUES ('schema', '13'), ('format', '1');
INSERT INTO memories_fts(rowid, text, key, tags, entities) VALUES (1, 'a stale quokka', '', '', '');
"""


def test_a_projection_of_the_previous_schema_is_rebuilt(repo: Path) -> None:
    gm("add", PHRASE, cwd=repo)
    gm("add", "the wombat ledger is kept", cwd=repo)
    gm("recall", "ledger", cwd=repo)
    for f in cache(repo).iterdir():
        if f.is_file():  # (the gate's kept programs are in a folder: gate/programs.py)
            f.unlink()
    with sqlite3.connect(cache(repo) / "projection.sqlite3") as c:
        c.executescript(SCHEMA_13)
    out = gm("recall", "quokka", cwd=repo)
    assert out.returncode == 0
    assert out.stderr == "warning: projection schema changed; rebuilt it from the op-log\n"
    assert PHRASE in out.stdout and "stale" not in out.stdout
    db = cache(repo) / "projection.sqlite3"
    with sqlite3.connect(db) as c:
        names = {name for (name,) in c.execute("SELECT name FROM sqlite_master")}
        assert dict(c.execute("SELECT key, value FROM meta WHERE key IN ('schema', 'format', 'concepts')")) \
            == tables.wanted_meta()
        assert c.execute("SELECT count(*) FROM memories").fetchone() == (2,)
    assert {"memories_fts_content", "memories_status"} & names == set()
    assert {"memories_text", "gate_versions", "authors"} <= names
    index_matches_memories(db)


def test_a_big_replay_leaves_the_full_text_index_in_one_segment(
        team: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every segment of the FTS5 index is searched for every word of every query: a
    replay of many ops (a big pull; refresh.OPTIMIZE_FROM, here lowered) merges them,
    with the same answers."""
    import json

    from conftest import dump, git
    from gitmem.projection import refresh

    monkeypatch.setattr(refresh, "OPTIMIZE_FROM", 20)
    monkeypatch.setattr(refresh, "MAX_SEGMENTS", 1)
    a, b = team["a"], team["b"]
    assert gm("init", "--fetch-refspec", cwd=a).returncode == 0
    with gitmem.open(a) as s:
        for n in range(4):  # each pull's replay commits a segment of its own
            lines = "\n".join(json.dumps({"text": f"round {n}: the worker {i} retries job{i}"})
                              for i in range(30))
            assert gm("import", "-", cwd=b, input=lines).returncode == 0
            assert gm("push", cwd=b).returncode == 0
            git("fetch", "-q", cwd=a)
            assert s.refresh().ops_applied == 30
        c = sqlite3.connect(a / ".git/mem/cache/projection.sqlite3")
        try:
            assert refresh.fts_segments(c) == 1
        finally:
            c.close()
        found = [h.id for h in s.recall("worker 7 retries", k=5, min_score=0)]
    before = dump(a)
    assert gm("rebuild", cwd=a).returncode == 0
    assert dump(a) == before
    with gitmem.open(a) as s:
        assert [h.id for h in s.recall("worker 7 retries", k=5, min_score=0)] == found


def test_the_schema_is_checked_in_full_once_per_change(repo: Path) -> None:
    """A fresh process compares a stamp instead of the whole schema (~2 ms each);
    any CREATE, DROP or ALTER since bumps SQLite's schema cookie and the next open
    checks in full again (and rebuilds what does not match)."""
    assert gm("add", "tests live in spec/", cwd=repo).returncode == 0
    for _ in range(2):  # the first read builds (its replay makes indexes again)
        assert gm("recall", "tests", cwd=repo).returncode == 0
    path = repo / ".git/mem/cache/projection.sqlite3"
    c = sqlite3.connect(path)
    try:
        stamp = c.execute("SELECT value FROM meta WHERE key = 'checked'").fetchone()[0]
        assert stamp == tables._stamp(c.execute(tables._MASTER).fetchall())
        c.execute("CREATE INDEX stray ON memories(kind)")  # a change the stamp did not see
    finally:
        c.close()
    proc = gm("recall", "tests", cwd=repo)
    assert proc.returncode == 0 and "spec/" in proc.stdout
    c = sqlite3.connect(path)
    try:
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master")}
    finally:
        c.close()
    assert "stray" not in names  # found, and the projection rebuilt from the log


def test_a_schema_edited_behind_sqlites_back_is_found_despite_the_stamp(repo: Path) -> None:
    """writable_schema edits sqlite_master without bumping the schema cookie: a
    trigger slipped in that way would rewrite every new memory's text. The stamp
    is a digest of sqlite_master's rows, so the next open checks in full, finds
    the trigger and rebuilds."""
    assert gm("add", "tests live in spec/", cwd=repo).returncode == 0
    for _ in range(2):
        assert gm("recall", "tests", cwd=repo).returncode == 0
    c = sqlite3.connect(repo / ".git/mem/cache/projection.sqlite3")
    try:
        c.execute("PRAGMA writable_schema = ON")
        c.execute("INSERT INTO sqlite_master(type, name, tbl_name, rootpage, sql) VALUES "
                  "('trigger', 'evil', 'memories', 0, 'CREATE TRIGGER evil AFTER INSERT ON "
                  "memories BEGIN UPDATE memories SET text = ''PWNED'' WHERE rowid = "
                  "new.rowid; END')")
        c.commit()
    finally:
        c.close()
    assert gm("add", "deploy with make ship from the release branch", "--kind", "procedure",
              cwd=repo).returncode == 0
    out = gm("recall", "deploy release", cwd=repo)
    assert out.returncode == 0 and "make ship" in out.stdout and "PWNED" not in out.stdout


def test_a_value_sqlite_cannot_bind_is_not_damage(tmp_path: Path) -> None:
    """Only what the file gives back can be damage: a str of ours SQLite cannot
    encode (a lone surrogate) must not throw the projection away."""
    c = sqlite3.connect(":memory:")
    try:
        c.execute("SELECT ?", ("\udcff",))
        raise AssertionError("SQLite bound a lone surrogate")
    except UnicodeEncodeError as exc:
        assert damage.damage(exc, tmp_path, reading=True) is None
    finally:
        c.close()
    try:
        b"\xff\xfe".decode("utf-8")
    except UnicodeDecodeError as exc:
        assert isinstance(damage.damage(exc, tmp_path), damage.ProjectionCorrupt)


# -- a command leaves its write-ahead log to the next one (connection.release) ------------


def test_a_command_leaves_the_log_unsynced_and_a_host_checkpoints(repo: Path) -> None:
    """The git-mem program ends without closing the projection: its writes stay in the
    write-ahead log (no checkpoint and sync at exit: ~5-15 ms), and the next process
    reads them. A host (library use) closes it as usual: checkpointed, log removed."""
    wal = cache(repo) / "projection.sqlite3-wal"
    gm("add", "tests live in spec/, run them with make spec", cwd=repo)
    out = gm("recall", "where do the tests live", cwd=repo)  # replays the add: a write
    assert "make spec" in out.stdout
    assert wal.exists() and wal.stat().st_size > 0
    assert "make spec" in gm("recall", "make spec", cwd=repo).stdout
    with gitmem.open(repo) as store:
        assert [h.text for h in store.recall("spec")] == ["tests live in spec/, run them with make spec"]
    assert not wal.exists() or wal.stat().st_size == 0
    # An agent's hook is the program too, without click (as installed) and with it.
    for n, options in enumerate(([], ["-k", "3"])):
        with gitmem.open(repo) as store:
            store.add(f"the staging database number {n} is reset every night")
        assert not wal.exists() or wal.stat().st_size == 0
        payload = json.dumps({"cwd": str(repo), "prompt": "when is the staging database reset"})
        hook = gm("hook", "user-prompt", *options, cwd=repo, input=payload)  # replays the add
        assert hook.returncode == 0 and f"number {n}" in hook.stdout, hook.stderr
        assert wal.exists() and wal.stat().st_size > 0


def test_a_big_replay_leaves_no_big_log(repo: Path) -> None:
    """A first build writes the whole file through the log; it is cut back after, so
    the cache on disk is the database (and a log under WAL_KEEP_BYTES)."""
    import json

    lines = "\n".join(json.dumps({"text": f"note {i} about the {i % 7} queue and its worker {i}"})
                      for i in range(13000))
    gm("import", "-", cwd=repo, input=lines)
    gm("recall", "queue", cwd=repo)
    wal = cache(repo) / "projection.sqlite3-wal"
    assert (cache(repo) / "projection.sqlite3").stat().st_size > 2 * connection.WAL_KEEP_BYTES
    assert not wal.exists() or wal.stat().st_size <= connection.WAL_KEEP_BYTES


def test_a_one_shot_store_leaves_its_writes_in_the_log_until_the_exit(repo: Path) -> None:
    """``Store(one_shot=True)`` (what the git-mem program opens) reaches the projection's
    close: its connection is parked open, so the log keeps the replay's writes; closing
    that last connection (what the exit does) checkpoints them into the file."""
    wal = cache(repo) / "projection.sqlite3-wal"
    db = str(cache(repo) / "projection.sqlite3")
    store = gitmem.Store(repo, one_shot=True)
    try:
        store.add("the deploy key rotates every ninety days")
        assert [h.text for h in store.recall("deploy key")] == [
            "the deploy key rotates every ninety days"]  # replayed the add: a write
    finally:
        store.close()
    parked = connection._PARKED.pop(db, None)
    try:
        assert parked is not None, "a one-shot store's connection is parked, not closed"
        assert wal.exists() and wal.stat().st_size > 0
        assert parked.execute("SELECT count(*) FROM memories").fetchone() == (1,)
    finally:
        if parked is not None:
            parked.close()
    assert not wal.exists() or wal.stat().st_size == 0  # the last close checkpointed it


def test_a_long_lived_command_parks_one_connection_per_file(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite3"
    first, second = connection.connect(db), connection.connect(db)
    try:
        connection.release(first, db, one_shot=True)
        connection.release(second, db, one_shot=True)
        with pytest.raises(sqlite3.ProgrammingError):
            first.execute("SELECT 1")  # closed when the next one was parked
        assert second.execute("SELECT 1").fetchone() == (1,)  # parked, open
    finally:
        connection._PARKED.pop(str(db), None)
        second.close()


# A git-mem process that dies (SIGKILL) where its refresh checkpoints the log.
_DIES_AT_CHECKPOINT = (
    "import os, signal, sqlite3, sys\n"
    "class Dying(sqlite3.Connection):\n"
    "    def execute(self, sql, *args):\n"
    "        if 'wal_checkpoint' in sql:\n"
    "            os.kill(os.getpid(), signal.SIGKILL)\n"
    "        return super().execute(sql, *args)\n"
    "real = sqlite3.connect\n"
    "sqlite3.connect = lambda *a, **k: real(*a, factory=Dying, **k)\n"
    "from gitmem.cli import main\n"
    "sys.argv = ['git-mem'] + sys.argv[1:]\n"
    "main()\n")


def _forgotten(repo: Path) -> str:
    """Two memories replayed, then one of them forgotten (not replayed yet)."""
    assert gm("add", "the wombat ledger is kept", cwd=repo).returncode == 0
    mid = gm("add", PHRASE, cwd=repo).stdout.strip()
    assert "quokka" in gm("recall", "quokka", cwd=repo).stdout
    assert gm("forget", mid, cwd=repo).returncode == 0
    return mid


def test_forgotten_text_leaves_the_log_after_a_crash_before_its_checkpoint(repo: Path) -> None:
    """The refresh that scrubs a forgotten memory commits, then empties the log; a
    process killed between the two leaves the old pages in the log. No process
    closes it any more (connection.release), so the next one to open the file must
    empty it, not only the next one to scrub something."""
    import subprocess
    import sys

    _forgotten(repo)
    died = subprocess.run([sys.executable, "-c", _DIES_AT_CHECKPOINT, "recall", "wombat"],
                          cwd=repo, capture_output=True, text=True, check=False)
    assert died.returncode == -9, died.stderr
    _only_the_kept_memory_on_disk(repo)


def _only_the_kept_memory_on_disk(repo: Path) -> None:
    """Two more commands later, the forgotten memory is in neither file; the kept one is."""
    for _ in range(2):
        assert "wombat" in gm("recall", "wombat ledger", cwd=repo).stdout
    raw = file_bytes(repo)
    assert b"quokka" not in raw and b"fortnight" not in raw
    assert b"wombat" in raw


def _snapshot_reader(repo: Path) -> subprocess.Popen[str]:
    """A process holding a read snapshot of the projection until a line on its stdin;
    it then ends as git-mem does (os._exit, no close)."""
    import sys

    hold = ("import os, sqlite3, sys\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN'); c.execute('SELECT count(*) FROM memories').fetchall()\n"
            "print('holding', flush=True); sys.stdin.readline(); os._exit(0)\n")
    return subprocess.Popen([sys.executable, "-c", hold, str(cache(repo) / "projection.sqlite3")],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def test_forgotten_text_leaves_the_log_once_a_reader_that_held_it_is_gone(repo: Path) -> None:
    """A reader holding an old snapshot keeps the scrubbing checkpoint from emptying
    the log; the reader ends as git-mem does (os._exit, no close). The next
    process empties the log."""
    _forgotten(repo)
    reader = _snapshot_reader(repo)
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "holding\n"
        out, took = _cli_with(repo, "connection.BUSY_TIMEOUT_MS = 200  # gives up soon\n",
                              "recall", "wombat")
        assert out.returncode == 0 and "wombat" in out.stdout, out.stderr
        assert took < 30, took  # the timeout took effect (the default waits out the reader)
    finally:
        reader.communicate("\n", timeout=30)
    _only_the_kept_memory_on_disk(repo)


def _cli_with(repo: Path, setup: str, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """``git mem ARGS`` in a fresh interpreter after ``setup`` (code run with ``sys`` and
    ``gitmem.projection.connection`` imported, before the CLI loads); its result and
    how long it took."""
    import sys
    import time

    code = ("import sys\nfrom gitmem.projection import connection\n" + setup
            + "from gitmem.cli import main\nsys.argv = ['git-mem'] + sys.argv[1:]\nmain()\n")
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=repo, capture_output=True,
                         text=True, check=False)
    return out, time.monotonic() - start


def test_a_big_log_is_not_worth_waiting_for_a_reader(repo: Path) -> None:
    """A refresh that leaves more than WAL_KEEP_BYTES in the log checkpoints it, but
    does not wait for a reader on an older snapshot (a 'git mem similar' at 100k
    holds one for minutes): the command answers, the next refresh tries again."""
    assert gm("add", "the wombat ledger is kept", cwd=repo).returncode == 0
    assert "wombat" in gm("recall", "wombat", cwd=repo).stdout  # the log holds frames
    reader = _snapshot_reader(repo)
    try:
        assert reader.stdout is not None and reader.stdout.readline() == "holding\n"
        assert gm("add", "deploys go through the blue pipeline", cwd=repo).returncode == 0
        out, took = _cli_with(repo, "connection.BUSY_TIMEOUT_MS = 8000\n"
                              "connection.WAL_KEEP_BYTES = 1  # every log is 'too big'\n"
                              "empty_log = connection.empty_log\n"
                              "def tried(*args, **kwargs):\n"
                              "    sys.stderr.write('checkpoint tried\\n')\n"
                              "    return empty_log(*args, **kwargs)\n"
                              "connection.empty_log = tried\n", "recall", "blue pipeline")
    finally:
        reader.communicate("\n", timeout=30)
    assert out.returncode == 0 and "blue pipeline" in out.stdout, out.stderr
    assert "checkpoint tried" in out.stderr, out.stderr  # else the test proves nothing
    assert took < 6, took


def _plans(c: sqlite3.Connection, statements: list[str]) -> list[tuple[str, str]]:
    """(statement, plan step) of every step SQLite's planner chose for ``statements``."""
    return [(sql, step) for sql in dict.fromkeys(statements)
            if sql.lstrip().upper().startswith(("SELECT", "WITH"))
            for (_, _, _, step) in c.execute("EXPLAIN QUERY PLAN " + sql)]


def traced_plans(p: object, run: "Callable[[], object]") -> list[tuple[str, str]]:
    """(statement, plan step) of what ``run`` asks the open projection ``p``."""
    c = p.conn  # type: ignore[attr-defined]
    statements: list[str] = []
    c.set_trace_callback(statements.append)
    try:
        run()
    finally:
        c.set_trace_callback(None)
    return _plans(c, statements)


def test_reads_by_id_find_memories_through_an_index(repo: Path) -> None:
    """A row holds a memory's id as its 32 bytes (memories.digest, the column with
    the unique index); memories.id, the 64 hex digits every record shows, is
    computed when read. A read that looked memories up by ``id`` would compute
    it for every row: every read of a memory by its id seeks its digest."""
    import re

    from gitmem.projection import Projection, Scope

    def add(*args: str) -> str:
        out = gm("add", *args, "--json", cwd=repo)
        assert out.returncode == 0, out.stderr
        return str(__import__("json").loads(out.stdout)["data"]["id"])

    first = add("the api gateway retries twice", "--session", "s1", "--path", "README.md")
    second = add("the gateway timeout is ten seconds?", "--session", "s1", "--key", "gw.timeout")
    newer = add("the api gateway retries three times", "--supersedes", first)
    assert gm("confirm", second, cwd=repo).returncode == 0
    assert gm("link", "billing", "depends_on", "memory:" + second, cwd=repo).returncode == 0
    assert gm("recall", "gateway", cwd=repo).returncode == 0
    ids = [first, second, newer]
    p = Projection(cache(repo))
    p.open()
    try:
        c = p.conn
        assert c is not None
        statements: list[str] = []
        c.set_trace_callback(statements.append)
        scope = Scope()
        p.record(second)
        p.records(ids)
        p.ops_touching(first)
        p.standing(ids)
        p.live_ids(ids, scope)
        p.neighbours(ids, scope=scope)
        p.salience_inputs(ids)
        p.questions(ids)
        p.paths_of(ids)
        p.unvouched(ids)
        p.term_presence(ids, {"gateway": '"gateway"'})
        p.lexical(["gateway"], scope=scope, limit=5)
        assert p.resolve_prefix(second[:9]) == [second]  # an odd digit is half a byte
        assert p.resolve_prefix(second) == [second]
        # (The whole id: 8 digits could all be numbers, which upper() leaves alone.)
        assert p.resolve_prefix(second.upper()) == p.resolve_prefix("xyz") == []
        assert set(ids) < set(p.resolve_prefix(""))  # (and the link's own memory)
        assert p.record(second.upper()) is None and p.records(["", "xyz"]) == {}
        assert p.graph_walk(scope=scope, edges=[], names=["billing"])
        p.code_anchor_rows()
        p.key_history("gw.timeout")
        p.duplicate_of("the api gateway retries twice", "note", None)
        c.set_trace_callback(None)
        scans = [(sql, step) for sql, step in _plans(c, statements)
                 if re.match(r"SCAN (m|m2|memories)\b(?! USING)", step)]
        assert scans == []
        # The digest is the id's bytes, and the id is not stored anywhere in the row.
        assert c.execute("SELECT digest = unhex(id), length(digest) FROM memories "
                         "WHERE id = ?", (second,)).fetchone() == (1, 32)
        assert "id" not in {name for (_, name, *_, hidden) in
                            c.execute("PRAGMA table_xinfo(memories)") if hidden == 0}
    finally:
        p.close()


def test_embedding_a_memory_does_not_grow_its_row(repo: Path) -> None:
    """Rows are written packed into their pages. A row that grew when its memory was
    embedded (vec_slot set after the replay) split full pages into half-empty ones:
    an eighth of the table's pages at 100k. memories.room keeps the bytes the slot
    takes until it is set."""
    import json

    lines = "\n".join(json.dumps({"text": f"the worker {i} retries job {i} with backoff"})
                      for i in range(400))
    assert gm("import", "-", cwd=repo, input=lines).returncode == 0  # replayed, not embedded
    db = cache(repo) / "projection.sqlite3"

    def payload() -> tuple[int, int]:
        with sqlite3.connect(db) as c:
            try:
                row = c.execute("SELECT sum(payload), count(*) FROM dbstat "
                                "WHERE name = 'memories' AND pagetype = 'leaf'").fetchone()
            except sqlite3.OperationalError:
                pytest.skip("this SQLite has no dbstat table")
            pending = c.execute("SELECT count(*) FROM memories WHERE vec_slot IS NULL").fetchone()
        assert pending[0] in (0, 400)
        return int(row[0]), int(row[1])

    before, pages = payload()
    assert gm("recall", "worker", cwd=repo).returncode == 0  # embeds them
    after, pages_after = payload()
    assert after <= before and pages_after == pages


def test_a_host_that_keeps_the_vector_file_mapped_sees_it_grow_change_and_go(
        repo: Path) -> None:
    """A process that scans again keeps the vector file mapped between scans (mapping
    it afresh faulted in every page again). The map must follow the file: rows other
    processes append, a row zeroed by forget, a new generation written by a rebuild,
    a cache deleted and built again."""
    import shutil

    def ids(store: gitmem.Store, query: str) -> list[str]:
        return [h.id for h in store.recall(query, k=5, mode="vector", min_score=0)]

    first = gm("add", "the quokka ledger reconciles every fortnight", "--json", cwd=repo)
    assert first.returncode == 0, first.stderr
    with gitmem.open(repo) as store:
        assert len(ids(store, "quokka ledger")) == 1
        held = store.projection._vectors._held
        assert held is not None  # the map is kept ...
        mapped = len(held[1])
        lines = "\n".join(f'{{"text": "wombat burrow survey number {i} at the creek"}}'
                          for i in range(300))
        assert gm("import", "-", cwd=repo, input=lines).returncode == 0
        found = ids(store, "wombat burrow survey")  # ... and followed as the file grew
        assert len(found) == 5 and len(store.projection._vectors._held[1]) > mapped
        gone = found[0]
        assert gm("forget", gone, cwd=repo).returncode == 0
        assert gone not in ids(store, "wombat burrow survey")
        before = store.projection._vectors._held[0]
        assert gm("rebuild", cwd=repo).returncode == 0  # a new generation of the file
        assert len(ids(store, "wombat burrow survey")) == 5
        assert store.projection._vectors._held[0] != before
        shutil.rmtree(cache(repo))
        assert len(ids(store, "quokka ledger fortnight")) >= 1
    assert store.projection._vectors._held is None  # closing the store unmaps it


def test_a_schema_made_between_two_reads_is_not_taken_for_damage(tmp_path: Path) -> None:
    # The first of eight concurrent adders creates the tables while another reads
    # meta: the reader saw "no meta table" in one statement and "tables exist" in the
    # next (two snapshots), called the file corrupt and deleted it under the first
    # (a flake of tests/test_concurrency.py). The other process's commit is made to
    # land exactly between the reader's statements, in real SQLite files.
    path = tmp_path / "projection.sqlite3"
    reader, maker = connection.connect(path), connection.connect(path)
    made: list[str] = []

    def between(statement: str) -> None:
        if not made:
            made.append(statement)
            assert tables.reset(maker, tables.wanted_meta())

    reader.set_trace_callback(between)
    assert tables.read_meta(reader) in ({}, tables.wanted_meta())
    assert made  # the commit did land while the reader was reading
    reader.set_trace_callback(None)
    assert tables.read_meta(reader) == tables.wanted_meta()
