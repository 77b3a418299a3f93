"""The clock and the ``gitmem.*`` git configuration, read and checked in one place.

Why this exists: every read and write asks "what time is it?" and "what did the
user configure?". Both must be answerable the same way everywhere, so tests and
replays can pin the clock (GITMEM_NOW, GIT_COMMITTER_DATE) and a bad config
value is one clear error naming the setting, never a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ..errors import InvalidDate, InvalidInput
from ..oplog import Oplog
from ..timefmt import now_from_env, parse_date

if TYPE_CHECKING:
    from ..salience import Salience

T = TypeVar("T")
DAY = 86400
_DATE_ONLY = re.compile(r"^\d{4}-?\d{2}-?\d{2}$")
# Dedup on write (git config gitmem.duplicateThreshold / gitmem.similarThreshold).
# Calibrated for the shipped static embedder, whose cosines run high: at 0.92,
# 86% of LoCoMo's distinct turns would have a "near-duplicate"; at 0.97, 1.6%,
# and those are true rewordings (docs/recall.md, "Dedup on write").
DUPLICATE_THRESHOLD = 0.97
SIMILAR_THRESHOLD = 0.95


def now() -> int:
    """The clock reads use: GITMEM_NOW, else GIT_COMMITTER_DATE (the clock writes
    use, so tests and replays can pin it), else the system clock."""
    env = os.environ.get("GITMEM_NOW")
    if env:
        try:
            return parse_date(env)[0]
        except InvalidDate as exc:
            raise InvalidDate(f"GITMEM_NOW: {exc.message}", exc.hint) from None
    return now_from_env()[0]


def point_in_time(log: Oplog, value: str | int | None, flag: str = "WHEN") -> int | None:
    """A point on either timeline: unix seconds, an ISO date or datetime (a date
    alone means the end of that day), or a git revision (its committer time)."""
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return value
    text = str(value).strip()
    try:
        ts = parse_date(text, now=now())[0]
    except InvalidDate:
        found = log.revision_time(text)
        if found is None:
            raise InvalidDate(
                f"{flag}: '{value}' is neither a date nor a git revision",
                "use an ISO date (2026-03-01), a datetime (2026-03-01T12:00:00Z), "
                "'3 weeks ago', or a tag, branch or commit (v1.4)",
            ) from None
        return found
    if _DATE_ONLY.match(text):
        ts += DAY - 1  # "as of March 1st" includes what happened on March 1st
    return ts


def setting(log: Oplog, name: str, parse: Callable[[str], T], default: T, hint: str) -> T:
    """One ``gitmem.*`` value from git config, parsed; a bad value is an error."""
    raw = log.settings().get(name.lower())
    if raw is None:
        return default
    try:
        return parse(raw.strip())
    except ValueError:
        raise InvalidInput(f"git config {name} = '{raw}' is not valid",
                           f"{hint} (git config {name} VALUE), or unset it") from None


def thresholds(log: Oplog) -> tuple[float, float]:
    """(near-duplicate, similar) cosine thresholds."""
    dup = setting(log, "gitmem.duplicateThreshold", unit, DUPLICATE_THRESHOLD,
                  "use a cosine from 0 to 1, e.g. 0.92")
    sim = setting(log, "gitmem.similarThreshold", unit, SIMILAR_THRESHOLD,
                  "use a cosine from 0 to 1, e.g. 0.80")
    return dup, sim


def salience_config(log: Oplog, as_of: int | None) -> Salience:
    """How salience is computed now (or as of a point in time)."""
    from ..salience import HALF_LIFE_DAYS, SALIENCE_FLOOR, Salience

    halves: dict[str, float | None] = {}
    for kind, default in HALF_LIFE_DAYS.items():
        halves[kind] = setting(log, f"gitmem.halfLife.{kind}", half_life, default,
                               "use a number of days, or 'never'")
    return Salience(
        now=as_of if as_of is not None else now(),
        half_life_days=halves,
        floor=setting(log, "gitmem.salienceFloor", unit, SALIENCE_FLOOR,
                      "use a number from 0 to 1, e.g. 0.05"),
        decay=setting(log, "gitmem.decay", boolean, True, "use true or false"),
    )


def ts(text: str) -> int:
    """Unix seconds of an ISO time the projection printed (0 if unreadable)."""
    try:
        return parse_date(text)[0]
    except InvalidDate:
        return 0


def unit(raw: str) -> float:
    value = float(raw)
    if not 0.0 <= value <= 1.0:
        raise ValueError(raw)
    return value


def half_life(raw: str) -> float | None:
    if raw.lower() in ("never", "none", "off", "0"):
        return None
    value = float(raw)
    if value <= 0:
        raise ValueError(raw)
    return value


def boolean(raw: str) -> bool:
    low = raw.lower()
    if low in ("true", "yes", "on", "1", ""):
        return True
    if low in ("false", "no", "off", "0"):
        return False
    raise ValueError(raw)
