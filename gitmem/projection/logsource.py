"""``LogSource``: what a refresh needs from the op-log, and all it may ask of it.

Why a module of its own: the projection never imports the op-log; ``Projection.refresh``
takes anything with these methods (the api passes its ``oplog.Oplog``, or a view of it:
``api/readview.py``, ``api/shallow.py``). The refresh, the marks, the child embedding
ahead and the replay (``fold``) all name it, so it lives apart from any one of them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol


class LogSource(Protocol):
    """What a refresh needs from the op-log (implemented by oplog.Oplog)."""

    def partitions(self) -> dict[str, str]: ...

    def tips(self, refs: list[str]) -> dict[str, str]: ...

    def is_ancestor(self, old: str, new: str) -> bool: ...

    def iter_packs(self, tip: str, since: str | None = None) -> Iterator[object]: ...
