"""Canal-JSON's per-type tables: ``sqlType`` codes, ``mysqlType`` names and value texts.

Rules (``pkg/sink/codec/canal`` and ``pkg/sink/codec/internal/java.go`` in pingcap/tiflow,
``pkg/sink/codec/canal/helper.go`` and ``pkg/sink/codec/common/helper.go`` in pingcap/ticdc):

* ``sqlType`` is a ``java.sql.Types`` code chosen by the column's type code; the string types
  take BLOB (2004) when the column has the binary flag (charset ``binary``), else CLOB (2005)
  for the TEXT family, VARCHAR (12) and CHAR (1). YEAR, JSON and VECTOR are VARCHAR, ENUM
  INTEGER (4), SET BIT (-7). GEOMETRY is BINARY (-2) in tiflow and VARCHAR in ticdc.
* An UNSIGNED TINYINT, SMALLINT, INT or BIGINT whose value does not fit the signed type moves
  up one Java type: SMALLINT (5), INTEGER (4), BIGINT (-5), DECIMAL (3). The value decides,
  so ``sqlType`` can differ between two rows of one table.
* ``mysqlType`` is TiDB's ``TypeToStr`` name (the binary twin under charset ``binary``) plus
  `` unsigned`` (not for BIT and YEAR) and `` zerofill`` (not for YEAR); with
  ``content-compatible`` it is the column's full type, ``varchar(20)``, ``decimal(10,2)``,
  ``enum('a','b')`` (TiDB ``ColumnInfo.GetTypeDesc``).
* Every value is a JSON string: integers in decimal, BIT, ENUM (1-based index) and SET
  (bitmask) as their integer, FLOAT and DOUBLE as Go ``FormatFloat(v, 'f', -1, 32|64)``,
  DECIMAL, temporal, JSON and VECTOR as their TiDB text, text as itself, and a binary string
  as its bytes read as ISO-8859-1 (each byte one character U+0000–U+00FF).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache

from ticdc_conformance.reference._gofloat import format_float_positional
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    INTEGER_TYPES,
    MySQLType,
    by_code,
    type_named,
    type_to_str,
)
from ticdc_conformance.reference.tables import ColumnInfo, Profile
from ticdc_conformance.reference.validity import ColumnType
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "BIT_TYPES_READ",
    "INTEGER_TYPES_READ",
    "SQL_TYPES",
    "base_type",
    "column_type",
    "mysql_type_text",
    "sql_type",
    "value_text",
]

SQL_TYPES: Mapping[MySQLType, tuple[int, int]] = {
    # type → (code without the binary flag, code with it); GEOMETRY is tiflow's
    "tinyint": (-6, -6),
    "smallint": (5, 5),
    "int": (4, 4),
    "mediumint": (4, 4),
    "bigint": (-5, -5),
    "float": (7, 7),
    "double": (8, 8),
    "null": (0, 0),
    "decimal": (3, 3),
    "timestamp": (93, 93),
    "datetime": (93, 93),
    "date": (91, 91),
    "time": (92, 92),
    "year": (12, 12),
    "enum": (4, 4),
    "set": (-7, -7),
    "bit": (-7, -7),
    "json": (12, 12),
    "vector": (12, 12),
    "geometry": (-2, -2),
    "tinytext": (2005, 2004),
    "tinyblob": (2005, 2004),
    "text": (2005, 2004),
    "blob": (2005, 2004),
    "mediumtext": (2005, 2004),
    "mediumblob": (2005, 2004),
    "longtext": (2005, 2004),
    "longblob": (2005, 2004),
    "varchar": (12, 2004),
    "varbinary": (12, 2004),
    "char": (1, 2004),
    "binary": (1, 2004),
}
_SQL_TYPE_BY_CODE = by_code(SQL_TYPES)
_UNSIGNED_PROMOTION: Mapping[int, tuple[int, int]] = {
    # type code → (largest value of the signed type, the Java type beyond it)
    1: (2**7 - 1, 5),
    2: (2**15 - 1, 4),
    3: (2**31 - 1, -5),
    8: (2**63 - 1, 3),
}
_GEOMETRY_CODE = 255

_DEFAULT_WIDTH: Mapping[MySQLType, tuple[int, int]] = {
    # TiDB's display width when the column has none: (signed, unsigned)
    "tinyint": (4, 3),
    "smallint": (6, 5),
    "mediumint": (9, 8),
    "int": (11, 10),
    "bigint": (20, 20),
    "bit": (1, 1),
    "char": (1, 1),
    "binary": (1, 1),
    "year": (4, 4),
}
_WIDTH_SHOWN = frozenset({*INTEGER_TYPES, "bit", "char", "binary", "varchar", "varbinary"})
_FSP_TYPES = frozenset({"timestamp", "datetime", "time"})

INTEGER_TYPES_READ: frozenset[MySQLType] = frozenset({*INTEGER_TYPES, "year", "enum"})
"""Types a decoder reads as a signed integer text (TiCDC ``ParseInt``)."""
BIT_TYPES_READ: frozenset[MySQLType] = frozenset({"bit", "set"})
"""Types a decoder reads as an unsigned integer text (TiCDC ``ParseUint``)."""


def sql_type(column: ColumnInfo, flags: int, value: Value, profile: Profile) -> int:
    """The ``sqlType`` code of ``column`` holding ``value`` (module rules)."""
    code = column.effective_type_code
    if code == _GEOMETRY_CODE and profile == "ticdc":
        return 12
    plain, binary = _SQL_TYPE_BY_CODE.get(code, (12, 12))
    java = binary if flags & 1 else plain
    promotion = _UNSIGNED_PROMOTION.get(code)
    if promotion is not None and flags & 128 and isinstance(value, int) and value > promotion[0]:
        return promotion[1]
    return java


def _element(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "''")


def _full_type(column: ColumnInfo, name: MySQLType) -> str:  # noqa: PLR0911 - a type family per return
    """TiDB ``FieldType.CompactStr``: the name and its length, scale, fsp or members."""
    if name in ("enum", "set"):
        members = "','".join(map(_element, column.elements or ()))
        return f"{name}('{members}')"
    if name == "decimal":
        return f"decimal({column.length or 10},{column.decimal or 0})"
    if name in _FSP_TYPES:
        return f"{name}({column.decimal})" if column.decimal else name
    if name in ("float", "double"):
        if column.decimal is None or column.decimal < 0 or column.length is None:
            return name
        return f"{name}({column.length},{column.decimal})"
    if name in _WIDTH_SHOWN:
        width = column.length
        if width is None:
            default = _DEFAULT_WIDTH.get(name)
            if default is None:
                return name
            width = default[1] if column.unsigned else default[0]
        return f"{name}({width})"
    if name == "year":
        return f"year({column.length or 4})"
    return name


def mysql_type_text(column: ColumnInfo, *, content_compatible: bool) -> str:
    """The ``mysqlType`` text of ``column`` (module rules)."""
    name = type_to_str(column.type, column.effective_charset)
    text = _full_type(column, name) if content_compatible else name
    if column.unsigned and name not in ("bit", "year"):
        text += " unsigned"
    if column.zerofill and name != "year":
        text += " zerofill"
    return text


def value_text(column: ColumnInfo, flags: int, value: Value) -> str | bytes | None:
    """The Go string TiCDC writes for ``value`` (``None``: JSON ``null``)."""
    if value is None:
        return None
    if isinstance(value, bool):  # not a column value; refused by the event model already
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return format_float_positional(value, 32 if column.effective_type_code == 4 else 64)
    if isinstance(value, DecimalValue | TimestampValue):
        return value.text
    if flags & 1 and column.type in BINARY_TYPES | {
        "char",
        "varchar",
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
    }:
        data = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        return data.decode("latin-1")
    return value


def base_type(mysql_type: str) -> tuple[MySQLType | None, bool]:
    """The type a ``mysqlType`` text names, and whether it says ``unsigned``.

    TiCDC's ``ExtractBasicMySQLType`` reads the word before the first ``(`` or space.
    """
    end = len(mysql_type)
    for index, char in enumerate(mysql_type):
        if char in "( ":
            end = index
            break
    name = type_named(mysql_type[:end])
    return name, " unsigned" in mysql_type[end:]


_ARGUMENTS = re.compile(r"\(([^)]*)\)")
_MEMBER = re.compile(r"'((?:[^']|'')*)'")
_SIZED: frozenset[MySQLType] = frozenset({"char", "varchar", "binary", "varbinary", "bit"})


@cache
def column_type(mysql_type: str) -> ColumnType | None:
    """What a ``mysqlType`` states about its column, for the value checks (``validity``).

    The bare name states the type and signedness (no `` unsigned``: signed); the full type of
    ``content-compatible`` also the length of CHAR, VARCHAR, BINARY, VARBINARY and BIT, the
    precision and scale of DECIMAL and the members of ENUM and SET. An integer's display
    width (``int(11)``) and a temporal type's fsp are not checked.
    """
    name, unsigned = base_type(mysql_type)
    if name is None:
        return None
    arguments = _ARGUMENTS.search(mysql_type)
    inside = "" if arguments is None else arguments.group(1)
    length: int | None = None
    scale: int | None = None
    elements = None
    if name in ("enum", "set") and arguments is not None:
        elements = tuple(m.replace("''", "'") for m in _MEMBER.findall(inside))
    elif name in _SIZED | {"decimal"} and re.fullmatch(r"[0-9]+(,[0-9]+)?", inside):
        width, _, rest = inside.partition(",")
        length = int(width)
        scale = int(rest or "0") if name == "decimal" else None
    signed = unsigned if name in INTEGER_TYPES else None
    return ColumnType(name, signed, length or None, scale, elements, raw_text=False)
