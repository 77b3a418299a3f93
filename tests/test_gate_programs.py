"""The gate's compiled patterns, kept between processes (gate/programs.py).

A kept program must be exactly what ``re.compile`` makes (the gate's verdicts
depend on it), be reused by the next process, and whatever is found in its
place on disk must cost nothing but a compile."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.gate import programs
from gitmem.gate.factors import DETECT_SECRETS
from gitmem.gate.injection import INJECTION_PATTERNS
from gitmem.gate.languages import _LANGS
from gitmem.gate.secrets import EXTRA_PATTERNS

from conftest import gm

SECRET_NOTE = "the staging db login is admin / Xy12-fern-Quartz-77"


@pytest.fixture
def kept(tmp_path: Path):
    folder = tmp_path / "cache" / "regex"
    folder.parent.mkdir()
    programs.keep_in(folder)
    yield folder
    programs.keep_in(None)


def _all_patterns() -> list[tuple[str, int]]:
    out = [(rx, 0) for _, rx, *_ in EXTRA_PATTERNS]
    out += [(rx, 0) for _, rx in INJECTION_PATTERNS]
    out += [(rx, 0) for rules in _LANGS.values() for _, rx in rules]
    out += [(rx, flags) for rx, flags in DETECT_SECRETS["patterns"]]
    return out


def test_every_rule_is_kept_as_exactly_what_re_compiles(kept: Path) -> None:
    patterns = _all_patterns()
    assert len(patterns) > 250
    for rx, flags in patterns:
        assert programs.compile(rx, flags) == re.compile(rx, flags)
    files = {p.name: p.stat().st_ino for p in kept.iterdir()}
    assert len(files) == len(set(patterns))
    for rx, flags in patterns:  # now from the files: the same patterns, no file written again
        compiled = programs.compile(rx, flags)
        assert compiled == re.compile(rx, flags) and compiled.groupindex == re.compile(rx, flags).groupindex
    assert {p.name: p.stat().st_ino for p in kept.iterdir()} == files


def _file_of(kept: Path, rx: str, flags: int = 0) -> Path:
    before = set(kept.iterdir()) if kept.exists() else set()
    programs.compile(rx, flags)
    (new,) = set(kept.iterdir()) - before
    return new


@pytest.mark.parametrize("damage", ["garbage", "truncated", "fifo", "link", "huge", "directory",
                                    "another pattern", "another program, this CRC"])
def test_whatever_is_found_in_a_programs_place_costs_only_a_compile(kept: Path, damage: str) -> None:
    rx = r"(?i)\bpass(?:word)?\s*[:=]\s*(?P<value>\S{6,})"
    other = r"(?i)\btoken\s*[:=]\s*(\S{6,})"
    path = _file_of(kept, rx)
    data = path.read_bytes()
    path.unlink()
    if damage == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "fifo":
        os.mkfifo(path)  # reading one blocks: it is never opened that way
    elif damage == "link":  # to a whole program of this very pattern, outside the folder
        outside = kept.parent / "elsewhere.re"
        outside.write_bytes(data)
        os.symlink(outside, path)
    elif damage == "huge":
        with open(path, "wb") as fh:
            fh.truncate(programs.MAX_BYTES + 1)
    elif damage == "directory":
        path.mkdir()
    elif damage == "another pattern":  # a whole program, of another pattern, under this name
        os.replace(_file_of(kept, other), path)
    else:  # another pattern's program relabelled as this one, the CRC left as it was
        body = _relabelled(_file_of(kept, other), rx)
        path.write_bytes(data[: len(programs._MAGIC) + 4] + body)
    compiled = programs.compile(rx)
    assert compiled == re.compile(rx)
    assert compiled.search("Password: hunter22").group("value") == "hunter22"
    if damage != "directory":  # made again, whole
        assert path.is_file() and not path.is_symlink() and path.read_bytes() == data


def _relabelled(source: Path, pattern: str) -> bytes:
    """The body of the program file ``source``, saying it is ``pattern``'s."""
    import msgspec

    raw = source.read_bytes()[len(programs._MAGIC) + 4:]
    fields = msgspec.msgpack.decode(raw)
    fields[0] = pattern
    return msgspec.msgpack.encode(fields)


def test_a_huge_file_in_a_programs_place_is_not_read(tmp_path: Path) -> None:
    import tracemalloc

    path = tmp_path / "p.re"
    with open(path, "wb") as fh:
        fh.truncate(1 << 30)  # sparse: 1 GiB that costs nothing on disk
    tracemalloc.start()
    try:
        with pytest.raises(OSError):
            programs._read(path)
        assert tracemalloc.get_traced_memory()[1] < programs.MAX_BYTES
    finally:
        tracemalloc.stop()


def test_named_groups_read_back_name_the_same_groups(kept: Path) -> None:
    rx = r"(?P<user>[a-z]+):(?P<secret>\S+)|(?P<token>tok_\w+)"
    programs.compile(rx)
    compiled = programs.compile(rx)  # from the file
    assert compiled.match("tok_abc").lastgroup == "token"
    assert compiled.match("bob:pw1").groupdict() == {"user": "bob", "secret": "pw1", "token": None}


def test_a_folder_that_cannot_be_written_keeps_nothing_and_compiles(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder would be")
    programs.keep_in(blocker / "regex")
    try:
        assert programs.compile(r"\bkey-(\d+)") == re.compile(r"\bkey-(\d+)")
    finally:
        programs.keep_in(None)
    assert blocker.read_text() == "a file where the cache folder would be"


def test_no_folder_no_files(tmp_path: Path) -> None:
    programs.keep_in(tmp_path / "gone" / "regex")  # its cache folder does not exist
    try:
        assert programs.compile(r"\bseed-(\d+)") == re.compile(r"\bseed-(\d+)")
    finally:
        programs.keep_in(None)
    assert not (tmp_path / "gone").exists()


_SCAN_ALL = """
import json, sys
from pathlib import Path
from gitmem import gate
if sys.argv[1] != "-":
    gate.programs.keep_in(Path(sys.argv[1]))
texts = json.loads(sys.stdin.read())
# (sorted: detect-secrets gives equal findings in set order, which varies by process)
print(json.dumps([sorted(f.describe() for f in gate.scan(t)) + [gate.redact(t)[0]] for t in texts]))
"""


def test_verdicts_are_the_same_from_kept_programs(tmp_path: Path) -> None:
    """In fresh processes (a process compiles each rule once): no kept programs,
    programs being kept, programs read back. Same findings, same redactions."""
    texts = []
    for path in sorted((Path(__file__).parent.parent / "fixtures" / "gate").rglob("*.jsonl")):
        lines = path.read_text(encoding="utf-8").splitlines()
        texts += [json.loads(line)["text"] for line in lines[::25] if line.strip()]
    texts += [json.loads(line)["text"] for line in  # every injection: rules with named groups
              (Path(__file__).parent.parent / "fixtures" / "gate" / "figures" / "injection.dev.jsonl")
              .read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(texts) > 300
    folder = tmp_path / "cache" / "regex"
    folder.parent.mkdir()

    def scanned(where: str) -> list[list[str]]:
        out = subprocess.run([sys.executable, "-c", _SCAN_ALL, where], input=json.dumps(texts),
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)

    plain = scanned("-")
    assert sum(1 for found in plain if len(found) > 1) > 50  # the sample holds secrets
    assert scanned(str(folder)) == plain  # compiled and kept
    kept = {p.name: p.stat().st_ino for p in folder.iterdir()}
    assert len(kept) > 50
    assert scanned(str(folder)) == plain  # read back
    assert {p.name: p.stat().st_ino for p in folder.iterdir()} == kept


def test_add_keeps_the_gates_programs_and_the_next_add_uses_them(repo: Path) -> None:
    folder = repo / ".git" / "mem" / "cache" / "regex"
    assert gm("add", "the nightly job rebuilds the search index at 02:00", cwd=repo).returncode == 0
    first = gm("add", SECRET_NOTE, cwd=repo)
    assert first.returncode == 11, first.stderr  # refused by the gate
    files = {p.name: p.stat().st_ino for p in folder.iterdir()}
    assert files
    second = gm("add", SECRET_NOTE, cwd=repo)
    assert second.returncode == 11 and second.stderr == first.stderr  # the same verdict, from kept programs
    assert {p.name: p.stat().st_ino for p in folder.iterdir()} == files  # reused, none made again


def test_a_folder_that_is_a_link_is_neither_read_nor_written(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "cache").mkdir()
    folder = tmp_path / "cache" / "regex"
    folder.symlink_to(elsewhere)
    programs.keep_in(folder)
    try:
        assert programs.compile(r"\bwallet-(\w+)") == re.compile(r"\bwallet-(\w+)")
    finally:
        programs.keep_in(None)
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("whose", ["writable by others", "another user's"])
def test_a_forged_program_that_is_not_ours_is_never_used(kept: Path, whose: str) -> None:
    """A program with a valid CRC that names this pattern but holds another's
    code makes the gate pass what it should refuse: only a file of the user
    running, writable by no one else, is believed (a repository trusted through
    safe.directory is written by someone else)."""
    if whose == "another user's" and os.geteuid() != 0:
        pytest.skip("needs root: the file is given to another uid with chown")
    import zlib

    rx = r"(?i)\bpass(?:word)?\s*[:=]\s*(?P<value>\S{6,})"
    other = r"(?i)\btoken\s*[:=]\s*(?P<value>\S{6,})"
    path = _file_of(kept, rx)
    body = _relabelled(_file_of(kept, other), rx)
    path.unlink()
    path.write_bytes(programs._MAGIC + zlib.crc32(body).to_bytes(4, "little") + body)
    if whose == "writable by others":
        os.chmod(path, 0o666)
    else:
        os.chmod(path, 0o644)
        os.chown(path, 65534, 65534)
    compiled = programs.compile(rx)
    assert compiled.search("Password: hunter22").group("value") == "hunter22"
    assert path.stat().st_uid == os.geteuid() and path.stat().st_mode & 0o777 == 0o644
