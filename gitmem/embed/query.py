"""The one query of a recall to a vector, on the standard library alone.

Why this exists: a fresh ``git mem recall`` embeds exactly one text, the query,
and must answer in well under 100 ms; importing numpy alone costs ~55 ms, and
tokenizers plus parsing tokenizer.json another 30-60 ms. So this path imports
neither: a pure-Python copy of the shipped tokenizer (``wordpiece.py``) looks
tokens up in ``vocab.txt`` (``vocab.py``), and the rows and scales are read
straight out of the memory-mapped .npy files (``npy.py``). Nothing is parsed
into per-token objects. Same token ids as ``StaticEmbedder``, same vector to
float32 rounding (tests/test_embed.py); ~2 ms from a cold process.
"""

from __future__ import annotations

import json
import math
import mmap
import struct
import sys
from array import array
from collections.abc import Callable
from pathlib import Path

from .data import DATA_DIR, identity, read_meta
from .text import WEIGHT_BITS, quantize_query
from .npy import META_DTYPES, STRUCT_CODES, open_npy
from .vocab import SortedVocab
from .wordpiece import BertWordPiece


class QueryEmbedder:
    """StaticEmbedder for one text at a time, on the standard library alone: no numpy, no tokenizers.

    ``embed_query(text)`` equals ``StaticEmbedder(path).embed([text])[0]``: the
    same token ids, and the same vector to within float32 rounding (summed in
    float64; every component within 1e-6). ``name``, ``version`` and ``dim`` are
    StaticEmbedder's. Loading maps the data files and parses two small JSON
    files (~1 ms); a query costs a fraction of a millisecond.
    """

    def __init__(self, path: Path | str = DATA_DIR) -> None:
        self.path = Path(path)
        meta = self.meta = read_meta(self.path)
        self.name, self.version, self.dim = identity(self.path)
        self.normalize: bool = bool(meta["normalize"])
        self.max_chars: int | None = meta["max_chars"]
        hint = "hint: python scripts/build_embedder.py --vocab-only"
        if "wordpiece.json" not in meta["files"]:
            raise ValueError(f"{self.path}: no wordpiece.json; {hint}")
        config = json.loads((self.path / "wordpiece.json").read_text(encoding="utf-8"))
        if config.get("tokenizer_sha256") != meta["files"].get("tokenizer.json"):
            raise ValueError(f"{self.path}: wordpiece.json was derived from another tokenizer.json; {hint}")
        layout = config["vocab"]
        if layout["size"] != meta["vocab_size"]:
            raise ValueError(f"{self.path}: {layout['file']} has {layout['size']} tokens, not {meta['vocab_size']}")
        vocab = SortedVocab(self.path / layout["file"], size=layout["size"], token_bytes=layout["token_bytes"],
                            id_digits=layout["id_digits"])
        self.tokenizer = BertWordPiece(vocab, config, meta["max_length"])
        unk = meta.get("unk_token")
        self._unk: int | None = vocab.get(unk) if unk else None

        self._matrix, self._offset, code, shape = open_npy(self.path / meta["matrix"])
        if shape != (vocab.size, self.dim) or code[1:] != STRUCT_CODES[META_DTYPES[meta["dtype"]]]:
            raise ValueError(f"{self.path}: matrix {shape} {code} does not match meta.json")
        self._row = struct.Struct(f"{code[0]}{self.dim}{code[1:]}")
        self._scales: mmap.mmap | None = None
        self._weights: dict[int, int] = {}  # doc_rows' integer weights, by token
        self._scale_top: float | None = None
        self.vocab_size = vocab.size
        self._scale_offset = 0
        if meta.get("scales"):
            self._scales, self._scale_offset, scode, sshape = open_npy(self.path / meta["scales"])
            if sshape != (vocab.size,) or scode[1:] != "f":
                raise ValueError(f"{self.path}: scales {sshape} {scode} do not match the matrix")
            self._scale = struct.Struct(scode)

    def __repr__(self) -> str:
        return f"QueryEmbedder({self.version!r}, dim={self.dim}, dtype={self.meta['dtype']})"

    def token_ids(self, text: str) -> list[int]:
        """The ids whose rows are averaged: ``StaticEmbedder.token_ids([text])[0]``."""
        if not isinstance(text, str):
            raise TypeError(f"token_ids() takes a string, got {type(text).__name__}")
        if self.max_chars is not None:
            text = text[: self.max_chars]
        if not text.isascii() and _has_surrogate(text):
            # Lone surrogates (say, from undecodable bytes in argv) cannot reach tokenizers, which
            # raises on them; here they are dropped, like the code points clean_text removes.
            text = "".join([c for c in text if not "\ud800" <= c <= "\udfff"])
        ids = self.tokenizer.ids(text)
        unk = self._unk
        return ids if unk is None else [i for i in ids if i != unk]

    def word_rank(self, word: str) -> int | None:
        """``word``'s id in the vocabulary, None when it is not one token of it. The
        WordPiece vocabulary lists whole words by how common they were in the text
        it was built from, so the id says how rare a word is in English."""
        return self.tokenizer.vocab.get(word.lower()) if word else None

    def embed_query(self, text: str) -> array[float]:
        """One text -> ``array('f')`` of length dim, L2-normalised; all zeros if no known token."""
        ids = self.token_ids(text)
        if not ids:
            return array("f", bytes(4 * self.dim))
        acc = self._sum(ids, self._query_weight)
        if not self.normalize:
            return array("f", [a / len(ids) for a in acc])
        norm = math.sqrt(math.fsum([a * a for a in acc]))
        if norm == 0.0:
            return array("f", bytes(4 * self.dim))
        return array("f", [a / norm for a in acc])

    def doc_rows(self, texts: list[str]) -> bytes:
        """``StaticEmbedder.doc_rows(texts)`` byte for byte, on the standard library:
        ~1 ms a memory, so a read that finds a few new memories embeds them without
        paying ~100 ms to load numpy and tokenizers. Exact because the sums are
        integers (gitmem.embed.text.WEIGHT_BITS); int8 data only."""
        # n x weight is at most 2**33, so every product and sum is an integer below 2**53.
        return b"".join(quantize_query(self._sum(self.token_ids(text),
                                                 lambda i, n: float(n * self._doc_weight(i))))
                        for text in texts)

    def _query_weight(self, token: int, n: int) -> float:
        """A query token's weight: its count times its row's scale (as StaticEmbedder)."""
        w = float(n)
        if self._scales is not None:
            w *= self._scale.unpack_from(self._scales, self._scale_offset + 4 * token)[0]
        return w

    def _sum(self, ids: list[int], weight: Callable[[int, int], float]) -> list[float]:
        """Sum of the rows of ``ids``' distinct tokens, in first-seen order, each
        times ``weight(token, count)``, in float64 one row at a time."""
        counts: dict[int, int] = {}
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
        acc = [0.0] * self.dim
        row, offset, stride, matrix = self._row, self._offset, self._row.size, self._matrix
        for i, n in counts.items():
            w = weight(i, n)
            acc = [a + w * x for a, x in zip(acc, row.unpack_from(matrix, offset + stride * i))]
        return acc

    @property
    def exact_docs(self) -> bool:
        """Whether ``doc_rows`` works with this data (int8 rows with scales)."""
        return self._scales is not None and self.meta["dtype"] == "int8"

    def _doc_weight(self, token: int) -> int:
        """A token row's integer weight: round(scale / largest scale * 2**WEIGHT_BITS),
        as StaticEmbedder computes them all (here only for the tokens seen)."""
        weight = self._weights.get(token)
        if weight is None:
            if self._scales is None or not self.exact_docs:
                raise ValueError(f"{self.path}: doc_rows needs int8 rows with scales")
            if self._scale_top is None:
                scales = array("f")
                size = 4 * self.vocab_size
                scales.frombytes(self._scales[self._scale_offset : self._scale_offset + size])
                if (self._scale.format[0] == ">") != (sys.byteorder == "big"):
                    scales.byteswap()
                self._scale_top = max(scales)
            scale = self._scale.unpack_from(self._scales, self._scale_offset + 4 * token)[0]
            weight = self._weights[token] = round(scale / self._scale_top * float(1 << WEIGHT_BITS))
        return weight

    def close(self) -> None:
        """Unmap the data files; the object is unusable afterwards."""
        self.tokenizer.vocab.close()
        self._matrix.close()
        if self._scales is not None:
            self._scales.close()


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_default_query: QueryEmbedder | None = None


def query_embedder() -> QueryEmbedder:
    """The shipped embedder's query path (QueryEmbedder), loaded once per process."""
    global _default_query
    if _default_query is None:
        _default_query = QueryEmbedder()
    return _default_query


def embed_query(text: str) -> array[float]:
    """One query -> unit vector, ``array('f')`` of length dim, with the shipped data; no numpy, no tokenizers."""
    return query_embedder().embed_query(text)
