"""One reader per Craft column kind: the decoder's value and validity in one step.

A column kind is a type code and its flag bits; the decoder asks ``reader`` once per kind and
keeps the answer. A reader takes a column's value bytes (never NULL's ``None``) and returns
the ``Value`` ``_values.decode_value`` returns for them, raises the ``ValueError`` that raises,
and raises ``Invalid`` (the value and the type it fails attached) when the value is one TiCDC
cannot have written for the kind (``validation.code_check``, docs/errors.md).

Each reader first tries a test that is sufficient, never necessary: bytes that pass it are read
as ``decode_value`` reads them, and the value is valid under ``validity`` for the type a type
code and flags state (no declared length, scale or members, ground truth §3.3). Everything
else takes ``decode_value`` and the validity check themselves, so every outcome is theirs:

* integers, YEAR, BIT, ENUM, SET: a whole uvarint (ZigZag where the column's reader takes one)
  of at most 10 bytes, the 10th at most 1 (64 bits), whose value lies inside the type's range
  (YEAR 1901–2155, BIT and SET 64 bits, ENUM indexes up to 65,535);
* FLOAT, DOUBLE: 8 bytes of a float64 of at most float32's, float64's largest magnitude;
* CHAR, VARCHAR, TEXT types: ASCII bytes; BINARY, VARBINARY, BLOB types (BinaryFlag): any bytes;
* DATE, DATETIME, TIME: ASCII text of a pattern no wider than validity's (days that exist,
  February 29 in leap years only, hours up to 23 or 99 for TIME, at most 6 fractional digits);
  TIMESTAMP: the same, years 1970–2037;
* DECIMAL: decimal text of at most 31 characters (so at most 65 digits and 30 decimals);
* JSON: UTF-8 text that ``_fast_checks.json_reads`` reads (with orjson installed).
"""

from __future__ import annotations

import re
import struct
import sys
from collections.abc import Callable
from typing import ClassVar

from ticdc_conformance.reference._fast_checks import (
    DATE_BYTES,
    DATETIME_BYTES,
    TIMESTAMP_BYTES,
    json_reads,
)
from ticdc_conformance.reference.craft._values import decode_value
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    INTEGER_TYPES,
    TEXT_TYPES,
    UINT64_TYPES,
    integer_range,
)
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG
from ticdc_conformance.reference.validation import code_check
from ticdc_conformance.reference.validity import FLOAT32_MAX, ColumnType
from ticdc_conformance.reference.values import (
    Value,
    valid_decimal,
    valid_timestamp,
)

__all__ = [
    "DECIMAL_CHARACTERS",
    "DECIMAL_TEXT",
    "FLOAT64",
    "KINDS_SEEN",
    "LARGEST_FLOATS",
    "TEXT_TESTS",
    "Invalid",
    "Known",
    "Reader",
    "bulk_reader",
    "reader",
    "stated",
]

Reader = Callable[[bytes], Value]


class Invalid(Exception):  # noqa: N818 - a signal to the decoder, not an error it shows
    """The value read is one TiCDC cannot have written for the column's kind."""

    def __init__(self, value: Value, ctype: ColumnType) -> None:
        super().__init__()
        self.value = value
        self.ctype = ctype


KINDS_SEEN: dict[tuple[int, int], Reader] = {}
"""``reader``'s answers so far, by type code and flags: the decoder looks here first."""
_MAX_KINDS = 4096
"""Kinds kept: the flags are the message's to choose, the memory is not."""
FLOAT64 = struct.Struct("<d")


def reader(type_code: int, flags: int) -> Reader:
    """The reader of a column kind."""
    key = (type_code, flags)
    made = KINDS_SEEN.get(key)
    if made is None:
        made = _make(type_code, flags)
        if len(KINDS_SEEN) < _MAX_KINDS:
            KINDS_SEEN[key] = made
    return made


def bulk_reader(type_code: int, flags: int) -> Reader:
    """``reader``'s answer for ``bytes`` values (slices of a ``bytes`` message).

    A C function where one decides as the reader does (``_c_string``); for integer kinds, the
    reader behind a table of the values it read from one or two bytes (``Known``), looked up
    in C; else the reader.
    """
    key = (type_code, flags)
    made = _BULK_SEEN.get(key)
    if made is None:
        made = _bulk(type_code, flags)
        if len(_BULK_SEEN) < _MAX_KINDS:
            _BULK_SEEN[key] = made
    return made


_BULK_SEEN: dict[tuple[int, int], Reader] = {}


def _bulk(type_code: int, flags: int) -> Reader:
    checked = code_check(type_code, flags)
    if checked is not None and stated(checked[0]):
        ctype = checked[0]
        fast = _c_string(ctype, flags)
        if fast is not None:
            return fast
        if ctype.name in INTEGER_TYPES or ctype.name in _OTHER_INTEGERS:
            return Known(reader(type_code, flags)).__getitem__
    return reader(type_code, flags)


class Known(dict[bytes, Value]):
    """A reader's values of data of one or two bytes, each kept once read.

    The reader is a function of the bytes alone and its integers are immutable, so a kept
    value is the one it would read again; data it refuses raises as it raises, and nothing is
    kept. All tables together keep ``room`` values at most.
    """

    __slots__ = ("read",)
    room: ClassVar[int] = 1 << 15

    def __init__(self, read: Reader) -> None:
        super().__init__()
        self.read = read

    def __missing__(self, data: bytes) -> Value:
        value = self.read(data)
        if len(data) <= _KEPT_BYTES and Known.room > 0:
            self[data] = value
            Known.room -= 1
        return value


_KEPT_BYTES = 2


def stated(ctype: ColumnType) -> bool:
    """Whether a type code and flags state all of ``ctype`` (no length, scale or members)."""
    return ctype.length is None and ctype.scale is None and ctype.elements is None


def _c_string(ctype: ColumnType, flags: int) -> Reader | None:
    """The C function that reads a string kind's ``bytes`` as ``_string``'s reader does.

    Binary (BinaryFlag, binary types): ``bytes``, which gives the bytes themselves. Text (no
    BinaryFlag, text types): ``bytes.decode``, whose text is ``decode_value``'s and valid under
    ``validity`` (no declared length); it raises at bytes that are not UTF-8, which
    ``decode_value`` keeps as bytes: the caller's full read takes those.
    """
    if flags & BINARY_FLAG:
        return bytes if ctype.name in BINARY_TYPES else None
    return bytes.decode if ctype.name in TEXT_TYPES else None


def _general(type_code: int, flags: int) -> Reader:
    checked = code_check(type_code, flags)

    def read(data: bytes) -> Value:
        value = decode_value(type_code, data, flags)
        if checked is not None and checked[1](value, checked[0]) is not None:
            raise Invalid(value, checked[0])
        return value

    return read


def _make(type_code: int, flags: int) -> Reader:
    general = _general(type_code, flags)
    checked = code_check(type_code, flags)
    if checked is None:
        return general
    ctype = checked[0]
    if not stated(ctype):
        return general  # a type code states none of them; kept for safety
    for make in (_integer, _float, _string, _text, _timestamp, _decimal, _json):
        fast = make(ctype, flags, general)
        if fast is not None:
            return fast
    return general


_OTHER_INTEGERS: dict[str, range] = {
    "year": range(1901, 2156),
    "bit": range(2**64),
    "enum": range(65536),
    "set": range(2**64),
}
"""Ranges ``validity`` holds a value in when a type code and flags state the column."""


def _integer(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    name = ctype.name
    allowed = _OTHER_INTEGERS.get(name)
    if name in INTEGER_TYPES and ctype.unsigned is not None:
        allowed = integer_range(name, unsigned=ctype.unsigned)
    if allowed is None:
        return None
    # the wire form _values reads: YEAR and signed integers ZigZag, the rest plain uvarints
    if name == "year" or (name in INTEGER_TYPES and not flags & UNSIGNED_FLAG):
        zigzag = True
    elif name in UINT64_TYPES or name in INTEGER_TYPES:
        zigzag = False
    else:
        return None
    low, high = allowed.start, allowed.stop

    def read(data: bytes) -> Value:
        last = len(data) - 1
        # 10 bytes at most, the 10th at most 1: no overflow past 64 bits (as read_uvarint)
        if 0 <= last < 10 and data[last] < (0x80 if last < 9 else 2):
            value = data[last]
            for index in range(last - 1, -1, -1):
                byte = data[index]
                if byte < 0x80:  # a uvarint ending early: bytes after it
                    return general(data)
                value = value << 7 | byte & 0x7F
            if zigzag:
                value = (value >> 1) ^ -(value & 1)
            if low <= value < high:
                return value
        return general(data)

    return read


LARGEST_FLOATS = {"float": FLOAT32_MAX, "double": sys.float_info.max}
"""The largest finite value of each floating-point type."""
TEXT_TESTS = {"date": DATE_BYTES, "datetime": DATETIME_BYTES}
"""The test of the bytes of each date and time type Craft holds as text."""


def _float(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del flags
    largest = LARGEST_FLOATS.get(ctype.name)
    if largest is None:
        return None
    smallest = -largest
    unpack = FLOAT64.unpack

    def read(data: bytes) -> Value:
        if len(data) == 8:  # a float64
            value: float = unpack(data)[0]
            if smallest <= value <= largest:  # NaN fails both
                return value
        return general(data)

    return read


def _string(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    fast = _c_string(ctype, flags)
    if fast is None:
        return None
    if fast is bytes:

        def read_bytes(data: bytes) -> Value:
            if type(data) is bytes:
                return data
            return general(data)

        return read_bytes

    def read_text(data: bytes) -> Value:
        if data.isascii():
            return data.decode()
        return general(data)

    return read_text


_TIME = re.compile(rb"-?[0-9]{2}:[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?")


def _text(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del flags
    if ctype.name == "time":
        matches = _TIME.fullmatch

        def read_time(data: bytes) -> Value:
            if matches(data):
                return data.decode()
            return general(data)

        return read_time
    test = TEXT_TESTS.get(ctype.name)
    if test is None:
        return None

    def read(data: bytes) -> Value:
        if test(data):  # a match is ASCII: it decodes as it is
            return data.decode()
        return general(data)

    return read


def _timestamp(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del flags
    if ctype.name != "timestamp":
        return None

    def read(data: bytes) -> Value:
        if TIMESTAMP_BYTES(data):  # years 1970-2037
            # the text has TimestampValue's own shape (a date-time): built directly
            return valid_timestamp(data.decode())
        return general(data)

    return read


DECIMAL_TEXT = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?").fullmatch
"""``DecimalValue``'s own pattern, as a test of bytes."""
DECIMAL_CHARACTERS = 31


def _decimal(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del flags
    if ctype.name != "decimal":
        return None
    matches = DECIMAL_TEXT

    def read(data: bytes) -> Value:
        if len(data) <= DECIMAL_CHARACTERS and matches(data):
            return valid_decimal(data.decode())
        return general(data)

    return read


def _json(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del flags
    if ctype.name != "json":
        return None

    def read(data: bytes) -> Value:
        try:
            text = data.decode()
        except UnicodeDecodeError:
            return general(data)
        if json_reads(text):
            return text
        return general(data)

    return read
