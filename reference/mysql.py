"""The MySQL column types TiCDC replicates: names, type codes, families and value ranges.

Rules (shared/research/ticdc-ground-truth.md §1.1, §1.2, §1.6):

* A type is named by its lower-case MySQL name (``MySQLType``). ``null`` is the NULL
  pseudo-type TiCDC's own benchmark uses; GEOMETRY is a type TiCDC does not replicate.
* The type code follows from the name (``TYPE_CODES``, TiDB's ``mysql.Type*``). A text type
  and its binary twin share a code (VARCHAR and VARBINARY 15, CHAR and BINARY 254, TEXT and
  BLOB 252, …): the charset tells them apart, and codecs read the BinaryFlag.
* TiDB never writes NEWDATE (14) or VAR_STRING (253) for a table column, yet a column may carry
  any code explicitly; the codecs treat them as DATE and VARCHAR (``CODE_ALIASES``).
* Integer widths: TINYINT 8, SMALLINT 16, MEDIUMINT 24, INT 32, BIGINT 64 bits, signed or
  unsigned (``integer_range``). BIT, ENUM (1-based index) and SET (bitmask) hold a uint64
  whatever the column says (§1.1). YEAR is checked as a 16-bit integer.
* Text types, ENUM and SET default to the charset ``utf8mb4``; every other type, the binary
  strings included, has the charset ``binary`` (§1.2). TiDB's ``TypeToStr`` names a string
  type by its charset: the binary twin under ``binary`` (``type_to_str``, §4.4).

A codec keys its per-type tables by ``MySQLType``; ``by_code`` turns such a table into the one
a decoder needs when the wire names the type by its code.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Literal, TypeVar

__all__ = [
    "ANY_INT",
    "BINARY_TYPES",
    "CODE_ALIASES",
    "INT64",
    "INTEGER_BITS",
    "INTEGER_TYPES",
    "MYSQL_TYPES",
    "STRING_TYPES",
    "TEXT_TYPES",
    "TYPE_CODES",
    "TYPE_OF_CODE",
    "UINT64",
    "UINT64_TYPES",
    "MySQLType",
    "by_code",
    "codes_of",
    "integer_range",
    "type_named",
    "type_to_str",
    "wrap_int64",
]

MySQLType = Literal[
    "tinyint",
    "smallint",
    "mediumint",
    "int",
    "bigint",
    "float",
    "double",
    "decimal",
    "bit",
    "year",
    "date",
    "time",
    "datetime",
    "timestamp",
    "char",
    "varchar",
    "tinytext",
    "text",
    "mediumtext",
    "longtext",
    "binary",
    "varbinary",
    "tinyblob",
    "blob",
    "mediumblob",
    "longblob",
    "enum",
    "set",
    "json",
    "vector",
    "geometry",
    "null",
]
"""A MySQL type name as TiDB's ``TypeToStr`` spells it, lower case."""

TYPE_CODES: Mapping[MySQLType, int] = {
    "tinyint": 1,
    "smallint": 2,
    "int": 3,
    "float": 4,
    "double": 5,
    "null": 6,
    "timestamp": 7,
    "bigint": 8,
    "mediumint": 9,
    "date": 10,
    "time": 11,
    "datetime": 12,
    "year": 13,
    "varchar": 15,
    "varbinary": 15,
    "bit": 16,
    "vector": 225,
    "json": 245,
    "decimal": 246,
    "enum": 247,
    "set": 248,
    "tinytext": 249,
    "tinyblob": 249,
    "mediumtext": 250,
    "mediumblob": 250,
    "longtext": 251,
    "longblob": 251,
    "text": 252,
    "blob": 252,
    "char": 254,
    "binary": 254,
    "geometry": 255,
}
"""MySQL type name → TiDB type code (§1.6)."""

MYSQL_TYPES: tuple[MySQLType, ...] = tuple(TYPE_CODES)
"""Every type name, in type-code order."""

CODE_ALIASES: Mapping[int, MySQLType] = {14: "date", 253: "varchar"}
"""NEWDATE and VAR_STRING: codes no table column has, read as the type named (§1.6)."""

INTEGER_BITS: Mapping[MySQLType, int] = {
    "tinyint": 8,
    "smallint": 16,
    "mediumint": 24,
    "int": 32,
    "bigint": 64,
}
"""Storage width of the integer types."""

INTEGER_TYPES: frozenset[MySQLType] = frozenset(INTEGER_BITS)
UINT64_TYPES: frozenset[MySQLType] = frozenset({"bit", "enum", "set"})
"""Types whose value is a uint64 whatever the column's UNSIGNED says (§1.1)."""
TEXT_TYPES: frozenset[MySQLType] = frozenset(
    {"char", "varchar", "tinytext", "text", "mediumtext", "longtext"}
)
"""Character strings: charset ``utf8mb4`` unless the column names another."""
BINARY_TYPES: frozenset[MySQLType] = frozenset(
    {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
)
"""Byte strings: charset ``binary``."""
STRING_TYPES: frozenset[MySQLType] = TEXT_TYPES | BINARY_TYPES

INT64 = range(-(2**63), 2**63)
UINT64 = range(2**64)
ANY_INT = range(-(2**63), 2**64)
"""Every integer TiCDC holds: an int64 or a uint64."""

_BINARY_TWINS: Mapping[MySQLType, MySQLType] = {
    "char": "binary",
    "varchar": "varbinary",
    "tinytext": "tinyblob",
    "text": "blob",
    "mediumtext": "mediumblob",
    "longtext": "longblob",
}
_TEXT_TWINS: Mapping[MySQLType, MySQLType] = {twin: text for text, twin in _BINARY_TWINS.items()}
TYPE_OF_CODE: Mapping[int, MySQLType] = {
    TYPE_CODES[name]: name for name in MYSQL_TYPES if name not in _TEXT_TWINS
}
"""Type code → its type name, the text one where a text type and its binary twin share it."""
_YEAR_BITS = 16
_BY_NAME: Mapping[str, MySQLType] = {name: name for name in MYSQL_TYPES}
T = TypeVar("T")


def type_named(name: str) -> MySQLType | None:
    """The ``MySQLType`` spelled ``name``, or ``None`` when it is no type name."""
    return _BY_NAME.get(name)


def type_to_str(name: MySQLType, charset: str) -> MySQLType:
    """TiDB's ``TypeToStr``: the text type's name, or its binary twin's under charset ``binary``."""
    text = _TEXT_TWINS.get(name, name)
    return _BINARY_TWINS.get(text, text) if charset == "binary" else text


def integer_range(name: MySQLType, *, unsigned: bool) -> range:
    """The values an integer, YEAR, BIT, ENUM or SET column of type ``name`` holds."""
    if name in UINT64_TYPES:
        return UINT64
    bits = _YEAR_BITS if name == "year" else INTEGER_BITS[name]
    return range(2**bits) if unsigned else range(-(2 ** (bits - 1)), 2 ** (bits - 1))


def wrap_int64(value: int) -> int:
    """A uint64 as the int64 with the same bits, as Go's ``int64(v)`` (2^63 and above wrap)."""
    return value - 2**64 if value >= 2**63 else value


def by_code(table: Mapping[MySQLType, T]) -> dict[int, T]:
    """``table`` keyed by type code, the aliases included (``ValueError`` if twins differ)."""
    out: dict[int, T] = {}
    for name, entry in table.items():
        code = TYPE_CODES[name]
        if out.setdefault(code, entry) is not entry:
            raise ValueError(f"type code {code}: {name} and its twin have different entries")
    for code, name in CODE_ALIASES.items():
        if name in table:
            out[code] = table[name]
    return out


def codes_of(names: Collection[MySQLType]) -> frozenset[int]:
    """The type codes of ``names``, with the aliases of those among them."""
    return frozenset(
        {TYPE_CODES[name] for name in names}
        | {code for code, name in CODE_ALIASES.items() if name in names}
    )
