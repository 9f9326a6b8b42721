"""Values TiDB can hold in a column, for the strategies of ``generators/strategies.py``.

Inside what TiDB holds (ranges, fsp digits, declared lengths, ENUM/SET members), with the
traps of ground truth §1.4: integer extremes, HTML characters, U+2028, control characters,
text that is not valid UTF-8, every byte value in binary columns, zero dates.
"""

from __future__ import annotations

import datetime as dt

from hypothesis import strategies as st

from ticdc_conformance.reference import ColumnInfo, DecimalValue, TimestampValue, Value
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    INTEGER_TYPES,
    TEXT_TYPES,
    integer_range,
)

__all__ = ["DECLARED_LENGTHS", "TEXTS", "column_values", "non_null_values"]

DECLARED_LENGTHS = {"char": 255, "binary": 255, "varchar": 16383, "varbinary": 65535}
"""The types with a declared length, and the longest each declares."""


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


_trap_text = st.sampled_from(["<a&b>", "\u2028", "\b\f\x00\x1f", '"\\', "\x7f", "测试", "é"])
TEXTS = st.one_of(_trap_text, st.text(max_size=20))
_invalid_utf8 = st.binary(min_size=1, max_size=8).filter(lambda b: not _is_utf8(b))


def _decimal_texts(precision: int, scale: int) -> st.SearchStrategy[Value]:
    limit = 10 ** (precision - scale) - 1
    whole = st.integers(-limit, limit) | st.sampled_from([limit, -limit, 0])
    fraction = st.integers(0, 10**scale - 1) | st.just(10**scale - 1)
    return st.builds(
        lambda w, f: DecimalValue(f"{w}.{f:0{scale}d}" if scale else str(w)), whole, fraction
    )


def _time_text(sign: str, hours: int, minutes: int, seconds: int, fraction: str) -> str:
    """A TIME as TiDB prints it: a signed count of nanoseconds, so a zero has no minus sign.

    TIME ends at 838:59:59 exactly: there, the fraction is all zeros.
    """
    if (hours, minutes, seconds) == (838, 59, 59):
        fraction = fraction[:1] + "0" * (len(fraction) - 1)
    if not (hours or minutes or seconds or fraction.strip(".0")):
        sign = ""
    return f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}{fraction}"


def _fraction(fsp: int) -> st.SearchStrategy[str]:
    if not fsp:
        return st.just("")
    return st.integers(0, 10**fsp - 1).map(lambda f: f".{f:0{fsp}d}")


# naive wall-clock times: Hypothesis draws naive datetimes between naive bounds
_TIMESTAMP_RANGE = (dt.datetime(1970, 1, 1, 0, 0, 1), dt.datetime(2038, 1, 19, 3, 14, 7))  # noqa: DTZ001 - TIMESTAMP bounds as naive UTC, as MySQL states them


def _timestamps(fsp: int) -> st.SearchStrategy[str]:
    """TIMESTAMP text in TiDB's range (UTC, as the server zone here), or the zero value."""
    in_range = st.builds(
        lambda d, f: d.strftime("%Y-%m-%d %H:%M:%S") + f,
        st.datetimes(*_TIMESTAMP_RANGE) | st.sampled_from(_TIMESTAMP_RANGE),
        _fraction(fsp),
    )
    return in_range | st.just("0000-00-00 00:00:00" + _zeros(fsp))


def _zeros(fsp: int) -> str:
    return "." + "0" * fsp if fsp else ""


def _datetimes(fsp: int) -> st.SearchStrategy[str]:
    return st.builds(
        lambda d, f: d.strftime("%Y-%m-%d %H:%M:%S") + f,
        st.datetimes(),
        _fraction(fsp),
    ).map(lambda text: text.zfill(19 + (fsp and fsp + 1)))


def column_values(column: ColumnInfo) -> st.SearchStrategy[Value]:
    """Values TiDB can hold in ``column`` (NULL only when the column is nullable)."""
    base = non_null_values(column)
    return st.one_of(st.none(), base) if column.nullable else base


def non_null_values(column: ColumnInfo) -> st.SearchStrategy[Value]:
    kind = column.type
    fsp = column.decimal or 0
    if kind in INTEGER_TYPES:
        values = integer_range(kind, unsigned=column.unsigned)
        low, high = values.start, values.stop - 1
        # the edges consumers get wrong: 2^63 and 2^64 - 1 for BIGINT UNSIGNED, both ends
        edges = [low, high, 0] + ([2**63] if kind == "bigint" and column.unsigned else [])
        return st.integers(low, high) | st.sampled_from(edges)
    declared = column.length if kind in DECLARED_LENGTHS else None  # CHAR(n): n characters at most
    if kind in TEXT_TYPES:
        if declared is None:
            return st.one_of(TEXTS, _invalid_utf8, st.just(""))
        n = declared
        raw = _invalid_utf8.filter(lambda b: len(b) <= 4 * n)  # 4: utf8mb4's widest character
        return st.one_of(TEXTS.map(lambda t: t[:n]), raw, st.just(""))
    if kind in BINARY_TYPES:
        every_byte = bytes(range(256))[:declared]
        return st.one_of(st.binary(max_size=min(24, declared or 24)), st.just(every_byte))
    simple: dict[str, st.SearchStrategy[Value]] = {
        "float": st.floats(width=32, allow_nan=False, allow_infinity=False),
        "double": st.floats(allow_nan=False, allow_infinity=False),
        "date": st.one_of(
            st.dates().map(lambda d: d.strftime("%Y-%m-%d").zfill(10)), st.just("0000-00-00")
        ),
        "datetime": _datetimes(fsp) | st.just("0000-00-00 00:00:00" + _zeros(fsp)),
        "timestamp": _timestamps(fsp).map(lambda text: TimestampValue(text, None)),
        "time": st.builds(
            _time_text,
            st.sampled_from(["", "-"]),
            st.integers(0, 838) | st.sampled_from([24, 838]),
            st.integers(0, 59),
            st.integers(0, 59),
            _fraction(fsp),
        ),
        "year": st.one_of(st.just(0), st.integers(1901, 2155)),
        "enum": st.integers(0, len(column.elements or ())),
        "set": st.integers(0, 2 ** len(column.elements or ()) - 1),
        "bit": st.integers(0, 2 ** (column.length or 1) - 1),
        "json": st.sampled_from(['{"key1": "value1"}', "[1, 2]", '"<&>"', "null", "3.5"]),
        "vector": st.lists(st.integers(-5, 5), max_size=4).map(
            lambda xs: "[" + ",".join(map(str, xs)) + "]"
        ),
    }
    if kind == "decimal":
        return _decimal_texts(column.length or 65, fsp)
    return simple[kind]
