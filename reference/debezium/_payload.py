"""Per-type payload values of TiCDC's Debezium JSON (ground truth §5.3).

``field_value`` writes a column's payload member(s) through ``VALUES``, one writer per MySQL
type. The column's flag bits (§1.2; explicit ``flags`` win) decide: BinaryFlag picks base64
for string types, UnsignedFlag the unsigned range, NullableFlag what a zero date becomes.

NULL becomes the column DEFAULT when the column has one (§5.3). The two profiles differ in how
they read the default, which TiDB keeps as text: ``tiflow`` feeds that text through the value
writer's text branches, so a FLOAT default is printed with float64 digits, a YEAR default as a
JSON string, and a BINARY/VARBINARY/BLOB default as base64 *and then again* as raw text under
the same member name (two members ``"c":"YWJj","c":"abc"``); ``ticdc`` converts the text to
the column type first and writes it like any value (code reading, TF/TC ``codec.go``).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass

from ticdc_conformance.reference.debezium._config import Config
from ticdc_conformance.reference.debezium._json import (
    Float32,
    Pairs,
    dump,
    float32_text,
    float64_text,
    member,
    quote_text,
)
from ticdc_conformance.reference.debezium._temporal import (
    BELOW_MIN_TIMESTAMP,
    write_date,
    write_datetime,
    write_time,
    write_timestamp,
)
from ticdc_conformance.reference.debezium._types import (
    CURRENT_TIMESTAMP,
    bits,
    default_text,
    member_names,
)
from ticdc_conformance.reference.mysql import (
    INTEGER_BITS,
    STRING_TYPES,
    MySQLType,
    wrap_int64,
)
from ticdc_conformance.reference.tables import (
    BINARY_FLAG,
    NULLABLE_FLAG,
    UNSIGNED_FLAG,
    ColumnInfo,
)
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["VALUES", "Field", "Writer", "column_writer", "field_value"]


@dataclass(frozen=True, slots=True)
class Field:
    """One column being written, and how."""

    column: ColumnInfo
    flags: int
    config: Config
    substituted: bool
    """The value is the column default standing in for NULL."""

    @property
    def not_null(self) -> bool:
        """The column is NOT NULL."""
        return not self.flags & NULLABLE_FLAG

    @property
    def tiflow_text(self) -> bool:
        """The value is classic TiCDC's default text, written by the text branches."""
        return self.substituted and self.config.profile == "tiflow"


def _number(value: Value) -> float:
    if isinstance(value, DecimalValue | str):
        return float(value.text if isinstance(value, DecimalValue) else value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"expected a number, got {type(value).__name__}")


def _text(value: Value) -> str | bytes:
    if isinstance(value, TimestampValue):
        return value.text
    if isinstance(value, str | bytes):
        return value
    raise ValueError(f"expected text, got {type(value).__name__}")


def _as_bytes(value: Value) -> bytes:
    text = _text(value)
    # surrogate escapes stand for the raw bytes of a binary default's text (``default_text``)
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")


def _bit(field: Field, value: Value) -> object:
    return bits(field.column, value)


def _string(field: Field, value: Value) -> object:
    if field.flags & BINARY_FLAG:
        return base64.b64encode(_as_bytes(value)).decode()
    return _text(value)


def _members(field: Field, value: Value) -> object:
    column = field.column
    if isinstance(value, int):
        names = member_names(column, value)
        return "" if names is None else names  # an invalid member is written as ""
    text = _text(value)
    if field.config.profile == "ticdc" and column.type == "enum":
        # new-arch parses the default name (case-insensitively) before writing the member
        for element in column.elements or ():
            if isinstance(text, str) and element.lower() == text.lower():
                return element
    return text


def _decimal(field: Field, value: Value) -> object:
    del field
    return _number(value)


def _date(field: Field, value: Value) -> object:
    days = write_date(str(_text(value)))
    return days if days is not None else 0 if field.not_null else None


def _datetime(field: Field, value: Value) -> object:
    text = str(_text(value))
    epoch = 0 if text == CURRENT_TIMESTAMP else write_datetime(text, field.column.decimal or 0)
    return epoch if epoch is not None else 0 if field.not_null else None


def _timestamp(field: Field, value: Value) -> object:
    zone = field.config.time_zone
    if isinstance(value, TimestampValue) and value.zone not in (None, zone):
        raise ValueError(f"TIMESTAMP text in zone {value.zone}, the encoder's is {zone}")
    text = _text(value)
    if text == CURRENT_TIMESTAMP:
        return BELOW_MIN_TIMESTAMP if field.not_null else None
    zoned = write_timestamp(str(text), field.column.decimal or 0, field.config.zone)
    return None if zoned == BELOW_MIN_TIMESTAMP and field.substituted else zoned


def _time(field: Field, value: Value) -> object:
    return write_time(str(_text(value)), field.column.decimal or 0)


def _integer(field: Field, value: Value) -> object:
    if isinstance(value, str):
        value = int(value)
    if not isinstance(value, int):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    width = INTEGER_BITS[field.column.type]
    if field.flags & UNSIGNED_FLAG:
        if value < 0:
            raise ValueError(f"{value} in an unsigned column")
        # BIGINT UNSIGNED max and out-of-range values become -1; other values above
        # 2^63 - 1 wrap to negative int64 (§5.3)
        if value >= 2**width - (1 if width == 64 else 0):
            return -1
        return wrap_int64(value)
    return value if -(2 ** (width - 1)) <= value < 2 ** (width - 1) else -1


def _float(field: Field, value: Value) -> object:
    return _number(value) if field.tiflow_text else Float32(_number(value))


def _year(field: Field, value: Value) -> object:
    if field.tiflow_text:
        return _text(value)  # the default text, written as a JSON string
    if not isinstance(value, int):
        raise ValueError(f"expected a year number, got {type(value).__name__}")
    return value


def _json(field: Field, value: Value) -> object:
    del field
    return _text(value)


def _vector(field: Field, value: Value) -> object:
    if field.substituted:
        raise ValueError("a VECTOR default is not a vector value (ErrDebeziumEncodeFailed)")
    return _text(value)


def _null(field: Field, value: Value) -> object:
    del field, value
    raise ValueError("a column of type NULL holds only NULL")


def _geometry(field: Field, value: Value) -> object:
    # classic writes the raw value (bytes as base64), new-arch its %v text
    if isinstance(value, bytes):
        if field.config.profile == "ticdc":
            return "[" + " ".join(map(str, value)) + "]"
        return base64.b64encode(value).decode()
    return _text(value)


VALUES: dict[MySQLType, Callable[[Field, Value], object]] = {
    **dict.fromkeys(INTEGER_BITS, _integer),
    "float": _float,
    "double": _decimal,
    "decimal": _decimal,
    "bit": _bit,
    "year": _year,
    "date": _date,
    "time": _time,
    "datetime": _datetime,
    "timestamp": _timestamp,
    **dict.fromkeys(STRING_TYPES, _string),
    "enum": _members,
    "set": _members,
    "json": _json,
    "vector": _vector,
    "geometry": _geometry,
    "null": _null,
}
"""MySQL type → the payload value of a non-NULL value (or of the default standing in)."""


def field_value(column: ColumnInfo, flags: int, value: Value, config: Config) -> Pairs:
    """The payload member(s) of one column (§5.3); ``ValueError`` if the value cannot be."""
    substituted = value is None
    if value is None:
        if column.default is None:
            return Pairs([(column.name, None)])
        value = column.default
        if config.profile == "tiflow":
            value = default_text(column)
            if column.type in STRING_TYPES and flags & BINARY_FLAG:
                # classic writes the base64 member and then the raw text again (TF codec.go)
                encoded = base64.b64encode(_as_bytes(value)).decode()
                return Pairs([(column.name, encoded), (column.name, value)])
            if column.type == "bit":
                value = column.default
    field = Field(column, flags, config, substituted)
    return Pairs([(column.name, VALUES[column.type](field, value))])


Writer = Callable[[Value], str]
"""A column's value → the text of its payload member(s)."""


def column_writer(column: ColumnInfo, flags: int, config: Config) -> Writer:
    """The text of a column's payload member(s) for each value: ``field_value``, chosen once.

    A non-NULL value goes straight to the type's writer; a NULL (the default stands in, or
    null) takes ``field_value``. ``ValueError`` where ``field_value`` raises it. The common
    Python type of a column's values (``str`` for text, JSON, DATE and DATETIME, ``bytes`` for
    binary strings, ``int`` in range for integers, ``float`` and ``DecimalValue`` for FLOAT,
    DOUBLE and DECIMAL) is written to text directly, as the type's writer then ``dump``
    would (``_DIRECT``); a NULL without a default is ``null``.
    """
    write = VALUES[column.type]
    field = Field(column, flags, config, substituted=False)
    name = member(column.name, None).removesuffix("null")  # the quoted name and the colon

    null = name + "null" if column.default is None else None  # (no default stands in)

    def general(value: Value) -> str:
        if value is None:
            if null is not None:
                return null
            return ",".join([member(k, v) for k, v in field_value(column, flags, None, config)])
        return name + dump(write(field, value))

    direct = _DIRECT.get(write)
    return general if direct is None else direct(field, name, general)


def _text_writer(field: Field, name: str, general: Writer) -> Writer:
    if field.flags & BINARY_FLAG:

        def binary(value: Value) -> str:
            if type(value) is bytes:
                return name + quote_text(base64.b64encode(value).decode())
            return general(value)

        return binary

    def text(value: Value) -> str:
        if type(value) is str:
            return name + quote_text(value)
        return general(value)

    return text


def _integer_writer(field: Field, name: str, general: Writer) -> Writer:
    # the integers ``_integer`` writes as they are: the rest wrap or become -1
    width = INTEGER_BITS[field.column.type]
    if field.flags & UNSIGNED_FLAG:
        low, high = 0, min(2**width, 2**63)
    else:
        low, high = -(2 ** (width - 1)), 2 ** (width - 1)

    def integer(value: Value) -> str:
        if type(value) is int and low <= value < high:
            return name + str(value)
        return general(value)

    return integer


def _float32_writer(field: Field, name: str, general: Writer) -> Writer:
    del field

    def float32(value: Value) -> str:
        if type(value) is float:
            return name + float32_text(value)
        return general(value)

    return float32


def _float64_writer(field: Field, name: str, general: Writer) -> Writer:
    del field

    def float64(value: Value) -> str:
        if type(value) is float:
            return name + float64_text(value)
        if type(value) is DecimalValue:
            return name + float64_text(float(value.text))
        return general(value)

    return float64


def _json_writer(field: Field, name: str, general: Writer) -> Writer:
    del field

    def json_text(value: Value) -> str:
        if type(value) is str:
            return name + quote_text(value)
        return general(value)

    return json_text


def _date_writer(field: Field, name: str, general: Writer) -> Writer:
    no_date = "0" if field.not_null else "null"  # Go cannot parse the text as a date

    def date(value: Value) -> str:
        if type(value) is str:
            days = write_date(value)
            return name + (no_date if days is None else str(days))
        return general(value)

    return date


def _datetime_writer(field: Field, name: str, general: Writer) -> Writer:
    no_epoch = "0" if field.not_null else "null"  # a date Go cannot hold
    fsp = field.column.decimal or 0

    def datetime(value: Value) -> str:
        if type(value) is str and value != CURRENT_TIMESTAMP:
            epoch = write_datetime(value, fsp)
            return name + (no_epoch if epoch is None else str(epoch))
        return general(value)

    return datetime


_DIRECT: dict[Callable[[Field, Value], object], Callable[[Field, str, Writer], Writer]] = {
    _string: _text_writer,
    _integer: _integer_writer,
    _float: _float32_writer,
    _decimal: _float64_writer,
    _json: _json_writer,
    _date: _date_writer,
    _datetime: _datetime_writer,
}
"""A type's writer → the writer of its common values straight to text, the rest ``general``."""
