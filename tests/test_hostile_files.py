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
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import GIT_MEM, git, gm, ok, texts
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


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
