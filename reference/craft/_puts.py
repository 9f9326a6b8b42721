"""One function per column that checks a value and writes it, for the one-pass row writer.

``put_of`` gives a column's function, chosen once per table: a cheap test that is sufficient,
never necessary, for the value to pass ``validation.check_row``'s check of its column type
*and* to be written by the column's value writer (``_values``) without error, then the write.
Values the test does not judge take the check and the writer themselves. A value the function
does not write raises ``Slow`` (or the writer's ``ValueError``): the row then takes the full way.

Cheap tests, for the column types ``validity`` states from a table (with the writers ``_values``
picks by type code):

* integers, YEAR, BIT, ENUM, SET: an ``int`` (not a ``bool``) inside both the type's range and
  the writer's (int64 ZigZag, or uint64);
* FLOAT, DOUBLE: a ``float`` of at most float32's, float64's largest magnitude;
* DATE, DATETIME: text ``_fast_checks`` proves valid (DATETIME's fsp 0–6); TIMESTAMP: the same,
  years 1970–2037, as text or a ``TimestampValue``;
* CHAR, VARCHAR, TEXT types: ASCII text, or bytes, no longer than a declared length;
  BINARY, VARBINARY, BLOB types: bytes no longer than a declared length;
* DECIMAL: a ``DecimalValue`` whose integer part's characters (sign and leading zeros
  counted) and decimals fit the declared and the greatest precision and scale;
* JSON: text ``_fast_checks.json_reads`` reads (with orjson installed).
"""

from __future__ import annotations

import struct
import sys
import weakref
from collections.abc import Callable

from ticdc_conformance.reference._fast_checks import MAX_FSP, date_test, datetime_test, json_reads
from ticdc_conformance.reference.craft._scalars import UVARINT_BYTES
from ticdc_conformance.reference.craft._values import (
    Writer,
    _write_bytes,
    _write_decimal,
    _write_double,
    _write_float,
    _write_integer,
    _write_text,
    _write_uvarint,
    _write_year,
)
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    INT64,
    INTEGER_TYPES,
    TEXT_TYPES,
    UINT64,
    integer_range,
)
from ticdc_conformance.reference.tables import UNSIGNED_FLAG, ColumnInfo
from ticdc_conformance.reference.validation import info_type
from ticdc_conformance.reference.validity import (
    FLOAT32_MAX,
    MAX_DECIMAL_DIGITS,
    MAX_DECIMAL_SCALE,
    Check,
    ColumnType,
    check_of,
)
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["Put", "Slow", "inline_form", "put_of"]


class Slow(Exception):  # noqa: N818 - a signal to take the full way, not an error shown
    """A value the one-pass write does not take."""


Put = Callable[[Value], bytes | None]
"""A column's check and write of a non-null value in one: the value bytes, or ``Slow``."""

_FLOAT64 = struct.Struct("<d")
_FLOAT32 = struct.Struct("<f")

_INLINE: weakref.WeakKeyDictionary[Put, tuple[str, dict[str, object]]] = weakref.WeakKeyDictionary()
"""A put's cheap test and write as an expression of ``@`` (the value) and the names it uses,
where it has one: the expression gives what the put gives wherever its test holds."""


def inline_form(put: Put) -> tuple[str, dict[str, object]] | None:
    """``put``'s cheap test and write as source (``@`` the value) and its names, or ``None``.

    A compiled writer (``_put_code``) writes ``(FORM if TEST else put(@))``: the put
    itself tests again and takes the full check where the test fails.
    """
    return _INLINE.get(put)


def _inlined(put: Put, test: str, form: str, /, **names: object) -> Put:
    _INLINE[put] = (f"({form} if {test} else {{put}}(@))", names)
    return put


def _checked(ctype: ColumnType, check: Check, write: Writer | None, flag: int) -> Put:
    """The check of ``ctype`` and ``write`` as they are (no cheap test)."""

    def put(value: Value) -> bytes | None:
        if check(value, ctype) is not None:
            raise Slow
        return None if write is None else write(value, flag)

    return put


def _integer(ctype: ColumnType, write: Writer, flag: int) -> Put | None:
    name = ctype.name
    if name in INTEGER_TYPES and write is _write_integer:
        if ctype.unsigned is None:  # validity takes either range: together, one span
            signed = integer_range(name, unsigned=False)
            allowed = range(signed.start, integer_range(name, unsigned=True).stop)
        else:
            allowed = integer_range(name, unsigned=ctype.unsigned)
        zigzag = not flag & UNSIGNED_FLAG
        written = UINT64 if not zigzag else INT64
    elif name == "year" and write is _write_year:
        allowed, zigzag, written = range(1901, 2156), True, INT64  # and 0, below
    elif write is _write_uvarint and name in ("bit", "enum", "set"):
        zigzag, written = False, UINT64
        members = None if ctype.elements is None else len(ctype.elements)
        if name == "bit":
            width = 64 if ctype.length is None else ctype.length
            if not 1 <= width <= 64:
                return None
            allowed = range(2**width)
        elif name == "enum":
            allowed = range(65536 if members is None else members + 1)
        else:
            allowed = range(2 ** (64 if members is None else members))
    else:
        return None
    low, high = max(allowed.start, written.start), min(allowed.stop, written.stop)
    zero = name == "year"

    def put(value: Value) -> bytes | None:
        if type(value) is not int or not (low <= value < high or (zero and value == 0)):
            raise Slow
        if zigzag:
            value = (value << 1) ^ (value >> 63)
        return UVARINT_BYTES[value]

    form = "{U}[(@ << 1) ^ (@ >> 63)]" if zigzag else "{U}[@]"
    test = "type(@) is int and {low} <= @ < {high}"
    return _inlined(put, test, form, U=UVARINT_BYTES, low=low, high=high)


def _float(ctype: ColumnType, write: Writer) -> Put | None:
    if ctype.name == "double" and write is _write_double:
        largest, narrow = sys.float_info.max, False
    elif ctype.name == "float" and write is _write_float:
        largest, narrow = FLOAT32_MAX, True
    else:
        return None
    smallest = -largest
    pack, pack32, unpack32 = _FLOAT64.pack, _FLOAT32.pack, _FLOAT32.unpack

    def put(value: Value) -> bytes | None:
        if type(value) is not float or not smallest <= value <= largest:  # NaN fails too
            raise Slow
        # TiCDC holds FLOAT as float32 and widens it to float64 on the wire (§3.3)
        return pack(unpack32(pack32(value))[0] if narrow else value)

    form = "{pack}({unpack32}({pack32}(@))[0])" if narrow else "{pack}(@)"
    test = "type(@) is float and {smallest} <= @ <= {largest}"
    names = {"pack": pack, "unpack32": unpack32, "pack32": pack32}
    return _inlined(put, test, form, smallest=smallest, largest=largest, **names)


def _temporal(ctype: ColumnType, write: Writer) -> Put | None:
    if write is not _write_text:
        return None
    fsp = ctype.scale
    if ctype.name == "date":
        is_date = date_test()

        def put_date(value: Value) -> bytes | None:
            if type(value) is str and is_date(value):
                return value.encode()
            raise Slow

        return _inlined(put_date, "type(@) is str and {is_date}(@)", "@.encode()", is_date=is_date)
    if ctype.name not in ("datetime", "timestamp") or (fsp is not None and fsp > MAX_FSP):
        return None
    stamp = ctype.name == "timestamp"
    test = datetime_test(fsp, timestamp=stamp)  # TIMESTAMP: years 1970-2037 as well

    def put(value: Value) -> bytes | None:
        text = value.text if stamp and type(value) is TimestampValue else value
        if type(text) is str and test(text):
            return text.encode()
        raise Slow

    if stamp:  # a TimestampValue's text; text as it comes takes the put
        check = "type(@) is {TSV} and type(@.text) is str and {test}(@.text)"
        return _inlined(put, check, "@.text.encode()", TSV=TimestampValue, test=test)
    return _inlined(put, "type(@) is str and {test}(@)", "@.encode()", test=test)


def _string(ctype: ColumnType, write: Writer) -> Put | None:
    if write is not _write_bytes:
        return None
    limit = sys.maxsize if ctype.length is None else ctype.length
    if ctype.name in BINARY_TYPES:

        def put_bytes(value: Value) -> bytes | None:
            if type(value) is bytes and len(value) <= limit:
                return value
            raise Slow

        test = "type(@) is bytes" + ("" if limit == sys.maxsize else " and len(@) <= {limit}")
        return _inlined(put_bytes, test, "@", limit=limit)
    if ctype.name not in TEXT_TYPES or not ctype.raw_text:
        return None

    def put_text(value: Value) -> bytes | None:
        if type(value) is str:
            if value.isascii() and len(value) <= limit:
                return value.encode()
        elif type(value) is bytes and len(value) <= limit:  # the bound: 4 bytes a character
            return value
        raise Slow

    # no length is past sys.maxsize: no test of it
    test = "type(@) is str and @.isascii()"
    test += "" if limit == sys.maxsize else " and len(@) <= {limit}"
    return _inlined(put_text, test, "@.encode()", limit=limit)


def _decimal(ctype: ColumnType, write: Writer) -> Put | None:
    if ctype.name != "decimal" or write is not _write_decimal:
        return None
    scale, length = ctype.scale, ctype.length
    most_decimals = MAX_DECIMAL_SCALE if scale is None else min(scale, MAX_DECIMAL_SCALE)
    most_whole = MAX_DECIMAL_DIGITS if length is None else length - (scale or 0)

    def put(value: Value) -> bytes | None:
        if type(value) is DecimalValue:
            text = value.text
            dot = text.find(".")
            # the integer part's characters, with sign and leading zeros: at least its digits
            whole, decimals = (len(text), 0) if dot < 0 else (dot, len(text) - dot - 1)
            if (
                decimals <= most_decimals
                and whole <= most_whole
                and whole + decimals <= MAX_DECIMAL_DIGITS
            ):
                return text.encode()
        raise Slow

    return put


def _json(ctype: ColumnType, write: Writer) -> Put | None:
    if ctype.name != "json" or write is not _write_text:
        return None

    def put(value: Value) -> bytes | None:
        if type(value) is str and json_reads(value):
            return value.encode()
        raise Slow

    return put


def put_of(column: ColumnInfo, write: Writer | None, flag: int) -> Put:
    """The check and write of a column's non-null values (``write`` ``None``: only checked)."""
    ctype = info_type(column, raw_text=True)
    check = check_of(ctype)
    if write is not None:
        for fast in (
            _integer(ctype, write, flag),
            _float(ctype, write),
            _temporal(ctype, write),
            _string(ctype, write),
            _decimal(ctype, write),
            _json(ctype, write),
        ):
            if fast is not None:
                return fast
    return _checked(ctype, check, write, flag)
