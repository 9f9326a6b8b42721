r"""Payload values back to TiDB values, guided by the field schema (§5.3, decoder side).

``read_column`` turns one payload member into a ``DecodedColumn``. The field schema's logical
``name`` decides first (Debezium's temporal, Bits, Enum, EnumSet, Json and TiDB vector types),
then its ``type``, refined by ``tidb_type`` when enable-tidb-extension wrote one. What the
message cannot settle is kept as the message says it and marked in ``ambiguity``:

* ``unsigned-unknown``: a negative int64 without ``tidb_type`` may be a wrapped BIGINT
  UNSIGNED (TiCDC writes 2^64 - 1 as -1);
* ``decimal-as-double``: a DECIMAL carried as a double (digits and scale may be lost);
  ``double-or-decimal``: a double without ``tidb_type``, which may be either;
* ``binary-unknown``: a string without ``tidb_type``, which may be base64 of binary bytes;
* ``null-or-default``: the value equals the schema ``default`` of a nullable column, and
  TiCDC writes a NULL as the default (or it is a YEAR as a JSON string, which only classic
  TiCDC's default for a NULL is);
* ``members-unresolved``: an ENUM member name that TiCDC's lossy ``allowed`` escaping
  (``''`` and ``\'`` folded to ``'``, backslashes not escaped) makes impossible to place:
  kept as the name;
* ``no-schema``: the message has no schema (debezium-disable-schema), so numbers and strings
  are passed through as they are.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import replace
from functools import lru_cache, partial

from ticdc_conformance.reference._gojson import from_json_text
from ticdc_conformance.reference.debezium._temporal import (
    read_date,
    read_datetime,
    read_time,
    read_timestamp,
)
from ticdc_conformance.reference.debezium._types import escape_enum
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Json, JsonObject
from ticdc_conformance.reference.mysql import TYPE_CODES, MySQLType, type_named
from ticdc_conformance.reference.validity import ColumnType
from ticdc_conformance.reference.values import TimestampValue, Value

__all__ = [
    "EXACT_READS",
    "LOGICAL_TYPES",
    "SCHEMA_TYPES",
    "field_type",
    "member_positions",
    "read_column",
    "settled_read",
]

Read = Callable[[Json, JsonObject, "str | None"], tuple[Value, "str | None"]]
"""(payload value, field schema, tidb_type) → the value and its ambiguity."""

_BINARY_TIDB_TYPES = frozenset(
    {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
)
_NO_DEFAULT = object()


def member_positions(allowed: str, name: str) -> frozenset[int]:
    r"""Every 1-based index ENUM member ``name`` may hold in TiCDC's ``allowed`` list.

    TiCDC escapes a member's commas as ``\,`` but not its backslashes, and folds ``''`` and
    ``\'`` into ``'`` (§5.3, ``pkg/sink/codec/common/helper.go`` EscapeEnumAndSetOptions). So
    a comma after a backslash is doubtful: inside a member, or the separator after a member
    ending in a backslash; any other comma separates. ``name`` stands where the list holds its
    escaped form between separators (or the ends), after as many members as there are
    separators before it: every certain one, and any number of the doubtful ones.
    """
    target = escape_enum(name)
    positions: set[int] = set()

    def place(start: int, first: int, last: int) -> None:
        end = start + len(target)
        if allowed.startswith(target, start) and (end == len(allowed) or allowed[end] == ","):
            positions.update(range(first, last + 1))

    place(0, 1, 1)
    certain = doubtful = 0  # the commas before the one at ``comma``
    for comma in (i for i, char in enumerate(allowed) if char == ","):
        place(comma + 1, 2 + certain, 2 + certain + doubtful)  # this comma separates
        if comma and allowed[comma - 1] == "\\":
            doubtful += 1
        else:
            certain += 1
    return frozenset(positions)


def _integer(raw: Json, bits: int) -> int:
    if type(raw) is not int or not -(2 ** (bits - 1)) <= raw < 2 ** (bits - 1):
        raise ValueError(f"expected an int{bits}")
    return raw


def _text(raw: Json) -> str:
    if type(raw) is not str:
        raise ValueError("expected a JSON string")
    return raw


def _base64(raw: Json) -> bytes:
    try:
        return base64.b64decode(_text(raw), validate=True)
    except binascii.Error as error:
        raise ValueError(f"invalid base64: {error}") from None


def _allowed(field: JsonObject) -> str:
    parameters = field.get("parameters")
    allowed = parameters.get("allowed") if type(parameters) is dict else None
    if not isinstance(allowed, str):
        raise ValueError("an Enum/EnumSet schema needs parameters.allowed")
    return allowed


def _enum(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
    del tidb
    text, allowed = _text(raw), _allowed(field)
    if not text:
        return 0, None  # TiCDC writes an invalid member as ""
    positions = member_positions(allowed, text)
    if len(positions) == 1:
        return min(positions), None
    if positions or "'" in allowed or "\\" in allowed:
        # the member may stand at more than one place (TiCDC's escaping folds '' and \' into '
        # and leaves a member's trailing \ before the separator), or the list holds quotes or
        # backslashes as a DDL spells them (Debezium's own connector): the name is kept
        return text, "members-unresolved"
    raise ValueError(f"{text!r} is not among the allowed members")


def _set(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
    del tidb
    text, elements = _text(raw), _allowed(field).split(",")
    if not text:
        return 0, None  # TiCDC writes an invalid member as ""
    names = text.split(",")
    if not all(elements.count(name) == 1 for name in names):
        raise ValueError(f"{text!r} is not among the allowed members")
    return sum(1 << elements.index(name) for name in set(names)), None


def _exact(read: Callable[[Json], Value]) -> Read:
    """A reader whose value the message settles."""

    def exact(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
        del field, tidb
        return read(raw), None

    return exact


def _year(raw: Json) -> Value:
    # classic TiCDC writes a YEAR default (for a NULL) as a JSON string
    return int(raw) if type(raw) is str and raw.isdigit() else _integer(raw, 32)


EXACT_READS: dict[str, tuple[MySQLType, Callable[[Json], Value]]] = {
    "io.debezium.time.Date": ("date", lambda raw: read_date(_integer(raw, 32))),
    "io.debezium.time.Timestamp": (
        "datetime",
        lambda raw: read_datetime(_integer(raw, 64), micro=False),
    ),
    "io.debezium.time.MicroTimestamp": (
        "datetime",
        lambda raw: read_datetime(_integer(raw, 64), micro=True),
    ),
    "io.debezium.time.ZonedTimestamp": (
        "timestamp",
        lambda raw: TimestampValue(read_timestamp(_text(raw)), "UTC"),
    ),
    "io.debezium.time.MicroTime": ("time", lambda raw: read_time(_integer(raw, 64))),
    "io.debezium.time.Year": ("year", _year),
    "io.debezium.data.Bits": ("bit", lambda raw: int.from_bytes(_base64(raw), "little")),
    "io.debezium.data.Json": ("json", lambda raw: from_json_text(_text(raw))),
    "io.debezium.data.TiDBVectorFloat32": ("vector", lambda raw: from_json_text(_text(raw))),
}
"""The logical types whose value the message settles (no ambiguity): their readers."""

LOGICAL_TYPES: dict[str, tuple[MySQLType, Read]] = {
    **{name: (mysql_type, _exact(read)) for name, (mysql_type, read) in EXACT_READS.items()},
    "io.debezium.data.Enum": ("enum", _enum),
    "io.debezium.data.EnumSet": ("set", _set),
}
"""Logical type name → the MySQL type it stands for and its reader: the name decides first."""


def _boolean(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
    del field, tidb
    if type(raw) is not bool:
        raise ValueError("expected a JSON boolean")
    return int(raw), None


def _int(bits: int, raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
    del field
    value = _integer(raw, bits)
    if value >= 0 or bits != 64:
        return value, None
    if tidb == "bigint unsigned":
        return value + 2**64, None
    return value, None if tidb is not None else "unsigned-unknown"


def _double(raw: Json) -> float:
    if type(raw) is not int and type(raw) is not float:
        raise ValueError("expected a JSON number")
    try:
        return float(raw)
    except OverflowError:  # an integer of hundreds of digits: no double, no TiCDC value
        raise ValueError("a number beyond the double range") from None


def _number_ambiguity(field: JsonObject, tidb: str | None) -> str | None:
    if field.get("type") == "float" or tidb in ("double", "double unsigned", "float"):
        return None
    return "decimal-as-double" if tidb == "decimal" else "double-or-decimal"


def _number(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
    return _double(raw), _number_ambiguity(field, tidb)


def _text_value(raw: Json) -> Value:
    return from_json_text(_text(raw))


def _bytes(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
    del field, tidb
    return _base64(raw), None


def _string(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
    del field
    if tidb in _BINARY_TIDB_TYPES:
        return _base64(raw), None
    return _text_value(raw), None if tidb is not None else "binary-unknown"


SCHEMA_TYPES: dict[str, Read] = {
    "boolean": _boolean,
    "int16": partial(_int, 16),
    "int32": partial(_int, 32),
    "int64": partial(_int, 64),
    "float": _number,
    "double": _number,
    "bytes": _bytes,
    "string": _string,
}
"""Schema ``type`` → its reader, for a field without a logical name; ``tidb_type`` refines."""


def settled_read(
    field: JsonObject, logical: Json, tidb: str | None
) -> tuple[Callable[[Json], Value], str | None] | None:
    """The value reader of a field whose ambiguity its schema alone settles, and that ambiguity.

    What ``_value`` does for a non-null value of such a field; ``None`` for the other fields
    (ENUM, SET, BIT(1), int64, no or an unknown type).
    """
    if type(logical) is str and logical in LOGICAL_TYPES:
        entry = EXACT_READS.get(logical)
        return None if entry is None else (entry[1], None)
    schema_type = field.get("type")
    if type(schema_type) is not str:
        return None
    if schema_type == "string":
        if tidb in _BINARY_TIDB_TYPES:
            return _base64, None
        return _text_value, None if tidb is not None else "binary-unknown"
    if schema_type == "bytes":
        return _base64, None
    if schema_type in ("int16", "int32"):
        return partial(_integer, bits=16 if schema_type == "int16" else 32), None
    if schema_type in ("float", "double"):
        return _double, _number_ambiguity(field, tidb)
    return None


def _untyped(raw: Json) -> tuple[Value, str | None]:
    """A member without a field schema: the JSON scalar as it is."""
    if type(raw) is bool:
        return int(raw), None  # only BIT(1) is a boolean
    if type(raw) is int or type(raw) is float:
        return raw, "no-schema"
    if type(raw) is str:
        return from_json_text(raw), "no-schema"
    raise ValueError("expected a JSON scalar")


def _value(
    raw: Json, field: JsonObject, logical: Json, tidb: str | None
) -> tuple[Value, str | None]:
    if raw is None:
        return None, None
    if type(logical) is str and logical in LOGICAL_TYPES:
        return LOGICAL_TYPES[logical][1](raw, field, tidb)
    if "type" not in field:
        return _untyped(raw)  # a type TiCDC does not support: no schema written
    schema_type = field["type"]
    read = SCHEMA_TYPES.get(schema_type) if type(schema_type) is str else None
    if read is None:
        raise ValueError(f"unknown schema type {schema_type!r}")
    return read(raw, field, tidb)


def _mysql_type(field: JsonObject, logical: Json, tidb: str | None) -> str | None:
    """The MySQL type the field schema names: ``tidb_type``, else the logical type's."""
    mysql_type = tidb
    if type(logical) is str and not tidb:
        entry = LOGICAL_TYPES.get(logical)
        mysql_type = None if entry is None else entry[0]
    if mysql_type is None and field.get("type") == "boolean":
        return "bit"
    return mysql_type


def _may_be_default(raw: Json, field: JsonObject, logical: Json) -> bool:
    """Whether a NULL may stand behind ``raw``: TiCDC writes a NULL as the default (§5.3)."""
    if raw is None:
        return False
    if logical == "io.debezium.time.Year" and type(raw) is str:
        return True  # only classic's default for a NULL is a string
    default = field.get("default", _NO_DEFAULT)
    return field.get("optional") is True and default == raw and type(default) is type(raw)


def read_column(
    name: str, raw: Json, field: JsonObject | None, handle_key: bool | None
) -> DecodedColumn:
    """One payload member as a decoded column; ``ValueError`` when the value does not fit."""
    if field is None:
        value, ambiguity = (None, None) if raw is None else _untyped(raw)
        return DecodedColumn(name, value, None, None, handle_key, None, ambiguity)
    tidb = field.get("tidb_type")
    if tidb is not None and type(tidb) is not str:
        raise ValueError("tidb_type must be a string")
    logical = field.get("name")
    mysql_type = _mysql_type(field, logical, tidb)
    known = type_named(mysql_type.removesuffix(" unsigned")) if mysql_type else None
    value, ambiguity = _value(raw, field, logical, tidb)
    if _may_be_default(raw, field, logical):
        ambiguity = "null-or-default"
    type_code = None if known is None else TYPE_CODES[known]
    return DecodedColumn(name, value, type_code, None, handle_key, mysql_type, ambiguity)


def field_type(field: JsonObject, mysql_type: str | None) -> ColumnType | None:
    """The column type a field schema states: ``tidb_type`` or the logical type, Bits length.

    ``tidb_type`` names ``unsigned`` for every unsigned integer (§5.3). jsoniter copies text
    that is not UTF-8 raw, so such text is valid here.
    """
    if mysql_type is None:
        return None
    ctype = _named_type(mysql_type)
    if ctype is None:
        return None
    if ctype.name == "bit":
        parameters = field.get("parameters")
        width = parameters.get("length") if type(parameters) is dict else None
        length = 1 if field.get("type") == "boolean" else None
        if type(width) is str and width.isdigit() and len(width) < 4:
            length = int(width)
        return replace(ctype, length=length)
    return ctype


@lru_cache(maxsize=1024)
def _named_type(mysql_type: str) -> ColumnType | None:
    """``tidb_type`` text as a column type, ``unsigned`` settled but for BIT (asked per value)."""
    ctype = ColumnType.of_name(mysql_type, raw_text=True)
    if ctype is None or ctype.name == "bit" or ctype.unsigned is not None:
        return ctype
    return replace(ctype, unsigned=False)
