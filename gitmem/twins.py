"""The same memory recorded twice: what readers show once.

Why this exists: two clones that add the same text before either has synced
write two memories (ids differ: author, clock and time are part of an op), and
merging is union, so both stay in the log. Nothing is wrong with the log; a
reader that showed both would repeat itself (an exported AGENTS.md listed the
line twice, recall spent two of its few hits on one answer). Readers keep the
first of each and say which others it stands for; ``list``, ``show`` and
``similar`` still show every one (``git mem forget`` retires a copy for good).

Twins: same kind, same key (or none), same text once normalised
(ops.normalize_text: case, white space and Unicode form aside), and replacing the
same memories (two memories that say the same of different ones, as two skills'
references, are two).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from . import ops

T = TypeVar("T")


class Memory(Protocol):
    kind: str
    key: str | None
    text: str | None
    supersedes: list[str]


def twin_id(r: Memory) -> str:
    """What twins share, as one string ("" for no text: nobody's twin)."""
    text = ops.normalize_text(r.text or "")
    return "\0".join((r.kind, r.key or "", text, ",".join(sorted(r.supersedes)))) if text else ""


def first_of_each(items: Iterable[T], twin: Callable[[T], str]) -> list[T]:
    """``items`` in their order, each one a twin (same ``twin``, not "") of an earlier
    one left out."""
    seen: set[str] = set()
    kept: list[T] = []
    for item in items:
        t = twin(item)
        if t and t in seen:
            continue
        seen.add(t)
        kept.append(item)
    return kept
