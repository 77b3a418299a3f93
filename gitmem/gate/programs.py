"""The gate's compiled patterns, kept on disk between processes.

Why this exists: ``re`` compiles a pattern in pure Python (parse, then code
generation), 0.1-13 ms each for the gate's rules. A fresh ``git mem add`` spent
~10 ms of its ~48 compiling, a refresh of 1k pulled ops ~35 ms, every time,
for the same patterns. The program ``re`` makes (the list of opcodes it hands
``_sre.compile``) is kept under ``.git/mem/cache/regex/``, one file per pattern,
and handed to ``_sre.compile`` again: ~20 us instead of milliseconds. Only the
git-mem program keeps them (api/pool.py): a long-lived process compiles each
pattern once in its life, and one serving several repositories would otherwise
take one repository's files for another's.

Trust: a file here is a disposable cache. It is used only when it is a regular
file (looked at with lstat first, never opened through a link, never in a way
that blocks) of the user running, writable by no one else, its CRC holds, it names the very pattern and flags asked for,
and it was written by the same interpreter build (its full version, byte order,
Unicode database version and the engine's MAGIC are in the file's name). That
finds damage, not forgery: ``_sre.compile`` checks a program only in part, and
a program forged with a matching CRC can make the gate pass what it should
refuse, or crash the process (docs/security.md: whoever can write .git can do
worse through its hooks). A program is made as ``re`` makes it (``re._parser``,
``re._compiler``); once per process, a probe pattern made that way must compare
equal to ``re.compile``'s (Pattern equality compares flags and opcodes), or
nothing is kept or read. Anything unexpected falls back to ``re.compile``.
"""

from __future__ import annotations

import array
import os
import re
import stat
import sys
import time
import unicodedata
import zlib
from pathlib import Path
from typing import Any

import msgspec

from .. import hashes

MAX_BYTES = 4 << 20  # a program file (the largest rule's is ~0.2 MB)
_MAGIC = b"gitmem-re-1\n"
_STALE_TEMPORARY = 3600  # seconds: a writer killed mid-write left it


class _Program(msgspec.Struct, array_like=True):
    pattern: str
    flags: int  # as asked
    final_flags: int  # with the pattern's inline flags
    groups: int
    groupindex: dict[str, int]
    indexgroup: list[str | None]
    code: bytes  # the opcodes, _sre.CODESIZE bytes each, native order


class _Engine(msgspec.Struct, frozen=True):
    sre: Any  # the _sre module
    tag: str  # what a file's name starts with: this interpreter build
    typecode: str  # the array typecode of one opcode


_directory: Path | None = None
_engine: _Engine | None | bool = None  # False: this interpreter's internals are not known here
# (None: not looked at yet)
_folders: dict[Path, bool] = {}  # folder -> usable (True) or known unwritable (False)
_tidied: set[Path] = set()
_decoder = msgspec.msgpack.Decoder(_Program)
_encoder = msgspec.msgpack.Encoder()


def keep_in(directory: Path | None) -> None:
    """Keep programs in ``directory`` (made when first written); None: keep none."""
    global _directory
    _directory = directory


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:  # noqa: A001 (re's name)
    """``re.compile(pattern, flags)``, from the kept program when there is one."""
    folder = _directory
    engine = _checked_engine() if folder is not None else None
    if engine is None or folder is None or not _usable(folder):
        return re.compile(pattern, flags)
    key = hashes.sha256(f"{flags}\0{pattern}".encode("utf-8", "surrogatepass")).hexdigest()[:40]
    path = folder / f"{engine.tag}-{key}.re"
    kept = _load(path, pattern, flags, engine)
    if kept is not None:
        return kept
    made = _make(pattern, flags, engine)
    if made is None:
        return re.compile(pattern, flags)
    compiled, program = made
    if _folders.get(folder):
        _keep(folder, path, program)
    return compiled


def _checked_engine() -> _Engine | None:
    """This interpreter's regex engine, once a probe pattern made here compares equal
    to ``re.compile``'s; None when it does not, or the internals are not as expected."""
    global _engine
    if _engine is None:
        _engine = False
        try:
            import _sre  # type: ignore[import-not-found]

            typecode = next(t for t in "IL" if array.array(t).itemsize == _sre.CODESIZE)
            if (sys.implementation.name == "cpython" and callable(getattr(_sre, "compile", None))
                    and hasattr(re, "_parser") and hasattr(re, "_compiler")):
                tag = (f"{sys.implementation.cache_tag}-{sys.hexversion:x}-{sys.byteorder}"
                       f"-u{unicodedata.unidata_version}-{_sre.MAGIC}-{_sre.CODESIZE}")
                engine = _Engine(_sre, tag, typecode)
                probe = r"(?i)(?P<a>[a-zé]+)-(\d{2,})(?:x|(?P=a))?\b(?=.)"
                made = _make(probe, re.M, engine)
                if made is not None and made[0] == re.compile(probe, re.M) \
                        and made[0].groupindex == re.compile(probe, re.M).groupindex:
                    _engine = engine
        except (ImportError, StopIteration, AttributeError):
            pass
    return _engine if isinstance(_engine, _Engine) else None


def _usable(folder: Path) -> bool:
    """``folder`` is a directory of its own (a link, to anywhere, is neither read nor
    written), or is not there yet and its parent is one (it is made when first
    written). Asked once per process and folder; ``_folders`` also learns there
    when a write fails (a read-only or full disk: nothing more is written)."""
    known = _folders.get(folder)
    if known is not None:
        return True  # usable (a folder found unwritable is still read)
    try:
        info = os.lstat(folder)
        usable = stat.S_ISDIR(info.st_mode)
    except FileNotFoundError:
        try:
            usable = stat.S_ISDIR(os.lstat(folder.parent).st_mode)
        except OSError:
            usable = False
    except OSError:
        usable = False
    if usable:
        _folders[folder] = True
    return usable  # (not usable: asked again next time, it may be made meanwhile)


def _make(pattern: str, flags: int, engine: _Engine) -> tuple[re.Pattern[str], _Program] | None:
    """``pattern`` compiled as ``re.compile`` does it, with the program that made it."""
    try:
        parsed = re._parser.parse(pattern, flags)  # type: ignore[attr-defined]
        code = re._compiler._code(parsed, flags)  # type: ignore[attr-defined]
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, i in groupindex.items():
            indexgroup[i] = name
        final_flags = flags | parsed.state.flags
        groups = parsed.state.groups - 1
        compiled: re.Pattern[str] = engine.sre.compile(
            pattern, final_flags, code, groups, groupindex, tuple(indexgroup))
        program = _Program(pattern, flags, final_flags, groups, groupindex, indexgroup,
                           array.array(engine.typecode, code).tobytes())
        return compiled, program
    except (re.error, ValueError, TypeError, RuntimeError, AttributeError, OverflowError,
            RecursionError):
        return None


def _load(path: Path, pattern: str, flags: int, engine: _Engine) -> re.Pattern[str] | None:
    try:
        data = _read(path)
        if data is None:
            return None
        if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 4:
            raise ValueError("not a program file")
        body = data[len(_MAGIC) + 4:]
        if zlib.crc32(body).to_bytes(4, "little") != data[len(_MAGIC):len(_MAGIC) + 4]:
            raise ValueError("CRC mismatch")
        program = _decoder.decode(body)
        if program.pattern != pattern or program.flags != flags:
            raise ValueError("another pattern")
        code = array.array(engine.typecode)
        code.frombytes(program.code)
        compiled: re.Pattern[str] = engine.sre.compile(
            pattern, program.final_flags, code.tolist(), program.groups,
            program.groupindex, tuple(program.indexgroup))
        return compiled
    except (OSError, ValueError, TypeError, RuntimeError, OverflowError, msgspec.DecodeError):
        _remove(path)  # damaged: made again by the caller
        return None


def _keep(folder: Path, path: Path, program: _Program) -> None:
    """Write ``program`` at ``path``, whole or not at all; a folder that refuses a
    write is not written again by this process."""
    body = _encoder.encode(program)
    data = _MAGIC + zlib.crc32(body).to_bytes(4, "little") + body
    if len(data) > MAX_BYTES:
        return  # _load would refuse it
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    try:
        folder.mkdir(exist_ok=True)  # (only this folder: the cache folder is the projection's)
        if folder not in _tidied:  # once a process that writes (a new build, new rules)
            _tidied.add(folder)
            tidy(folder)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o644)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o644)  # (a umask of 002 would leave it group-writable: not read)
        os.replace(temporary, path)  # whole or absent, whoever writes it too
    except OSError:
        _folders[folder] = False  # read-only, full, or in the way: compile, keep nothing
    finally:
        _remove(temporary)


def tidy(folder: Path) -> int:
    """Remove the programs of other interpreter builds and temporary files a killed
    writer left (older than an hour) from ``folder``: how many. Rules of older gate
    versions under this build stay (a few MB at most; deleting the folder is safe)."""
    engine = _checked_engine()
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    now = time.time()
    for entry in entries:
        name = entry.name
        stale = (name.startswith(".") and name.endswith(tuple("0123456789abcdef"))
                 and _older(entry, now)) or (
            name.endswith(".re") and engine is not None and not name.startswith(engine.tag + "-"))
        if stale and entry.is_file(follow_symlinks=False):
            _remove(Path(entry.path))
            removed += 1
    return removed


def _older(entry: os.DirEntry[str], now: float) -> bool:
    try:
        return now - entry.stat(follow_symlinks=False).st_mtime > _STALE_TEMPORARY
    except OSError:
        return False


def _read(path: Path) -> bytes | None:
    """The file's bytes; None when absent. Anything but a regular file (looked at
    before it is opened: a device is never opened), or a file over MAX_BYTES,
    raises OSError (and is removed)."""
    try:
        before = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(before.st_mode) or before.st_size > MAX_BYTES:
        raise OSError(f"{path} is not a program file")
    if hasattr(os, "geteuid") and (before.st_uid != os.geteuid() or before.st_mode & 0o022):
        # Not ours, or writable by others: whoever wrote it could make the gate pass
        # what it should refuse (a repository trusted by safe.directory included).
        raise OSError(f"{path} is not a program file of ours")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if (not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES
                or (info.st_dev, info.st_ino) != (before.st_dev, before.st_ino)):
            raise OSError(f"{path} is not a program file")
        chunks = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BYTES:
                raise OSError(f"{path} is over {MAX_BYTES} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    """Remove the file at ``path`` (a directory there is left: not ours)."""
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
    except OSError:
        pass
