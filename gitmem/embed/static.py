"""Documents to vectors in batches: the embedder the projection uses (numpy + tokenizers).

Why this exists: a refresh may embed thousands of memories at once, and numpy
plus the ``tokenizers`` library do that fast. The model is *static*: a table
with one 384-dim vector per WordPiece token, distilled once from
sentence-transformers/all-MiniLM-L6-v2 with model2vec (see
``scripts/build_embedder.py`` and ``docs/embedder.md``). A text's vector is the
mean of its tokens' rows, L2-normalised, which is exactly what
``model2vec.StaticModel.encode`` computes; this module reproduces it with numpy
and ``tokenizers`` only, so neither model2vec nor torch is needed at run time.

Both are imported when a ``StaticEmbedder`` is built, never when this module is
imported: ``import gitmem.embed`` must stay cheap for the query path. The
matrix is memory-mapped, so only the rows of tokens actually seen are read from
disk. Same data files and same text, same vector.
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING

from .data import DATA_DIR, identity, read_meta
from .text import WEIGHT_BITS, quantize_rows, quantize_sums

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from tokenizers import Tokenizer

_CHUNK = 1024  # texts tokenised per call to the tokenizer
_TOKENS = 16384  # token rows gathered at once: caps the float32 scratch at 25 MB
_ROWS = 4096  # texts whose sums doc_rows holds at once (12.6 MB of float64 at 384 dims)


class StaticEmbedder:
    """The shipped static embedder: mean of token rows, L2-normalised.

    Mirrors ``model2vec.StaticModel.encode`` for a distilled model without
    vocabulary quantisation: characters clipped to ``max_length *
    median_token_length``, WordPiece ids without special tokens, truncated to
    ``max_length`` tokens, the unknown token dropped, rows averaged, the mean
    normalised if the model's config says so (it does). The token ids are
    identical to model2vec's; vectors are computed in float32 and agree with
    model2vec's encode of the float16 table to a cosine of >= 0.9999 (int8
    rows with per-row scales) or 0.9999999 (float16). The matrix may be
    float16, or int8 with one float32 scale per row (``meta.json`` says which).
    """

    def __init__(self, path: Path | str = DATA_DIR) -> None:
        import numpy as np  # lazy, like tokenizers: `import gitmem.embed` and the query path stay numpy-free
        from tokenizers import Tokenizer

        self.path = Path(path)
        meta = self.meta = read_meta(self.path)
        self.name, self.version, self.dim = identity(self.path)
        self.normalize: bool = bool(meta["normalize"])
        self.max_length: int | None = meta["max_length"]
        self.max_chars: int | None = meta["max_chars"]

        matrix = np.load(self.path / meta["matrix"], mmap_mode="r")
        if matrix.ndim != 2 or matrix.shape[1] != self.dim or matrix.dtype != np.dtype(meta["dtype"]):
            raise ValueError(f"{self.path}: matrix {matrix.shape} {matrix.dtype} does not match meta.json")
        self._matrix = matrix
        self._scales: np.ndarray | None = None
        if meta.get("scales"):
            self._scales = np.load(self.path / meta["scales"]).astype(np.float32, copy=False)
            if self._scales.shape != (matrix.shape[0],):
                raise ValueError(f"{self.path}: scales {self._scales.shape} do not match the matrix")

        # Integer weights for doc_rows (int8 data only): see text.WEIGHT_BITS.
        self._weights: np.ndarray | None = None
        if self._scales is not None and matrix.dtype == np.int8:
            scales = self._scales.astype(np.float64)
            self._weights = np.rint(scales / scales.max() * float(1 << WEIGHT_BITS))

        tok = Tokenizer.from_file(str(self.path / "tokenizer.json"))
        tok.no_padding()
        if self.max_length is None:
            tok.no_truncation()
        else:
            tok.enable_truncation(self.max_length)
        if tok.get_vocab_size(with_added_tokens=True) != matrix.shape[0]:
            raise ValueError(f"{self.path}: tokenizer and matrix disagree on the vocabulary size")
        self._tokenizer: Tokenizer = tok
        unk = meta.get("unk_token")
        self._unk: int | None = tok.token_to_id(unk) if unk else None
        self._encode_batch = getattr(tok, "encode_batch_fast", tok.encode_batch)

    def __repr__(self) -> str:
        return f"StaticEmbedder({self.version!r}, dim={self.dim}, dtype={self.meta['dtype']})"

    @property
    def exact_rows(self) -> bool:
        """Whether a text's ``doc_rows`` row is the same whatever the batch (int8 data:
        exact integer sums), so rows embedded apart can be put together."""
        return self._weights is not None

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """The ids whose rows are averaged, per text (unknown token dropped)."""
        if self.max_chars is not None:
            texts = [t[: self.max_chars] for t in texts]
        encodings = self._encode_batch(texts, add_special_tokens=False)
        unk = self._unk
        if unk is None:
            return [e.ids for e in encodings]
        return [[i for i in e.ids if i != unk] for e in encodings]

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts, not one string")
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"embed() takes strings, got {type(t).__name__}")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        self._each_group(texts, out, self._mean_into)
        if self.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            np.divide(out, norms, out=out, where=norms > 0)
        return out

    def doc_rows(self, texts: list[str]) -> bytes:
        """The projection's int8 rows for ``texts``: exact integer sums of the token rows
        (see gitmem.embed.text.WEIGHT_BITS), the same bytes whatever the batch and
        as ``QueryEmbedder.doc_rows``; a float16 matrix falls back to ``embed``."""
        import numpy as np

        if self._weights is None:
            return quantize_rows(self.embed(texts))
        texts = list(texts)
        # A block at a time (rows are quantised one by one: the same bytes): the sums of
        # every text at once were len x dim float64, 768 MB for a pull of 250k memories.
        parts = []
        for start in range(0, len(texts), _ROWS):
            block = texts[start:start + _ROWS]
            out = np.zeros((len(block), self.dim), dtype=np.float64)
            self._each_group(block, out, self._sums_into)
            parts.append(quantize_sums(out))
        return b"".join(parts)

    def _each_group(self, texts: list[str], out: np.ndarray,
                    fill: Callable[[list[list[int]], np.ndarray], None]) -> None:
        """Tokenise ``texts`` _CHUNK at a time; ``fill(ids, their rows of out)`` for each
        group of texts with at most _TOKENS tokens (or one longer text)."""
        for start in range(0, len(texts), _CHUNK):
            ids = self.token_ids(texts[start : start + _CHUNK])
            lo = 0
            while lo < len(ids):
                hi, total = lo + 1, len(ids[lo])
                while hi < len(ids) and total + len(ids[hi]) <= _TOKENS:
                    total += len(ids[hi])
                    hi += 1
                fill(ids[lo:hi], out[start + lo : start + hi])
                lo = hi

    @staticmethod
    def _counts(ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(tokens per text, the group's distinct tokens, texts x distinct tokens counts),
        None when no text has a token. Summing rows as counts @ distinct rows gathers
        each row once instead of once per occurrence (7x faster than gathering every
        occurrence and reduceat): a group's texts share most of their tokens."""
        import numpy as np

        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        if not lengths.any():
            return None
        flat = np.fromiter((i for x in ids for i in x), dtype=np.int64, count=int(lengths.sum()))
        uniq, inverse = np.unique(flat, return_inverse=True)
        text_of = np.repeat(np.arange(len(ids)), lengths)
        counts = np.bincount(text_of * len(uniq) + inverse, minlength=len(ids) * len(uniq))
        return lengths, uniq, counts.reshape(len(ids), len(uniq))

    def _sums_into(self, ids: list[list[int]], out: np.ndarray) -> None:
        import numpy as np

        found = self._counts(ids)
        if found is None:
            return
        _, uniq, counts = found
        assert self._weights is not None
        rows = np.asarray(self._matrix[uniq], dtype=np.float64) * self._weights[uniq, None]
        # Integers below 2**53 throughout: exact whatever order the product sums in.
        out[:] = counts.astype(np.float64) @ rows

    def _mean_into(self, ids: list[list[int]], out: np.ndarray) -> None:
        import numpy as np

        found = self._counts(ids)
        if found is None:
            return
        lengths, uniq, counts = found
        rows = np.flatnonzero(lengths)
        sums = counts.astype(np.float32) @ self._rows(uniq)
        out[rows] = sums[rows] / lengths[rows, None]

    def _rows(self, ids: np.ndarray) -> np.ndarray:
        import numpy as np

        vectors = np.asarray(self._matrix[ids], dtype=np.float32)
        if self._scales is not None:
            vectors *= self._scales[ids, None]
        return vectors

    def verify(self) -> None:
        """Check every data file against the sha256 recorded in meta.json."""
        import hashlib  # OpenSSL's, for megabytes (its import is too slow for every start)

        for name, digest in self.meta["files"].items():
            h = hashlib.sha256()
            with open(self.path / name, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            if h.hexdigest() != digest:
                raise ValueError(f"{self.path / name}: sha256 does not match meta.json")


_default: StaticEmbedder | None = None


def default_embedder_loaded() -> bool:
    """Whether this process has built the shipped StaticEmbedder already."""
    return _default is not None


def default_embedder() -> StaticEmbedder:
    """The shipped embedder, loaded once per process."""
    global _default
    if _default is None:
        _default = StaticEmbedder()
    return _default
