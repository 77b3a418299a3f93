"""The progress bar of long commands (a first rebuild, a big pull) on a terminal.

The library reports progress through ``Store.progress``, a plain callable;
this is the CLI's one implementation. Only stderr, only on a terminal:
``--json``, pipes and hooks never see it.
"""

from __future__ import annotations

import os
import sys


class Progress:
    """One self-erasing status line on stderr, for long operations on a terminal.

    Drawn at most ten times a second and only after half a second, so quick
    commands never flicker; never drawn when stderr is not a terminal."""

    def __init__(self) -> None:
        import time

        self._clock = time.monotonic
        self._start = self._clock()
        try:
            self._delay = float(os.environ.get("GITMEM_PROGRESS_DELAY", "0.5") or 0.5)
        except ValueError:
            self._delay = 0.5
        self._last = 0.0
        self._shown = False

    @staticmethod
    def wanted() -> bool:
        return sys.stderr.isatty() and not os.environ.get("GITMEM_NO_PROGRESS")

    def __call__(self, what: str, done: int, total: int | None) -> None:
        now = self._clock()
        if now - self._start < self._delay or (now - self._last < 0.1 and done != total):
            return
        self._last = now
        if total:
            width = 24
            filled = int(width * min(done, total) / total)
            line = f"{what}: [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        else:
            line = f"{what}: {done}"
        sys.stderr.write("\r\033[K" + line)
        sys.stderr.flush()
        self._shown = True

    def done(self) -> None:
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
