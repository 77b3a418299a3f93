"""This clone's disposable JSON caches, read without trusting what is on disk.

Why this exists: a cache under ``.git/mem`` (pending vectors, probes, stale
marks) only ever saves work, so whatever is found in its place must cost
nothing but that work: a FIFO must not hang the command (it is opened without
blocking and refused unless it is a regular file), a huge file must not be
read whole (a size bound), and JSON nested ten thousand deep, or of the wrong
shape, must not surface as a RecursionError (msgspec decodes into the type
asked for, and any failure is caught). A cache found damaged is removed, so
the next write starts it afresh, and the caller sees it as absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from ..oplog import state

T = TypeVar("T")
MAX_CACHE_BYTES = 4 << 20  # far above any cache we write (pending vectors: ~60 KB)


def load(path: Path, kind: type[T], *, limit: int = MAX_CACHE_BYTES) -> T | None:
    """The cache at ``path`` decoded as ``kind``, or None when it is absent or
    damaged (not a regular file, a link, over ``limit`` bytes, not JSON of that
    type); a damaged one is removed. Never blocks, never raises for what the
    file holds."""
    return state.load_json(path, kind, limit=limit, follow=False, remove=state.discard)


def load_pending_vectors(path: Path) -> dict[str, str]:
    """dedup.py's pending-vectors cache: memory id -> vector in hex ({} when
    absent or damaged)."""
    return load(path, dict[str, str]) or {}
