"""What the projection's file holds: each thing once, and nothing forgotten.

The projection is a cache, but a large one pages in slowly and a forgotten
memory must leave it entirely. These tests read the SQLite file (and its
write-ahead log) as bytes and through SQLite's own checks.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import gitmem
from conftest import gm

PHRASE = "the quokka ledger reconciles every fortnight at dawn"


def cache(repo: Path) -> Path:
    return repo / ".git" / "mem" / "cache"


def file_bytes(repo: Path) -> bytes:
    """The database and its write-ahead log, as they are on disk."""
    db = cache(repo) / "projection.sqlite3"
    wal = db.with_name(db.name + "-wal")
    return db.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def index_matches_memories(db: Path) -> None:
    """FTS5's own check: every row of memories_text is in the index with exactly
    its words, and the index holds nothing else (raises if not)."""
    c = sqlite3.connect(db)
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
