"""Regular expressions compiled the first time they are used.

Why this exists: the scanners hold dozens of patterns, and re compiles a
pattern in pure Python (20-300 us each). Most sit behind a cheaper test
(a keyword, a digit, a symbol), so a text reaches only a few of them, and a
fresh ``git mem add`` would otherwise compile every one at import.
"""

from __future__ import annotations

import re
from typing import Any, cast

from . import programs


_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class _Lazy:
    """Stands in for the compiled pattern: any attribute compiles it (once). The
    compiled pattern's methods then sit in slots of their own, so a call finds
    them without ``__getattr__`` (~0.6 us saved a call, ~100k calls a 20k-line import)."""

    __slots__ = ("_args", "_guard", "_compiled", *_METHODS)

    def __init__(self, pattern: str, flags: int, guard: bool = False) -> None:
        self._args = (pattern, flags)
        self._guard = guard
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            pattern, flags = self._args
            if self._guard:
                from . import prefilter

                pattern = prefilter.guarded(pattern, prefilter.first_guard(pattern, flags))
            compiled = self._compiled = programs.compile(pattern, flags)
            for method in _METHODS:
                object.__setattr__(self, method, getattr(compiled, method))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy({self._args[0]!r})"


def lazy(pattern: str, flags: int = 0, guard: bool = False) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, done when the pattern is first used; with
    ``guard``, its first-character guard in front (prefilter.first_guard: the same
    matches, found sooner where the pattern opens with words or optional parts)."""
    return cast("re.Pattern[str]", _Lazy(pattern, flags, guard))
