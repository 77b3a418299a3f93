"""Parsing and printing of times, the way git does it.

Ops record wall time as unix seconds plus the writer's UTC offset in minutes,
exactly what a git signature holds. ``GIT_COMMITTER_DATE`` is honoured so that
tests and imports can pin the clock, and user-supplied dates (``--valid-from``)
accept the same spellings git accepts for that variable, plus a few relative
forms. Times without an offset are local time, as in git. Pure module.
"""

from __future__ import annotations

import os
import re
import time
from datetime import datetime, timedelta, timezone

from .errors import InvalidDate

# Patterns compiled by re when first used (and cached there): only a date given on
# the command line is parsed, most commands never compile them.
_RAW = r"^@?(\d{1,12})(?:\s+([+-])(\d{2}):?(\d{2}))?$"
_AGO = r"(?i)^(\d+)\s*(second|minute|hour|day|week|month|year)s?\s+ago$"
_UNIT_SECONDS = {
    "second": 1,
    "minute": 60,
    "hour": 3600,
    "day": 86400,
    "week": 7 * 86400,
    "month": 30 * 86400,
    "year": 365 * 86400,
}
# "2026-11-21 14:30:00 +0100" (git's ISO-like form) -> make it fromisoformat-able.
_GIT_ISO_OFFSET = r"^(.*\d)\s+([+-]\d{2}):?(\d{2})$"


# An op's UTC offset is under a day either way (ops.Offset). A local zone past it
# (TZ=UTC+24 is valid POSIX) records the time in UTC: the instant stays exact, only
# the offset it is shown in is lost. An offset written in a date is refused instead.
_MAX_OFFSET = 1439


def _local_offset_minutes(ts: float) -> int:
    lt = time.localtime(ts)
    minutes = int((lt.tm_gmtoff or 0) // 60)
    return minutes if abs(minutes) <= _MAX_OFFSET else 0


def _from_datetime(dt: datetime, *, local: bool = False) -> tuple[int, int]:
    if dt.tzinfo is None:
        try:
            dt = dt.astimezone()  # naive means local time, as in git
        except (OverflowError, OSError, ValueError):  # year 1: before any zone's rules
            dt = dt.replace(tzinfo=timezone.utc)
        local = True
    minutes = int((dt.utcoffset() or timedelta(0)).total_seconds() // 60)
    if abs(minutes) > _MAX_OFFSET:
        if not local:
            raise InvalidDate(f"UTC offset of {minutes} minutes is a day or more")
        minutes = 0
    return int(dt.timestamp()), minutes


# Years 1 to 9999, what every clone renders: ops.MIN_TIME and ops.MAX_TIME (a test
# keeps them equal; timefmt sits below ops). A date past them is refused as a date,
# not later as a field of the op it would have gone into.
MIN_TIME = -62135596800
MAX_TIME = 253402300799


def parse_date(text: str, *, now: float | None = None) -> tuple[int, int]:
    """Parse a date the way git reads ``GIT_COMMITTER_DATE`` (see _parse), within
    years 1 to 9999. Raises InvalidDate otherwise."""
    when = _parse(text, now=now)
    if not MIN_TIME <= when[0] <= MAX_TIME:
        raise InvalidDate(f"date '{text}' is outside years 1 to 9999")
    return when


def _parse(text: str, *, now: float | None = None) -> tuple[int, int]:
    """Parse a date the way git reads ``GIT_COMMITTER_DATE``.

    Returns ``(unix_seconds, utc_offset_minutes)``. Accepts ``@1700000000 +0100``,
    ``1700000000 +0100``, ISO 8601 dates and datetimes (``2026-11-21``,
    ``2026-11-21T14:30:00Z``, ``2026-11-21 14:30:00 +0100``), RFC 2822
    (``Sat, 21 Nov 2026 14:30:00 +0100``), ``now``, ``today``, ``yesterday``
    and ``N units ago``. Raises InvalidDate otherwise.
    """
    s = text.strip()
    if not s:
        raise InvalidDate("empty date")
    current = time.time() if now is None else now
    low = s.lower()
    if low == "now":
        return int(current), _local_offset_minutes(current)
    if low in ("today", "yesterday"):
        try:
            day = datetime.fromtimestamp(current).astimezone()
        except (OverflowError, OSError, ValueError):  # a local zone a day or more off
            day = datetime.fromtimestamp(current, timezone.utc)
        day = day.replace(hour=0, minute=0, second=0, microsecond=0)
        if low == "yesterday":
            day -= timedelta(days=1)
        return _from_datetime(day, local=True)
    m = re.match(_AGO, s)
    if m:
        ts = int(current) - int(m.group(1)) * _UNIT_SECONDS[m.group(2).lower()]
        return ts, _local_offset_minutes(ts)
    m = re.match(_RAW, s)
    # A bare number is only a unix time with '@' or an offset (git's rule is
    # similar: "20261121" is a date, "@20261121" is seconds).
    if m and (s.startswith("@") or m.group(2)):
        ts = int(m.group(1))
        if m.group(2):
            sign = 1 if m.group(2) == "+" else -1
            minutes = int(m.group(3)) * 60 + int(m.group(4))
            if minutes > _MAX_OFFSET:
                raise InvalidDate(f"UTC offset {m.group(2)}{m.group(3)}{m.group(4)} "
                                  "is a day or more")
            return ts, sign * minutes
        return ts, 0
    iso = s
    g = re.match(_GIT_ISO_OFFSET, iso)
    if g and ("-" in g.group(1)[:10]):
        iso = f"{g.group(1)}{g.group(2)}:{g.group(3)}"
    if iso.endswith("Z") or iso.endswith("z"):
        iso = iso[:-1] + "+00:00"
    try:
        return _from_datetime(datetime.fromisoformat(iso))
    except ValueError:
        pass
    import email.utils  # lazy: only RFC 2822 dates need it (it costs ~5 ms to import)

    try:
        dt = email.utils.parsedate_to_datetime(s)
    except (TypeError, ValueError, IndexError):
        dt = None
    if dt is not None:
        return _from_datetime(dt)
    raise InvalidDate(f"cannot parse date '{text}'")



# Recorded times are the writer's claim: one beyond now plus this skew is not believed
# (recall ranks it at the latest believable time, status lists it), and import refuses it.
FUTURE_SKEW = 86400

def now_from_env() -> tuple[int, int]:
    """The time to record on a new op: ``GIT_COMMITTER_DATE`` if set, else now."""
    env = os.environ.get("GIT_COMMITTER_DATE")
    if env:
        try:
            return parse_date(env)
        except InvalidDate as exc:
            raise InvalidDate(f"GIT_COMMITTER_DATE: {exc.message}",
                              "unset it, or set a date git reads (years 1 to 9999)") from None
    ts = time.time()
    return int(ts), _local_offset_minutes(ts)


def iso(ts: int | None, tz: int = 0) -> str | None:
    """Render unix seconds in the given offset as ISO 8601 (``...Z`` for UTC)."""
    if ts is None:
        return None
    try:
        dt = datetime.fromtimestamp(ts, timezone(timedelta(minutes=tz)))
    except (ValueError, OverflowError, OSError):
        return f"@{ts}"  # outside what datetime renders: still say something true
    out = dt.isoformat()
    return out[:-6] + "Z" if out.endswith("+00:00") else out
