"""Files of the wrong kind under .git/mem cannot break or hang a clone (issue 13, item 5).

Each hostile state is real: a FIFO made with mkfifo, a symbolic link to
/dev/null, /dev/zero or /dev/urandom, a directory, a regular file where a
directory belongs, on clones of a real bare remote. A cache in the way is
damage (removed without being opened, rebuilt from the log with one warning);
``.git/mem`` or its clone id in the way is a one-line typed error with a hint,
never a hang and never a new clone id made up in place of the old one. A read
on a read-only ``.git`` integrates what a plain ``git fetch`` brought into
refs/memory-remotes/*, as every other read does.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import GIT_MEM, deadline, git, gm, ok, texts
from test_degrade import CACHE, CORRUPT, gm_ro, read_only  # noqa: F401 - a fixture

HANG_SECONDS = 60  # a command that is not done by then is taken to hang


def run(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """git-mem in ``clone``; a command that never ends fails the test, not the suite."""
    try:
        return subprocess.run([GIT_MEM, *args], cwd=clone, capture_output=True, text=True,
                              check=False, timeout=HANG_SECONDS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"git mem {' '.join(args)} hung (no answer in {HANG_SECONDS} s)")


def _quiet(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr


def _refs(clone: Path) -> str:
    return git("for-each-ref", "refs/memory", cwd=clone).stdout


# -- the projection's own files: damage, rebuilt from the log ----------------------------

DB = "projection.sqlite3"


def _db(clone: Path) -> Path:
    return clone / CACHE / DB


def _replace(path: Path, make: Callable[[Path], None]) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    make(path)


def _link(target: str) -> Callable[[Path], None]:
    return lambda p: p.symlink_to(target)


def _vector_file(clone: Path) -> Path:
    found = sorted((clone / CACHE).glob("vectors*.i8"))
    assert found, "the projection has a vector file"
    return found[0]


OUTSIDE = "outside.sqlite3"  # someone's database beside the clone, that a link points to
# name -> (which file of the cache, what is put in its place)
HOSTILE: dict[str, tuple[Callable[[Path], Path], Callable[[Path], None]]] = {
    "database is a FIFO": (_db, os.mkfifo),
    "database links to /dev/null": (_db, _link("/dev/null")),
    "database links to /dev/zero": (_db, _link("/dev/zero")),
    "database links to /dev/urandom": (_db, _link("/dev/urandom")),
    "database links to a file outside the cache": (_db, lambda p: p.symlink_to(
        p.parents[4] / OUTSIDE)),
    "write-ahead log is a FIFO": (lambda c: Path(f"{_db(c)}-wal"), os.mkfifo),
    "shared memory is a FIFO": (lambda c: Path(f"{_db(c)}-shm"), os.mkfifo),
    "vector file is a FIFO": (_vector_file, os.mkfifo),
    "vector file links to /dev/urandom": (_vector_file, _link("/dev/urandom")),
}


@pytest.mark.parametrize("hostile", list(HOSTILE))
def test_a_projection_file_that_is_not_a_regular_file_is_rebuilt_never_opened(
        repo: Path, hostile: str) -> None:
    b = repo
    ok(gm("add", "the widget service keeps its cache in redis", cwd=b))
    outside = b.parent / OUTSIDE
    with sqlite3.connect(outside) as other:
        other.execute("CREATE TABLE notes(text)")
        other.execute("INSERT INTO notes VALUES ('never opened, never changed')")
    other.close()
    before = outside.read_bytes()
    which, make = HOSTILE[hostile]
    for args in (["recall", "widget cache"], ["add", "the gadget service retries twice"],
                 ["rebuild"]):
        ok(run(b, "recall", "widget"))  # the projection exists, with its vector file
        _replace(which(b), make)
        out = run(b, *args)
        _quiet(out)
        assert out.returncode == 0, (args, out.stderr)
        # One line, from the command that finds it (rebuild never reads the old file).
        assert out.stderr == ("" if args == ["rebuild"] else CORRUPT), (args, out.stderr)
        assert not _db(b).is_symlink() and _db(b).is_file()
    assert texts(b, "service") == ["the gadget service retries twice",
                                   "the widget service keeps its cache in redis"]
    assert outside.read_bytes() == before  # (before: its tables reset to ours)
    for target in ("/dev/null", "/dev/zero", "/dev/urandom"):
        assert Path(target).is_char_device()


# -- .git/mem itself in the way: a typed error, the clone id never made up ----------------

MEM_HOSTILE: dict[str, Callable[[Path], None]] = {
    "a regular file": lambda p: p.write_text("x\n"),
    "a FIFO": os.mkfifo,
    "a link to /dev/null": _link("/dev/null"),
    "a link to nothing": _link("/nonexistent/mem"),
}


@pytest.mark.parametrize("hostile", list(MEM_HOSTILE))
def test_a_state_folder_that_is_not_a_directory_is_a_typed_error_with_a_hint(
        repo: Path, tmp_path: Path, hostile: str) -> None:
    ok(gm("add", "the widget service keeps its cache in redis", cwd=repo))
    mem = repo / ".git" / "mem"
    clone_id = (mem / "clone-id").read_text().strip()
    refs = _refs(repo)
    kept = tmp_path / "mem.kept"
    mem.rename(kept)
    MEM_HOSTILE[hostile](mem)
    for args in (["recall", "widget"], ["status"], ["log"], ["add", "a second note"],
                 ["rebuild"], ["rekey"]):
        out = run(repo, *args)
        _quiet(out)
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr.startswith(f"error: {mem} is "), out.stderr
        assert "not git mem's state directory; hint: move it aside" in out.stderr
        assert len(out.stderr.splitlines()) == 1, out.stderr
    assert _refs(repo) == refs  # nothing written, no partition started under a new id
    # The hint's way out: move it aside, put the id back; the same partition goes on.
    mem.unlink()
    mem.mkdir()
    (mem / "clone-id").write_text(clone_id + "\n")
    ok(gm("add", "a second note", cwd=repo))
    assert len(_refs(repo).splitlines()) == 1
    assert texts(repo, "note widget") == ["a second note",
                                          "the widget service keeps its cache in redis"]


ID_HOSTILE: dict[str, tuple[Callable[[Path], None], str]] = {
    "a directory": (lambda p: (p.mkdir(), (p / "x").write_text("kept\n")), "a directory"),
    "a FIFO": (os.mkfifo, "a FIFO"),
    "a link to /dev/zero": (_link("/dev/zero"), "a character device"),
    "a link to nothing": (_link("/nonexistent/clone-id"), "a symbolic link to nothing"),
}


@pytest.mark.parametrize("hostile", list(ID_HOSTILE))
def test_a_clone_id_that_is_not_a_file_is_a_typed_error_and_rekey_replaces_it(
        repo: Path, hostile: str) -> None:
    ok(gm("add", "the widget service keeps its cache in redis", cwd=repo))
    path = repo / ".git" / "mem" / "clone-id"
    refs = _refs(repo)
    path.unlink()
    make, what = ID_HOSTILE[hostile]
    make(path)
    for args in (["add", "a second note"], ["status"]):
        out = run(repo, *args)
        _quiet(out)
        assert out.returncode == 2, (args, out.stderr)
        assert out.stderr == (f"error: {path} is {what}, not a file holding a clone id; "
                              f"hint: run 'git mem rekey', or delete {path}: this clone gets "
                              "a new id, and so a new partition, on its next write\n")
    assert _refs(repo) == refs
    # Reads that need no clone id go on.
    assert texts(repo, "widget") == ["the widget service keeps its cache in redis"]
    rekeyed = run(repo, "rekey")
    assert rekeyed.returncode == 0, rekeyed.stderr
    assert path.is_file() and not path.is_symlink()
    if hostile == "a directory":  # what was there is kept beside, never deleted
        [aside] = path.parent.glob("clone-id.not-a-file.*")
        assert (aside / "x").read_text() == "kept\n"
    ok(gm("add", "a second note", cwd=repo))
    assert texts(repo, "note widget") == ["a second note",
                                          "the widget service keeps its cache in redis"]


# -- a read-only .git integrates refs/memory-remotes/* like every read --------------------


@pytest.mark.parametrize("second", [None, "mirror", "upstream"])
def test_a_read_only_read_integrates_what_a_plain_fetch_brought(
        team: dict[str, Path], read_only: None, second: str | None) -> None:
    a, b = team["a"], team["b"]
    ok(gm("add", "the flux capacitor needs 1.21 gigawatts", cwd=a))
    ok(gm("sync", cwd=a))
    ok(gm("add", "the flux capacitor was built in 1955", cwd=b))
    ok(gm("recall", "flux", cwd=b))  # b's projection is built before the fetch
    # What 'git mem init --fetch-refspec' makes a plain 'git fetch' do.
    git("fetch", "-q", "origin", "+refs/memory/*:refs/memory-remotes/origin/*", cwd=b)
    remotes = 1
    if second is not None:
        # A second remote name holds a newer copy of a's partition than origin's:
        # the newer one wins, whether its namespace is read before origin's
        # ("mirror") or after it ("upstream").
        ok(gm("add", "the flux capacitor sits behind the seats", cwd=a))
        ok(gm("sync", cwd=a))
        git("remote", "add", second, str(b.parent / "remote.git"), cwd=b)
        git("fetch", "-q", second, f"+refs/memory/*:refs/memory-remotes/{second}/*", cwd=b)
        remotes = 2
    assert git("for-each-ref", "refs/memory/", cwd=b).stdout.count("\n") == 1
    refs = git("for-each-ref", cwd=b).stdout
    out = gm_ro(b, "recall", "flux capacitor", "--json", "-k", "50")
    _quiet(out)
    assert out.returncode == 0, out.stderr
    assert "answered from a temporary copy" in out.stderr
    got = sorted(r["text"] for r in json.loads(out.stdout)["data"]["hits"])
    status = gm_ro(b, "status")
    assert status.returncode == 0 and f"ops: {remotes + 1} " in status.stdout, status.stdout
    assert git("for-each-ref", cwd=b).stdout == refs  # read-only: nothing moved
    # Exactly what the same read answers on the writable clone.
    assert got == texts(b, "flux capacitor")
    assert len(got) == remotes + 1 and "the flux capacitor needs 1.21 gigawatts" in got


# -- disposable JSON caches: bounded, never hanging, never a RecursionError ---------------


CACHE_HOSTILE: dict[str, Callable[[Path], None]] = {
    "nested 5000 deep": lambda p: p.write_text('{"a":' * 5000),
    "nested 100000 deep in a list": lambda p: p.write_text("[" * 100_000),
    "a FIFO": os.mkfifo,
    "a link to /dev/zero": _link("/dev/zero"),
    "a link to a good file elsewhere": lambda p: (
        (p.parent.parent / "elsewhere.json").write_text('{"abc": "00ff"}'),
        p.symlink_to(p.parent.parent / "elsewhere.json")),
    "a directory": lambda p: p.mkdir(),
    "another shape": lambda p: p.write_text('{"abc": 3}'),
    "not JSON": lambda p: p.write_bytes(b"\xff\xfe not json"),
    "too big": lambda p: p.write_bytes(b'{"a": "' + b"0" * (5 << 20) + b'"}'),
}


@pytest.mark.parametrize("hostile", list(CACHE_HOSTILE))
def test_a_damaged_cache_reads_as_absent_and_is_removed(tmp_path: Path, hostile: str) -> None:
    from gitmem.api import cachefiles

    cache = tmp_path / "cache"
    cache.mkdir()
    path = cache / "pending-vectors.json"
    CACHE_HOSTILE[hostile](path)
    with deadline(20):
        assert cachefiles.load_pending_vectors(path) == {}
    assert not os.path.lexists(path)
    if hostile == "a link to a good file elsewhere":
        assert (tmp_path / "elsewhere.json").read_text() == '{"abc": "00ff"}'
    path.write_text('{"abc": "00ff"}')
    assert cachefiles.load_pending_vectors(path) == {"abc": "00ff"}
    assert cachefiles.load_pending_vectors(cache / "absent.json") == {}


@pytest.mark.parametrize("hostile", list(CACHE_HOSTILE))
@pytest.mark.parametrize("disposable", [True, False])
def test_a_damaged_state_memo_reads_as_absent(tmp_path: Path, hostile: str,
                                              disposable: bool) -> None:
    from gitmem.oplog.state import State

    state = State(tmp_path / "mem")
    state.path.mkdir()
    path = state.path / "facts"
    CACHE_HOSTILE[hostile](path)
    with deadline(20):
        got = state.read_json("facts", limit=4 << 20, disposable=disposable)
    if hostile in ("another shape", "a link to a good file elsewhere"):
        assert got == {"abc": 3 if hostile == "another shape" else "00ff"}  # JSON: the caller checks
        return
    assert got is None
    # A disposable memo is removed (a directory is only ignored); the purge record stays.
    assert os.path.lexists(path) == (not disposable or hostile == "a directory")
    assert state.read_json("absent") is None


def test_a_deeply_nested_config_memo_never_breaks_a_command(repo: Path) -> None:
    ok(gm("add", "the widget service keeps its cache in redis", cwd=repo))
    (repo / ".git" / "mem" / "gitconfig.json").write_text("[" * 100_000)
    out = run(repo, "recall", "widget")
    _quiet(out)
    assert out.returncode == 0, out.stderr


def test_a_fifo_among_the_cache_files_never_hangs_add(repo: Path) -> None:
    ok(gm("add", "the widget service keeps its cache in redis", cwd=repo))
    pending = repo / CACHE / "pending-vectors.json"
    pending.unlink(missing_ok=True)
    os.mkfifo(pending)
    out = run(repo, "add", "the gadget service retries twice")
    _quiet(out)
    assert out.returncode == 0 and out.stderr == CORRUPT, out.stderr
    assert texts(repo, "service") == ["the gadget service retries twice",
                                      "the widget service keeps its cache in redis"]


def test_deeply_nested_pending_vectors_never_break_add(repo: Path) -> None:
    ok(gm("add", "the widget service keeps its cache in redis", cwd=repo))
    (repo / CACHE / "pending-vectors.json").write_text('{"a":' * 5000)
    out = run(repo, "add", "the gadget service retries twice")
    _quiet(out)
    assert out.returncode == 0 and out.stderr == "", out.stderr


# The op-log's and the API's other small state files in .git/mem, each read where a
# command needs it: facts (every read), purges (sync), rescued-clocks (add),
# remote-probe.json (status), stale-at-last-session (the session-start hook).
STATE_FILES = ["facts", "purges", "rescued-clocks", "remote-probe.json", "stale-at-last-session"]


@pytest.mark.parametrize("name", STATE_FILES)
@pytest.mark.parametrize("hostile", ["a FIFO", "nested 100000 deep in a list"])
def test_a_damaged_state_file_never_hangs_or_breaks_a_command(repo: Path, name: str,
                                                              hostile: str) -> None:
    ok(gm("add", "the widget service keeps its cache in redis", cwd=repo))
    path = repo / ".git" / "mem" / name
    path.unlink(missing_ok=True)
    CACHE_HOSTILE[hostile](path)
    for args in (("add", "the gadget service retries twice"), ("recall", "service"),
                 ("status",), ("sync",), ("hook", "session-start")):
        out = run(repo, *args)
        _quiet(out)
        assert out.returncode in (0, 8), (args, out.returncode, out.stderr)  # 8: no remote
    assert "the gadget service retries twice" in texts(repo, "service")


@pytest.mark.parametrize("hostile", ["a FIFO", "a link to /dev/null", "an empty directory",
                                     "a full directory"])
def test_a_damaged_append_lock_never_breaks_add(repo: Path, hostile: str) -> None:
    """.git/mem/append.lock only ever holds an flock: whatever is found in its place is
    made again (a FIFO there failed add with "internal error ... not seekable")."""
    ok(gm("add", "the widget service keeps its cache in redis", cwd=repo))
    lock = repo / ".git" / "mem" / "append.lock"
    lock.unlink(missing_ok=True)
    if hostile == "a FIFO":
        os.mkfifo(lock)
    elif hostile == "a link to /dev/null":
        lock.symlink_to("/dev/null")
    else:
        lock.mkdir()
        if hostile == "a full directory":
            (lock / "keep").write_text("someone's file")
    out = run(repo, "add", "the gadget service retries twice")
    _quiet(out)
    if hostile == "a full directory":  # not ours to empty: one line, with a hint
        assert out.returncode == 2 and "append.lock is not a regular file" in out.stderr
        assert (lock / "keep").read_text() == "someone's file"
        return
    assert out.returncode == 0, out.stderr
    assert lock.is_file() and not lock.is_symlink()
    assert "the gadget service retries twice" in texts(repo, "service")


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
