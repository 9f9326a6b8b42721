"""Temporal values both ways: TiDB text forms ↔ Debezium numbers and strings (§5.3).

Writers (``write_*``) follow TiCDC, which follows Debezium's MySQL connector:

* DATE → days since 1970-01-01, parsed as Go's ``time.Parse("2006-01-02")`` does (exactly
  four-digit year, two-digit month and day, a real calendar date); anything else (the zero
  date, ``2023-00-10``) has no days: ``None``.
* DATETIME → epoch milliseconds (fsp ≤ 3) or microseconds (fsp > 3), the text taken as UTC;
  the zero date or a date with month or day 0 has no epoch value: ``None``.
* TIMESTAMP → ``YYYY-MM-DDTHH:MM:SS[.fsp digits]Z`` in UTC, the text read in the encoder's
  time zone with Go's rule for local times in a DST gap or fold (the offset in force at the
  wall time read as UTC, re-checked once). Text below TiDB's MinTimestamp
  (``1970-01-01 00:00:01``) is ``BELOW_MIN_TIMESTAMP``.
* TIME → signed microseconds.
* DATE and DATETIME years below 100 are shifted as two-digit years: 0–69 → 2000–2069,
  70–99 → 1970–1999 (so year 0018 is written as 2018: the decoder cannot undo it).
* Fractions with more digits than the column's fsp are rounded half up, as TiDB's parser does.

Readers (``read_*``) turn the numbers back into TiDB text: fractions of DATETIME and TIME are
written only when not zero, as 3 digits (milliseconds) or 6 (microseconds), because the
message does not say the fsp.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo

__all__ = [
    "BELOW_MIN_TIMESTAMP",
    "read_date",
    "read_datetime",
    "read_time",
    "read_timestamp",
    "write_date",
    "write_datetime",
    "write_time",
    "write_timestamp",
]

BELOW_MIN_TIMESTAMP = "1970-01-01T00:00:00Z"
_MIN_TIMESTAMP = (1970, 1, 1, 0, 0, 1, 0)
_GO_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_DATETIME = re.compile(
    r"([0-9]{1,4})[-/.]([0-9]{1,2})[-/.]([0-9]{1,2})"
    r"(?:[ T]([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]+))?)?"
)
_TIME = re.compile(r"(-?)(?:([0-9]+) )?([0-9]+):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]+))?")
_ZONED = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})T([0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?)Z")
_DAY_US = 86_400_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (any year, 0 included)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _civil_from_days(days: int) -> tuple[int, int, int]:
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def _two_digit_year(year: int) -> int:
    return year + 2000 if year < 70 else year + 1900 if year < 100 else year


def _round_fraction(digits: str | None, fsp: int) -> int:
    """Microseconds of ``.digits`` rounded half up to ``fsp`` digits."""
    if not digits:
        return 0
    scale = 10 ** len(digits)
    kept, rest = divmod(int(digits) * 10**fsp, scale)
    if 2 * rest >= scale:
        kept += 1
    return int(kept * 10 ** (6 - fsp))


def write_date(text: str) -> int | None:
    """Days since the epoch, or ``None`` when Go cannot parse ``text`` as a date."""
    match = _GO_DATE.fullmatch(text)
    if match is None:
        return None
    year, month, day = map(int, match.groups())
    if not (1 <= month <= 12 and 1 <= day <= _days_in_month(year, month)):
        return None
    return _days_from_civil(_two_digit_year(year), month, day)


def _parse_datetime(text: str, fsp: int) -> tuple[int, int, int, int]:
    """(year, month, day, microseconds into that day, rounded to fsp); ValueError if invalid."""
    match = _DATETIME.fullmatch(text)
    if match is None:
        raise ValueError(f"not a datetime: {text!r}")
    year, month, day, hour, minute, second = (int(g or 0) for g in match.groups()[:6])
    if month > 12 or day > 31 or hour > 23 or minute > 59 or second > 59:
        raise ValueError(f"datetime out of range: {text!r}")
    micro = _round_fraction(match.group(7), fsp)
    return year, month, day, ((hour * 60 + minute) * 60 + second) * 1_000_000 + micro


def write_datetime(text: str, fsp: int) -> int | None:
    """Epoch ms (fsp ≤ 3) or µs of ``text`` as UTC; ``None`` for dates Go cannot hold."""
    year, month, day, micro = _parse_datetime(text, fsp)
    if not (month >= 1 and 1 <= day <= _days_in_month(year, month)):
        return None
    total = _days_from_civil(_two_digit_year(year), month, day) * _DAY_US + micro
    return total // 1000 if fsp <= 3 else total


def _offset_at(unix: int, zone: tzinfo) -> int:
    """UTC offset in seconds of ``zone`` at the instant ``unix``."""
    try:
        instant = _EPOCH + timedelta(seconds=unix)
    except OverflowError:
        instant = _EPOCH + timedelta(seconds=max(min(unix, 253402214400), -62135596800))
    offset = instant.astimezone(zone).utcoffset()
    return 0 if offset is None else int(offset.total_seconds())


def write_timestamp(text: str, fsp: int, zone: tzinfo) -> str:
    """The UTC ZonedTimestamp of TIMESTAMP ``text`` read in ``zone``; ValueError if invalid."""
    year, month, day, micro = _parse_datetime(text, fsp)
    seconds, micro = divmod(micro, 1_000_000)
    wall = (year, month, day, seconds // 3600, seconds // 60 % 60, seconds % 60, micro)
    if wall < _MIN_TIMESTAMP:
        return BELOW_MIN_TIMESTAMP
    if not 1 <= day <= _days_in_month(year, month):
        raise ValueError(f"invalid date in {text!r}")
    unix = _days_from_civil(year, month, day) * 86400 + seconds
    offset = 0  # UTC's offset, at every instant
    if zone is not UTC:
        offset = _offset_at(unix, zone)
        if _offset_at(unix - offset, zone) != offset:  # Go's time.Date re-checks once
            offset = _offset_at(unix - offset, zone)
    days, second_of_day = divmod(unix - offset, 86400)
    y, m, d = _civil_from_days(days)
    clock = f"{second_of_day // 3600:02d}:{second_of_day // 60 % 60:02d}:{second_of_day % 60:02d}"
    fraction = f".{micro:06d}"[: 1 + fsp] if fsp > 0 else ""
    return f"{y:04d}-{m:02d}-{d:02d}T{clock}{fraction}Z"


def write_time(text: str, fsp: int) -> int:
    """Signed microseconds of TIME ``text``; ValueError if it is not a duration."""
    match = _TIME.fullmatch(text)
    if match is None:
        raise ValueError(f"not a time: {text!r}")
    sign, days, hours, minutes, seconds, digits = match.groups()
    if int(minutes) > 59 or int(seconds) > 59:
        raise ValueError(f"time out of range: {text!r}")
    whole = (int(days or 0) * 24 + int(hours)) * 3600 + int(minutes) * 60 + int(seconds)
    micro = whole * 1_000_000 + _round_fraction(digits, fsp)
    return -micro if sign else micro


def _clock(micro: int, digits: int) -> str:
    seconds, fraction = divmod(micro, 1_000_000)
    text = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    if fraction:
        text += f".{fraction:06d}"[: 1 + digits]
    return text


def _date_text(days: int) -> str:
    year, month, day = _civil_from_days(days)
    if not 0 <= year <= 9999:
        raise ValueError(f"year {year} is outside 0000-9999")
    return f"{year:04d}-{month:02d}-{day:02d}"


def read_date(days: int) -> str:
    """``YYYY-MM-DD`` of days since the epoch."""
    return _date_text(days)


def read_datetime(epoch: int, *, micro: bool) -> str:
    """DATETIME text of epoch ms (``micro`` false) or µs."""
    total = epoch if micro else epoch * 1000
    days, in_day = divmod(total, _DAY_US)
    return f"{_date_text(days)} {_clock(in_day, 6 if micro else 3)}"


def read_time(micro: int) -> str:
    """TIME text ``[-]HH:MM:SS[.ffffff]`` of signed microseconds."""
    return ("-" if micro < 0 else "") + _clock(abs(micro), 6)


def read_timestamp(text: str) -> str:
    """TIMESTAMP text (UTC) of a ZonedTimestamp string; ValueError if it is not one."""
    match = _ZONED.fullmatch(text)
    if match is None:
        raise ValueError(f"not a ZonedTimestamp: {text!r}")
    return f"{match.group(1)} {match.group(2)}"
