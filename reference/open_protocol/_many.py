r"""Column readers over many values at once: one column of a batch's images, read in C loops.

``many(type_code, flags)`` is the batch form of ``_readers.reader``: it takes the parsed
``v`` members of one column kind across a message's images (``None`` for a JSON ``null``)
and returns the list ``[None if v is None else reader(v) for v in values]``; it raises what
that comprehension raises (``ValueError``, ``Invalid``), and nothing else.

Each kind's batch test is sufficient, never necessary, as the single readers' are (their
module states the rules): it holds every value of the column to the single reader's fast
test with a few C-level passes (``set(map(type, ...))``, ``min``/``max``, one pattern over
the values joined by newlines, ``map`` of a C constructor), and returns the values read
alike; when any value fails it, the whole column is read value by value by the single
reader, which words errors and flags invalid values as before.

A pattern over joined values holds each value to it only when no value holds the separator:
every pattern here excludes ``\n``, and the joined text must hold exactly one ``\n`` between
two values (``_each_matches``).
"""

from __future__ import annotations

import binascii
import re
import sys
from codecs import escape_decode
from collections import deque
from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any

from ticdc_conformance.reference._fast_checks import (
    DATE_PATTERN,
    DATETIME_PATTERN,
    MAX_JSON_OPENINGS,
    TIMESTAMP_PATTERN,
)
from ticdc_conformance.reference._gojson import json_accelerator
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    TEXT_TYPES,
    UINT64,
)
from ticdc_conformance.reference.open_protocol._columns import form_of, is_known
from ticdc_conformance.reference.open_protocol._readers import (
    DECIMAL,
    DECIMAL_CHARACTERS,
    INTEGRAL_HIGH,
    INTEGRAL_LOW,
    QUOTED,
    TIME,
    Reader,
    integer_bounds,
    reader,
)
from ticdc_conformance.reference.tables import BINARY_FLAG
from ticdc_conformance.reference.validation import code_check
from ticdc_conformance.reference.validity import FLOAT32_MAX, ColumnType
from ticdc_conformance.reference.values import (
    Value,
    valid_decimal,
    valid_timestamp,
)

__all__ = ["Many", "many"]

Values = Sequence[Any]
"""Parsed ``v`` members (``Json``): each test learns their types at run time."""
Many = Callable[[Values], list[Value]]
Test = Callable[[Values], list[Value] | None]
"""A kind's batch test: the values read, or ``None`` when one of them fails it."""

_SEEN: dict[tuple[int, int], Many | None] = {}
_MAX_KINDS = 4096
"""Kinds kept: the flags are the message's to choose, the memory is not."""


def many(type_code: int, flags: int) -> Many | None:
    """The batch reader of a column kind; ``None`` where ``reader`` has none."""
    key = (type_code, flags)
    if key in _SEEN:
        return _SEEN[key]
    read = reader(type_code, flags)
    made = None if read is None else _batch(read, _test(type_code, flags))
    if len(_SEEN) < _MAX_KINDS:
        _SEEN[key] = made
    return made


def _batch(read: Reader, test: Test | None) -> Many:
    def each(values: Values) -> list[Value]:
        return [None if value is None else read(value) for value in values]

    if test is None:
        return each

    def read_many(values: Values) -> list[Value]:
        got = test(values)
        return each(values) if got is None else got

    return read_many


def _test(type_code: int, flags: int) -> Test | None:
    form = form_of(type_code)
    checked = code_check(type_code, flags)
    if form is None or checked is None or flags not in UINT64 or not is_known(type_code):
        return None
    ctype = checked[0]
    if ctype.length is not None or ctype.scale is not None or ctype.elements is not None:
        return None  # as _readers._make: a type code states none of them
    make = _TESTS.get(form)
    return None if make is None else make(ctype, flags)


_INT, _FLOAT, _STR = {int}, {float}, {str}


def _integer(ctype: ColumnType, flags: int) -> Test | None:
    del flags
    allowed = integer_bounds(ctype)
    if allowed is None:
        return None
    low, high = allowed.start, allowed.stop

    def test(values: Values) -> list[Value] | None:
        # exact ints only (no bool, no float), all inside the range
        if set(map(type, values)) == _INT and low <= min(values) and max(values) < high:
            return list(values)
        return None

    return test


def _float(ctype: ColumnType, flags: int) -> Test | None:
    del flags
    largest = {"float": FLOAT32_MAX, "double": sys.float_info.max}.get(ctype.name)
    if largest is None:
        return None
    smallest = -largest

    def test(values: Values) -> list[Value] | None:
        types = set(map(type, values))
        if types == _FLOAT:
            if smallest <= min(values) and max(values) <= largest:
                return list(values)
        elif types == _INT and min(values) > INTEGRAL_LOW and max(values) < INTEGRAL_HIGH:
            return list(map(float, values))
        return None

    return test


def _joined(values: Values, separator: str = "") -> str | None:
    """The values joined, when every one is a string."""
    try:
        return separator.join(values)
    except TypeError:  # a value that is not a string (NULL among them)
        return None


def _string(ctype: ColumnType, flags: int) -> Test | None:
    if flags & BINARY_FLAG:
        if ctype.name not in BINARY_TYPES:
            return None

        def test_bytes(values: Values) -> list[Value] | None:
            text = _joined(values, "\n")
            if text is None or not text.isascii() or text.count("\n") != len(values) - 1:
                return None  # not all text, not ASCII, or a value holding a newline
            if "\\" not in text and '"' not in text and text.replace("\n", "").isprintable():
                # every value plain printable ASCII: Go quoted none of it, its bytes are it
                return list(map(str.encode, values))
            if _QUOTED_VALUES.fullmatch(text):
                return list(map(_first, map(escape_decode, values)))
            return None

        return test_bytes
    if ctype.name not in TEXT_TYPES:
        return None

    def test_text(values: Values) -> list[Value] | None:
        text = _joined(values)
        return list(values) if text is not None and text.isascii() else None

    return test_text


_first = itemgetter(0)
_a2b_base64 = binascii.a2b_base64


def _base64(ctype: ColumnType, flags: int) -> Test | None:
    if ctype.name not in TEXT_TYPES | BINARY_TYPES or not ctype.raw_text:
        return None
    binary = bool(flags & BINARY_FLAG)

    def test(values: Values) -> list[Value] | None:
        if set(map(type, values)) != _STR:
            return None
        try:
            # the keyword passed as it is: a partial holding it copies it into a dict a call
            data: list[bytes] = [_a2b_base64(value, strict_mode=True) for value in values]
            return list(data) if binary else list(map(bytes.decode, data))
        except ValueError:  # binascii.Error, or text that is not UTF-8: value by value
            return None

    return test


def _each_matches(pattern: re.Pattern[str], values: Values) -> bool:
    """Whether every value is a string ``pattern`` (which never matches a newline) matches.

    ``pattern`` is the value's own pattern repeated, newline-separated, over the joined text.
    """
    text = _joined(values, "\n")
    return (
        text is not None
        and text.count("\n") == len(values) - 1
        and pattern.fullmatch(text) is not None
    )


def _repeated(one: str) -> re.Pattern[str]:
    return re.compile(f"{one}(?:\n{one})*")


_QUOTED_VALUES = _repeated(QUOTED.pattern)
"""``_readers.QUOTED`` (which never matches a newline) repeated over newline-joined values."""
_DATES = _repeated(DATE_PATTERN)
_DATETIMES = _repeated(DATETIME_PATTERN)
_TIMESTAMPS = _repeated(TIMESTAMP_PATTERN)
"""The fast checks' own patterns (days per month, leap years, TIMESTAMP's years), repeated."""
_TIMES = _repeated(TIME.pattern)


def _text(ctype: ColumnType, flags: int) -> Test | None:
    del flags
    pattern = _PATTERNS.get(ctype.name)
    if pattern is not None:

        def test_texts(values: Values) -> list[Value] | None:
            return list(values) if _each_matches(pattern, values) else None

        return test_texts
    if ctype.name != "json":
        return None

    def test_json(values: Values) -> list[Value] | None:
        return list(values) if _json_reads(values) else None

    return test_json


_PATTERNS = {"date": _DATES, "datetime": _DATETIMES, "time": _TIMES}


def _timestamp(ctype: ColumnType, flags: int) -> Test | None:
    del ctype, flags

    def test(values: Values) -> list[Value] | None:
        return timestamp_values(values) if _each_matches(_TIMESTAMPS, values) else None

    return test


def timestamp_values(texts: Sequence[str]) -> list[Value]:
    """``TimestampValue(text, None)`` of each text, which has the value's shape."""
    return list(map(valid_timestamp, texts))


def decimal_values(texts: Sequence[str]) -> list[Value]:
    """``DecimalValue(text)`` of each text, which has the value's shape."""
    return list(map(valid_decimal, texts))


def _json_reads(values: Values) -> bool:
    """Whether every value is a string orjson reads (``_fast_checks.json_reads`` of each)."""
    loads = json_accelerator()
    text = _joined(values)
    if loads is None or text is None or text.count("[") + text.count("{") > MAX_JSON_OPENINGS:
        return False  # the values together hold at least as many as any one of them
    try:
        deque(map(loads, values), 0)
    except ValueError:
        return False
    return True


_DECIMALS = _repeated(DECIMAL.pattern)


def _decimal(ctype: ColumnType, flags: int) -> Test | None:
    del ctype, flags

    def test(values: Values) -> list[Value] | None:
        if _each_matches(_DECIMALS, values) and max(map(len, values)) <= DECIMAL_CHARACTERS:
            return decimal_values(values)
        return None

    return test


_TESTS: dict[str, Callable[[ColumnType, int], Test | None]] = {
    "integer": _integer,
    "float": _float,
    "string": _string,
    "base64": _base64,
    "text": _text,
    "timestamp": _timestamp,
    "decimal": _decimal,
}
