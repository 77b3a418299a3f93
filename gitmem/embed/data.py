"""The shipped model data: where it lives, its meta.json, and the version it stamps on vectors.

Why this exists: the two ways of embedding (``StaticEmbedder`` for documents,
``QueryEmbedder`` for the one query of a recall) read the same directory and
must report the same name, version and dim, or the projection would compare
vectors of two different models. The version is a hash over the data files'
sha256s, so any change to the model data changes it, and the projection
re-embeds every memory. Standard library only: asking for the version must not
load the model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import hashes

DATA_DIR = Path(__file__).parent.parent / "data" / "embedder"
FORMAT = 1  # meta.json layout this loader understands

# Data files derived from tokenizer.json for the query path (query.py):
# ``vocab.txt``, its vocabulary one token a line, and ``wordpiece.json``, its
# settings and character classes. They hold nothing tokenizer.json does not
# already decide, so they are checked by ``verify`` like any file but left out of
# the version hash: adding or regenerating them never changes ``version``.
DERIVED_FILES = frozenset({"vocab.txt", "wordpiece.json"})


def data_digest(files: dict[str, str]) -> str:
    """One sha256 over every data file's sha256 (derived files excepted): any changed file changes the version."""
    lines = "".join(f"{name} {digest}\n" for name, digest in sorted(files.items()) if name not in DERIVED_FILES)
    return hashes.sha256(lines.encode()).hexdigest()


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

