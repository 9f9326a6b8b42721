"""One reader per schema column: ``SimpleDecoder``'s value and validity in one step (§4.3).

``column_quick`` is asked once per column of a table schema, and the decoder keeps the
answer: the column's reader and its fast test as a ``Quick`` form, which ``_compiled`` writes
out inline (``column_reader`` is the reader alone). A reader takes a raw DML value and
returns the ``Value`` ``_values.read_value`` returns for it (``None`` for ``null``), raises the
``ValueError`` that raises, and raises ``Invalid`` (the value attached) when the value is one
TiCDC cannot have written for the column's stated type (``validity``, docs/errors.md).

Readers first try a test that is sufficient, never necessary: a value that passes it is read
as ``read_value`` reads it and is valid under ``validity`` for the type the schema states
(declared lengths, scales and members included). Everything else takes ``read_value`` and the
validity check themselves, so every outcome is theirs:

* integers, YEAR, BIT, ENUM, SET: ASCII decimal digits (a leading ``-``), in Avro a ``long``
  (BIGINT UNSIGNED: the ``UnsignedBigint`` record), whose number lies in both the reader's
  range and validity's (YEAR 1901–2155, BIT below ``2**width``, ENUM indexes up to the
  members' count, SET bitmasks of as many bits as members);
* FLOAT, DOUBLE: positional decimal text of at most float32's largest magnitude (FLOAT) or
  not infinite (DOUBLE); in Avro a finite ``double``, and for FLOAT a float32 value whose
  shortest text as a float64 has at most 7 digits and no exponent (then it is also its
  shortest float32 text: no shorter decimal lies within half a float32 step of it);
* DECIMAL: decimal text of at most 31 characters, within the declared scale and precision;
* text types: ASCII text within the declared length; binary strings: base64 that
  ``binascii``'s strict mode reads (as ``b64decode(validate=True)`` does), in Avro ``bytes``,
  within the length;
* DATE, DATETIME: a fixed shape that ``date``/``datetime.fromisoformat`` reads (so a day that
  exists), hours up to 23, exactly fsp fractional digits when fsp is stated, else up to 6;
  TIMESTAMP: the same for the object's text, years 1970–2037;
* JSON: text orjson reads (where installed), holding at most 64 ``[`` and ``{``.
"""

from __future__ import annotations

import binascii
import re
import sys
from collections.abc import Callable
from math import frexp
from typing import NamedTuple

from ticdc_conformance.reference._fast_checks import (
    MAX_FSP,
    date_test,
    datetime_test,
    is_date,
    is_datetime,
    json_reads,
)
from ticdc_conformance.reference.mysql import INTEGER_TYPES, integer_range
from ticdc_conformance.reference.simple._values import READERS, Raw, Unsigned, reader_of
from ticdc_conformance.reference.tables import ColumnInfo
from ticdc_conformance.reference.validity import FLOAT32_MAX, ColumnType, check_of
from ticdc_conformance.reference.values import (
    TimestampValue,
    Value,
    valid_decimal,
)

__all__ = ["Invalid", "Quick", "Reader", "column_quick", "column_reader", "timestamp_test"]

Reader = Callable[[Raw], Value]
"""A raw value → its value (``ValueError`` if it does not fit, ``Invalid``)."""


class Quick(NamedTuple):
    """A reader's fast test in a form ``_compiled`` writes out inline, by name.

    ``form`` names the test, ``args`` are its objects: ``digits`` (low, high), ``float``
    (fullmatch, largest), ``decimal`` (fullmatch, longest text), ``ascii`` and ``base64``
    (limit or ``None``), ``match`` (a test such as a fullmatch: the text is the value),
    ``long`` and ``unsigned`` (low, high), ``double`` (largest), ``bytes`` (limit or
    ``None``), ``timestamp`` (test of the text); ``_plan`` adds ``object``, a JSON TIMESTAMP
    object's (test of its text). Where the test passes, the form's value is the reader's
    answer.
    """

    form: str
    args: tuple[object, ...] = ()


Made = tuple[Reader, Quick | None]


class Invalid(Exception):  # noqa: N818 - a signal to the decoder, not an error it shows
    """The value read is one TiCDC cannot have written for the column's stated type."""

    def __init__(self, value: Value) -> None:
        super().__init__()
        self.value = value


def column_reader(column: ColumnInfo, ctype: ColumnType, *, avro: bool) -> Reader:
    """The reader of ``column``'s non-null values, ``ctype`` being its stated type."""
    return column_quick(column, ctype, avro=avro)[0]


def column_quick(column: ColumnInfo, ctype: ColumnType, *, avro: bool) -> Made:
    """``column_reader`` and its fast test's ``Quick`` form (``None``: none to write out)."""
    general = _general(column, ctype, avro)
    if reader_of(column) is not READERS.get(column.type):
        return general, None  # a type code naming another type: the general path decides
    name = ctype.name
    if name in _FLOATS:
        return (_avro_float if avro else _float)(name, general)
    if name in _INTEGERS:
        allowed = _integers(column, ctype)
        if allowed is None:
            return general, None
        if not avro:
            return _integer(allowed, general)
        return _avro_integer(allowed, general, unsigned=name == "bigint" and column.unsigned)
    make = _FAST.get(name)
    fast = None if make is None else make(column, ctype, general, avro)
    return (general, None) if fast is None else fast


def _general(column: ColumnInfo, ctype: ColumnType, avro: bool) -> Reader:
    read = reader_of(column)
    check = check_of(ctype)

    def general(raw: Raw) -> Value:
        if raw is None:
            return None
        value = read(column, raw, avro)
        if value is not None and check(value, ctype):
            raise Invalid(value)
        return value

    return general


_INTEGERS = INTEGER_TYPES | {"year", "bit", "enum", "set"}
_FLOATS = {"float": FLOAT32_MAX, "double": sys.float_info.max}


def _integers(column: ColumnInfo, ctype: ColumnType) -> range | None:
    """The numbers both ``_values``' reader and ``validity`` accept for the column."""
    name = ctype.name
    if name != column.type:
        return None  # a twin name (binary charset): the general path decides
    if name in INTEGER_TYPES:
        valid = None if ctype.unsigned is None else integer_range(name, unsigned=ctype.unsigned)
    elif name == "year":
        valid = range(1901, 2156)
    elif name == "bit":
        width = 64 if ctype.length is None else ctype.length
        valid = range(2**width) if 1 <= width <= 64 else None
    elif name == "enum":
        valid = range(65536 if ctype.elements is None else len(ctype.elements) + 1)
    else:
        valid = range(2 ** (64 if ctype.elements is None else len(ctype.elements)))
    if valid is None:
        return None
    read = integer_range(name, unsigned=column.unsigned)
    return range(max(valid.start, read.start), min(valid.stop, read.stop))


def _integer(allowed: range, general: Reader) -> Made:
    low, high = allowed.start, allowed.stop

    def read(raw: Raw) -> Value:
        # most numbers have no sign: no slice for them
        if (
            type(raw) is str
            and raw.isascii()
            and (raw.isdigit() or (raw[:1] == "-" and raw[1:].isdigit()))
        ):
            value = int(raw)
            if low <= value < high:
                return value
        return general(raw)

    return read, Quick("digits", (low, high))


def _avro_integer(allowed: range, general: Reader, *, unsigned: bool) -> Made:
    low, high = allowed.start, allowed.stop

    def read_long(raw: Raw) -> Value:
        if type(raw) is int and low <= raw < high:  # BIT, ENUM, SET: never wrapped then
            return raw
        return general(raw)

    def read_unsigned(raw: Raw) -> Value:
        if type(raw) is Unsigned and low <= raw.value < high:
            return raw.value
        return general(raw)

    if unsigned:
        return read_unsigned, Quick("unsigned", (low, high))
    return read_long, Quick("long", (low, high))


_POSITIONAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
"""Go's ``'f'`` format: the text ``_values`` reads for FLOAT and DOUBLE."""


def _float(name: str, general: Reader) -> Made:
    largest = _FLOATS[name]
    matches = _POSITIONAL.fullmatch

    def read(raw: Raw) -> Value:
        if type(raw) is str and matches(raw):
            value = float(raw)
            if -largest <= value <= largest:
                return value
        return general(raw)

    return read, Quick("float", (matches, largest))


_FLOAT32_MANTISSA = float(2**24)
_SHORT_FLOAT = 8
"""The longest ``repr`` of a FLOAT read as it is: 7 digits, the point and a sign."""


def _avro_float(name: str, general: Reader) -> Made:
    largest = _FLOATS[name]

    def read_double(raw: Raw) -> Value:
        if type(raw) is float and -largest <= raw <= largest:
            return raw
        return general(raw)

    def read_float(raw: Raw) -> Value:
        # fastavro widens the float32 to a float64; its shortest float32 text reads back as
        # the same float64 when that text is short (module docstring)
        if type(raw) is float and (frexp(raw)[0] * _FLOAT32_MANTISSA).is_integer():
            text = repr(raw)
            if len(text) <= _SHORT_FLOAT and "e" not in text and "n" not in text:
                return raw
        return general(raw)

    if name == "double":
        return read_double, Quick("double", (largest,))
    return read_float, None


_DECIMAL_CHARACTERS = 31
"""At most 30 digits: within DECIMAL's 65 digits and 30 decimals."""


def _decimal(column: ColumnInfo, ctype: ColumnType, general: Reader, avro: bool) -> Made | None:
    del column, avro
    scale = 30 if ctype.scale is None else ctype.scale
    whole = None if ctype.length is None else ctype.length - (ctype.scale or 0)
    if scale < 0 or (whole is not None and whole < 1):
        return None  # no positional text fits: the general path decides
    # the positional text with at most ``whole`` integer and ``scale`` fraction digits
    integral = "[0-9]+" if whole is None else f"[0-9]{{1,{whole}}}"
    fraction = f"(?:\\.[0-9]{{1,{scale}}})?" if scale > 0 else ""
    matches = re.compile(f"-?{integral}{fraction}").fullmatch

    def read(raw: Raw) -> Value:
        if type(raw) is str and len(raw) <= _DECIMAL_CHARACTERS and matches(raw):
            return valid_decimal(raw)  # the text has DecimalValue's own pattern
        return general(raw)

    return read, Quick("decimal", (matches, _DECIMAL_CHARACTERS))


_DECLARED = frozenset({"char", "varchar", "binary", "varbinary"})


def _limit(ctype: ColumnType) -> int | None:
    return ctype.length if ctype.name in _DECLARED else None


def _string(column: ColumnInfo, ctype: ColumnType, general: Reader, avro: bool) -> Made | None:
    limit = _limit(ctype)
    if column.effective_charset == "binary" and avro:

        def read_raw_bytes(raw: Raw) -> Value:
            if type(raw) is bytes and (limit is None or len(raw) <= limit):
                return raw
            return general(raw)

        return read_raw_bytes, Quick("bytes", (limit,))
    if column.effective_charset == "binary":
        decode = binascii.a2b_base64

        def read_bytes(raw: Raw) -> Value:
            if type(raw) is str:
                try:
                    data = decode(raw, strict_mode=True)
                except (binascii.Error, ValueError):
                    return general(raw)
                if limit is None or len(data) <= limit:
                    return data
            return general(raw)

        return read_bytes, Quick("base64", (limit,))

    def read_text(raw: Raw) -> Value:
        if type(raw) is str and raw.isascii() and (limit is None or len(raw) <= limit):
            return raw
        return general(raw)

    return read_text, Quick("ascii", (limit,))


def _temporal(column: ColumnInfo, ctype: ColumnType, general: Reader, avro: bool) -> Made | None:
    del column, avro
    fsp = ctype.scale
    if fsp is not None and fsp > MAX_FSP:
        return None
    if ctype.name == "date":

        def read_date(raw: Raw) -> Value:
            if type(raw) is str and is_date(raw):
                return raw
            return general(raw)

        return read_date, Quick("match", (date_test(),))
    if ctype.name == "datetime":

        def read_datetime(raw: Raw) -> Value:
            if type(raw) is str and is_datetime(raw, fsp):
                return raw
            return general(raw)

        return read_datetime, Quick("match", (datetime_test(fsp),))

    test = datetime_test(fsp, timestamp=True)

    def read_timestamp(raw: Raw) -> Value:
        if type(raw) is TimestampValue and test(raw.text):
            return raw
        return general(raw)

    return read_timestamp, Quick("timestamp", (test,))


def timestamp_test(column: ColumnInfo, ctype: ColumnType) -> Callable[[str], object] | None:
    """The test a TIMESTAMP column's reader returns a ``TimestampValue`` as it is after.

    ``None`` when the column's reader has no such test. Text that passes it also has
    ``TimestampValue``'s own form.
    """
    if ctype.name != "timestamp" or reader_of(column) is not READERS.get(column.type):
        return None
    fsp = ctype.scale
    return None if fsp is not None and fsp > MAX_FSP else datetime_test(fsp, timestamp=True)


def _json(column: ColumnInfo, ctype: ColumnType, general: Reader, avro: bool) -> Made | None:
    del column, ctype, avro

    def read(raw: Raw) -> Value:
        if type(raw) is str and json_reads(raw):
            return raw
        return general(raw)

    return read, Quick("match", (json_reads,))


_FAST: dict[str, Callable[[ColumnInfo, ColumnType, Reader, bool], Made | None]] = {
    **dict.fromkeys(("char", "varchar", "binary", "varbinary"), _string),
    **dict.fromkeys(("tinytext", "text", "mediumtext", "longtext"), _string),
    **dict.fromkeys(("tinyblob", "blob", "mediumblob", "longblob"), _string),
    **dict.fromkeys(("date", "datetime", "timestamp"), _temporal),
    "decimal": _decimal,
    "json": _json,
}
"""Stated type names with a fast test (the reader ``_values`` picks decides the rest)."""
