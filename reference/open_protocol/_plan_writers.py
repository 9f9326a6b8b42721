"""The writers of an Open Protocol row plan: one per column, chosen by type (§2.5).

A writer takes one value of its column and gives the JSON text of ``v`` that
``_columns.write_value`` gives, only for values it can vouch for: of the type the writer
expects, passing the column's check (``validation.column_checks``, what ``check_row`` asks),
or NULL outside the primary key. For any other value it raises ``Unplanned`` and the row
takes the encoder's full path (``_row_plan``).

Integer and float columns check their range here (the check's own rule, as one interval);
DATETIME, TIMESTAMP and plain text have a quick form first, a pattern that only valid values
needing no JSON escape match, written between quotes as they are; the rest run the check.

A writer's quick form (``Quick``, ``quick_form``) says which of its values a caller may
write inline, with the writer's text: integers in its range, text (and TIMESTAMP values'
text) its pattern matches, DECIMAL texts of plain digits within the column's length and
scale, any bytes of a BLOB, NULL where the writer writes ``null``. The plan's compiled image
function tests them before it calls the writer.
"""

from __future__ import annotations

import base64
import re
import weakref
from collections.abc import Callable
from typing import NamedTuple

from ticdc_conformance.reference._gofloat import format_float
from ticdc_conformance.reference._gojson import JsonStyle, quote
from ticdc_conformance.reference.mysql import (
    CODE_ALIASES,
    INT64,
    INTEGER_TYPES,
    TYPE_OF_CODE,
    UINT64,
    MySQLType,
    integer_range,
)
from ticdc_conformance.reference.open_protocol._columns import WRITERS
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG, ColumnInfo
from ticdc_conformance.reference.validity import (
    MAX_DECIMAL_DIGITS,
    MAX_DECIMAL_SCALE,
    Check,
    ColumnType,
    check_of,
)
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value, string_bytes

__all__ = ["Quick", "Unplanned", "Writer", "column_writer", "quick_form"]


class Unplanned(Exception):  # noqa: N818 - a signal to take the full path, not an error
    """A value the plan leaves to the encoder's full path."""


Writer = Callable[[Value], str]


_FLOAT32_MAX = 3.4028234663852886e38
_FLOAT64_MAX = 1.7976931348623157e308
_FLOAT32_TEXTS: dict[JsonStyle, dict[float, str]] = {style: {} for style in JsonStyle}
"""FLOAT texts already worked out (the shortest float32 digits can take an exact search)."""
_MAX_FLOAT32_TEXTS = 4096


class Quick(NamedTuple):
    """The values a writer takes that a caller may write inline, with the writer's text.

    Each member is one test; a value none of them takes goes to the writer.
    """

    ints: tuple[int, int] | None = None
    """Integers ``low <= v < high``, written as ``str(v)``."""
    text: re.Pattern[str] | None = None
    """``str`` values the pattern matches, written between quotes as they are."""
    timestamps: bool = False
    """``TimestampValue`` values whose text ``text`` matches, that text between quotes."""
    decimals: re.Pattern[str] | None = None
    """``DecimalValue`` values whose text the pattern matches, that text between quotes."""
    base64: bool = False
    """``bytes`` values, written as their base64 between quotes."""
    null: bool = False
    """``None``, written as ``null``."""


_QUICK: weakref.WeakKeyDictionary[Writer, Quick] = weakref.WeakKeyDictionary()


def quick_form(writer: Writer) -> Quick | None:
    """The quick form of ``writer``, if any: a caller may test it first, inline.

    For values the quick form takes, the writer gives the same text; for the others the
    caller calls the writer.
    """
    return _QUICK.get(writer)


def _integer_writer(low: int, high: int, nullable: bool) -> Writer:
    def write(value: Value) -> str:
        if type(value) is int and low <= value < high:
            return str(value)
        if value is None and nullable:
            return "null"
        raise Unplanned

    _QUICK[write] = Quick(ints=(low, high), null=nullable)
    return write


def _float_writer(bits: int, limit: float, style: JsonStyle, nullable: bool) -> Writer:
    texts = _FLOAT32_TEXTS[style] if bits == 32 else None

    def write(value: Value) -> str:
        if type(value) is float and -limit <= value <= limit:  # finite (NaN fails both)
            if texts is None:
                return format_float(value, bits, style)
            text = texts.get(value)
            if text is None:
                text = format_float(value, bits, style)
                # 0.0 and -0.0 are one key but two texts: neither is kept
                if value and len(texts) < _MAX_FLOAT32_TEXTS:
                    texts[value] = text
            return text
        if value is None and nullable:
            return "null"
        raise Unplanned

    _QUICK[write] = Quick(null=nullable)
    return write


def _checked_writer(
    kinds: tuple[type, ...],
    text: Callable[[Value], str],
    check: Check,
    ctype: ColumnType,
    nullable: bool,
    *,
    quick: Quick | None = None,
) -> Writer:
    """Values of ``kinds`` that pass ``check``, written by ``text``; NULL if ``nullable``.

    ``quick``: what of those values a caller may write inline (``quick_form``).
    """

    def write(value: Value) -> str:
        if type(value) in kinds and check(value, ctype) is None:
            return text(value)
        if value is None and nullable:
            return "null"
        raise Unplanned

    _QUICK[write] = (quick or Quick())._replace(null=nullable)
    return write


def _integer_bounds(ctype: ColumnType) -> tuple[int, int] | None:
    """The integers the column's check takes, as one range (``None``: not an integer type)."""
    name = ctype.name
    if name in INTEGER_TYPES:
        signed, unsigned = integer_range(name, unsigned=False), integer_range(name, unsigned=True)
        if ctype.unsigned is None:
            return signed.start, unsigned.stop
        allowed = unsigned if ctype.unsigned else signed
        return allowed.start, allowed.stop
    if name == "year":
        return 1901, 2156  # 0 is a YEAR too: the full path writes it
    if name == "bit":
        width = ctype.length if ctype.length is not None else 64
        return (0, 2**width) if 1 <= width <= 64 else (0, 0)
    if name == "enum":
        return 0, (65535 if ctype.elements is None else len(ctype.elements)) + 1
    if name == "set":
        return 0, 2 ** (64 if ctype.elements is None else len(ctype.elements))
    return None


def column_writer(
    column: ColumnInfo, flags: int, checked: tuple[ColumnType, Check], style: JsonStyle
) -> Writer | None:
    """The plan's writer of a column, or ``None`` when its values need the full path."""
    ctype, check = checked
    code = column.effective_type_code
    name = TYPE_OF_CODE.get(code) or CODE_ALIASES.get(code)
    writer = None if name is None else WRITERS.get(name)
    nullable = column.key != "primary"
    if writer is None or name is None:
        return None
    if writer is WRITERS["bigint"] or writer is WRITERS["bit"] or name in {"float", "double"}:
        return _number_writer(name, flags, ctype, style, nullable)
    if writer is WRITERS["decimal"]:
        decimals = _decimal_pattern(ctype) if check is _DECIMAL_CHECK else None
        return _checked_writer(
            (DecimalValue,),
            lambda value: _decimal_text(value, style),
            check,
            ctype,
            nullable,
            quick=Quick(decimals=decimals),
        )
    if writer is WRITERS["varchar"]:
        if flags & BINARY_FLAG:
            return None
        checked_text = _checked_writer(
            (str, bytes), lambda value: _string_text(value, style), check, ctype, nullable
        )
        quick = _quick_pattern(ctype, check, style)
        return _quick_writer(quick, checked_text, timestamps=False, nullable=nullable)
    if writer is WRITERS["blob"]:
        # any bytes pass the binary check of a type without a declared length
        whole = check is _BINARY_CHECK and ctype.name not in _DECLARED
        return _checked_writer(
            (bytes, str), _base64_text, check, ctype, nullable, quick=Quick(base64=whole)
        )
    if writer is WRITERS["datetime"]:
        checked_text = _checked_writer(
            (str, TimestampValue), lambda value: _text(value, style), check, ctype, nullable
        )
        quick = _quick_pattern(ctype, check, style)
        timestamps = check is _TIMESTAMP_CHECK
        return _quick_writer(quick, checked_text, timestamps=timestamps, nullable=nullable)
    return None


def _quick_writer(
    quick: re.Pattern[str] | None, checked: Writer, *, timestamps: bool, nullable: bool
) -> Writer:
    """``checked``, after a quick form: text ``quick`` matches is valid and needs no escape.

    ``timestamps``: a ``TimestampValue``'s text is matched too (TIMESTAMP columns: their check
    reads the text, whatever the zone).
    """
    if quick is None:
        return checked
    match = quick.fullmatch

    def write(value: Value) -> str:
        if type(value) is str:
            if match(value) is not None:
                return '"' + value + '"'
        elif timestamps and type(value) is TimestampValue and match(value.text) is not None:
            return '"' + value.text + '"'
        return checked(value)

    _QUICK[write] = Quick(text=quick, timestamps=timestamps, null=nullable)
    return write


_PLAIN_TEXT = {
    JsonStyle.GO_STD: "[ !#-%'-;=?-\\[\\]-~]",
    JsonStyle.JSONITER: "[ !#-\\[\\]-~]",
}
"""Printable ASCII but what the style escapes: the quote and the backslash, and ``<>&`` for
``encoding/json`` (``_gojson``)."""
_DAY = "-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])"
"""Month and day of a date every year has (the checks take the 29th to 31st too)."""
_CLOCK = " (?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
_TIMESTAMP_YEARS = "(?:19[7-9][0-9]|20[0-2][0-9]|203[0-7])"
"""1970 to 2037: well inside TIMESTAMP's range, whatever the day and time."""
_FSP_MAX = 6


def _quick_pattern(ctype: ColumnType, check: Check, style: JsonStyle) -> re.Pattern[str] | None:
    """The quick form of a column's valid values (``_quick_writer``), or ``None``.

    Plain text (the text types' check): printable ASCII the style writes as it is, up to the
    declared length of CHAR and VARCHAR (an ASCII character is one character and one byte).
    DATETIME and TIMESTAMP: ``YYYY-MM-DD hh:mm:ss`` with a day every month has, TIMESTAMP's
    years within its range, and the fraction the column's fsp asks (one to six digits when it
    states none).
    """
    if check is _TEXT_CHECK:
        declared = ctype.name in _DECLARED and ctype.length is not None
        return re.compile(_PLAIN_TEXT[style] + (f"{{0,{ctype.length}}}" if declared else "*"))
    if check is not _DATETIME_CHECK and check is not _TIMESTAMP_CHECK:
        return None
    scale = ctype.scale
    if scale is not None and not 0 <= scale <= _FSP_MAX:
        return None
    fraction = "(?:\\.[0-9]{1,6})?" if scale is None else f"\\.[0-9]{{{scale}}}" if scale else ""
    years = _TIMESTAMP_YEARS if check is _TIMESTAMP_CHECK else "[0-9]{4}"
    return re.compile(years + _DAY + _CLOCK + fraction)


def _decimal_pattern(ctype: ColumnType) -> re.Pattern[str] | None:
    """DECIMAL texts the column's check takes, plain digits only, or ``None``.

    At most ``length - scale`` integer digits and ``scale`` decimals, within the check's 65
    digits and 30 decimals; a declared length and scale are needed.
    """
    length, scale = ctype.length, ctype.scale
    if (
        length is None
        or scale is None
        or not 0 <= scale <= MAX_DECIMAL_SCALE
        or length > MAX_DECIMAL_DIGITS
    ):
        return None
    whole = length - scale
    if whole < 1:
        return None
    fraction = f"(?:\\.[0-9]{{1,{scale}}})?" if scale else ""
    return re.compile(f"-?[0-9]{{1,{whole}}}" + fraction)


_DECIMAL_CHECK = check_of(ColumnType("decimal"))
_BINARY_CHECK = check_of(ColumnType("blob"))
_TEXT_CHECK = check_of(ColumnType("varchar"))
_DATETIME_CHECK = check_of(ColumnType("datetime"))
_TIMESTAMP_CHECK = check_of(ColumnType("timestamp"))
_DECLARED = frozenset({"char", "varchar", "binary", "varbinary"})
"""The types whose declared length the text check holds values to."""


def _number_writer(
    name: MySQLType, flags: int, ctype: ColumnType, style: JsonStyle, nullable: bool
) -> Writer | None:
    """Integer types, YEAR, BIT, ENUM and SET; FLOAT and DOUBLE: their checks' ranges here.

    ``None`` when the column's type is of another family than its type code.
    """
    if name in {"float", "double"}:
        if ctype.name not in {"float", "double"}:
            return None
        limit = _FLOAT32_MAX if ctype.name == "float" else _FLOAT64_MAX
        return _float_writer(32 if name == "float" else 64, limit, style, nullable)
    bounds = _integer_bounds(ctype)
    if bounds is None:
        return None
    # BIT, ENUM and SET are written as uint64 whatever the flags (§1.1)
    wide = WRITERS[name] is WRITERS["bit"] or flags & UNSIGNED_FLAG
    written = UINT64 if wide else INT64
    low, high = max(bounds[0], written.start), min(bounds[1], written.stop)
    return _integer_writer(low, high, nullable)


def _decimal_text(value: Value, style: JsonStyle) -> str:
    assert isinstance(value, DecimalValue)
    return quote(value.text, style)


def _string_text(value: Value, style: JsonStyle) -> str:
    assert isinstance(value, str | bytes)
    return quote(value, style)


def _base64_text(value: Value) -> str:
    return '"' + base64.b64encode(string_bytes(value)).decode("ascii") + '"'


def _text(value: Value, style: JsonStyle) -> str:
    assert isinstance(value, str | TimestampValue)
    return quote(value.text if isinstance(value, TimestampValue) else value, style)
