"""Bulk import: many ops per commit, all lines checked before anything is written."""

from __future__ import annotations

import collections
import json
import shutil
import subprocess
from pathlib import Path

import pytest

import gitmem
import craft
from conftest import GIT_MEM, git, gm, ok


def test_import_writes_packs_and_everything_is_recallable(repo: Path, tmp_path: Path) -> None:
    lines = [json.dumps({"text": f"service {i} talks to the billing queue", "kind": "fact",
                         "tags": ["billing"], "recorded_at": "2025-06-01T12:00:00Z"})
             for i in range(25)]
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(lines) + "\n\n")
    out = gm("import", str(f), "--pack-size", "10", "--json", cwd=repo)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)["data"]
    assert data["count"] == 25 and len(data["commits"]) == 3
    ref = "refs/memory/" + data["partition"]
    assert git("rev-list", "--count", ref, cwd=repo).stdout.strip() == "3"
    pack = git("show", f"{ref}:ops.jsonl", cwd=repo).stdout.splitlines()
    assert len(pack) == 5  # the last commit holds the remainder
    hits = json.loads(gm("recall", "billing queue", "-k", "50", "--json", cwd=repo).stdout)
    results = hits["data"]["hits"]
    assert len(results) == 25
    assert {r["recorded_at"] for r in results} == {"2025-06-01T12:00:00Z"}
    clocks = sorted(r["clock"] for r in results)
    assert clocks == list(range(1, 26))  # op i of a pack has clock + i


def test_a_bad_line_means_nothing_is_written(repo: Path) -> None:
    good = json.dumps({"text": "fine"})
    for bad, message in [
        ('{"text": ""}', "error: line 2: memory text is empty"),
        ('{"text": "x", "kind": "gossip"}', "error: line 2: unknown kind 'gossip'"),
        ('{"txt": "typo"}', "error: line 2: Object contains unknown field `txt`"),
        ("not json", "error: line 2: JSON is malformed"),
        ('{"text": "x", "valid_from": "soonish"}', "error: line 2: --valid-from: cannot parse"),
    ]:
        out = gm("import", "-", cwd=repo, input=f"{good}\n{bad}\n")
        assert out.returncode == 2, bad
        assert out.stderr.startswith(message), out.stderr
    assert git("for-each-ref", "refs/memory/", cwd=repo).stdout == ""


def test_a_line_that_is_not_utf8_is_refused_with_where(repo: Path, tmp_path: Path) -> None:
    # An adversarial run: "internal error: UnicodeDecodeError ... this is a bug", exit 1.
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"text": "fine"}\n{"text": "caf\xe9 au lait"}\n')
    for args, stdin in ((["import", str(path)], None), (["import", "-"], path.read_text("latin-1"))):
        out = subprocess.run([GIT_MEM, *args], cwd=repo, capture_output=True, check=False,
                             input=path.read_bytes() if stdin is not None else None)
        assert out.returncode == 2, out.stderr
        assert out.stderr.decode().startswith("error: line 2: not UTF-8 (byte 0xe9 at column 14)")
    assert git("for-each-ref", "refs/memory/", cwd=repo).stdout == ""


def test_an_import_gates_each_memory_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The replay of an import's packs takes the verdicts its check reached: the
    # scans' memo (32k entries) does not carry them past its size, and at 100k
    # lines every memory was scanned a second time (a third of the import).
    from gitmem.api import gating

    monkeypatch.setattr(gating, "_MEMO_SIZE", 4)  # a memo that carries nothing
    scanned: collections.Counter[str] = collections.Counter()
    real = gating.findings

    def counting(text: str) -> list[str]:
        scanned[text] += 1
        return real(text)

    monkeypatch.setattr(gating, "findings", counting)
    texts = [f"service {chr(97 + i % 26)}{chr(97 + i // 26)} talks to the billing queue"
             for i in range(60)]
    with gitmem.open(repo) as store:
        store.import_records([json.dumps({"text": t}) for t in texts], pack_size=20)
        report = store.refresh()  # every pack replayed (the import replayed the last)
        assert report.ops_skipped == 0
        assert len(store.recall("service talks to the billing queue", k=100, mode="lexical")) == 60
    assert all(scanned[t] == 1 for t in texts), [scanned[t] for t in texts]


def test_the_verdicts_an_import_hands_its_replay_are_what_a_rescan_finds(
        repo: Path, tmp_path: Path) -> None:
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(json.dumps({"text": f"the queue {i} drains nightly", "tags": ["ops"]})
                           for i in range(30)))
    assert gm("import", str(f), "--pack-size", "10", cwd=repo).returncode == 0

    def hits() -> list[object]:
        out = gm("recall", "queue drains nightly", "-k", "50", "--quarantined",
                 "--mode", "lexical", "--json", cwd=repo)
        return sorted(json.dumps(h, sort_keys=True) for h in json.loads(out.stdout)["data"]["hits"])

    first = hits()
    assert len(first) == 30
    shutil.rmtree(repo / ".git" / "mem" / "cache")  # replayed again, every op scanned
    assert hits() == first


# -- embedding while the packs are written ----------------------------------------------

def _vectors(repo: Path) -> tuple[list[tuple[str, int, bytes]], int]:
    """Every memory's vector rows (id, chunk, bytes) as the file holds them, and how
    many memories wait for theirs: read from the file, no refresh."""
    import sqlite3

    cache = repo / ".git/mem/cache"
    c = sqlite3.connect(cache / "projection.sqlite3")
    try:
        name = c.execute("SELECT value FROM meta WHERE key = 'vectors'").fetchone()
        data = (cache / name[0]).read_bytes() if name else b""  # (none: never embedded)
        dim = len(data) // max(1, c.execute("SELECT count(*) FROM vec_rows").fetchone()[0])
        rows = c.execute("SELECT m.id, r.slot - m.vec_slot, r.slot FROM vec_rows r "
                         "JOIN memories m ON m.rowid = r.memory ORDER BY m.id, r.slot").fetchall()
        pending = c.execute("SELECT count(*) FROM memories WHERE vec_slot IS NULL "
                            "AND text IS NOT NULL").fetchone()[0]
    finally:
        c.close()
    return [(mid, k, data[slot * dim:(slot + 1) * dim]) for mid, k, slot in rows], pending


def _answers(repo: Path) -> list[object]:
    """What recall (both channels), list and get answer (the data, not the warnings:
    a rebuild says it rebuilt)."""
    out = []
    for args in (["recall", "worker retries the queue", "-k", "40"],
                 ["recall", "deploy steps logs", "-k", "20", "--mode", "vector"],
                 ["list", "-n", "500"], ["get", "setting.10"]):
        out.append(json.loads(ok(gm(*args, "--json", cwd=repo)).stdout)["data"])
    return out


def test_an_import_is_searchable_when_it_returns_and_a_rebuild_gives_the_same_bytes(
        repo: Path) -> None:
    """The import embeds its memories in a forked child while it writes the packs:
    when it returns, every memory has its vector (nothing is left for the next read
    to embed), and the rows are the very bytes a rebuild (embedding every memory in
    one process, in its own batches) and a pure-Python one-at-a-time embedding give."""
    from gitmem.embed import query_embedder
    from gitmem.embed.text import embed_chunks

    ok(gm("import", "-", "--pack-size", "40", cwd=repo, input=craft.varied_records(300)))
    imported, pending = _vectors(repo)
    assert pending == 0  # embedded by the import itself (before: every one of them)
    assert len({mid for mid, _, _ in imported}) == 300  # the repeated line confirmed one
    answers = _answers(repo)
    assert _vectors(repo) == (imported, 0)  # the reads found nothing to embed
    shutil.rmtree(repo / ".git" / "mem" / "cache")
    assert _answers(repo) == answers
    assert _vectors(repo) == (imported, 0)
    one = query_embedder()  # the exact pure-Python path, one memory at a time
    listed = answers[2]["memories"]  # type: ignore[index]
    assert len(listed) > 250
    for m in listed[::7]:
        rows = [r for mid, _, r in imported if mid == m["id"]]
        chunks = embed_chunks(m["key"], m["text"], m["entities"], m["tags"])
        assert len(rows) == len(chunks) and (len(rows) > 1) == (len(m["text"]) > 600)
        assert b"".join(rows) == one.doc_rows(chunks)


_FAILING = """
import sys
import gitmem
from gitmem.api import embedding
if sys.argv[2] == "inexact":
    embedding.exact_doc_rows = lambda texts, dim: None  # rows that might depend on the batch
with gitmem.open(sys.argv[1]) as s:
    s.import_records(open(sys.argv[3], "rb"), pack_size=50)
"""


@pytest.mark.parametrize("how", ["inexact", "normal"])
def test_without_exact_rows_from_the_child_the_next_read_embeds(
        repo: Path, tmp_path: Path, how: str) -> None:
    """A child that sends nothing (an embedder whose rows are not exact, a failure)
    leaves the memories to the next read, as before; the rows are the same bytes."""
    import subprocess
    import sys

    src = tmp_path / "in.jsonl"
    src.write_text(craft.varied_records(300))
    # A fresh interpreter: a process may fork only while it is single-threaded.
    done = subprocess.run([sys.executable, "-c", _FAILING, str(repo), how, str(src)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows, pending = _vectors(repo)
    assert pending == (300 if how == "inexact" else 0)
    ok(gm("recall", "worker", cwd=repo))
    after, pending = _vectors(repo)
    assert pending == 0 and len(after) > 300
    if how == "normal":
        assert after == rows
    shutil.rmtree(repo / ".git" / "mem" / "cache")
    ok(gm("recall", "worker", cwd=repo))
    assert _vectors(repo) == (after, 0)


# -- what a pack knows of the earlier packs (no replay before each pack) ----------------

_LINES = [{"text": "alpha runs the billing jobs"}, {"text": "beta owns search"},
          {"text": "alpha runs the billing jobs"}, {"text": "gamma", "key": "team.lead"},
          {"text": "delta", "key": "team.lead"}, {"text": "gamma", "key": "team.lead"},
          {"text": "Beta  owns search"}, {"text": "epsilon", "key": "team.lead"},
          {"text": "the cache lives in redis"}, {"text": "the cache lives in redis"}]


def _imported(repo: Path, pack: int, existing: bool) -> tuple[object, ...]:
    if existing:  # memories there before: found by the projection, not by the import
        ok(gm("add", "the cache lives in redis", cwd=repo))
        ok(gm("set", "team.lead", "gamma", cwd=repo))
    out = ok(gm("import", "-", "--pack-size", str(pack), "--json", cwd=repo,
                input="".join(json.dumps(x) + "\n" for x in _LINES)))
    data = json.loads(out.stdout)["data"]
    value = json.loads(ok(gm("get", "team.lead", "--json", cwd=repo)).stdout)["data"]
    history = json.loads(ok(gm("history", "team.lead", "--json", cwd=repo)).stdout)["data"]
    statuses = [h["status"] for h in history["values"]] if "values" in history else history
    dups = [{k: v for k, v in d.items() if k != "id"} for d in data["duplicates"]]
    return data["count"], dups, value["value"], value["conflicts"], statuses


@pytest.mark.parametrize("existing", [False, True], ids=["new store", "memories before"])
def test_duplicates_and_keys_do_not_depend_on_the_pack_size(
        tmp_path: Path, existing: bool) -> None:
    """An import's earlier lines are known to the next packs without a replay: a
    repeated text is a duplicate of its first line, a key set again replaces the
    value the previous line gave it (and a text it replaced may come back), whatever
    the packs are, with or without memories in the store before."""
    from conftest import init_repo

    answers = {pack: _imported(init_repo(tmp_path / f"r{pack}"), pack, existing)
               for pack in (1, 2, 3, 100)}
    assert len({json.dumps(a, sort_keys=True) for a in answers.values()}) == 1, answers
    count, dups, value, conflicts, _ = answers[1]
    assert (value, conflicts) == ("epsilon", [])
    if existing:  # "the cache" and line 4's gamma confirm the memories there (a keyed
        # line with no kind is a fact, as set's gamma is); line 6's gamma comes back
        assert dups == [{"line": 3, "line_of_first": 1}, {"line": 4},
                        {"line": 7, "line_of_first": 2}, {"line": 9}, {"line": 10}]
        assert count == 5
    else:
        assert dups == [{"line": 3, "line_of_first": 1}, {"line": 7, "line_of_first": 2},
                        {"line": 10, "line_of_first": 9}]
        assert count == 7


def test_an_add_between_two_packs_keeps_the_clocks_increasing(repo: Path) -> None:
    """The packs take their clocks from the last one written, not from a replay; when
    another writer appends to the partition between two packs, the next pack's clocks
    come after its op."""
    import subprocess
    import sys

    script = """
import json, subprocess, sys
import gitmem
added = []
def progress(what, done, total):
    if what == "importing" and not added:
        added.append(subprocess.run(["git-mem", "add", "an add between the packs"],
                                    cwd=sys.argv[1], capture_output=True, check=True))
with gitmem.open(sys.argv[1]) as s:
    s.progress = progress
    s.import_records([json.dumps({"text": f"note {i} about the queue"}) for i in range(9)],
                     pack_size=3)
"""
    done = subprocess.run([sys.executable, "-c", script, str(repo)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    ref = git("for-each-ref", "--format=%(refname)", "refs/memory/", cwd=repo).stdout.split()[0]
    clocks = []
    for commit in reversed(git("rev-list", ref, cwd=repo).stdout.split()):
        for line in git("show", f"{commit}:ops.jsonl", cwd=repo).stdout.splitlines():
            clocks.append(json.loads(line)["clock"])
    assert len(clocks) == 10 and clocks == sorted(set(clocks)), clocks
    hits = json.loads(ok(gm("list", "-n", "20", "--json", cwd=repo)).stdout)["data"]["memories"]
    assert len(hits) == 10


def test_a_key_set_by_another_writer_during_an_import_is_replaced_too(repo: Path) -> None:
    """The import keeps a key's current values in memory between packs; another writer
    that set the key meanwhile left it with two current values (its own and the
    import's next one), where a set after it replaces both."""
    import subprocess
    import sys

    script = """
import json, subprocess, sys
import gitmem
added = []
def progress(what, done, total):
    if what == "importing" and not added:
        added.append(subprocess.run(["git-mem", "set", "deploy.window",
                                     "tuesdays, from the other clone"],
                                    cwd=sys.argv[1], capture_output=True, check=True))
lines = [json.dumps({"text": f"note {i} about the queue"}) for i in range(9)]
lines[1] = json.dumps({"text": "mondays", "key": "deploy.window"})
lines[7] = json.dumps({"text": "fridays after the freeze", "key": "deploy.window"})
with gitmem.open(sys.argv[1]) as s:
    s.progress = progress
    s.import_records(lines, pack_size=3)
"""
    done = subprocess.run([sys.executable, "-c", script, str(repo)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
    got = json.loads(ok(gm("get", "deploy.window", "--json", cwd=repo)).stdout)["data"]
    assert "fridays" in json.dumps(got) and "tuesdays" not in json.dumps(got), got
    conflicts = json.loads(ok(gm("conflicts", "--json", cwd=repo)).stdout)["data"]
    assert not any(c for c in (conflicts if isinstance(conflicts, list) else
                               conflicts.get("conflicts", []))), conflicts


def test_a_text_line_with_a_lone_surrogate_is_refused_like_bad_bytes(store: object) -> None:
    # A line read with surrogateescape (the library's str input): msgspec raises
    # UnicodeEncodeError, which escaped as an internal error (a review of gate 23's range).
    from gitmem.errors import InvalidInput

    with pytest.raises(InvalidInput, match="line 1: not UTF-8"):
        store.import_records(['{"text": "caf\udce9 au lait"}'])  # type: ignore[attr-defined]
    with pytest.raises(InvalidInput, match="line 1: not UTF-8 \\(a lone surrogate at column 11\\)"):
        store.import_records(['{"text": "\ud800 alone"}'])  # type: ignore[attr-defined]


@pytest.mark.parametrize("path,code,says", [
    ("a.py:1-99999999999999999999", 2, "is not a line range"),
    ("a.py:9-2", 2, "is not a line range"),
    ("a.py:1-3", 0, ""),
])
def test_an_imported_line_range_anchors_to_its_file(path: str, code: int, says: str,
                                                    repo: Path) -> None:
    """import stored 'a.py:1-99999999999999999999' as a file's name, which never
    matched the file; add --path refuses such a range."""
    (repo / "a.py").write_text("x = 1\n")
    git("add", "a.py", cwd=repo)
    git("commit", "-q", "-m", "a", cwd=repo)
    line = json.dumps({"text": "a note about the parser in a.py", "paths": [path]})
    out = gm("import", "-", cwd=repo, input=line + "\n")
    assert out.returncode == code, out.stderr
    assert says in out.stderr
    if code == 0:
        [memory] = json.loads(ok(gm("list", "--json", cwd=repo)).stdout)["data"]["memories"]
        assert memory["anchors"]["paths"] == ["a.py"]


def test_a_file_saved_with_a_byte_order_mark_imports(repo: Path, tmp_path: Path) -> None:
    """Windows editors save UTF-8 with a BOM: it was 'invalid character (byte 0)' (adv35)."""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"text": "the deploy needs the vpn"}\n{"text": "tests run with make spec"}\n')
    out = subprocess.run([GIT_MEM, "import", str(path)], cwd=repo, capture_output=True, check=False)
    assert out.returncode == 0, out.stderr
    out = subprocess.run([GIT_MEM, "import", "-"], cwd=repo, capture_output=True, check=False,
                         input=b'\xef\xbb\xbf{"text": "the linter is ruff"}\n')
    assert out.returncode == 0, out.stderr
    found = ok(gm("recall", "deploy vpn spec ruff linter", "--json", "--min-score", "0", cwd=repo))
    assert len(json.loads(found.stdout)["data"]["hits"]) == 3


def test_a_recorded_time_far_in_the_future_is_refused(repo: Path) -> None:
    """Replay would not believe it (a memory dated 9999 is ranked at a believable time and
    listed by status as forged): import refuses it, and writes nothing (adv35)."""
    lines = ('{"text": "fine"}\n'
             '{"text": "from the future", "recorded_at": "9999-12-31T00:00:00Z"}\n')
    out = gm("import", "-", cwd=repo, input=lines)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: line 2: recorded_at is more than a day in the future")
    assert len(out.stderr.strip().splitlines()) == 1
    assert git("for-each-ref", "refs/memory/", cwd=repo).stdout == ""
    # Judged by the clock reads judge by: GIT_COMMITTER_DATE when set (the suite pins it).
    from conftest import FIXED_DATE
    from gitmem.timefmt import iso, parse_date

    pinned = parse_date(FIXED_DATE)[0]
    hour = json.dumps({"text": "an hour ahead is clock skew", "recorded_at": iso(pinned + 3600, 0)})
    ok(gm("import", "-", cwd=repo, input=hour + "\n"))  # within the skew replay believes
    days = json.dumps({"text": "two days ahead of the pinned clock", "recorded_at": iso(pinned + 2 * 86400, 0)})
    assert gm("import", "-", cwd=repo, input=days + "\n").returncode == 2


def test_a_byte_order_mark_does_not_hide_a_line_over_the_limit(repo: Path, tmp_path: Path) -> None:
    """The review: the BOM was stripped before the length check, so a line of exactly
    the limit behind a BOM passed, and its rest was read as a second memory."""
    from gitmem import ops

    head = b'{"text": "smuggled first part memory"}'
    pad = b" " * (ops.MAX_OP_BYTES + 1 - len(head))
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + head + pad + b'{"text": "second object same line"}\n')
    out = subprocess.run([GIT_MEM, "import", str(path)], cwd=repo, capture_output=True, check=False)
    assert out.returncode == 2 and b"line 1: longer than" in out.stderr, out.stderr
    assert git("for-each-ref", "refs/memory/", cwd=repo).stdout == ""
