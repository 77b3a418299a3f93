"""The shipped tokenizer in pure Python: BERT normalisation, pre-tokenisation and WordPiece.

Why this exists: importing ``tokenizers`` and parsing tokenizer.json costs
30-60 ms, too much for the one query a fresh ``git mem recall`` embeds. This is
a copy of the pipeline tokenizer.json describes, driven by ``wordpiece.json``
(its settings and character classes, derived from tokenizer.json by
``scripts/build_embedder.py``) and a ``SortedVocab``. The invariant: the same
token ids as ``tokenizers`` for every text (tests/test_embed.py checks it on
hard cases, a corpus and random Unicode).
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from .vocab import SortedVocab


class _CharMap(dict[int, str]):
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
