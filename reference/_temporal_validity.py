"""The temporal checks of ``reference/validity.py``: DATE, DATETIME, TIMESTAMP and TIME.

Their rules are stated in that module's docstring (TiDB's ranges, zero dates, the TIMESTAMP
range widened by a day for the server's zone, fsp). Each check takes a non-null value and
what the message states of its column (``ColumnType``: ``scale`` is the fsp) and says why the
value cannot be one, or ``None``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ticdc_conformance.reference.values import TimestampValue, Value

if TYPE_CHECKING:
    from ticdc_conformance.reference.validity import ColumnType

__all__ = ["date_problem", "datetime_problem", "time_problem", "timestamp_problem"]

_DATE = r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
_CLOCK = r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
_DATE_TEXT = re.compile(_DATE)
_DATETIME_TEXT = re.compile(f"{_DATE} {_CLOCK}")
_TIME_TEXT = re.compile(r"(-?)([0-9]{2,3}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?")
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_TIMESTAMP_LOW = "1969-12-31 00:00:01"
_TIMESTAMP_HIGH = "2038-01-20 03:14:07"
"""TiDB's TIMESTAMP range in UTC, widened by a day either side for the server's zone."""
_ZERO_TIMESTAMPS = frozenset({"0000-00-00 00:00:00", "1970-01-01 00:00:00"})


def _day_exists(year: int, month: int, day: int) -> bool:
    if month == 0 or day == 0:  # zero-in-date: TiDB keeps it unless NO_ZERO_IN_DATE
        return month <= 12 and day <= 31
    if month > 12 or day > _MONTH_DAYS[month - 1]:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return not (month == 2 and day == 29 and not leap)


def _fraction(digits: str | None, ctype: ColumnType) -> str | None:
    count = len(digits or "")
    if count > 6:
        return "has more than 6 fractional digits"
    if ctype.scale is not None and count != ctype.scale:
        return f"has {count} fractional digits, fsp is {ctype.scale}"
    return None


def date_problem(value: Value, ctype: ColumnType) -> str | None:
    del ctype
    match = _DATE_TEXT.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return "is not YYYY-MM-DD"
    year, month, day = (int(part) for part in match.groups())
    return None if _day_exists(year, month, day) else "is not a date TiDB holds"


def _datetime_text(text: str, ctype: ColumnType) -> str | None:
    match = _DATETIME_TEXT.fullmatch(text)
    if match is None:
        return "is not YYYY-MM-DD HH:MM:SS[.f]"
    year, month, day, hour, minute, second = (int(part) for part in match.groups()[:6])
    if not _day_exists(year, month, day):
        return "is not a date TiDB holds"
    if hour > 23 or minute > 59 or second > 59:
        return "is not a time of day"
    return _fraction(match.group(7), ctype)


def datetime_problem(value: Value, ctype: ColumnType) -> str | None:
    if not isinstance(value, str):
        return "is not datetime text"
    return _datetime_text(value, ctype)


def timestamp_problem(value: Value, ctype: ColumnType) -> str | None:
    text = value.text if isinstance(value, TimestampValue) else value
    if not isinstance(text, str):
        return "is not timestamp text"
    why = _datetime_text(text, ctype)
    if why is not None or text[:19] in _ZERO_TIMESTAMPS:
        return why
    if not _TIMESTAMP_LOW <= text[:19] <= _TIMESTAMP_HIGH:
        return "is outside TIMESTAMP's range 1970-01-01 00:00:01 .. 2038-01-19 03:14:07 UTC"
    return None


def time_problem(value: Value, ctype: ColumnType) -> str | None:
    match = _TIME_TEXT.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        return "is not [-]HH:MM:SS[.f]"
    _, hours, minutes, seconds, fraction = match.groups()
    if int(minutes) > 59 or int(seconds) > 59:
        return "has minutes or seconds above 59"
    if (int(hours), int(minutes), int(seconds)) > (838, 59, 59) or (
        hours == "838" and minutes == seconds == "59" and (fraction or "0").strip("0")
    ):
        return "is outside -838:59:59 .. 838:59:59"
    return _fraction(fraction, ctype)
