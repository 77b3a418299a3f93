"""Embedding ahead: a large replay's new memories embedded on the other core.

Why this exists: the first read after a pull of 1,000 ops replays them on one
core (~150 ms, the write gate judging each) and then loads numpy and the
tokenizer (~100 ms) to embed the new memories (~50 ms). A child forked before
the replay reads the same packs, loads the embedder and embeds every added
memory meanwhile; the refresh then takes the rows it needs from the child by
text.

Exact by construction: the child only guesses which texts will be asked for
(every add it reads: the replay alone knows what is kept), a row is a pure
function of its text (``exact_rows``: int8 rows from exact integer sums, the
same bytes whatever the batch, see embed.text.WEIGHT_BITS), and any text the
child did not embed, or a child that failed, is embedded in the refresh as
before. The child touches no file and no connection it inherited: it writes
its answer to a pipe and leaves with ``os._exit``.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable

from .. import ops, replay
from ..embed.text import embed_chunks

# The packs read ahead are held in memory: a first build of a very large log
# hands the child this much and embeds the rest itself.
AHEAD_CAP = 32 * 1024 * 1024
# A child that has not answered by then is killed and its work done here
# (it cannot hang a read: a fork can inherit a lock another thread held).
_PATIENCE = 30.0


def supported() -> bool:
    """Forking is used only where it is cheap and safe: Linux (macOS frameworks
    may abort in a forked child), a single-threaded process."""
    return sys.platform.startswith("linux") and threading.active_count() == 1


class Ahead:
    """A forked child embedding the texts of the adds in ``packs``."""

    def __init__(self, pid: int, fd: int, dim: int) -> None:
        self._pid: int | None = pid
        self._fd = fd
        self._dim = dim

    @classmethod
    def start(cls, packs: list[tuple[str, bytes]],
              make_embedder: Callable[[int], object], dim: int) -> Ahead | None:
        """Fork the child (None when this process should not fork)."""
        if not packs or not dim or not supported():
            return None
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(r)
                code = _child(w, packs, make_embedder, dim)
            finally:
                os._exit(code)
        os.close(w)
        return cls(pid, r, dim)

    def rows(self) -> dict[str, bytes]:
        """The child's rows by text (waits for it; empty if it failed)."""
        if self._pid is None:
            return {}
        chunks: list[bytes] = []
        deadline = time.monotonic() + _PATIENCE
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._fd], [], [], left)[0]:
                    return {}  # too slow: close() kills it
                block = os.read(self._fd, 1 << 20)
                if not block:
                    break
                chunks.append(block)
            _, status = os.waitpid(self._pid, 0)
            self._pid = None
            if status != 0:
                return {}
            return _decode(b"".join(chunks), self._dim)
        except (OSError, ValueError):
            return {}
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child if it is still running and release what it holds."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except OSError:
                pass
            self._pid = None


def _texts(packs: Iterable[tuple[str, bytes]]) -> list[str]:
    """What embed_pending will ask for each memory these packs add, in order, once."""
    seen: dict[str, None] = {}
    for name, data in packs:
        for item in replay.decode_pack(data, name):
            if isinstance(item, replay.Decoded) and isinstance(item.op, ops.AddOp):
                m = item.op.memory
                seen.update(dict.fromkeys(embed_chunks(m.key, m.text, m.entities, m.tags)))
    return list(seen)


def _child(fd: int, packs: list[tuple[str, bytes]],
           make_embedder: Callable[[int], object], dim: int) -> int:
    import msgspec

    # One thread each: the replay holds the other core (BLAS threads spin while
    # numpy loads, and the matrix products here are small).
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    texts = _texts(packs)
    model = make_embedder(sys.maxsize)  # as many characters as it takes: the batch embedder
    if not texts or not getattr(model, "exact_rows", False) or getattr(model, "dim", 0) != dim:
        return 2  # rows that might depend on the batch are not shared
    rows = getattr(model, "doc_rows")(texts)
    view = memoryview(msgspec.msgpack.encode((texts, rows)))
    while view:
        view = view[os.write(fd, view):]
    return 0


def _decode(payload: bytes, dim: int) -> dict[str, bytes]:
    import msgspec

    try:
        texts, rows = msgspec.msgpack.decode(payload, type=tuple[list[str], bytes])
    except msgspec.DecodeError:
        return {}
    if len(rows) != len(texts) * dim:
        return {}
    return {t: rows[i * dim:(i + 1) * dim] for i, t in enumerate(texts)}
