"""Text to vectors, offline: the embedder behind the vector half of recall.

Why this exists: recall must answer with no network and no model call, on a
plain laptop, in well under a second. A transformer (torch, ~90 MB of weights,
hundreds of ms to load) is too heavy for a command that runs on every
``git mem recall``, so we ship a *static* embedder: one vector per WordPiece
token, a text's vector the normalised mean of its tokens' rows.

The interface is small: ``Embedder`` below, texts in, unit vectors out, with a
``version`` that changes whenever the model data (and so every vector) does.
Two implementations give one result:

    data.py       the shipped data directory, meta.json, name/version/dim
    static.py     StaticEmbedder: documents in batches (numpy + tokenizers)
    query.py      QueryEmbedder, embed_query: the one query of a recall, stdlib only
    wordpiece.py  BertWordPiece: the shipped tokenizer in pure Python
    vocab.py      SortedVocab: vocab.txt searched in place
    npy.py        .npy files mapped without numpy
    text.py       what a memory's vector is computed from; int8 quantisation

Importing this package imports neither numpy nor tokenizers (a fresh recall
embeds its query in ~2 ms; numpy alone costs ~55 ms): ``StaticEmbedder``
imports them when it is built, and no submodule imports them at the top.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from .data import DATA_DIR, DERIVED_FILES, FORMAT, data_digest, identity, read_meta
from .npy import open_npy
from .query import QueryEmbedder, embed_query, query_embedder
from .vocab import SortedVocab
from .wordpiece import BertWordPiece

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from .static import StaticEmbedder, default_embedder, default_embedder_loaded

__all__ = [
    "DATA_DIR",
    "DERIVED_FILES",
    "FORMAT",
    "BertWordPiece",
    "Embedder",
    "QueryEmbedder",
    "SortedVocab",
    "StaticEmbedder",
    "data_digest",
    "default_embedder",
    "default_embedder_loaded",
    "embed_query",
    "identity",
    "query_embedder",
    "read_meta",
]

_open_npy = open_npy  # its name before the split, still used by tests/test_embed.py
_STATIC = ("StaticEmbedder", "default_embedder", "default_embedder_loaded")


def __getattr__(name: str) -> object:
    """``static``'s names, imported on first use: a command that embeds one query
    (QueryEmbedder) never needs the batch embedder's module."""
    if name in _STATIC:
        from . import static

        return getattr(static, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Embedder(Protocol):
    """Anything recall can use to turn texts into unit vectors."""

    name: str
    version: str  # changes whenever the model data (and so every vector) changes
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim), rows L2-normalised.

        A text with no known token (empty, or only characters outside the
        vocabulary) gets a zero row.
        """
        ...
