"""Bulk import, its first half: every line read, decoded, validated, gated and
trial-encoded before anything is written, the checked memories spooled to a file.

Why a module of its own: an import is all-or-nothing, so the checks run over the
whole input before the first pack is written (importer.py writes the packs from
the spool). This half owns what a line may hold (``ImportRecord``), how long it
may be (a bounded ``readline``: ``/dev/zero`` is refused after one op's worth),
what each refusal says (the line's number and a hint), and the spool's format
(``Checked``), which the writer and the child embedding ahead read back.
"""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterable, Iterator
from typing import IO, TYPE_CHECKING

import msgspec

from .. import ops
from ..errors import DiskFull, GateRefused, GitMemError, InvalidInput, from_os_error
from ..timefmt import FUTURE_SKEW, now_from_env, parse_date
from . import anchoring, gating, validate

if TYPE_CHECKING:
    from .pool import Pool


class ImportRecord(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One line of ``git mem import``: the options of ``git mem add``."""

    text: str
    kind: str | None = None  # a keyed line: its key's kind, else fact (as add --key); else note
    key: str | None = None
    tags: list[str] = []
    about: list[str] = []
    paths: list[str] = []
    importance: float = 0.5
    valid_from: str | int | None = None
    valid_until: str | int | None = None
    source: str | None = None
    session: str | None = None
    recorded_at: str | None = None  # when the log learned it (default: now)


class Checked(msgspec.Struct, array_like=True):
    """A line that passed every check, as spooled: its number, memory, time."""

    line: int
    memory: ops.MemoryBody
    at: tuple[int, int] | None


IMPORT_DECODER = msgspec.json.Decoder(ImportRecord)
SPOOL_ENCODER = msgspec.json.Encoder()
SPOOL_DECODER = msgspec.json.Decoder(Checked)


def memory_of(raw: bytes) -> ops.MemoryBody:
    """A spooled line's memory (what the child embedding ahead reads)."""
    return SPOOL_DECODER.decode(raw).memory


IMPORT_HINT = (
    'each line must be a JSON object like {"text": "...", "kind": "fact", "tags": ["x"]}; '
    "fields: text, kind, key, tags, about, paths, importance, valid_from, valid_until, "
    "source, session, recorded_at"
)
LONG_HINT = (f"one memory per line, each line a JSON object of at most {ops.MAX_OP_BYTES} bytes "
             f"(a memory's text is at most {ops.MAX_TEXT_BYTES}); is the file JSON lines?")


def _without_bom(line: str | bytes) -> str | bytes:
    """The first line without a UTF-8 byte order mark (Windows editors write one):
    JSON forbids it, and msgspec said 'invalid character (byte 0)'."""
    if isinstance(line, bytes):
        return line[3:] if line.startswith(b"\xef\xbb\xbf") else line
    return line[1:] if line.startswith("\ufeff") else line


def numbered_lines(source: Iterable[str | bytes] | IO[bytes]) -> Iterator[tuple[int, str | bytes]]:
    """(line number, line) of ``source``, never holding more than one op's worth.

    A file object is read with a bounded ``readline``, so an input without
    newlines (``/dev/zero``) is refused after ``ops.MAX_OP_BYTES`` bytes, not
    after it has filled the memory."""
    limit = ops.MAX_OP_BYTES + 1  # the line and its newline
    readline = getattr(source, "readline", None)
    if callable(readline):
        n = 0
        while chunk := readline(limit):
            n += 1
            if len(chunk) >= limit and chunk[-1:] not in (b"\n", "\n"):
                raise InvalidInput(f"line {n}: longer than {ops.MAX_OP_BYTES} bytes", LONG_HINT)
            # (Stripped after the length check: before it, a line of exactly the limit
            # behind a BOM passed as a whole line, and its rest was read as line 2.)
            yield n, _without_bom(chunk) if n == 1 else chunk
        return
    for n, line in enumerate(source, start=1):
        if n == 1:
            line = _without_bom(line)
        size = len(line) if isinstance(line, bytes) else len(line.encode("utf-8", "replace"))
        if size > limit:
            raise InvalidInput(f"line {n}: longer than {ops.MAX_OP_BYTES} bytes", LONG_HINT)
        yield n, line


def open_spool() -> IO[bytes]:
    try:
        return tempfile.TemporaryFile(prefix="git-mem-import-")
    except OSError as exc:
        raise _spool_error(exc) from None


def _spool_error(exc: OSError) -> GitMemError:
    where = tempfile.gettempdir()
    typed = from_os_error(exc, where)
    if isinstance(typed, DiskFull):
        typed.message += " (the import's temporary file)"
        typed.args = (typed.message,)
        typed.hint = "free some space there, or point TMPDIR elsewhere; nothing was written"
        return typed
    return typed or InvalidInput(f"cannot write the import's temporary file in {where}: {exc}",
                                 "point TMPDIR to a writable directory")


def _first_bad_byte(line: str | bytes) -> str:
    """Where a line stops being UTF-8, in words ("byte 0xe9 at column 19")."""
    try:
        (line if isinstance(line, bytes) else line.encode("utf-8", "surrogateescape")).decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte 0x{exc.object[exc.start]:02x} at column {exc.start + 1}"
    except UnicodeEncodeError as exc:  # \ud800: a surrogate no byte stands behind
        return f"a lone surrogate at column {exc.start + 1}"
    return "a lone surrogate"


def _current_key_kinds(pool: Pool) -> dict[str, str]:
    """Each key's current value's kind (the winner's, when values conflict)."""
    from ..projection import Scope

    return {r.key: r.kind for r in reversed(pool.read(lambda p: p.keyed(Scope()), embed=False))
            if r.key is not None}


def check_lines(pool: Pool, lines: Iterator[tuple[int, str | bytes]], spool: IO[bytes],
           author: ops.Author, partition: str, redact: bool) -> tuple[int, int]:
    """Decode, validate, gate and trial-encode every line into ``spool``: how many,
    and how many characters their texts hold."""
    head = pool.log.head()
    now = now_from_env()
    count = chars = 0
    # A keyed line with no kind takes its key's kind, as add --key does: the key's
    # current value's, or an earlier line's; else fact (read once, when first needed).
    key_kinds: dict[str, str] | None = None
    for n, line, decoded in prescanned(lines, texts=not redact):
        if not line.strip():
            continue
        try:
            rec = decoded if decoded is not None else IMPORT_DECODER.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise InvalidInput(f"line {n}: {exc}", IMPORT_HINT) from None
        except UnicodeError:  # (msgspec raises it for bytes that are not UTF-8, or a lone surrogate)
            raise InvalidInput(f"line {n}: not UTF-8 ({_first_bad_byte(line)})",
                               "save the file as UTF-8, or convert it with iconv -t UTF-8") from None
        try:
            kind = rec.kind if rec.kind is not None else "note"
            name = validate.key_name(rec.key) if rec.key is not None else None
            if name is not None:
                if key_kinds is None:
                    key_kinds = _current_key_kinds(pool)
                if rec.kind is None:
                    kind = key_kinds.get(name, "fact")
                key_kinds[name] = kind
            body = validate.memory_body(
                rec.text, kind=kind, key=rec.key, tags=rec.tags, about=rec.about,
                # A line range anchors to its file here (add --path records the lines);
                # a range that is none is refused, as add refuses it.
                paths=[anchoring.split_range(p)[0] for p in rec.paths],
                importance=rec.importance, valid_from=rec.valid_from,
                valid_until=rec.valid_until, source=rec.source, session=rec.session,
                head=head, cwd=pool.cwd, root=pool.log.workdir,
            )
            at = parse_date(rec.recorded_at) if rec.recorded_at else None
            if at is not None and at[0] > now[0] + FUTURE_SKEW:  # the clock reads judge by
                # Replay would not believe it (recall.FUTURE_SKEW) and status would list
                # it as forged: the writer refuses it instead.
                raise InvalidInput("recorded_at is more than a day in the future",
                                   "leave it out to record the time of the import")
            body = gating.screen(body, redact=redact)
            # The op this line becomes must be one replay accepts: found now, not
            # halfway through writing the packs.
            trial = ops.AddOp(v=ops.FORMAT_VERSION, author=author, partition=partition,
                              clock=1, at=(at or now)[0], tz=(at or now)[1], memory=body)
            try:
                encoded = ops.encode(trial)
            except (msgspec.EncodeError, UnicodeError, ValueError) as exc:
                raise InvalidInput(f"this memory cannot be stored: {exc}",
                                   "correct the offending field") from None
            validate.check_writable(encoded, partition)
        except GateRefused as exc:
            raise GateRefused([f"line {n}: {f}" for f in exc.findings], exc.hint) from None
        except InvalidInput as exc:
            raise type(exc)(f"line {n}: {exc.message}", exc.hint) from None
        try:
            spool.write(SPOOL_ENCODER.encode(Checked(n, body, at)) + b"\n")
        except OSError as exc:
            raise _spool_error(exc) from None
        count += 1
        chars += len(body.text)
        if pool.progress is not None and count % 1000 == 0:
            pool.progress("checking", count, None)
    return count, chars


def prescanned(lines: Iterator[tuple[int, str | bytes]], *, texts: bool = True,
                chunk: int = 4096) -> Iterator[tuple[int, str | bytes, ImportRecord | None]]:
    """``lines`` (and each one decoded, None if it does not decode), a chunk at a
    time, after the gate has scanned their texts (unless
    ``texts`` is False: --redact scans each text itself, around its masking) and tags
    on both cores (gating.prescan): the checks that follow find them in its memo. Only
    a head start: a line that does not decode, or a field validation changes, is
    scanned when checked, as before."""
    it = iter(lines)
    while batch := list(itertools.islice(it, chunk)):
        scan: list[str] = []
        out: list[tuple[int, str | bytes, ImportRecord | None]] = []
        for n, line in batch:
            try:
                rec: ImportRecord | None = IMPORT_DECODER.decode(line)
            except (msgspec.DecodeError, msgspec.ValidationError, UnicodeError):
                rec = None  # decoded again where it is checked, to say why not
            out.append((n, line, rec))
            if rec is None:
                continue
            if texts:
                scan.append(rec.text)
            if rec.tags:
                scan.append("\n".join(rec.tags))
        gating.prescan(scan)
        yield from out
