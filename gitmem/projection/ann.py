"""The HNSW index (hnswlib) over the vector file, for large corpora and long-lived processes.

Why this exists: an exact int8 scan is the right answer for a fresh process
(loading an index costs far more), but a long-lived one (the MCP server) over
a large corpus answers faster from a graph. The index is a cache of the
vector file, never a source of truth: it is only used when its tag says it
covers exactly the current rows, and candidates from the graph are re-ranked
by exact cosine, so only the candidate set is approximate.

vectors.hnsw holds the graph, labels = vector slots; vectors.hnsw.json says
what it covers: the embedder, the number of slots (slots only grow, so new
rows are simply added), the vector file's name and the number of forgotten
memories when it was built (a new forget rebuilds it from the file, where the
row is zeroed), and a CRC-32 of the index file. Both are written to temp files
and renamed, so readers see an old index or a new one, never half of one. An
index whose bytes do not match its tag, or that hnswlib cannot load, is
deleted and the question answered by the exact scan (``damaged`` says so): a
damaged graph must never be searched, where a bad neighbour id could crash
the process. hnswlib and numpy are imported only here, and only when an
index is loaded, built or searched.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

HNSW_NAME = "vectors.hnsw"
# When the HNSW index is used (benchmarks/latency.py measures the crossover).
# Loading an index costs far more than an exact int8 scan for a fresh process,
# and building one far more than a refresh may take, so fresh processes scan
# exactly (and use a persisted index only for very large corpora); a
# long-lived process (the MCP server) builds or updates the persisted index in
# the background and queries it once it covers the corpus.
HNSW_FRESH_MIN = 500_000
HNSW_WARM_MIN = 20_000


def wanted_tag(embedder: str | None, slots: int, forgotten: int,
               vectors: str) -> dict[str, object]:
    """The tag of an index that covers the current vector rows exactly."""
    return {"embedder": embedder, "slots": slots, "forgotten": forgotten, "vectors": vectors}


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            crc = zlib.crc32(chunk, crc)
    return crc


class HnswIndex:
    """The persisted index beside the vector file, and the one loaded in memory.

    The background build reads the vector file named in its tag and never the
    SQLite connection, which belongs to the caller's thread.
    """

    def __init__(self, directory: Path, dim: int) -> None:
        self.directory = directory
        self.dim = dim
        self.path = directory / HNSW_NAME
        self.loaded: Any = None  # an hnswlib.Index covering ``tag``, or None
        self.tag: dict[str, object] | None = None
        self._thread: Any = None
        self.damaged = False  # a persisted index was unusable and deleted

    @property
    def _tag_path(self) -> Path:
        return Path(str(self.path) + ".json")

    def drop(self) -> None:
        self.loaded, self.tag = None, None
        self.path.unlink(missing_ok=True)
        self._tag_path.unlink(missing_ok=True)

    def forget(self) -> None:
        """Let go of the index loaded in this process (its files are being deleted)."""
        self.loaded, self.tag = None, None

    def read_tag(self) -> dict[str, object] | None:
        """What the persisted index covers, its checksum under "crc32"; None if unreadable."""
        try:
            tag = json.loads(self._tag_path.read_text())
        except (OSError, ValueError):
            return None
        return tag if isinstance(tag, dict) else None

    def _intact(self, tag: dict[str, object]) -> bool:
        """The index file has the bytes its tag was written for."""
        try:
            return tag.get("crc32") == _crc32(self.path)
        except OSError:
            return False

    @staticmethod
    def _covers(tag: dict[str, object] | None) -> dict[str, object] | None:
        """The coverage part of a tag (what ``wanted_tag`` returns)."""
        return None if tag is None else {k: v for k, v in tag.items() if k != "crc32"}

    def get(self, want: dict[str, object], *, build: bool) -> Any:
        """A loaded index covering exactly ``want``, or None (then, with ``build``,
        one is brought up to date in the background for later questions)."""
        if self.loaded is not None and self.tag == want:
            return self.loaded
        tag = self.read_tag()
        if tag is not None and self._covers(tag) == want:
            import hnswlib

            try:
                if not self._intact(tag):
                    raise ValueError("index file does not match its tag")
                index = hnswlib.Index(space="cosine", dim=self.dim)
                index.load_index(str(self.path))
                if index.get_current_count() != want["slots"]:
                    raise ValueError("index does not hold the rows its tag names")
            except (RuntimeError, ValueError, MemoryError, OSError):
                self.damaged = True
                try:
                    self.drop()
                except OSError:
                    pass
                tag = None
            else:
                self.loaded, self.tag = index, want
                return index
        if build:
            self._start_build(want, tag)
        return None

    def _start_build(self, want: dict[str, object], have: dict[str, object] | None) -> None:
        import threading

        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(
            target=self._build, args=(want, have), name="gitmem-hnsw", daemon=True
        )
        self._thread.start()

    def _build(self, want: dict[str, object], have: dict[str, object] | None) -> None:
        """Bring the persisted index up to ``want`` (runs in a background thread)."""
        import hnswlib
        import numpy as np

        n = int(want["slots"])  # type: ignore[call-overload]
        incremental = (
            have is not None
            and have.get("embedder") == want["embedder"]
            and have.get("vectors") == want["vectors"]
            and have.get("forgotten") == want["forgotten"]
            and int(have.get("slots", 0)) <= n  # type: ignore[call-overload]
            and self._intact(have)  # never extend a damaged graph
        )
        index = hnswlib.Index(space="cosine", dim=self.dim)
        start = 0
        if incremental:
            try:
                index.load_index(str(self.path), max_elements=n)
                start = index.get_current_count()
            except (RuntimeError, ValueError, MemoryError, OSError):
                incremental = False
                index = hnswlib.Index(space="cosine", dim=self.dim)
        if not incremental:
            index.init_index(max_elements=max(n, 1), ef_construction=100, M=16, random_seed=100)
        index.set_num_threads(1)  # same rows in the same order, same graph
        # The file named in the tag, read in this thread (never the SQLite
        # connection, which belongs to the main thread).
        path = self.directory / str(want["vectors"])
        rows = np.fromfile(path, dtype=np.int8, count=n * self.dim).reshape(n, self.dim)
        for lo in range(start, n, 8192):
            hi = min(n, lo + 8192)
            index.add_items(rows[lo:hi].astype(np.float32), np.arange(lo, hi))
        token = os.urandom(16).hex()
        tmp = self.directory / f".{HNSW_NAME}.{token}"
        index.save_index(str(tmp))
        crc = _crc32(tmp)
        os.replace(tmp, self.path)
        tmp_tag = self.directory / f".{HNSW_NAME}.json.{token}"
        tmp_tag.write_text(json.dumps({**want, "crc32": crc}, sort_keys=True))
        os.replace(tmp_tag, self._tag_path)
        self.loaded, self.tag = index, want

    def wait(self, timeout: float | None = None) -> None:
        """Block until a background build finishes (tests, benchmarks)."""
        if self._thread is not None:
            self._thread.join(timeout)

    @staticmethod
    def search(
        index: Any,
        query: bytes,
        n: int,
        limit: int,
        best_per_memory: Callable[[list[int], Callable[[int], float]], list[tuple[float, str]]],
    ) -> list[tuple[str, float]]:
        """(memory id, cosine) of the ``limit`` best memories among the graph's
        candidates; ``best_per_memory`` filters candidate slots by scope."""
        import numpy as np

        q = np.frombuffer(query, dtype=np.int8).astype(np.float32)
        want = max(limit * 4, 64)
        while True:
            k = min(want, n)
            index.set_ef(max(k, 200))
            labels, dists = index.knn_query(q, k=k)
            cand = [int(x) for x in labels[0]]
            dist = dict(zip(cand, (float(d) for d in dists[0])))
            hits = best_per_memory(cand, dist.__getitem__)
            if len(hits) >= limit or k >= n:
                return [(mid, 1.0 - d) for d, mid in hits[:limit] if d < 1.0]
            want *= 8
