"""Value validity: whether a column value is one TiCDC can have written for its column type.

One check per MySQL type family (``problem``), judged only from what a message states about
the column (``ColumnType``: the type, signedness, width, fsp, precision and scale, members).
A member the message does not state is not checked. The ranges are TiDB's, as TiCDC hands
them to every codec (shared/research/ticdc-ground-truth.md §1.1); docs/errors.md lists them:

* integers: the width of the MySQL type, signed or unsigned (``mysql.integer_range``); when
  the message does not say whether the column is unsigned, either range;
* YEAR: 0 or 1901–2155 (TiDB ``types.MinYear``/``MaxYear``);
* BIT: below ``2**width`` (width 1–64, 64 when not stated);
* ENUM: index 0 (TiCDC's invalid member) up to the number of members (65,535 when not
  stated); SET: a bitmask of at most as many bits as members (64 when not stated);
* FLOAT: finite and rounding to a finite float32; DOUBLE: finite (the mounter turns NaN and
  infinities into 0, §1.1);
* DECIMAL: at most 65 digits and 30 decimals, and the declared precision and scale;
* DATE, DATETIME: ``0000-00-00`` … ``9999-12-31``; a zero month or day is allowed (TiDB keeps
  them unless NO_ZERO_IN_DATE, and ``Time.String()`` prints them), any other day must exist;
  hours 0–23, minutes and seconds 0–59, at most 6 fractional digits, exactly fsp when stated;
* TIMESTAMP: the zero value, or a time between 1970-01-01 00:00:01 and 2038-01-19 03:14:07 UTC
  rendered in the TiCDC server's zone, so a day's slack either side (the zone's offset is not
  checked); Debezium writes the zero value as 1970-01-01T00:00:00Z (§5.3), accepted;
* TIME: ``-838:59:59`` … ``838:59:59``;
* text: valid Unicode; raw bytes only where the protocol copies invalid UTF-8 as it is
  (``raw_text``: Open Protocol of the new architecture, Craft, Debezium, Simple Avro; Simple
  JSON goes through Go's ``encoding/json``, which writes U+FFFD, §2.5, §4.3);
* declared lengths, where the message states them: CHAR(n) and VARCHAR(n) hold at most n
  characters, BINARY(n) and VARBINARY(n) at most n bytes (TiDB refuses or, in a non-strict
  ``sql_mode``, truncates a longer value, so none reaches TiCDC). Text given as bytes (not
  UTF-8, another charset) is judged by bytes: at most 4 per character, utf8mb4's widest, and
  so is text holding U+FFFD, which a protocol writing through Go's JSON made of such bytes,
  one per byte. TEXT and BLOB types are not checked;
* JSON: valid JSON text (no NaN or infinities); VECTOR: ``[`` finite float32 numbers ``]``.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from ticdc_conformance.reference._temporal_validity import (
    date_problem,
    datetime_problem,
    time_problem,
    timestamp_problem,
)
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    CODE_ALIASES,
    INTEGER_TYPES,
    TEXT_TYPES,
    TYPE_OF_CODE,
    MySQLType,
    integer_range,
    type_named,
    type_to_str,
)
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG, ColumnInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "FLOAT32_MAX",
    "MAX_DECIMAL_DIGITS",
    "MAX_DECIMAL_SCALE",
    "Check",
    "ColumnType",
    "check_of",
    "describe",
    "problem",
]

FLOAT32_MAX: Final = 3.4028234663852886e38
MAX_DECIMAL_DIGITS: Final = 65
"""TiDB ``mysql.MaxDecimalWidth``."""
MAX_DECIMAL_SCALE: Final = 30
"""TiDB ``mysql.MaxDecimalScale``."""
_MAX_ENUM_MEMBERS = 65535
_MAX_SET_MEMBERS = 64
_YEARS = range(1901, 2156)
_TEMPORAL: frozenset[MySQLType] = frozenset({"date", "datetime", "timestamp", "time"})


@dataclass(frozen=True, slots=True)
class ColumnType:
    """What a message states about a column's type; ``None`` where it does not say."""

    name: MySQLType
    """TiDB's ``TypeToStr`` name: a binary string type under its binary name."""
    unsigned: bool | None = None
    length: int | None = None
    """BIT width; DECIMAL precision; the declared length of strings (checked for CHAR,
    VARCHAR, BINARY, VARBINARY)."""
    scale: int | None = None
    """DECIMAL scale; fsp of DATETIME, TIMESTAMP and TIME."""
    elements: tuple[str, ...] | None = None
    """ENUM and SET members."""
    raw_text: bool = False
    """The protocol copies text that is not UTF-8 as raw bytes (see the module docstring)."""

    @classmethod
    def of_code(cls, type_code: int, flags: int | None, *, raw_text: bool) -> ColumnType | None:
        """The type a type code and flag bits state (Open Protocol, Craft); ``None`` if unknown."""
        name = TYPE_OF_CODE.get(type_code) or CODE_ALIASES.get(type_code)
        if name is None:
            return None
        binary = flags is not None and bool(flags & BINARY_FLAG)
        unsigned = None if flags is None else bool(flags & UNSIGNED_FLAG)
        return cls(type_to_str(name, "binary" if binary else ""), unsigned, raw_text=raw_text)

    @classmethod
    def of_column(cls, column: ColumnInfo, *, raw_text: bool) -> ColumnType:
        """The type a table schema states (Simple's TableSchema, an encoder's table)."""
        decimal = column.decimal if column.decimal is not None and column.decimal >= 0 else None
        length = column.length if column.length is not None and column.length > 0 else None
        scale = decimal if column.type == "decimal" or column.type in _TEMPORAL else None
        return cls(
            type_to_str(column.type, column.effective_charset),
            column.unsigned,
            length if column.type in _LENGTHS else None,
            scale,
            column.elements,
            raw_text,
        )

    @classmethod
    def of_name(cls, text: str, *, raw_text: bool, length: int | None = None) -> ColumnType | None:
        """The type a name like ``int unsigned`` states (Debezium ``tidb_type``)."""
        base, _, rest = text.partition(" ")
        name = type_named(base)
        if name is None:
            return None
        unsigned = True if rest == "unsigned" else None if name in INTEGER_TYPES else False
        return cls(name, unsigned, length, raw_text=raw_text)

    def __str__(self) -> str:
        sign = " unsigned" if self.unsigned and self.name in INTEGER_TYPES else ""
        if self.name == "decimal" and self.length is not None:
            return f"decimal({self.length},{self.scale or 0})"
        if self.length is not None:
            return f"{self.name}({self.length}){sign}"
        if self.scale and self.name in _TEMPORAL:
            return f"{self.name}({self.scale})"
        return self.name + sign


_LENGTHS: frozenset[MySQLType] = TEXT_TYPES | BINARY_TYPES | {"bit", "decimal"}


def describe(value: Value) -> str:
    """``value`` as an error message shows it: short, one line."""
    if isinstance(value, DecimalValue | TimestampValue):
        text = repr(value.text)
    elif isinstance(value, int) and abs(value) >= 10**30:
        text = f"an integer of {value.bit_length()} bits"
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_RANGES = {
    (name, unsigned): integer_range(name, unsigned=unsigned)
    for name in INTEGER_TYPES
    for unsigned in (False, True)
}


def _integer(value: Value, ctype: ColumnType) -> str | None:
    if type(value) is not int:
        return "is not an integer"
    name = ctype.name
    signed, unsigned = _RANGES[name, False], _RANGES[name, True]
    if ctype.unsigned is None:
        if value in signed or value in unsigned:
            return None
        return f"is outside both the signed and the unsigned {name} range"
    allowed = unsigned if ctype.unsigned else signed
    if value in allowed:
        return None
    return f"is outside {allowed.start}..{allowed.stop - 1}"


def _year(value: Value, ctype: ColumnType) -> str | None:
    del ctype
    if type(value) is not int:
        return "is not an integer"
    return None if value == 0 or value in _YEARS else "is not 0 or a year 1901..2155"


def _bit(value: Value, ctype: ColumnType) -> str | None:
    if type(value) is not int:
        return "is not an integer"
    width = ctype.length if ctype.length is not None else 64
    if not 1 <= width <= 64:
        return f"BIT width {width} is not 1..64"
    return None if 0 <= value < 2**width else f"does not fit {width} bits"


def _enum(value: Value, ctype: ColumnType) -> str | None:
    if isinstance(value, str):  # Debezium names the member when its index cannot be known
        if ctype.elements is None or value in ctype.elements:
            return None
        return "is not a member"
    if type(value) is not int:
        return "is not a member index"
    count = _MAX_ENUM_MEMBERS if ctype.elements is None else len(ctype.elements)
    return None if 0 <= value <= count else f"is not an index 0..{count}"


def _set(value: Value, ctype: ColumnType) -> str | None:
    if type(value) is not int:
        return "is not a bitmask"
    count = _MAX_SET_MEMBERS if ctype.elements is None else len(ctype.elements)
    return None if 0 <= value < 2**count else f"is not a bitmask of {count} members"


def _float(value: Value, ctype: ColumnType) -> str | None:
    if type(value) is not float:
        return "is not a number"
    if not math.isfinite(value):
        return "is not finite (TiCDC writes NaN and infinities as 0)"
    if ctype.name == "float" and not _fits_float32(value):
        return "is outside FLOAT's float32 range"
    return None


def _fits_float32(value: float) -> bool:
    """Whether ``value`` rounds to a finite float32.

    FLOAT's shortest text, read back as a float64, may lie a little above ``FLOAT32_MAX``.
    """
    try:
        struct.pack("<f", value)
    except OverflowError:
        return False
    return True


def _decimal(value: Value, ctype: ColumnType) -> str | None:
    if type(value) is float:  # Debezium carries DECIMAL as a double (§5.3)
        return _float(value, ColumnType("double"))
    if not isinstance(value, DecimalValue):
        return "is not a decimal"
    whole, _, fraction = value.text.lstrip("-").partition(".")
    whole = whole.lstrip("0")
    digits = len(whole) + len(fraction)
    if digits > MAX_DECIMAL_DIGITS or len(fraction) > MAX_DECIMAL_SCALE:
        return f"has {digits} digits, {len(fraction)} decimals (at most 65 and 30)"
    if ctype.scale is not None and len(fraction) > ctype.scale:
        return f"has {len(fraction)} decimals, the column {ctype.scale}"
    if ctype.length is not None and len(whole) > ctype.length - (ctype.scale or 0):
        return f"has more integer digits than {ctype} holds"
    return None


_DECLARED: frozenset[MySQLType] = frozenset({"char", "varchar", "binary", "varbinary"})
_UTF8MB4_WIDEST = 4


def _text(value: Value, ctype: ColumnType) -> str | None:
    if isinstance(value, bytes):
        return (
            _too_long(len(value), "bytes", ctype, _UTF8MB4_WIDEST)
            if ctype.raw_text
            else ("is not valid UTF-8 text")
        )
    if not isinstance(value, str):
        return "is not text"
    if not value.isascii():
        try:
            value.encode()
        except UnicodeEncodeError:
            return "is not valid Unicode text"
        if "\ufffd" in value:
            # text written from bytes that are not UTF-8 (Go's JSON writes U+FFFD for each
            # such byte): up to the raw bytes' bound of 4 per declared character
            return _too_long(len(value), "characters", ctype, _UTF8MB4_WIDEST)
    return _too_long(len(value), "characters", ctype, 1)


def _binary(value: Value, ctype: ColumnType) -> str | None:
    if isinstance(value, str):  # text for a binary column: its UTF-8 bytes
        value = value.encode("utf-8", "surrogatepass")
    if not isinstance(value, bytes):
        return "is not bytes"
    return _too_long(len(value), "bytes", ctype, 1)


def _too_long(size: int, unit: str, ctype: ColumnType, per_character: int) -> str | None:
    """Why a value of ``size`` units does not fit the declared length, or ``None``."""
    if ctype.length is None or ctype.name not in _DECLARED or size <= ctype.length * per_character:
        return None
    return f"has {size} {unit}, more than {ctype.length}"


def _reject_constant(name: str) -> object:
    raise ValueError(name)


_JSON_READER = json.JSONDecoder(parse_constant=_reject_constant)
"""``json.loads(text, parse_constant=…)`` without building a decoder per value."""


def _json(value: Value, ctype: ColumnType) -> str | None:
    del ctype
    if not isinstance(value, str):
        return "is not valid UTF-8 JSON text"
    try:
        _JSON_READER.decode(value)
    except (ValueError, RecursionError):
        return "is not valid JSON"
    return None


def _vector(value: Value, ctype: ColumnType) -> str | None:
    del ctype
    if not isinstance(value, str) or not (value.startswith("[") and value.endswith("]")):
        return "is not a vector [f, …]"
    try:
        numbers = [float(part) for part in value[1:-1].split(",")] if value != "[]" else []
    except ValueError:
        return "is not a vector of numbers"
    if not all(math.isfinite(n) and _fits_float32(n) for n in numbers):
        return "holds a number outside float32's finite range"
    return None


def _any(value: Value, ctype: ColumnType) -> str | None:
    del value, ctype
    return None


_CHECKS = {
    **dict.fromkeys(INTEGER_TYPES, _integer),
    "year": _year,
    "bit": _bit,
    "enum": _enum,
    "set": _set,
    "float": _float,
    "double": _float,
    "decimal": _decimal,
    "date": date_problem,
    "datetime": datetime_problem,
    "timestamp": timestamp_problem,
    "time": time_problem,
    **dict.fromkeys(TEXT_TYPES, _text),
    **dict.fromkeys(BINARY_TYPES, _binary),
    "json": _json,
    "vector": _vector,
}


Check = Callable[[Value, ColumnType], str | None]
"""(non-null value, its column type) → why the value cannot be one of the type, or ``None``."""


def check_of(ctype: ColumnType) -> Check:
    """The check of ``ctype``'s type family: decoders pick it once per column, not per value."""
    return _CHECKS.get(ctype.name, _any)


def problem(value: Value, ctype: ColumnType) -> str | None:
    """Why ``value`` cannot be a value of a ``ctype`` column as TiCDC writes it, or ``None``.

    NULL is always valid here (whether the column is nullable is not a value's property).
    """
    if value is None:
        return None
    return _CHECKS.get(ctype.name, _any)(value, ctype)
