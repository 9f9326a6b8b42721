"""Cheap tests that prove a value valid, shared by the column readers of the decoders.

A decoder's column reader first asks one of these; ``True`` means the full read and validity
check (``reference/validity.py``) would accept the value as it is, so the reader returns it;
``False`` (or ``None``: not judged here) sends the value down the full path, which also
builds the error or finding. Each is a sufficient test only: it never accepts what the full
path refuses, and the readers' differential tests hold them to that.

Dates and date-times are judged by one regular expression each, which states what
``date.fromisoformat`` and ``datetime.fromisoformat`` accept in these shapes: years 0001–9999,
months 01–12, days 01–28 of any month, 29 and 30 of any month but February, 31 of the months
that have it, February 29 of leap years (divisible by 4 and not by 100, or by 400), hours
00–23, minutes and seconds 00–59, ASCII digits only. The patterns run in C, with no parse
and no ``datetime`` built; the tests hold them to that parse. A precision outside 0–6 has no
pattern: its values are never proven here (MySQL has no such precision; the full path says
what is wrong).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ticdc_conformance.reference._gojson import json_accelerator

__all__ = [
    "DATETIME_BYTES",
    "DATETIME_PATTERN",
    "DATE_BYTES",
    "DATE_PATTERN",
    "JOINED_SEPARATOR",
    "MAX_FSP",
    "MAX_JSON_OPENINGS",
    "TIMESTAMP_BYTES",
    "TIMESTAMP_PATTERN",
    "date_test",
    "datetime_test",
    "is_date",
    "is_datetime",
    "joinable",
    "joined_test",
    "json_reads",
]

MAX_FSP = 6
"""The most fractional-second digits MySQL keeps."""
MAX_JSON_OPENINGS = 64
"""Arrays and objects a JSON text may open for orjson's verdict to stand: deeper nesting is
left to the full path, whose limits differ."""

_MONTH_DAY = (
    "(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"  # days every month has
    "|(?:0[13-9]|1[0-2])-(?:29|30)"  # every month but February
    "|(?:0[13578]|1[02])-31)"
)
_LEAP_YEAR = (
    "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])"  # divisible by 4, not a century
    "|(?:[02468][048]|[13579][26])00)"  # centuries divisible by 400
)
_DAY = f"(?!0000)(?:[0-9]{{4}}-{_MONTH_DAY}|{_LEAP_YEAR}-02-29)"  # year 0 does not exist
_TIME = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
_TIMESTAMP_YEARS = "(?=19[7-9][0-9]|20[0-2][0-9]|203[0-7])"
"""Years 1970–2037, ahead of the day (TIMESTAMP's range, as ``validity`` states it)."""


def _datetime(fsp: int | None) -> str:
    fraction = {None: f"(?:\\.[0-9]{{1,{MAX_FSP}}})?", 0: ""}.get(fsp, f"\\.[0-9]{{{fsp}}}")
    return f"{_DAY} {_TIME}{fraction}"


DATE_PATTERN = _DAY
"""``is_date``'s pattern, as text: for a caller that builds a larger pattern of it."""
DATETIME_PATTERN = _datetime(None)
"""``is_datetime``'s pattern with any fsp, as text."""
TIMESTAMP_PATTERN = _TIMESTAMP_YEARS + DATETIME_PATTERN
"""``DATETIME_PATTERN`` of years 1970–2037 only, as text."""

_DATE = re.compile(_DAY).fullmatch
_DATETIMES: dict[int | None, Callable[[str], object]] = {
    fsp: re.compile(_datetime(fsp)).fullmatch for fsp in (None, *range(MAX_FSP + 1))
}
"""A date-time's test by its fsp: a match, or ``None``."""
_TIMESTAMPS: dict[int | None, Callable[[str], object]] = {
    fsp: re.compile(_TIMESTAMP_YEARS + _datetime(fsp)).fullmatch
    for fsp in (None, *range(MAX_FSP + 1))
}

DATE_BYTES: Callable[[bytes], object] = re.compile(_DAY.encode()).fullmatch
"""``is_date`` of bytes (a match or ``None``): a match is ASCII, so it decodes to the text."""
DATETIME_BYTES: Callable[[bytes], object] = re.compile(DATETIME_PATTERN.encode()).fullmatch
"""``is_datetime`` of bytes with any fsp (a match or ``None``)."""
TIMESTAMP_BYTES: Callable[[bytes], object] = re.compile(TIMESTAMP_PATTERN.encode()).fullmatch
"""``DATETIME_BYTES`` of years 1970–2037 only."""


_PATTERNS: dict[Callable[[str], object], str] = {
    _DATE: _DAY,
    **{test: _datetime(fsp) for fsp, test in _DATETIMES.items()},
    **{test: _TIMESTAMP_YEARS + _datetime(fsp) for fsp, test in _TIMESTAMPS.items()},
}
"""Each date and time test's pattern: none matches a character but digits, ``-``, `` ``,
``:`` and ``.``, so none matches ``JOINED_SEPARATOR``."""
JOINED_SEPARATOR = "\x00"
"""What ``joined_test``'s texts are joined by."""
_JOINED: dict[tuple[str, ...], Callable[[str], object]] = {}
_JOINED_KEPT = 256


def joinable(test: Callable[[str], object]) -> bool:
    """Whether ``test`` is one of this module's date and time tests (``joined_test`` takes it)."""
    return test in _PATTERNS


def joined_test(tests: Sequence[Callable[[str], object]]) -> Callable[[str], object] | None:
    """One test of several texts joined by ``JOINED_SEPARATOR``, each by its own of ``tests``.

    It matches ``JOINED_SEPARATOR.join(texts)`` exactly when each test matches its text: no
    pattern matches the separator, so a match cuts the joined text where the texts were
    joined. One call instead of one a text, for a reader of several date and time columns.
    ``None`` unless every test is one of this module's date and time tests
    (``date_test``, ``datetime_test``).
    """
    patterns = tuple(_PATTERNS.get(test, "") for test in tests)
    if "" in patterns:
        return None
    joined = _JOINED.get(patterns)
    if joined is None:
        if len(_JOINED) >= _JOINED_KEPT:
            _JOINED.clear()
        text = JOINED_SEPARATOR.join(f"(?:{pattern})" for pattern in patterns)
        joined = _JOINED[patterns] = re.compile(text).fullmatch
    return joined


def is_date(raw: str) -> bool:
    """Whether ``raw`` is ``YYYY-MM-DD`` of a day that exists (years 1–9999)."""
    return _DATE(raw) is not None


def is_datetime(raw: str, fsp: int | None = None) -> bool:
    """Whether ``raw`` is ``YYYY-MM-DD HH:MM:SS[.f]`` of a day that exists and a time of day.

    ``fsp``: exactly that many fractional digits (0: none); ``None``: none or 1 to 6.
    """
    test = _DATETIMES.get(fsp)
    return test is not None and test(raw) is not None


def date_test() -> Callable[[str], object]:
    """``is_date`` as one call that answers a truthy value or a falsy one."""
    return _DATE


def datetime_test(fsp: int | None, *, timestamp: bool = False) -> Callable[[str], object]:
    """``is_datetime(raw, fsp)`` as one call that answers a truthy value or a falsy one.

    ``timestamp``: and the year 1970–2037 as well (TIMESTAMP's years: the readers of
    TIMESTAMP columns ask this one test).
    """
    test = (_TIMESTAMPS if timestamp else _DATETIMES).get(fsp)
    return _never if test is None else test


def _never(raw: str) -> bool:
    """A precision without a pattern: nothing is proven here (module docstring)."""
    del raw
    return False


def json_reads(raw: str) -> bool | None:
    """Whether orjson reads ``raw`` as JSON.

    ``None`` when orjson is not installed, or the text nests too deep for its verdict to be
    the full path's.
    """
    loads = json_accelerator()
    if loads is None or raw.count("[") + raw.count("{") > MAX_JSON_OPENINGS:
        return None
    try:
        loads(raw)  # orjson reads text as well as bytes
    except ValueError:
        return False
    return True
