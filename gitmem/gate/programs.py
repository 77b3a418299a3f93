"""The gate's compiled patterns, kept on disk between processes.

Why this exists: ``re`` compiles a pattern in pure Python (parse, then code
generation), 0.1-13 ms each for the gate's rules. A fresh ``git mem add`` spent
~10 ms of its ~48 compiling, a refresh of 1k pulled ops ~35 ms, every time,
for the same patterns. The program ``re`` makes (the list of opcodes it hands
``_sre.compile``) is kept under ``.git/mem/cache/regex/``, one file per pattern,
and handed to ``_sre.compile`` again: ~20 us instead of milliseconds.

Trust: a file here is a disposable cache, read as hostile. It is used only when
it is a regular file (never followed through a link, never opened in a way
that blocks), its CRC holds, it names the very pattern and flags asked for, and
it was made by this interpreter (its cache tag and the engine's MAGIC are in
the file's name). ``_sre.compile`` validates a program before running it (a
malformed one raises, never crashes). A program is only written after it
compared equal to what ``re.compile`` makes here (Pattern equality compares the
opcodes), so a kept program is byte for byte the one ``re`` would have used.
Anything unexpected, from a damaged file to another Python's internals, falls
back to ``re.compile``.
"""

from __future__ import annotations

import array
import os
import re
import stat
import sys
import zlib
from pathlib import Path
from typing import Any

import msgspec

from .. import hashes

MAX_BYTES = 4 << 20  # a program file (the largest rule's is ~0.2 MB)
_MAGIC = b"gitmem-re-1\n"


class _Program(msgspec.Struct, array_like=True):
    pattern: str
    flags: int  # as asked
    final_flags: int  # with the pattern's inline flags
    groups: int
    groupindex: dict[str, int]
    indexgroup: list[str | None]
    code: bytes  # the opcodes, _sre.CODESIZE bytes each, native order


_directory: Path | None = None
_engine: Any = None  # (the _sre module, the array typecode of one opcode), once checked
_decoder = msgspec.msgpack.Decoder(_Program)
_encoder = msgspec.msgpack.Encoder()


def keep_in(directory: Path | None) -> None:
    """Keep programs in ``directory`` (made when first written); None: keep none."""
    global _directory
    _directory = directory


def directory() -> Path | None:
    """Where programs are kept now."""
    return _directory


def compile(pattern: str, flags: int = 0) -> re.Pattern[str]:  # noqa: A001 (re's name)
    """``re.compile(pattern, flags)``, from the kept program when there is one."""
    folder = _directory
    engine = _checked_engine() if folder is not None else None
    if engine is None or folder is None or not _usable(folder):
        return re.compile(pattern, flags)
    sre, tag, typecode = engine
    key = hashes.sha256(f"{flags}\0{pattern}".encode("utf-8", "surrogatepass")).hexdigest()[:40]
    path = folder / f"{tag}-{key}.re"
    kept = _load(path, pattern, flags, sre, typecode)
    if kept is not None:
        return kept
    compiled = re.compile(pattern, flags)
    _keep(path, pattern, flags, compiled, sre, typecode)
    return compiled


def _usable(folder: Path) -> bool:
    """``folder`` is a directory of its own, not a link (to anywhere else: nothing is
    read from there or written there), or is not there yet and its parent is one
    (it is made when first written). Asked once per process and folder."""
    known = _usable_folders.get(folder)
    if known is None:
        try:
            info = os.lstat(folder)
            known = stat.S_ISDIR(info.st_mode)
        except FileNotFoundError:
            try:
                known = stat.S_ISDIR(os.lstat(folder.parent).st_mode)
            except OSError:
                known = False
        except OSError:
            known = False
        if not known:
            return False  # asked again next time: a missing folder may be made meanwhile
        _usable_folders[folder] = known
    return known


_usable_folders: dict[Path, bool] = {}


def _checked_engine() -> Any:
    """(``_sre``, the file-name tag, the opcode typecode), or False when this
    interpreter's regex internals are not the ones this module knows."""
    global _engine
    if _engine is None:
        _engine = False
        try:
            import _sre  # type: ignore[import-not-found]

            typecode = next(t for t in "IL" if array.array(t).itemsize == _sre.CODESIZE)
            if (sys.implementation.name == "cpython" and callable(getattr(_sre, "compile", None))
                    and hasattr(re, "_parser") and hasattr(re, "_compiler")):
                tag = f"{sys.implementation.cache_tag}-{_sre.MAGIC}-{_sre.CODESIZE}"
                _engine = (_sre, tag, typecode)
        except (ImportError, StopIteration, AttributeError):
            pass
    return _engine or None


def _load(path: Path, pattern: str, flags: int, sre: Any, typecode: str) -> re.Pattern[str] | None:
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
        code = array.array(typecode)
        code.frombytes(program.code)
        compiled: re.Pattern[str] = sre.compile(
            pattern, program.final_flags, code.tolist(), program.groups,
            program.groupindex, tuple(program.indexgroup))
        return compiled
    except (OSError, ValueError, TypeError, RuntimeError, OverflowError, msgspec.DecodeError):
        _remove(path)  # damaged: made again below
        return None


def _keep(path: Path, pattern: str, flags: int, compiled: re.Pattern[str], sre: Any,
          typecode: str) -> None:
    """Write ``pattern``'s program, made as ``re`` makes it, if it is exactly
    ``compiled`` (else this module does not know this ``re``: keep nothing)."""
    try:
        parsed = re._parser.parse(pattern, flags)  # type: ignore[attr-defined]
        code = re._compiler._code(parsed, flags)  # type: ignore[attr-defined]
        groupindex = dict(parsed.state.groupdict)
        indexgroup: list[str | None] = [None] * parsed.state.groups
        for name, i in groupindex.items():
            indexgroup[i] = name
        final_flags = flags | parsed.state.flags
        groups = parsed.state.groups - 1
        if sre.compile(pattern, final_flags, code, groups, groupindex, tuple(indexgroup)) != compiled:
            return
        body = _encoder.encode(_Program(pattern, flags, final_flags, groups, groupindex, indexgroup,
                                        array.array(typecode, code).tobytes()))
        data = _MAGIC + zlib.crc32(body).to_bytes(4, "little") + body
        path.parent.mkdir(exist_ok=True)  # (only this folder: the cache folder is the projection's)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
        try:
            temporary.write_bytes(data)
            os.replace(temporary, path)  # whole or absent, whoever writes it too
        finally:
            _remove(temporary)
    except (OSError, ValueError, TypeError, RuntimeError, AttributeError, OverflowError, RecursionError):
        pass  # a read-only or full disk, or internals not as expected: compile next time


def _read(path: Path) -> bytes | None:
    """The file's bytes; None when absent. A link, a FIFO or anything not a
    regular file, or a file over MAX_BYTES, raises OSError (and is removed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
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
    try:
        if not path.is_dir():
            os.unlink(path)
    except OSError:
        pass
