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

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from . import ops

T = TypeVar("T")


Key = tuple[str, str | None, str, str]


def twin_key(kind: str, key: str | None, text: str | None,
             supersedes: Sequence[str] = ()) -> Key:
    """What twins share."""
    return kind, key, ops.normalize_text(text or ""), ",".join(sorted(supersedes))


def twin_id(kind: str, key: str | None, text: str | None, supersedes: Sequence[str] = ()) -> str:
    """``twin_key`` as one string ("" for no text: such memories are nobody's twins)."""
    k = twin_key(kind, key, text, supersedes)
    return "\0".join((k[0], k[1] or "", k[2], k[3])) if k[2] else ""


def first_of_each(items: Iterable[T], key: Callable[[T], Key],
                  ident: Callable[[T], str]) -> tuple[list[T], dict[str, list[str]]]:
    """``items`` in their order, each one a twin of an earlier one left out; and, by
    the id of each one kept, the ids of its twins left out (in their order)."""
    kept: list[T] = []
    first: dict[Key, str] = {}
    twins: dict[str, list[str]] = {}
    for item in items:
        k = key(item)
        if k[2] and k in first:
            twins.setdefault(first[k], []).append(ident(item))
            continue
        first[k] = ident(item)
        kept.append(item)
    return kept, twins
