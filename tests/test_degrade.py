"""Environments that should degrade, not fail (issue 13, items 5 to 8).

A corrupt projection is rebuilt from the log (and ``rebuild`` never needs the
old one), a read-only ``.git`` still answers reads, a full disk is a typed
error with its own exit code, and an endless or huge import runs in bounded
memory. The hostile states are real: bytes flipped in the SQLite file, a
read-only bind mount and a tiny tmpfs in a private mount namespace
(``unshare -rm``: the suite runs as root, where ``chmod a-w`` stops nothing),
``/dev/zero`` as input. Clones come from a real bare remote.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import diskfill
from conftest import GIT_MEM, dump, git, gm, ok, texts

CACHE = Path(".git") / "mem" / "cache"
CORRUPT = "warning: projection was corrupt; rebuilt it from the op-log\n"


def _db(clone: Path) -> Path:
    return clone / CACHE / "projection.sqlite3"


def _quiet(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr


def _checkpoint(clone: Path) -> sqlite3.Connection:
    """The projection with its write-ahead log folded in (so byte edits stick)."""
    c = sqlite3.connect(_db(clone), isolation_level=None)
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return c


def _team_with_memories(team: dict[str, Path], n: int = 4) -> tuple[Path, Path]:
    """a writes n memories and pushes; b pulls and builds its projection."""
    a, b = team["a"], team["b"]
    for i in range(n):
        ok(gm("add", f"service {i} keeps its cache in redis cluster {i}", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("sync", cwd=b))
    assert len([t for t in texts(b, "cache redis") if "redis" in t]) == n
    return a, b


# -- item 5: any failure to read the projection is corruption ---------------------------


def _flip_text_bytes(clone: Path) -> None:
    _checkpoint(clone).close()
    data = bytearray(_db(clone).read_bytes())
    at = data.find(b"keeps its cache")
    assert at > 0
    data[at + 1] = 0xFF  # not UTF-8 any more: SQLite cannot hand the text back
    _db(clone).write_bytes(bytes(data))


def _undecodable_tags(clone: Path) -> None:
    with _checkpoint(clone) as c:  # json.loads(bytes) -> UnicodeDecodeError
        c.execute("UPDATE memories SET tags = X'ff5b5d', entities = X'fe5b5d'")


def _drop_memories(clone: Path) -> None:
    with _checkpoint(clone) as c:
        c.execute("DROP TABLE memories")


def _meta_other_columns(clone: Path) -> None:
    with _checkpoint(clone) as c:
        c.execute("DROP TABLE meta")
        c.execute("CREATE TABLE meta(name TEXT, data BLOB, extra INTEGER)")
        c.execute("INSERT INTO meta VALUES ('schema', 'x', 1)")


def _cache_is_a_file(clone: Path) -> None:
    shutil.rmtree(clone / CACHE)
    (clone / CACHE).write_text("not a directory\n")


def _not_a_database(clone: Path) -> None:
    for suffix in ("-wal", "-shm"):
        Path(str(_db(clone)) + suffix).unlink(missing_ok=True)
    _db(clone).write_bytes(b"this is not a database" * 400)


def _db_is_a_directory(clone: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(_db(clone)) + suffix).unlink(missing_ok=True)
    _db(clone).mkdir()
    (_db(clone) / "x").write_text("x")


def _vectors_garbage(clone: Path) -> None:
    for f in (clone / CACHE).glob("vectors*.i8"):
        f.unlink()
        f.mkdir()  # cannot be opened as a file at all


def _vectors_overwritten(clone: Path) -> None:
    for f in (clone / CACHE).glob("vectors*.i8"):  # same size, not our rows
        f.write_bytes((bytes(range(256)) * (f.stat().st_size // 256 + 1))[:f.stat().st_size])


def _vectors_named_outside(clone: Path) -> None:
    with _checkpoint(clone) as c:  # meta names a file outside the cache
        c.execute("UPDATE meta SET value = '../../../outside.i8' WHERE key = 'vectors'")


def _id_flipped_in_an_index(clone: Path) -> None:
    """One memory's id changed inside an index entry only (found by a fuzzer):
    every page is sound and SQLite reads it without complaint, but a query
    answered from that index names a memory no other table knows."""
    with _checkpoint(clone) as c:
        mid = c.execute("SELECT id FROM memories ORDER BY id LIMIT 1").fetchone()[0]
        pages = [p for (p,) in c.execute(
            "SELECT pageno FROM dbstat WHERE name = 'sqlite_autoindex_memories_1'")]
        size = c.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(_db(clone).read_bytes())
    flipped = 0
    for page in pages:
        start = (page - 1) * size
        at = data.find(bytes.fromhex(mid), start, start + size)  # the index holds its bytes
        if at >= 0:
            data[at + 31] ^= 1
            flipped += 1
    assert flipped == 1
    _db(clone).write_bytes(bytes(data))


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "flipped text bytes": _flip_text_bytes,
    "undecodable tags": _undecodable_tags,
    "an id flipped inside an index": _id_flipped_in_an_index,
    "memories table dropped": _drop_memories,
    "meta with other columns": _meta_other_columns,
    "cache is a regular file": _cache_is_a_file,
    "not a database": _not_a_database,
    "database is a directory": _db_is_a_directory,
    "vector file is a directory": _vectors_garbage,
    "vector file overwritten": _vectors_overwritten,
    "vector file named outside the cache": _vectors_named_outside,
}
# What a command says about each: the vector file alone is re-embedded.
VECTORS = "warning: vector file was damaged; re-embedded every memory\n"
SAID = {name: VECTORS if name in ("vector file is a directory", "vector file overwritten")
        else CORRUPT for name in CORRUPTIONS}


@pytest.mark.parametrize("corrupt", list(CORRUPTIONS))
def test_a_corrupt_projection_heals_on_sync_from_a_real_remote(
        team: dict[str, Path], corrupt: str) -> None:
    a, b = _team_with_memories(team)
    CORRUPTIONS[corrupt](b)
    ok(gm("add", "the queue worker retries three times", cwd=a))
    ok(gm("sync", cwd=a))
    out = gm("sync", cwd=b)
    _quiet(out)
    assert out.returncode == 0, out.stderr
    assert "pulled from origin" in out.stdout
    # Found on open, or (bytes flipped in a row) by the first command that reads it:
    # one warning, once, and every command succeeds.
    said = out.stderr
    for args in (["status"], ["log"], ["recall", "cache"], ["context"], ["status"]):
        again = gm(*args, cwd=b)
        _quiet(again)
        assert again.returncode == 0, (args, again.stderr)
        said += again.stderr
    assert said == SAID[corrupt], said
    assert len([t for t in texts(b, "cache redis") if "redis" in t]) == 4
    assert "the queue worker retries three times" in texts(b, "queue worker retries")
    assert not (b.parent / "outside.i8").exists()
    healed = dump(b)
    shutil.rmtree(b / CACHE)
    assert dump(b) == healed  # exactly what a replay from nothing gives


@pytest.mark.parametrize("corrupt", list(CORRUPTIONS))
def test_rebuild_never_reads_the_old_projection(repo: Path, corrupt: str) -> None:
    for i in range(4):
        ok(gm("add", f"service {i} keeps its cache in redis cluster {i}", cwd=repo))
    before = texts(repo, "cache redis")
    CORRUPTIONS[corrupt](repo)
    out = gm("rebuild", cwd=repo)
    _quiet(out)
    assert out.returncode == 0, out.stderr
    assert "replayed" in out.stdout or "rebuilt" in out.stdout, out.stdout
    after = gm("recall", "cache redis", "--json", "-k", "50", cwd=repo)
    assert after.returncode == 0 and after.stderr == "", after.stderr
    assert sorted(r["text"] for r in json.loads(after.stdout)["data"]["hits"]) == before


def test_a_write_on_a_corrupt_projection_heals_it(repo: Path) -> None:
    ok(gm("add", "the build runs on buildkite", cwd=repo))
    gm("recall", "build", cwd=repo)
    _drop_memories(repo)
    out = gm("add", "the deploy runs on argo", cwd=repo)
    assert out.returncode == 0 and out.stderr == CORRUPT, out.stderr
    assert texts(repo, "runs on") == ["the build runs on buildkite", "the deploy runs on argo"]


def test_a_damaged_usage_record_is_started_again_once(repo: Path) -> None:
    ok(gm("add", "the build runs on buildkite", cwd=repo))
    ok(gm("recall", "build", cwd=repo))
    usage = repo / ".git" / "mem" / "usage.sqlite3"
    for suffix in ("-wal", "-shm"):
        Path(str(usage) + suffix).unlink(missing_ok=True)
    usage.write_bytes(b"not a database" * 700)
    first = ok(gm("recall", "build", cwd=repo))
    assert first.stderr == "warning: usage record was damaged; started a new one\n"
    assert ok(gm("recall", "build", cwd=repo)).stderr == ""  # not a warning forever


def test_a_busy_usage_record_skips_the_signal_without_a_warning(repo: Path) -> None:
    ok(gm("add", "the build runs on buildkite", cwd=repo))
    ok(gm("recall", "build", cwd=repo))  # creates the usage record
    usage = repo / ".git" / "mem" / "usage.sqlite3"
    holder = sqlite3.connect(usage, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another agent's recall, mid-write
        busy = ok(gm("recall", "build", "--json", cwd=repo))
        assert busy.stderr == "", busy.stderr  # a weak signal lost under contention is not news
        assert json.loads(busy.stdout)["data"]["hits"][0]["text"] == "the build runs on buildkite"
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# -- item 6: a read-only .git -------------------------------------------------------------


def gm_ro(clone: Path, *args: str, how: str = "mount",
          input: str | None = None) -> subprocess.CompletedProcess[str]:
    """git-mem on a clone whose .git cannot be written.

    The suite runs as root, which ``chmod a-w`` does not stop, so each way is
    made real in a private namespace: "mount" bind-mounts .git read-only
    (EROFS, a read-only volume or checkout; it stops root too); "chmod" runs
    as an unprivileged user who owns the files of a ``chmod -R a-w .git``
    (EACCES, what a user sees)."""
    if how == "mount":
        script = 'mount --bind -o ro "$0/.git" "$0/.git" && cd "$0" && exec "$@"'
        cmd = ["unshare", "-rm", "sh", "-c", script, str(clone), GIT_MEM, *args]
    else:
        cmd = ["unshare", "-U", "--map-user=1000", "--map-group=1000", GIT_MEM, *args]
    return subprocess.run(cmd, cwd=clone, capture_output=True, text=True, check=False,
                          timeout=300, input=input)


@pytest.fixture
def read_only(tmp_path: Path) -> None:
    if not diskfill.can_unshare(tmp_path):
        pytest.skip("needs unshare -rm and bind mounts (user namespaces)")


READ_ONLY_WARNING = ("warning: cannot write the projection in {} ({}); "
                     "answered from a temporary copy brought up to date from the op-log\n")


@pytest.mark.parametrize(("how", "had_projection"),
                         [("mount", True), ("mount", False), ("chmod", True)])
def test_reads_work_on_a_read_only_git_and_writes_fail_clearly(
        team: dict[str, Path], read_only: None, how: str, had_projection: bool) -> None:
    a, b = _team_with_memories(team)
    ok(gm("add", "the deploy script lives in ops/deploy.sh", cwd=b))  # a clone in use
    ok(gm("add", "the queue worker retries three times", cwd=a))
    ok(gm("sync", cwd=a))
    # A plain fetch moves b's refs: the projection is stale when .git turns read-only.
    git("fetch", "-q", "origin", "refs/memory/*:refs/memory/*", cwd=b)
    if not had_projection:
        shutil.rmtree(b / CACHE)
    listing = sorted(str(p.relative_to(b)) for p in (b / ".git").rglob("*"))
    if how == "chmod":
        subprocess.run(["chmod", "-R", "a-w", str(b / ".git")], check=True)
    why = "read-only file system" if how == "mount" else "permission denied"
    try:
        for args in (["recall", "cache redis", "-k", "50"], ["status"], ["log"], ["context"],
                     ["recall", "queue worker", "--json"]):
            out = gm_ro(b, *args, how=how)
            _quiet(out)
            assert out.returncode == 0, (args, out.stderr)
            assert out.stderr == READ_ONLY_WARNING.format(b / CACHE, why), (args, out.stderr)
        rec = gm_ro(b, "recall", "cache redis queue worker deploy script", "-k", "50", "--json",
                    how=how)
        got = sorted(r["text"] for r in json.loads(rec.stdout)["data"]["hits"])
        assert len(got) == 6 and "the queue worker retries three times" in got
        assert "ops: 6" in gm_ro(b, "status", how=how).stdout
        for args in (["add", "a note"], ["set", "db.engine", "postgres"], ["rebuild"],
                     ["import", "-"]):
            out = gm_ro(b, *args, how=how, input='{"text": "an imported note"}\n')
            _quiet(out)
            assert out.returncode == 14, (args, out.stdout, out.stderr)
            assert out.stderr.startswith("error: cannot write "), out.stderr
            assert why in out.stderr and "; hint: " in out.stderr
            assert len(out.stderr.splitlines()) == 1, out.stderr
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(b / ".git")], check=True)
    assert sorted(str(p.relative_to(b)) for p in (b / ".git").rglob("*")) == listing
    # Writable again: nothing was left behind that gets in the way.
    ok(gm("add", "a note", cwd=b))
    assert gm("recall", "cache", cwd=b).stderr == ""


def test_status_on_a_read_only_clone_that_never_wrote(team: dict[str, Path],
                                                      read_only: None) -> None:
    _, b = _team_with_memories(team)
    assert not (b / ".git" / "mem" / "clone-id").exists()
    out = gm_ro(b, "status")
    assert out.returncode == 0, out.stderr


# -- item 7: a full disk ------------------------------------------------------------------

_FULL_DISK_DRIVER = diskfill.FILL_AND_FREE + textwrap.dedent('''
    import json, os, subprocess, sys
    mnt, bare, git_mem = sys.argv[1], sys.argv[2], sys.argv[3]
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt], check=True)
    os.environ["TMPDIR"] = mnt
    clone = os.path.join(mnt, "b")
    out = {}

    def run(*args, name=None, cwd=clone, stdin=None):
        p = subprocess.run(args, cwd=cwd, capture_output=True, text=True, input=stdin)
        out.setdefault(name or " ".join(args[1:3]), []).append(
            [p.returncode, p.stdout, p.stderr])
        return p

    subprocess.run(["git", "clone", "-q", bare, clone], check=True)
    subprocess.run(["git", "config", "user.name", "Bob Roe"], cwd=clone, check=True)
    subprocess.run(["git", "config", "user.email", "bob@example.com"], cwd=clone, check=True)
    run(git_mem, "sync", name="setup")
    run(git_mem, "recall", "cache", name="setup")
    # 1. The projection is current; the disk fills: writes fail, reads still answer.
    fill()
    run(git_mem, "add", "a new note about the disk", name="add (append)")
    run(git_mem, "set", "db.engine", "postgres", name="set (append)")
    run(git_mem, "import", "-", name="import", stdin='{"text": "imported note"}\\n')
    run(git_mem, "recall", "cache", name="recall (current)")
    # 2. The refs move (a teammate's op fetched), the disk is full again: a read
    # must replay, and cannot.
    free()
    subprocess.run(["git", "fetch", "-q", "origin", "refs/memory/*:refs/memory/*"],
                   cwd=clone, check=True)
    fill()
    run(git_mem, "recall", "cache", name="recall (stale)")
    run(git_mem, "add", "another note about the disk", name="add (stale)")
    run(git_mem, "rebuild", name="rebuild")
    # 3. Space again: everything works and nothing was lost or corrupted.
    free()
    run(git_mem, "add", "a new note about the disk", name="after")
    run(git_mem, "recall", "cache redis queue worker disk", "-k", "50", "--json", name="after")
    run("git", "fsck", "--strict", name="fsck")
    print(json.dumps(out))
''')


def test_a_full_disk_is_a_typed_error_and_nothing_is_corrupted(
        team: dict[str, Path], tmp_path: Path, read_only: None) -> None:
    a, _ = _team_with_memories(team)
    ok(gm("add", "the queue worker retries three times", cwd=a))
    ok(gm("sync", cwd=a))
    bare = tmp_path / "remote.git"
    driver = tmp_path / "full_disk.py"
    driver.write_text(_FULL_DISK_DRIVER)
    mnt = tmp_path / "small"
    mnt.mkdir()
    proc = subprocess.run(["unshare", "-rm", sys.executable, str(driver), str(mnt), str(bare),
                           GIT_MEM], capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    for code, _, err in out["setup"]:
        assert code == 0, err
    for name in ("add (append)", "set (append)", "import", "recall (stale)", "add (stale)",
                 "rebuild"):
        [(code, stdout, err)] = out[name]
        assert "Traceback" not in err and "internal error" not in err, (name, err)
        if name == "recall (stale)" and code == 0:
            # The replay's pages fit in the write-ahead log an earlier command left
            # (connection.release): nothing new to allocate, so it answers.
            assert "redis" in stdout, stdout
            continue
        assert code == 13, (name, code, err)
        assert err.startswith("error: no space left on the device holding "), (name, err)
        assert "; hint: free some space" in err and len(err.splitlines()) == 1, (name, err)
    # Nothing moved: it answers, unless SQLite itself needs a page (its shared-memory
    # index) on the full disk, and then it says so the same way.
    [(code, stdout, err)] = out["recall (current)"]
    assert "Traceback" not in err and "internal error" not in err, err
    assert (code == 0 and "redis" in stdout) or (code == 13 and "no space left" in err), err
    added, recalled = out["after"]
    assert added[0] == 0 and added[2] == "", added
    assert recalled[0] == 0, recalled[2]
    got = sorted(r["text"] for r in json.loads(recalled[1])["data"]["hits"])
    assert len(got) == 6 and "a new note about the disk" in got
    assert "the queue worker retries three times" in got
    [(code, _, err)] = out["fsck"]
    assert code == 0, err


# -- item 8: an import streams in bounded memory --------------------------------------------


def _limited(seconds: int, megabytes: int) -> Callable[[], None]:
    def limit() -> None:  # before the fix, /dev/zero grew to ~1.9 GB in 20 s
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))
    return limit


@pytest.mark.parametrize("source", ["file", "stdin"])
def test_importing_dev_zero_fails_fast_on_line_one(team: dict[str, Path], source: str) -> None:
    b = team["b"]
    start = time.monotonic()
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run([GIT_MEM, "import", "/dev/zero" if source == "file" else "-"],
                              cwd=b, stdin=zero if source == "stdin" else subprocess.DEVNULL,
                              capture_output=True, check=False, timeout=60,
                              preexec_fn=_limited(30, 1024))
    assert time.monotonic() - start < 30
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert err.startswith("error: line 1: longer than 65536 bytes"), err
    assert len(err.splitlines()) == 1
    assert git("for-each-ref", "refs/memory/", cwd=b).stdout == ""


def test_a_huge_line_after_good_ones_is_refused_by_number_and_nothing_is_written(
        team: dict[str, Path]) -> None:
    b = team["b"]
    good = "".join(json.dumps({"text": f"fact {i} about the build"}) + "\n" for i in range(30))
    huge = '{"text": "' + "a" * (20 << 20) + '"}\n'
    proc = subprocess.Popen([GIT_MEM, "import", "-", "--pack-size", "10"], cwd=b,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=_limited(60, 1024))
    try:
        assert proc.stdin is not None
        proc.stdin.write((good + huge + good).encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # it stopped reading at the limit, as it should
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert err.decode().startswith("error: line 31: longer than 65536 bytes"), err
    assert git("for-each-ref", "refs/memory/", cwd=b).stdout == ""


def _peak_rss_mb(cwd: Path, path: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Peak RSS of ``git mem import path``, measured in a wrapper process so that no
    other child of this test process counts."""
    wrapper = textwrap.dedent("""
        import json, resource, subprocess, sys
        p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(json.dumps([peak, p.returncode, p.stdout, p.stderr]))
    """)
    out = subprocess.run([sys.executable, "-c", wrapper, GIT_MEM, "import", str(path), "--json"],
                         cwd=cwd, capture_output=True, text=True, check=True, timeout=900)
    peak, code, stdout, stderr = json.loads(out.stdout)
    return peak, subprocess.CompletedProcess([], code, stdout, stderr)


def _synthetic(path: Path, megabytes: float, offset: int) -> int:
    words = ("cache queue billing deploy staging module service worker timeout retry "
             "index shard replica backup schema migration tenant region").split()
    n = 0
    with path.open("w") as fh:
        while fh.tell() < megabytes * (1 << 20):
            body = " ".join(words[(n * 7 + i * 3) % len(words)] for i in range(500))
            fh.write(json.dumps({"text": f"record {offset + n}: {body}", "tags": ["bulk"]}) + "\n")
            n += 1
    return n


def test_import_memory_stays_bounded_whatever_the_input_size(
        team: dict[str, Path], tmp_path: Path) -> None:
    a = team["a"]
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    _synthetic(small, 1, 0)
    n_large = _synthetic(large, 12, 10**6)
    peak_small, out_small = _peak_rss_mb(a, small)
    peak_large, out_large = _peak_rss_mb(a, large)
    assert out_small.returncode == 0 and out_large.returncode == 0, out_large.stderr
    data = json.loads(out_large.stdout)["data"]
    assert data["count"] == n_large
    # Packs are capped in bytes too: a replayable size whatever --pack-size says.
    assert len(data["commits"]) >= 3
    # Before streaming, memory grew with the input (300 MB of input took 620 MB).
    assert peak_large - peak_small < 25, (peak_small, peak_large)


def test_duplicates_are_found_across_packs_as_before(repo: Path) -> None:
    """Packs are deduplicated against the projection, earlier packs of the same
    import included: the report is the one a single pack would give."""
    added = ok(gm("add", "the cache lives in redis", "--json", cwd=repo)).stdout
    existing = json.loads(added)["data"]["id"]
    lines = [{"text": "alpha runs the billing jobs"}, {"text": "beta owns search"},
             {"text": "the cache lives in redis"}, {"text": "alpha runs the billing jobs"},
             {"text": "the cache lives in redis"}, {"text": "gamma", "key": "team.lead"},
             {"text": "delta", "key": "team.lead"}]
    out = ok(gm("import", "-", "--pack-size", "2", "--json", cwd=repo,
                input="".join(json.dumps(x) + "\n" for x in lines)))
    data = json.loads(out.stdout)["data"]
    assert data["count"] == 4
    assert data["duplicates"] == [{"line": 3, "id": existing}, {"line": 4, "line_of_first": 1},
                                  {"line": 5, "id": existing}]
    shown = json.loads(ok(gm("show", existing, "--json", cwd=repo)).stdout)["data"]
    assert [o["type"] for o in shown["ops"]] == ["add", "confirm"]  # reinforced once
    value = json.loads(ok(gm("get", "team.lead", "--json", cwd=repo)).stdout)["data"]
    assert (value["value"], value["conflicts"]) == ("delta", [])  # the later line replaced it


def _filled(repo: Path, notes: int, words: int, fast: bool) -> dict[str, str]:
    """``notes`` long notes about the database imported; the environment for the fast
    path or for click."""
    lines = "\n".join(json.dumps({"text": f"note {i} about the database and its cache, "
                                          + "with words to fill the output " * words})
                      for i in range(notes))
    ok(gm("import", "-", cwd=repo, input=lines))
    env = dict(os.environ)
    if not fast:
        env["GITMEM_NO_FAST_PATH"] = "1"
    return env


@pytest.mark.parametrize("fast", [True, False], ids=["fast path", "click"])
@pytest.mark.parametrize("args", [["context"], ["recall", "database", "--json"]])
def test_a_reader_that_goes_away_or_a_full_output_device_is_not_a_bug(
        repo: Path, args: list[str], fast: bool) -> None:
    """`git mem context | head -1`: the reader closes the pipe; the command ends
    quietly, as git does (141), not with "internal error". Output to a full device
    is the full-disk error, with a hint."""
    env = _filled(repo, 60, 8, fast)
    proc = subprocess.Popen([GIT_MEM, *args], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and "error" not in err, err
    if not Path("/dev/full").exists():
        return
    with open("/dev/full", "w") as full:
        done = subprocess.run([GIT_MEM, *args], cwd=repo, env=env, stdout=full,
                              stderr=subprocess.PIPE, text=True, check=False)
    assert done.returncode == 13, done.stderr
    assert done.stderr.startswith("error: cannot write the output: No space left on device")


@pytest.mark.parametrize("fast", [True, False], ids=["fast path", "click"])
@pytest.mark.parametrize("args", [["log"], ["log", "--json"],
                                  ["recall", "database", "--limit", "1500"],
                                  ["recall", "database", "--limit", "1500", "--json"]])
def test_a_reader_that_goes_away_part_way_ends_the_command_as_git_does(
        repo: Path, args: list[str], fast: bool) -> None:
    """`git mem log | head -1` on a large log: the reader takes the first lines and
    closes the pipe while the rest is being written. The command ends with 141, as
    git does, not 0 with its output cut short (one large write lost the EPIPE)."""
    env = _filled(repo, 1500, 16, fast)
    whole = subprocess.run([GIT_MEM, *args], cwd=repo, env=env, capture_output=True,
                           check=False)
    assert whole.returncode == 0 and len(whole.stdout) > 2 * 65536, whole.stderr
    proc = subprocess.Popen([GIT_MEM, *args], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.read(100)  # the first line is read ...
    proc.stdout.close()  # ... and the reader is gone while the rest is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141 and "error" not in err, err


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
def test_output_is_utf8_whatever_the_locale_says(repo: Path, encoding: str) -> None:
    """Memory text is UTF-8; a Latin-1 stream cannot hold a snowman, and every recall
    that met one failed as "internal error". Output is UTF-8, as git's is."""
    ok(gm("add", "snowman \u2603 note about winter \U0001f600", cwd=repo))
    env = {"PYTHONIOENCODING": encoding}
    for fast in ("", "1"):
        env["GITMEM_NO_FAST_PATH"] = fast
        proc = subprocess.run([GIT_MEM, "recall", "snowman"], cwd=repo, capture_output=True,
                              env={**os.environ, **env}, check=False)
        assert proc.returncode == 0, proc.stderr
        assert "snowman \u2603 note about winter \U0001f600" in proc.stdout.decode("utf-8")
        proc = subprocess.run([GIT_MEM, "recall", "snowman", "--json"], cwd=repo,
                              capture_output=True, env={**os.environ, **env}, check=False)
        hits = json.loads(proc.stdout.decode("utf-8"))["data"]["hits"]
        assert hits[0]["text"] == "snowman \u2603 note about winter \U0001f600"


@pytest.mark.parametrize("fast", [True, False], ids=["fast path", "click"])
def test_a_closed_or_full_stderr_or_a_closed_stdin_is_not_a_bug(repo: Path, fast: bool) -> None:
    """Hook runners and agents call git-mem directly, sometimes with stderr closed
    (`2>&-`: every command exited 1 and an add stored nothing) or full (the answer
    on stdout and the exit code were lost). A closed stdin for `add -` is a usage
    error, not "internal error"."""
    env = {**os.environ, "GITMEM_NO_FAST_PATH": "" if fast else "1"}

    def run(*args: str, close: int | None = None, **kw: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run([GIT_MEM, *args], cwd=repo, env=env, text=True,
                              preexec_fn=(lambda: os.close(close)) if close is not None else None,
                              check=False, **kw)  # type: ignore[call-overload]

    added = run("add", f"stderr is closed for this note ({fast})", close=2,
                stdout=subprocess.PIPE)
    assert added.returncode == 0 and added.stdout.strip()
    found = run("recall", "stderr closed note", close=2, stdout=subprocess.PIPE)
    assert found.returncode == 0 and "stderr is closed" in found.stdout
    if Path("/dev/full").exists():
        with open("/dev/full", "w") as full:
            out = run("recall", "stderr closed note", "--json", stdout=subprocess.PIPE,
                      stderr=full)
            assert out.returncode == 0 and json.loads(out.stdout)["ok"]
            lost = run("show", "0000000", "--json", stdout=subprocess.PIPE, stderr=full)
            assert lost.returncode == 5 and json.loads(lost.stdout)["error"]["exit_code"] == 5
    shut = run("add", "-", close=0, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert shut.returncode == 2 and "stdin is closed" in shut.stderr, shut.stderr


@pytest.mark.parametrize("make", ["sha256", "reftable"])
def test_a_repository_format_libgit2_cannot_read_is_one_line(make: str, tmp_path: Path) -> None:
    """git mem writes through libgit2 and its own lock-file protocol on sha1 object
    ids and ref files: any other format is refused before anything is written."""
    repo = tmp_path / make
    if make == "sha256":
        git("init", "-q", "--object-format=sha256", str(repo), cwd=tmp_path)
    else:  # (the git here cannot make one; the config is what marks it)
        git("init", "-q", str(repo), cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=repo)
    if make == "reftable":
        git("config", "core.repositoryformatversion", "1", cwd=repo)
        git("config", "extensions.refStorage", "reftable", cwd=repo)
    for args in (["add", "a note"], ["sync"]):
        proc = gm(*args, "--json", cwd=repo)
        assert proc.returncode == 3, proc.stderr
        assert json.loads(proc.stdout)["error"]["code"] == "repository_unsupported"
        proc = gm(*args, cwd=repo)
        assert proc.stderr.count("\n") == 1 and "not supported" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert not (repo / ".git" / "refs" / "memory").exists()


def test_a_repository_path_too_long_for_sqlite_is_one_line(tmp_path: Path) -> None:
    """SQLite opens paths of up to 504 bytes (512 less a suffix's room): past that,
    every command said 'internal error: ProjectionCorrupt ... this is a bug'."""
    deep = tmp_path
    while len(os.fsencode(deep / ".git/mem/cache/projection.sqlite3")) <= 504:
        deep = deep / ("d" * min(60, 505 - len(os.fsencode(deep / ".git/mem/cache/projection.sqlite3"))))
    git("init", "-q", str(deep), cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "init", cwd=deep)
    for args in (["add", "a note about the long path"], ["recall", "long path"], ["status"]):
        proc = gm(*args, "--json", cwd=deep)
        assert proc.returncode == 3, proc.stderr
        assert json.loads(proc.stdout)["error"]["code"] == "path_too_long"
        proc = gm(*args, cwd=deep)
        assert proc.stderr.count("\n") == 1 and "shorter path" in proc.stderr
    assert git("for-each-ref", "refs/memory", cwd=deep).stdout == ""


def test_a_projection_locked_past_the_busy_timeout_is_a_one_line_error(repo: Path) -> None:
    # (Issue 13, adv39 07: a catch-up holding the write lock made recall and add end in
    # "internal error: OperationalError: database is locked; hint: this is a bug".)
    ok(gm("add", "the build runs on buildkite", cwd=repo))
    ok(gm("recall", "build", cwd=repo))
    ok(gm("add", "deploys go through staging first", cwd=repo))  # the next read replays it
    [db] = list((repo / ".git" / "mem").rglob("projection.sqlite3"))
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # a catch-up, mid-slice
        env = {"GITMEM_BUSY_TIMEOUT": "0.5"}
        busy = gm("recall", "deploys", cwd=repo, env=env)
        as_json = gm("recall", "deploys", "--json", cwd=repo, env=env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert busy.returncode == 16, busy.stderr
    assert busy.stderr.count("\n") == 1 and busy.stderr.startswith(
        "error: the memory projection stayed locked by another git mem process"), busy.stderr
    assert "catch-up.log" in busy.stderr and "this is a bug" not in busy.stderr
    assert json.loads(as_json.stdout)["error"]["code"] == "projection_busy"
    assert as_json.returncode == 16
    assert ok(gm("recall", "deploys", cwd=repo)).stdout  # free again: it answers
