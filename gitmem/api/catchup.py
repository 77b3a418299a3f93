"""Answering within a budget while a large refresh catches up in the background.

Why this exists: a teammate's 20k-op partition can arrive by a plain ``git
fetch``; replaying it takes longer than an agent's hook may run (a prompt hook
is killed after 10 s, and a killed refresh used to start over every time).
Front ends with a budget (hooks, the MCP server) therefore refresh only until a
deadline, answer from what the projection holds by then, say it is behind,
and leave the rest to one background process:

- bounded: ``Projection.refresh(deadline=...)`` commits what it replayed by the
  deadline (whole commits only) and reports ``complete=False``; under a front
  end's budget it starts no commit whose replay could overrun it (by the pack's
  size, at the gate's worst cost a byte), while a catch-up's slice always
  replays at least one;
- one at a time: the catch-up holds ``.git/mem/catch-up.lock`` (an advisory
  lock the OS releases when the process dies); a second one exits at once, and
  a front end that finds it held reads the projection as it is;
- resumable, never lost: the catch-up refreshes in slices of a few seconds,
  each committed, so a killed catch-up loses at most one slice, and the next
  one (or any later read) goes on from the last committed commit. The op-log
  is untouched throughout: the projection only ever lags it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from .. import selfexec
from . import locks
from .pool import Pool

T = TypeVar("T")

LOCK_FILE = "catch-up.lock"
LOG_FILE = "catch-up.log"
SLICE_SECONDS = 2.0  # each committed slice of a catch-up
BEHIND = ("memory is still replaying newly fetched ops in the background; "
          "answers may miss the newest memories")

@contextmanager
def _lock(pool: Pool) -> Iterator[bool]:
    """Hold the catch-up lock if free; yields False when another process holds it
    (a read-only .git: no lock, and nobody can catch up in the background)."""
    with locks.held(pool.log.state_dir / LOCK_FILE) as free:
        yield free


def running(pool: Pool) -> bool:
    """True while a catch-up holds the lock."""
    with _lock(pool) as free:
        return not free


def catch_up(pool: Pool, slice_seconds: float = SLICE_SECONDS) -> bool:
    """Refresh to the end in committed slices (``GITMEM_CATCHUP_SLICE`` seconds when
    set); False if another catch-up is running."""
    slice_seconds = _seconds("GITMEM_CATCHUP_SLICE", slice_seconds)
    with _lock(pool) as free:
        if not free:
            return False
        while True:
            pool.deadline = time.monotonic() + slice_seconds
            pool.refresh()
            if not pool.behind:
                pool.pack_flooded()  # what the hooks' reads left to it (pool.py)
                return True


def start(pool: Pool) -> bool:
    """Start a background catch-up (it exits at once if one is running already)."""
    if running(pool):
        return True
    argv = selfexec.argv("gitmem", "refresh", "--catch-up")
    return pool.log.spawn(argv, pool.log.state_dir / LOG_FILE)


def _seconds(name: str, default: float) -> float:
    """The environment's ``name`` (seconds, 0 to an hour) when set and valid, else ``default``."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if 0 <= value < 3600 else default


def within(pool: Pool, budget: float, fn: Callable[[], T]) -> tuple[T, bool]:
    """Run a read that refreshes for at most ``budget`` seconds (the environment's
    ``GITMEM_REFRESH_BUDGET`` wins); (its answer, and whether the projection was
    behind, in which case a catch-up was started). A commit whose replay would
    overrun the budget is not started here (one teammate's 30 MB commit kept every
    prompt hook past its 10 s kill, and the catch-up, started after the answer,
    never started): the catch-up replays it."""
    budget = _seconds("GITMEM_REFRESH_BUDGET", budget)
    pool.behind = False
    # (The deadline also bounds comparing code anchors with HEAD: anchoring.freshen.)
    pool.deadline = time.monotonic() + budget
    if running(pool):
        pool.skip_refresh = True
    else:
        pool.budget = True
    try:
        out = fn()
    finally:
        pool.deadline, pool.skip_refresh, pool.budget = None, False, False
    if pool.behind:
        start(pool)
        return out, True
    return out, False
