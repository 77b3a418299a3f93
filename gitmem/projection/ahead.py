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
import sys
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .. import forked, ops, replay
from ..embed.text import embed_chunks

if TYPE_CHECKING:
    from .logsource import LogSource

# The packs read ahead are held in memory: a first build of a very large log
# hands the child this much and embeds the rest itself.
AHEAD_CAP = 32 * 1024 * 1024
# A child that has not answered by then is killed and its work done here
# (it cannot hang a read: a fork can inherit a lock another thread held).
_PATIENCE = 30.0


supported = forked.supported  # whether this process may fork a child at all


class Ahead:
    """A forked child embedding the texts of the adds in ``packs``."""

    def __init__(self, child: forked.Child, dim: int) -> None:
        self._child = child
        self._dim = dim

    @classmethod
    def start(cls, packs: list[tuple[str, str, bytes]],
              make_embedder: Callable[[int], object], dim: int) -> Ahead | None:
        """Fork the child (None when this process should not fork)."""
        if not packs or not dim:
            return None
        child = forked.Child.start(lambda: _child(packs, make_embedder, dim))
        return cls(child, dim) if child is not None else None

    def rows(self) -> dict[str, bytes]:
        """The child's rows by text (waits for it; empty if it failed)."""
        payload = self._child.result(_PATIENCE)
        return _decode(payload, self._dim) if payload is not None else {}

    def close(self) -> None:
        """Stop the child if it is still running and release what it holds."""
        self._child.close()


def moved_packs(source: LogSource, current: dict[str, str],
                stored: dict[str, str]) -> list[tuple[str, str, bytes]]:
    """(commit, partition, pack bytes) of every commit after ``stored`` up to
    ``current`` (a LogSource's refs), in replay order, up to about AHEAD_CAP bytes: a
    child takes that much and the refresh does the rest. Read twice, here and by the
    replay: ~2 ms per 1,000 ops."""
    from .rows import partition

    packs: list[tuple[str, str, bytes]] = []
    size = 0
    for ref, tip in sorted(current.items()):
        if stored.get(ref) == tip:
            continue
        for pack in source.iter_packs(tip, stored.get(ref)):
            data = getattr(pack, "data")  # LogSource yields objects: no oplog import
            if data is not None:
                packs.append((getattr(pack, "commit"), partition(ref), data))
                size += len(data)
            if size >= AHEAD_CAP:
                return packs
    return packs


def _texts(packs: Iterable[tuple[str, str, bytes]]) -> list[str]:
    """What embed_pending will ask for each memory these packs add, in order, once."""
    seen: dict[str, None] = {}
    for _, name, data in packs:
        for item in replay.decode_pack(data, name):
            if isinstance(item, replay.Decoded) and isinstance(item.op, ops.AddOp):
                m = item.op.memory
                seen.update(dict.fromkeys(embed_chunks(m.key, m.text, m.entities, m.tags)))
    return list(seen)


def _child(packs: list[tuple[str, str, bytes]], make_embedder: Callable[[int], object],
           dim: int) -> bytes | None:
    import msgspec

    # One thread each: the replay holds the other core (BLAS threads spin while
    # numpy loads, and the matrix products here are small).
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    texts = _texts(packs)
    model = make_embedder(sys.maxsize)  # as many characters as it takes: the batch embedder
    if not texts or not getattr(model, "exact_rows", False) or getattr(model, "dim", 0) != dim:
        return None  # rows that might depend on the batch are not shared
    rows = getattr(model, "doc_rows")(texts)
    return msgspec.msgpack.encode((texts, rows))


def _decode(payload: bytes, dim: int) -> dict[str, bytes]:
    import msgspec

    try:
        texts, rows = msgspec.msgpack.decode(payload, type=tuple[list[str], bytes])
    except msgspec.DecodeError:
        return {}
    if len(rows) != len(texts) * dim:
        return {}
    return {t: rows[i * dim:(i + 1) * dim] for i, t in enumerate(texts)}
