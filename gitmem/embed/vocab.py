"""``vocab.txt`` looked up in place: token -> id with nothing parsed at load.

Why this exists: the query path must start in about a millisecond, and a dict
of the 29,525 tokens would cost 3-6 ms to build in a fresh process, more than
everything else together. So the vocabulary is kept in a file sorted by the
tokens' UTF-8 bytes, in fixed-width lines, memory-mapped and searched by
bisection. ``scripts/build_embedder.py`` writes the file; this reads it.
"""

from __future__ import annotations

import mmap
from pathlib import Path


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
