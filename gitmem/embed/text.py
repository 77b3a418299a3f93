"""What a memory's vector is computed from, and the int8 form vectors are kept in.

Why this exists: the write path (dedup), the projection (embedding every
memory) and recall (the query) must prepare text and quantise vectors the same
way, or distances between them mean nothing. One module, pure Python, imported
by all three; numpy is imported only by ``quantize_rows``, which only runs when
documents are embedded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..folding import folded

CHUNK_CHARS = 400


def embed_text(key: str | None, text: str, entities: Sequence[str], tags: Sequence[str]) -> str:
    """What a memory's vector is computed from: its key, entities, text and tags
    (key and tags as the projection stores them, ops.folded: NFKC)."""
    parts = [folded(key or ""), *entities, text, *dict.fromkeys(map(folded, tags))]
    return " ".join(p for p in parts if p)


def embed_chunks(key: str | None, text: str, entities: Sequence[str], tags: Sequence[str]) -> list[str]:
    """The texts embedded for one memory: the whole, then, when it is long, its chunks.

    A mean of token vectors over a long text drifts towards "any text"; a
    question usually matches one part. Chunks are runs of whole lines of about
    CHUNK_CHARS characters (long lines split at spaces), each carrying the
    memory's key, entities and tags, so a long memory is found by its best part.
    """
    whole = embed_text(key, text, entities, tags)
    if len(text) <= CHUNK_CHARS * 3 // 2:
        return [whole]
    label = embed_text(key, "", entities, tags)
    pieces: list[str] = []
    current = ""
    for line in text.splitlines():
        while len(line) > 2 * CHUNK_CHARS:
            cut = line.rfind(" ", 0, CHUNK_CHARS) if " " in line[:CHUNK_CHARS] else CHUNK_CHARS
            cut = cut if cut > 0 else CHUNK_CHARS
            pieces.append(line[:cut])
            line = line[cut:].lstrip()
        if current and len(current) + len(line) + 1 > CHUNK_CHARS:
            pieces.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current.strip():
        pieces.append(current)
    return [whole] + [f"{label} {p}".strip() for p in pieces if p.strip()]


def quantize_rows(vectors: Any) -> bytes:
    """float32 rows -> int8 rows scaled to +-127 (cosine is scale-free)."""
    import numpy as np

    v = np.asarray(vectors, dtype=np.float32)
    peak = np.abs(v).max(axis=1, keepdims=True)
    scaled = np.divide(v * 127.0, peak, out=np.zeros_like(v), where=peak > 0)
    out: bytes = np.rint(scaled).astype(np.int8).tobytes()
    return out


# Document rows (``doc_rows``) are computed in integers, so that any two ways of
# computing them give the same bytes: each token row's float32 scale becomes an
# integer weight, round(scale / largest scale * 2**WEIGHT_BITS). A memory's sum
# of (count x int8 row x weight) over at most 512 tokens stays below 2**40, so
# float64 holds every partial sum exactly, in whatever order BLAS adds them, and
# the pure-Python path (QueryEmbedder.doc_rows) matches numpy's byte for byte.
WEIGHT_BITS = 24
# How the projection's rows are made, part of the version it stores: a change
# here must re-embed every memory.
DOC_RECIPE = "int-sums-1"


def quantize_sums(sums: Any) -> bytes:
    """Integer-valued float64 row sums (numpy) -> int8 rows, as quantize_query
    does one vector: round(x * 127 / peak), ties to even."""
    import numpy as np

    v = np.asarray(sums, dtype=np.float64)
    peak = np.abs(v).max(axis=1, keepdims=True) if v.size else np.zeros((len(v), 1))
    scaled = np.divide(v * 127.0, peak, out=np.zeros_like(v), where=peak > 0)
    out: bytes = np.rint(scaled).astype(np.int8).tobytes()
    return out


def quantize_query(vector: Any) -> bytes:
    """One float vector (any sequence) -> int8 bytes, without numpy."""
    values = [float(x) for x in vector]
    peak = max((abs(x) for x in values), default=0.0)
    if peak == 0.0:
        return bytes(len(values))
    return bytes((round(x * 127.0 / peak) & 0xFF) for x in values)
