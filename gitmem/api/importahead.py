"""Embedding an import's memories on the other core while its packs are written.

Why: at 100k memories the embedding is ~5 CPU-seconds that a read after the import
used to spend on one core. A forked child reads the import's spool and writes the
rows to a temporary file; the import's last read takes them (``Projection.keep_rows``).
A row is a pure function of its text (exact integer sums), so the vector file holds
the very bytes a read embedding them one by one would write; a child that fails or
is late only leaves the embedding to the next read.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from collections.abc import Callable
from typing import IO, TYPE_CHECKING

from .. import hashes, ops
from . import embedding

if TYPE_CHECKING:
    from .. import forked

# The child embedding ahead (EmbedAhead) embeds this many characters at a time (its
# memory does not grow with the input). It is started only when the memories hold
# more characters than a read embeds without numpy (embedding.SMALL_BATCH_CHARS):
# a small import never waits for numpy to load.
AHEAD_BATCH_CHARS = 1 << 18
# A child that has not finished this long after the last pack is killed (its rows
# are then embedded by the next read, as without it).
AHEAD_PATIENCE = 120.0


class EmbedAhead:
    """A forked child embedding the spooled memories while the packs are written.

    The child reads the spool through its own offsets (``os.pread``: the parent's
    reading is not disturbed), embeds the texts a read would embed for each
    memory (``embed_chunks``, each distinct text once, in batches) and writes
    their rows to a second temporary file as it goes; it sends back only a
    128-bit digest per row. The parent then holds that index, not the texts or
    the rows (``_RowFile``): memory grows by ~16 bytes of digest (and a dict
    entry) a distinct text, in the child (``seen``) as in the parent, never with
    the rows. Nothing is sent when the embedder's rows are not exact
    (``embedding.exact_doc_rows``)."""

    def __init__(self, child: forked.Child, rows: IO[bytes], dim: int) -> None:
        self._child = child
        self._rows = rows
        self._dim = dim

    @classmethod
    def start(cls, spool: int, memory_of: Callable[[bytes], ops.MemoryBody]) -> EmbedAhead | None:
        """Fork the child over the spool's descriptor (None: this process may not fork,
        or has no room for the rows)."""
        from .. import forked

        _, dim = embedding.identity()
        if not dim or not forked.supported():
            return None
        try:
            rows = tempfile.TemporaryFile(prefix="git-mem-import-rows-")
        except OSError:
            return None  # the read after the import embeds them, as without a child
        child = forked.Child.start(lambda: _embed_spool(spool, memory_of, rows.fileno(), dim))
        if child is None:
            rows.close()
            return None
        return cls(child, rows, dim)

    def rows(self) -> dict[str, bytes]:
        """The child's rows by text (waits for it; empty if it failed or was late)."""
        payload = self._child.result(AHEAD_PATIENCE)
        if not payload or len(payload) % _DIGEST:
            return {}
        count = len(payload) // _DIGEST
        try:
            if os.fstat(self._rows.fileno()).st_size != count * self._dim:
                return {}
            view = mmap.mmap(self._rows.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return {}
        index = {payload[i * _DIGEST:(i + 1) * _DIGEST]: i for i in range(count)}
        return _RowFile(view, index, self._dim)

    def close(self) -> None:
        self._child.close()
        self._rows.close()


_DIGEST = 16  # bytes of blake2b naming a text in the child's index: 128 bits


def _digest(text: str) -> bytes:
    return hashes.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=_DIGEST).digest()


class _RowFile(dict[str, bytes]):
    """The rows the child wrote, by text, as the dict ``Projection.keep_rows``
    takes: a text is found by its digest, its row read from the mapped file.
    (A dict that stores nothing itself: it answers ``in``, ``[]`` and ``len``.)"""

    def __init__(self, view: mmap.mmap, index: dict[bytes, int], dim: int) -> None:
        super().__init__()
        self._view, self._index, self._dim = view, index, dim
        # The slots of the texts asked about last: a batch asks ``in`` of each text,
        # then takes each row (one digest per text, not two).
        self._slots: dict[str, int | None] = {}

    def _slot(self, text: str) -> int | None:
        slot = self._slots.get(text, -1)
        if slot == -1:
            if len(self._slots) >= 8192:
                self._slots.clear()
            slot = self._slots[text] = self._index.get(_digest(text))
        return slot

    def __contains__(self, text: object) -> bool:
        return isinstance(text, str) and self._slot(text) is not None

    def __getitem__(self, text: str) -> bytes:
        slot = self._slot(text)
        if slot is None:
            raise KeyError(text)
        return self._view[slot * self._dim:(slot + 1) * self._dim]

    def get(self, text: str,  # type: ignore[override]
            default: bytes | None = None) -> bytes | None:
        return self[text] if text in self else default

    def __len__(self) -> int:
        return len(self._index)

    def __bool__(self) -> bool:
        return bool(self._index)


def _embed_spool(spool: int, memory_of: Callable[[bytes], ops.MemoryBody], out: int,
                 dim: int) -> bytes | None:
    """In the child: embed the spool's memories into ``out``; their rows' digests."""
    from ..embed.text import embed_chunks

    # One thread each: the parent holds the other core.
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    seen: set[bytes] = set()
    digests = bytearray()
    batch: list[str] = []
    chars = written = 0

    def flush() -> bool:
        nonlocal chars, written
        rows = embedding.exact_doc_rows(batch, dim)
        if rows is None:
            return False
        view = memoryview(rows)
        while view:
            n = os.pwrite(out, view, written)
            written += n
            view = view[n:]
        batch.clear()
        chars = 0
        return True

    offset = 0
    rest = b""
    while block := os.pread(spool, 1 << 20, offset):
        offset += len(block)
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        for raw in lines:
            m = memory_of(raw)
            for t in embed_chunks(m.key, m.text, m.entities, m.tags):
                d = _digest(t)
                if d not in seen:
                    seen.add(d)
                    digests += d
                    batch.append(t)
                    chars += len(t)
            if chars >= AHEAD_BATCH_CHARS and not flush():
                return None
    if batch and not flush():
        return None
    return bytes(digests) if digests else None
