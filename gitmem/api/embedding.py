"""The embedder as the library uses it, kept out of every path that does not need it.

Why this exists: ``gitmem.embed`` has two halves with very different costs: the
document embedder (numpy, tokenizers: ~100 ms to import) used when the projection
embeds memories, and the pure-Python query embedder (~2 ms from a cold process)
used by recall and by dedup on write. Going through these three functions keeps
each import lazy and in one place.
"""

from __future__ import annotations

import sys
from typing import Any


# Up to this many characters to embed, a read uses the pure-Python document path
# (~3 us a character: ~80 ms at the limit, ~1 ms for a short memory) rather than
# loading numpy and tokenizers (~100 ms, then ~0.3 us a character): the first read
# after an add or a small pull. Same bytes either way (embed.text.WEIGHT_BITS).
SMALL_BATCH_CHARS = 25_000


def identity() -> tuple[str, int]:
    """(version, dimensions) of the projection's vectors: the embedder's version and
    the recipe that turns its rows into the stored int8 rows."""
    from .. import embed
    from ..embed.text import DOC_RECIPE

    _, version, dim = embed.identity()
    return f"{version}/{DOC_RECIPE}", dim


def doc_embedder(chars: int) -> Any:
    """The embedder for ``chars`` characters of memories: once numpy's is loaded, always it."""
    from .. import embed

    light = embed.query_embedder()
    if chars <= SMALL_BATCH_CHARS and not embed.default_embedder_loaded() and light.exact_docs:
        return light
    return embed.default_embedder()


def exact_doc_rows(texts: list[str], dim: int) -> bytes | None:
    """The projection's rows for ``texts`` from the batch embedder, or None when its
    rows might depend on the batch (not ``exact_rows``) or its width is not ``dim``:
    only exact rows may be made apart (another process, other batches) and put
    together later. Loads numpy and the tokenizer."""
    model = doc_embedder(sys.maxsize)  # as many characters as it takes: the batch embedder
    if not getattr(model, "exact_rows", False) or getattr(model, "dim", 0) != dim:
        return None
    rows: bytes = model.doc_rows(texts)
    return rows


def doc_embedder_loaded() -> bool:
    """Whether this process has the batch (numpy) embedder loaded already."""
    from .. import embed

    return embed.default_embedder_loaded()


def query_vector(text: str) -> bytes | None:
    """The int8 vector of a query (None for text the embedder knows nothing of)."""
    # Pure Python (no numpy, no tokenizers): a fresh process pays ~2 ms, not ~65.
    from .. import embed
    from ..embed.text import quantize_query

    q = quantize_query(embed.embed_query(text))
    return q if any(q) else None


def word_rank(word: str) -> int | None:
    """How common ``word`` is in English: its id in the embedder's frequency-ordered
    vocabulary (None: not a word of it). Used by recall to tell a question about
    something unheard-of from a paraphrase."""
    from .. import embed

    return embed.query_embedder().word_rank(word)
