"""Text to vectors, offline: the embedder behind the vector half of recall.

Why this exists: recall must answer with no network and no model call, on a
plain laptop, in well under a second. A transformer (torch, ~90 MB of weights,
hundreds of ms to load) is too heavy for a command that runs on every
``git mem recall``. Instead we ship a *static* embedder: a table with one
384-dim vector per WordPiece token, distilled once from
sentence-transformers/all-MiniLM-L6-v2 with model2vec (see
``scripts/build_embedder.py`` and ``docs/embedder.md``). A text's vector is
the mean of its tokens' rows, L2-normalised, which is exactly what
``model2vec.StaticModel.encode`` computes; this module reproduces it with
numpy and ``tokenizers`` only, so neither model2vec nor torch is needed at
run time.

Two ways in, one result. ``StaticEmbedder.embed(texts)`` embeds documents in
batches (numpy + tokenizers, imported when it is built). ``QueryEmbedder.
embed_query(text)`` (or the module's ``embed_query``) embeds the one query of a
recall on the standard library alone, ~2 ms from a cold process, where numpy
and tokenizers would cost ~100 ms: same token ids, same vector to float32
rounding. Importing this module imports neither.

The matrix is memory-mapped, so only the rows of tokens actually seen are read
from disk. Everything is deterministic: same data files and same text, same
vector.
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import struct
import sys
import unicodedata
from array import array
from bisect import bisect_right
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    from tokenizers import Tokenizer

DATA_DIR = Path(__file__).parent.parent / "data" / "embedder"
FORMAT = 1  # meta.json layout this loader understands
_CHUNK = 1024  # texts tokenised per call to the tokenizer
_TOKENS = 16384  # token rows gathered at once: caps the float32 scratch at 25 MB


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
        for start in range(0, len(texts), _CHUNK):
            self._embed_into(texts[start : start + _CHUNK], out[start : start + _CHUNK])
        if self.normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _embed_into(self, texts: list[str], out: np.ndarray) -> None:
        ids = self.token_ids(texts)
        lo = 0
        while lo < len(ids):  # groups of texts with at most _TOKENS tokens (or one longer text)
            hi, total = lo + 1, len(ids[lo])
            while hi < len(ids) and total + len(ids[hi]) <= _TOKENS:
                total += len(ids[hi])
                hi += 1
            self._mean_into(ids[lo:hi], out[lo:hi])
            lo = hi

    def _mean_into(self, ids: list[list[int]], out: np.ndarray) -> None:
        import numpy as np

        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        rows = np.flatnonzero(lengths)
        if rows.size == 0:
            return
        flat = np.fromiter((i for x in ids for i in x), dtype=np.int64, count=int(lengths.sum()))
        vectors = self._rows(flat)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[rows]
        out[rows] = np.add.reduceat(vectors, starts, axis=0) / lengths[rows, None]

    def _rows(self, ids: np.ndarray) -> np.ndarray:
        import numpy as np

        vectors = np.asarray(self._matrix[ids], dtype=np.float32)
        if self._scales is not None:
            vectors *= self._scales[ids, None]
        return vectors

    def verify(self) -> None:
        """Check every data file against the sha256 recorded in meta.json."""
        for name, digest in self.meta["files"].items():
            h = hashlib.sha256()
            with open(self.path / name, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            if h.hexdigest() != digest:
                raise ValueError(f"{self.path / name}: sha256 does not match meta.json")


# Data files derived from tokenizer.json for the query path (QueryEmbedder below):
# ``vocab.txt``, its vocabulary one token a line, and ``wordpiece.json``, its
# settings and character classes. They hold nothing tokenizer.json does not
# already decide, so they are checked by ``verify`` like any file but left out of
# the version hash: adding or regenerating them never changes ``version``.
DERIVED_FILES = frozenset({"vocab.txt", "wordpiece.json"})


def data_digest(files: dict[str, str]) -> str:
    """One sha256 over every data file's sha256 (derived files excepted): any changed file changes the version."""
    lines = "".join(f"{name} {digest}\n" for name, digest in sorted(files.items()) if name not in DERIVED_FILES)
    return hashlib.sha256(lines.encode()).hexdigest()


_default: StaticEmbedder | None = None


def read_meta(path: Path | str = DATA_DIR) -> dict[str, Any]:
    """The model's meta.json, checked for a layout this loader understands."""
    path = Path(path)
    meta: dict[str, Any] = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path}: embedder data format {meta.get('format')!r}, expected {FORMAT}")
    return meta


def identity(path: Path | str = DATA_DIR) -> tuple[str, str, int]:
    """(name, version, dim) from meta.json alone: cheap, no numpy, no tokenizer."""
    meta = read_meta(path)
    return meta["name"], f"{meta['name']}@{data_digest(meta['files'])[:12]}", int(meta["dim"])


def default_embedder() -> StaticEmbedder:
    """The shipped embedder, loaded once per process."""
    global _default
    if _default is None:
        _default = StaticEmbedder()
    return _default


# -- the query path: one text, standard library only ---------------------------
#
# A fresh ``git mem recall`` embeds exactly one text, the query, and must answer
# in well under 100 ms; importing numpy alone costs ~55 ms, and tokenizers plus
# parsing tokenizer.json another 30-60 ms. So this path imports neither: a
# pure-Python copy of the shipped tokenizer takes its settings and character
# classes from ``wordpiece.json`` and looks tokens up in ``vocab.txt`` (both
# derived from tokenizer.json by scripts/build_embedder.py), and the rows and
# scales are read straight out of the memory-mapped .npy files. Nothing is
# parsed into per-token objects: a dict of the 29,525 tokens would cost 3-6 ms
# in a fresh process, more than everything else together. Same token ids as
# StaticEmbedder, same vector to float32 rounding (tests/test_embed.py).


class _CharMap(dict):  # type: ignore[type-arg]
    """A ``str.translate`` table that fills itself on first sight of a code point."""

    def __init__(self, fn: Callable[[int], str]) -> None:
        super().__init__()
        self._fn = fn

    def __missing__(self, cp: int) -> str:
        out = self[cp] = self._fn(cp)
        return out


class _Ranges:
    """A set of code points given as sorted, disjoint [lo, hi] pairs."""

    def __init__(self, pairs: list[list[int]]) -> None:
        self._lo = [lo for lo, _ in pairs]
        self._hi = [hi for _, hi in pairs]
        if any(a > b for a, b in zip(self._lo, self._hi)) or any(b >= a for b, a in zip(self._hi, self._lo[1:])):
            raise ValueError("character ranges must be sorted and disjoint")

    def __contains__(self, cp: int) -> bool:
        i = bisect_right(self._lo, cp) - 1
        return i >= 0 and cp <= self._hi[i]


class SortedVocab:
    """Token -> id by binary search in a memory-mapped ``vocab.txt``: nothing to parse at load.

    The file holds one token a line, sorted by the token's UTF-8 bytes, each line
    ``width`` bytes: the token left-justified in ``token_bytes`` bytes (padded
    with spaces, which sort below every byte a token holds), a space, its id
    right-justified in ``id_digits`` digits, a newline. ``grep '^token ' vocab.txt``
    finds a token's id. A look-up costs ~2 us.
    """

    def __init__(self, path: Path, *, size: int, token_bytes: int, id_digits: int) -> None:
        with open(path, "rb") as f:
            self._mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        self.size = size
        self._tb = token_bytes
        self._width = token_bytes + id_digits + 2
        if len(self._mm) != size * self._width or self._mm[self._width - 1 : self._width] != b"\n":
            self._mm.close()
            raise ValueError(f"{path}: not {size} lines of {self._width} bytes")

    def _bisect(self, padded: bytes, lo: int = 0) -> int:
        """Index of the first line whose token field is >= padded."""
        mm, width, tb, hi = self._mm, self._width, self._tb, self.size
        while lo < hi:
            mid = (lo + hi) >> 1
            at = mid * width
            if mm[at : at + tb] < padded:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def _id(self, index: int) -> int:
        at = index * self._width
        return int(self._mm[at + self._tb + 1 : at + self._width - 1])

    def get(self, token: str) -> int | None:
        key = token.encode("utf-8")
        if len(key) > self._tb:
            return None
        padded = key.ljust(self._tb)
        i = self._bisect(padded)
        if i < self.size and self._mm[i * self._width : i * self._width + self._tb] == padded:
            return self._id(i)
        return None

    def longest(self, head: str, word: str, start: int, stop: int) -> tuple[int, int]:
        """(end, id) of the longest token ``head + word[start:end]``, start < end <= stop; (start, -1) if none.

        Walks the prefixes in order, one search each, and stops at the first that
        begins no token: so it costs the length of the longest match plus one
        search, not one per candidate length.
        """
        best, lo = (start, -1), 0
        mm, width, tb = self._mm, self._width, self._tb
        head_bytes = head.encode("utf-8")
        for end in range(start + 1, stop + 1):
            key = head_bytes + word[start:end].encode("utf-8")
            if len(key) > tb:
                break
            padded = key.ljust(tb)
            lo = self._bisect(padded, lo)  # a longer key sorts after a shorter one: never search before it
            if lo == self.size:
                break
            line = mm[lo * width : lo * width + tb]
            if line == padded:
                best = (end, self._id(lo))
            elif not line.startswith(key):
                break
        return best

    def tokens(self) -> dict[str, int]:
        """The whole vocabulary as a dict (for tests and tools; the query path never builds it)."""
        out: dict[str, int] = {}
        for i in range(self.size):
            at = i * self._width
            out[self._mm[at : at + self._tb].rstrip(b" ").decode("utf-8")] = self._id(i)
        return out

    def close(self) -> None:
        self._mm.close()


class BertWordPiece:
    """tokenizers' BERT pipeline in pure Python: added tokens, BertNormalizer, BertPreTokenizer, WordPiece.

    ``ids(text)`` equals ``Tokenizer.encode(text, add_special_tokens=False).ids``
    (truncated to ``max_length``) for the tokenizer.json ``wordpiece.json`` was
    derived from. Character classes come from that file too, not from
    ``unicodedata``: tokenizers classifies with tables of an older Unicode (the
    ``unicode_categories`` crate's) than any Python's, so the build probes
    tokenizers itself, code point by code point. Only NFD and lower-casing come
    from Python; where they differ from Rust's (a few dozen code points of recent
    Unicode, none in the vocabulary) the word is one unknown token either way.
    """

    def __init__(self, vocab: SortedVocab, config: dict[str, Any], max_length: int | None = None) -> None:
        self.vocab = vocab
        unk_id = vocab.get(config["unk_token"])
        if unk_id is None:
            raise ValueError(f"unknown token {config['unk_token']!r} is not in the vocabulary")
        self.unk_id: int = unk_id
        self.prefix: str = config["continuing_subword_prefix"]
        self.max_word: int = int(config["max_input_chars_per_word"])
        norm = config["normalizer"]
        self.clean_text: bool = bool(norm["clean_text"])
        self.handle_chinese_chars: bool = bool(norm["handle_chinese_chars"])
        self.lowercase: bool = bool(norm["lowercase"])
        strip = norm["strip_accents"]
        self.strip_accents: bool = self.lowercase if strip is None else bool(strip)  # BertNormalizer's default
        self.added: dict[str, int] = dict(config["added_tokens"])
        self.max_length = max_length
        classes = config["char_classes"]
        self._removed = _Ranges(classes["removed_by_clean_text"])
        self._space = _Ranges(classes["white_space"])
        self._chinese = _Ranges(classes["chinese"])
        self._mark = _Ranges(classes["nonspacing_mark"])
        self._punct = _Ranges(classes["punctuation"])
        self._first_map = _CharMap(self._map_first)  # clean_text + chinese chars
        self._mark_map = _CharMap(self._map_mark)  # strip accents: marks dropped after NFD
        self._split_map = _CharMap(self._map_split)  # pre-tokenizer: spaces, punctuation isolated

    def _map_first(self, cp: int) -> str:
        c = chr(cp)
        if self.clean_text:
            if cp in self._removed:
                return ""
            if cp in self._space:
                return " "
        if self.handle_chinese_chars and cp in self._chinese:
            return f" {c} "
        return c

    def _map_mark(self, cp: int) -> str:
        return "" if cp in self._mark else chr(cp)

    def _map_split(self, cp: int) -> str:
        if cp in self._space:
            return " "
        c = chr(cp)
        return f" {c} " if cp in self._punct else c

    def normalize(self, text: str) -> str:
        """What ``BertNormalizer.normalize_str`` returns."""
        text = text.translate(self._first_map)
        if self.strip_accents and not text.isascii():
            text = unicodedata.normalize("NFD", text).translate(self._mark_map)
        if self.lowercase:
            # Rust lower-cases char by char: no final-sigma rule (Python's str.lower maps a final Σ to ς).
            text = "".join([c.lower() for c in text]) if "\u03a3" in text else text.lower()
        return text

    def words(self, normalized: str) -> list[str]:
        """What ``BertPreTokenizer`` makes of normalized text: split at spaces, punctuation isolated."""
        return [w for w in normalized.translate(self._split_map).split(" ") if w]

    def ids(self, text: str) -> list[int]:
        """Token ids without special tokens, truncated to max_length; the unknown token is kept."""
        limit = self.max_length
        out: list[int] = []
        for piece, added_id in self._split_added(text):
            if added_id is not None:
                out.append(added_id)
            else:
                for word in self.words(self.normalize(piece)):
                    self.wordpiece(word, out)
                    if limit is not None and len(out) >= limit:
                        break
            if limit is not None and len(out) >= limit:
                return out[:limit]
        return out

    def _split_added(self, text: str) -> list[tuple[str, int | None]]:
        """Cut the added tokens out of the raw text: leftmost match first, the longest on a tie."""
        added = self.added
        if not added or not any(tok in text for tok in added):
            return [(text, None)]
        parts: list[tuple[str, int | None]] = []
        start = 0
        while True:
            hits = [(at, -len(tok), tok) for tok in added if (at := text.find(tok, start)) >= 0]
            if not hits:
                break
            at, _, tok = min(hits)
            if at > start:
                parts.append((text[start:at], None))
            parts.append((tok, added[tok]))
            start = at + len(tok)
        if start < len(text):
            parts.append((text[start:], None))
        return parts

    def wordpiece(self, word: str, out: list[int]) -> None:
        """WordPiece: greedy longest match; a word with a piece not in the vocabulary is one unknown token."""
        n = len(word)
        if n > self.max_word:
            out.append(self.unk_id)
            return
        whole = self.vocab.get(word)
        if whole is not None:
            out.append(whole)
            return
        pieces: list[int] = []
        start = 0
        while start < n:
            end, found = self.vocab.longest(self.prefix if start else "", word, start, n)
            if found < 0:
                out.append(self.unk_id)
                return
            pieces.append(found)
            start = end
        out.extend(pieces)


_NPY_MAGIC = b"\x93NUMPY"
_NPY_CODES = {"i1": "b", "f2": "e", "f4": "f"}  # the dtypes the data may use -> struct codes
_DTYPES = {"int8": "i1", "float16": "f2", "float32": "f4"}  # meta.json's names for them


def _npy_header(header: str) -> tuple[str, bool, tuple[int, ...]]:
    """(descr, fortran_order, shape) from a header numpy wrote: a dict literal with those three keys."""
    body = header.strip()
    if not (body.startswith("{") and body.endswith("}")):
        raise ValueError(f"unsupported .npy header {body!r}")
    fields: dict[str, str] = {}
    rest = body[1:-1]
    for key in ("descr", "fortran_order", "shape"):
        at = rest.find(f"'{key}':")
        if at < 0:
            raise ValueError(f".npy header has no {key!r}: {body!r}")
        value = rest[at + len(key) + 3 :].lstrip()
        end = value.find(")") + 1 if value.startswith("(") else value.find(",", 1 if value[:1] == "'" else 0)
        fields[key] = value[:end] if end > 0 else value.rstrip(", ")
    descr = fields["descr"].strip("'")
    shape = tuple(int(x) for x in fields["shape"].strip("()").split(",") if x.strip())
    return descr, fields["fortran_order"] == "True", shape


def _open_npy(path: Path) -> tuple[mmap.mmap, int, str, tuple[int, ...]]:
    """Map a .npy file: (map, offset of the data, struct code with byte order, shape). No numpy."""
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    try:
        if mm[:6] != _NPY_MAGIC:
            raise ValueError(f"{path}: not a .npy file")
        major = mm[6]
        if major == 1:
            (size,), start = struct.unpack_from("<H", mm, 8), 10
        elif major in (2, 3):
            (size,), start = struct.unpack_from("<I", mm, 8), 12
        else:
            raise ValueError(f"{path}: .npy format version {major} is not supported")
        descr, fortran, shape = _npy_header(mm[start : start + size].decode("utf-8" if major == 3 else "latin-1"))
        order, kind = descr[:-2], descr[-2:]
        if fortran or kind not in _NPY_CODES or order not in ("<", ">", "|", "=", ""):
            raise ValueError(f"{path}: dtype {descr!r} (fortran_order {fortran}) is not supported")
        byteorder = ">" if order == ">" else "<" if order in ("<", "|") or sys.byteorder == "little" else ">"
        itemsize = struct.calcsize("<" + _NPY_CODES[kind])
        count = 1
        for n in shape:
            count *= n
        if len(mm) < start + size + count * itemsize:
            raise ValueError(f"{path}: file is shorter than its header says")
        return mm, start + size, byteorder + _NPY_CODES[kind], shape
    except BaseException:
        mm.close()
        raise


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

        self._matrix, self._offset, code, shape = _open_npy(self.path / meta["matrix"])
        if shape != (vocab.size, self.dim) or code[1:] != _NPY_CODES[_DTYPES[meta["dtype"]]]:
            raise ValueError(f"{self.path}: matrix {shape} {code} does not match meta.json")
        self._row = struct.Struct(f"{code[0]}{self.dim}{code[1:]}")
        self._scales: mmap.mmap | None = None
        self._scale_offset = 0
        if meta.get("scales"):
            self._scales, self._scale_offset, scode, sshape = _open_npy(self.path / meta["scales"])
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

    def embed_query(self, text: str) -> array:
        """One text -> ``array('f')`` of length dim, L2-normalised; all zeros if no known token."""
        ids = self.token_ids(text)
        if not ids:
            return array("f", bytes(4 * self.dim))
        counts: dict[int, int] = {}
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
        acc = [0.0] * self.dim
        row, offset, stride, matrix = self._row, self._offset, self._row.size, self._matrix
        for i, n in counts.items():
            w = float(n)
            if self._scales is not None:
                w *= self._scale.unpack_from(self._scales, self._scale_offset + 4 * i)[0]
            acc = [a + w * x for a, x in zip(acc, row.unpack_from(matrix, offset + stride * i))]
        if not self.normalize:
            return array("f", [a / len(ids) for a in acc])
        norm = math.sqrt(math.fsum([a * a for a in acc]))
        if norm == 0.0:
            return array("f", bytes(4 * self.dim))
        return array("f", [a / norm for a in acc])

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


def embed_query(text: str) -> array:
    """One query -> unit vector, ``array('f')`` of length dim, with the shipped data; no numpy, no tokenizers."""
    return query_embedder().embed_query(text)
