"""The vector files on disk are hostile until checked (projection/sidecars.py, stamps.py).

A writer stamps what it leaves (stat and block sums in ``meta``); a file changed by
anything else, even at the same size and with its mtime put back (the ctime still
moves), is found by a stat compare on the next read and compared block by block by
the next writer: the sign and moments files are made again, a vector file is
re-embedded, each with a one-line warning. A copied store is the same bytes: no
warning, nothing made again. A directory that cannot be written (a read-only bind
mount) is noticed once: reads scan exactly, and no process tries to make the files
on every read. The garbling runs in another process, on real files.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import diskfill
import gitmem
from conftest import GIT_MEM, gm
from gitmem.projection import firstpass, sidecars
from test_firstpass import answers, consistent, files, notes, on, spy

REMADE = ("the vector search files were changed on disk since they were written; "
          "made them again")
REEMBEDDED = "vector file was damaged; re-embedded every memory"


def garble(path: Path, start: int, length: int, *, keep_mtime: bool) -> None:
    """Flip ``length`` bytes from ``start`` in another process, at the same size (and
    with the mtime put back: only the ctime shows the write)."""
    script = textwrap.dedent("""
        import os, sys
        path, start, length, keep = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        st = os.stat(path)
        fd = os.open(path, os.O_RDWR)
        old = os.pread(fd, length, start)
        os.pwrite(fd, bytes(b ^ 0x5A for b in old), start)
        os.close(fd)
        if keep == "1":
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    """)
    size, mtime = path.stat().st_size, path.stat().st_mtime_ns
    subprocess.run([sys.executable, "-c", script, str(path), str(start), str(length),
                    "1" if keep_mtime else "0"], check=True)
    assert path.stat().st_size == size
    assert (path.stat().st_mtime_ns == mtime) == keep_mtime


@pytest.fixture
def big(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store past the (lowered) first-pass threshold, its files made and stamped."""
    on(monkeypatch)
    assert gm("import", "-", cwd=repo, input=notes(300)).returncode == 0
    with gitmem.open(repo) as store:
        answers(store)
        assert store.warnings == []
    consistent(repo)
    return repo


@pytest.mark.parametrize("keep_mtime", [False, True])
@pytest.mark.parametrize("which", ["sign", "moments"])
def test_a_first_pass_file_garbled_in_place_is_made_again(
        big: Path, monkeypatch: pytest.MonkeyPatch, which: str, keep_mtime: bool) -> None:
    with gitmem.open(big) as store:
        before = answers(store)
    vec, signs, moments = files(big)
    dim = 384
    if which == "sign":  # every code row: the candidates would be anything
        off = firstpass.sign_offset(dim)
        garble(signs, off, signs.stat().st_size - off, keep_mtime=keep_mtime)
    else:  # the sums S (not the header: still a moments file that parses)
        garble(moments, 48, 8 * dim, keep_mtime=keep_mtime)
    with gitmem.open(big) as store:
        used = spy(monkeypatch)
        assert answers(store) == before
        assert store.warnings == [REMADE]
        assert used and all(used)  # from the first pass, on the files made again
    consistent(big)
    with gitmem.open(big) as store:
        answers(store)
        assert store.warnings == []  # stamped again: said once


@pytest.mark.parametrize("keep_mtime", [False, True])
def test_a_vector_file_garbled_in_place_is_embedded_again(
        big: Path, keep_mtime: bool) -> None:
    with gitmem.open(big) as store:
        before = answers(store)
    vec = files(big)[0]
    dim = 384
    # Row 7: not one the quick look of vectors.damaged samples (first, middle, last).
    garble(vec, 7 * dim, dim, keep_mtime=keep_mtime)
    with gitmem.open(big) as store:
        assert answers(store) == before
        assert store.warnings == [REEMBEDDED]
    assert files(big)[0] != vec  # a new generation
    consistent(big)


def test_a_copied_store_is_checked_once_and_not_made_again(
        big: Path, tmp_path: Path) -> None:
    """A copy has new inodes and ctimes: the blocks are compared, found the same, and
    stamped again; nothing is rebuilt, nothing said."""
    with gitmem.open(big) as store:
        before = answers(store)
    copy = tmp_path / "copy"
    shutil.copytree(big, copy, symlinks=True)
    vec, signs, moments = files(copy)
    inodes = [p.stat().st_ino for p in (vec, signs, moments)]
    with gitmem.open(copy) as store:
        assert answers(store) == before
        assert store.warnings == []
        c = store.projection._c
        assert store.projection._vectors._sidecars.stamped(c) is True
    assert [p.stat().st_ino for p in files(copy)] == inodes


def test_a_reader_scans_exactly_while_the_files_differ_from_their_stamps(
        big: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stat compare alone keeps a reader off files written since their stamp
    (before a writer has looked at them)."""
    with gitmem.open(big) as store:
        before = answers(store)
        p = store.projection
        garble(files(big)[1], firstpass.sign_offset(384), 4096, keep_mtime=True)
        c = p._c
        c.execute("BEGIN")
        try:
            assert p._vectors._sidecars.stamped(c) is False
            n = c.execute("SELECT max(slot) + 1 FROM vec_rows").fetchone()[0]
            assert p._vectors._sidecars.files(c, n) is None  # the first pass is off
        finally:
            c.execute("COMMIT")


# -- a directory that cannot be written ----------------------------------------------------

PROBE = textwrap.dedent("""
    import sys, time
    from gitmem.projection import firstpass, sidecars
    firstpass.FIRST_PASS_FROM, firstpass.CANDIDATES, firstpass.LEVELS_SAMPLE = 100, 120, 8
    firstpass.NEAREST_FROM = 100
    settles, scans = [], []
    real_add = firstpass.Moments.add
    def counted(self, *a, **k):  # (summing rows: making the files)
        settles.append(1)
        return real_add(self, *a, **k)
    firstpass.Moments.add = counted
    real_first = sidecars.FirstPassFiles.first_pass_hits
    def first(self, *a, **k):
        out = real_first(self, *a, **k)
        scans.append(out is not None)
        return out
    sidecars.FirstPassFiles.first_pass_hits = first
    import gitmem
    with gitmem.open(".") as s:
        hits = [[h.id for h in s.recall(q, k=5, mode="vector", min_score=0)]
                for q in sys.argv[1:] * 3]
        print(repr((hits, len(settles), scans, s.warnings)))
""")


def probe(repo: Path, *queries: str, read_only: bool) -> tuple[list[list[str]], int,
                                                                  list[bool], list[str]]:
    """Recall in a fresh process with the first pass on from 100 rows; on a read-only
    bind mount of .git if ``read_only``: (hits, how often the files were being made
    (rows summed for the moments), first pass used per scan, warnings)."""
    cmd = [sys.executable, "-c", PROBE, *queries]
    if read_only:
        cmd = ["unshare", "-rm", "sh", "-c",
               'mount --bind -o ro "$0/.git" "$0/.git" && cd "$0" && exec "$@"', str(repo),
               *cmd]
    env = dict(os.environ, PYTHONPATH=str(Path(gitmem.__file__).parent.parent))
    out = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, check=False, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    got: tuple[list[list[str]], int, list[bool], list[str]] = eval(out.stdout)
    return got


def test_a_read_only_git_scans_exactly_and_never_tries_to_make_the_files(
        repo: Path, tmp_path: Path) -> None:
    if not diskfill.can_unshare(tmp_path):
        pytest.skip("needs unshare -rm and bind mounts (user namespaces)")
    # Imported by the real command (first pass off there): no sign or moments files.
    assert gm("import", "-", cwd=repo, input=notes(300)).returncode == 0
    assert subprocess.run([GIT_MEM, "recall", "cache"], cwd=repo, check=False).returncode == 0
    vec = files(repo)[0]
    assert not firstpass.sign_path(vec).exists()
    queries = ("why does the worker retry", "redis lock timeout")
    hits, settles, scans, warnings = probe(repo, *queries, read_only=True)
    assert settles == 0  # not one try at making them, in six reads
    assert not any(scans) and len(hits) == 6  # every answer from the exact scan
    assert warnings == ["cannot write the vector search files (the directory cannot be "
                        "written); recall compares every vector instead"]
    assert not firstpass.sign_path(vec).exists()
    # Writable: the same answers, from the first pass on the files made once.
    again, settles, scans, warnings = probe(repo, *queries, read_only=False)
    assert again == hits and settles == 1 and scans and all(scans) and warnings == []


def test_a_file_in_the_way_is_tried_once_a_process(repo: Path) -> None:
    """A directory where the sign file goes: the write fails once, is said once, and
    the process scans exactly from then on (the replay before it is kept)."""
    assert gm("import", "-", cwd=repo, input=notes(300)).returncode == 0
    assert subprocess.run([GIT_MEM, "recall", "cache"], cwd=repo, check=False).returncode == 0
    signs = firstpass.sign_path(files(repo)[0])
    signs.mkdir()
    hits, settles, scans, warnings = probe(repo, "parser errors", read_only=False)
    assert settles == 1 and not any(scans) and len(hits) == 3
    assert len(warnings) == 1 and warnings[0].startswith("cannot write the vector search files")
    assert signs.is_dir() and not list(signs.parent.glob(".vectors*"))  # no temporary left


def test_a_garbled_vector_file_stays_found_until_it_is_embedded_again(big: Path) -> None:
    """A writer that finds the vector file changed but does not embed on that
    refresh (a quick look before a write) leaves the old stamp: the next process
    finds the change too, instead of the damage being stamped as good."""
    with gitmem.open(big) as store:
        before = answers(store)
    vec = files(big)[0]
    garble(vec, 7 * 384, 384, keep_mtime=True)
    with gitmem.open(big) as store:
        p = store._pool._ensure_open()  # open, not refreshed
        c = p._c
        c.execute("BEGIN IMMEDIATE")
        p._vectors.check(c)
        assert p._vectors._sidecars.garbled
        p._vectors.settle(c)  # the end of a refresh that did not embed
        c.execute("COMMIT")
    with gitmem.open(big) as store:
        assert answers(store) == before
        assert store.warnings == [REEMBEDDED]
