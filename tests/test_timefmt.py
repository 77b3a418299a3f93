"""Dates are read the way git reads GIT_COMMITTER_DATE."""

from __future__ import annotations

import pytest

from gitmem.errors import InvalidDate
from gitmem.timefmt import iso, now_from_env, parse_date


@pytest.mark.parametrize(
    "text,expected",
    [
        ("@1700000000 +0100", (1700000000, 60)),
        ("@1700000000", (1700000000, 0)),
        ("1700000000 -0230", (1700000000, -150)),
        ("2023-11-14T22:13:20Z", (1700000000, 0)),
        ("2023-11-14T23:13:20+01:00", (1700000000, 60)),
        ("2023-11-14 23:13:20 +0100", (1700000000, 60)),
        ("Tue, 14 Nov 2023 23:13:20 +0100", (1700000000, 60)),
        ("2023-11-14", (1699920000, 0)),  # midnight, local time (TZ=UTC here)
    ],
)
def test_git_date_formats(text: str, expected: tuple[int, int]) -> None:
    assert parse_date(text) == expected


def test_relative_dates() -> None:
    now = 1700000000.0
    assert parse_date("now", now=now)[0] == 1700000000
    assert parse_date("3 days ago", now=now)[0] == 1700000000 - 3 * 86400
    assert parse_date("yesterday", now=now)[0] == 1699833600


@pytest.mark.parametrize("bad", ["", "   ", "not a date", "2023-13-45", "20231114x"])
def test_bad_dates_raise(bad: str) -> None:
    with pytest.raises(InvalidDate):
        parse_date(bad)


def test_committer_date_env_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_COMMITTER_DATE", "@1234567890 +0200")
    assert now_from_env() == (1234567890, 120)


def test_iso_rendering() -> None:
    assert iso(1700000000, 0) == "2023-11-14T22:13:20Z"
    assert iso(1700000000, 60) == "2023-11-14T23:13:20+01:00"
    assert iso(None) is None


@pytest.mark.parametrize("text", ["@1700000000 +2400", "1700000000 -9959",
                                  "2023-11-14T23:13:20+24:30"])
def test_an_offset_of_a_day_or_more_is_refused(text: str) -> None:
    with pytest.raises(InvalidDate):
        parse_date(text)


def test_year_one_is_a_date_in_every_form() -> None:
    assert parse_date("0001-01-01") == (-62135596800, 0)
    assert parse_date("0001-01-01T00:00:00Z") == (-62135596800, 0)


@pytest.mark.parametrize("text", ["@300000000000 +0000", "9999-12-31T23:59:59-12:00",
                                  "@253402300800 +0000"])
def test_a_date_outside_years_one_to_9999_is_refused_as_a_date(text: str) -> None:
    with pytest.raises(InvalidDate, match="outside years 1 to 9999"):
        parse_date(text)


def test_the_range_is_the_ops_range() -> None:
    from gitmem import ops, timefmt

    assert (timefmt.MIN_TIME, timefmt.MAX_TIME) == (ops.MIN_TIME, ops.MAX_TIME)
