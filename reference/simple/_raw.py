"""A DML value as the Simple wire carries it, and what its writers and readers share (§4.3, §4.8).

``Raw`` is a value as read, before it is typed against a column; BIGINT UNSIGNED comes out of
Avro as ``Unsigned``. The type groups say which MySQL types share a writer and a reader.
"""

from __future__ import annotations

from dataclasses import dataclass

from ticdc_conformance.reference.mysql import (
    INTEGER_TYPES,
    UINT64_TYPES,
    MySQLType,
    integer_range,
)
from ticdc_conformance.reference.tables import ColumnInfo
from ticdc_conformance.reference.values import TimestampValue, Value

__all__ = [
    "INTEGERS",
    "NULL_ONLY",
    "TEXT_FORMS",
    "TIMESTAMP_RECORD",
    "UNSIGNED_RECORD",
    "Raw",
    "Unsigned",
    "checked_integer",
    "is_binary",
]

TIMESTAMP_RECORD = "com.pingcap.simple.avro.Timestamp"
UNSIGNED_RECORD = "com.pingcap.simple.avro.UnsignedBigint"

INTEGERS: frozenset[MySQLType] = INTEGER_TYPES | UINT64_TYPES | {"year"}
"""Integers, YEAR, BIT, ENUM (index) and SET (bitmask)."""
TEXT_FORMS: frozenset[MySQLType] = frozenset({"date", "time", "datetime", "vector", "json"})
"""TiDB's text forms."""
NULL_ONLY: frozenset[MySQLType] = frozenset({"null", "geometry"})
"""Types whose columns hold only NULL in what TiCDC replicates."""


@dataclass(frozen=True, slots=True)
class Unsigned:
    """An Avro ``UnsignedBigint`` as read: ``value`` is the true uint64 (wrap undone)."""

    value: int


Raw = None | int | float | str | bytes | TimestampValue | Unsigned
"""A DML value as read from the wire, before it is typed against a column."""


def is_binary(column: ColumnInfo) -> bool:
    """Whether the column holds a binary string (charset ``binary``)."""
    return column.effective_charset == "binary"


def checked_integer(name: MySQLType, column: ColumnInfo, value: Value) -> int:
    """``value`` if it is an integer the column's type holds; ``ValueError`` if not."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    if value not in integer_range(name, unsigned=column.unsigned):
        raise ValueError(f"{value} does not fit the column's {column.type}")
    return value
