"""Row checksums: TiDB's column-level CRC-32 that Simple DML messages carry (ground truth §4.6).

With ``[integrity] integrity-check-level="correctness"`` a DML message has
``checksum: {version, corrupted, current, previous}``: ``current`` is the checksum of the new
image (0 for a DELETE), ``previous`` of the old image (0 for an INSERT). A consumer recomputes
them from the decoded row and its table schema:

* columns in column-id order (TiDB's order, which profile ``tiflow``'s TableSchema keeps);
* CRC-32/IEEE updated column by column with the column's bytes; NULL adds nothing;
* integers, YEAR, ENUM, SET and BIT: 8-byte little-endian uint64 (negative as two's
  complement); FLOAT and DOUBLE: the little-endian IEEE bits of the value as float64 (FLOAT
  widened from float32);
* strings and blobs, DATE, DATETIME, TIME, DECIMAL and JSON: 4-byte little-endian length, then
  the bytes (text as UTF-8);
* TIMESTAMP: length and text after converting the value from its ``location`` to UTC;
* VECTOR: TiDB's serialized form, a 4-byte little-endian element count then float32 values.

A checksum of 0 means "not computed" and is not verified, as TiCDC's consumer does.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ticdc_conformance.reference.decoded import DecodedRow
from ticdc_conformance.reference.mysql import (
    INTEGER_TYPES,
    STRING_TYPES,
    UINT64_TYPES,
    MySQLType,
    by_code,
)
from ticdc_conformance.reference.simple._schema import schema_columns
from ticdc_conformance.reference.tables import ColumnInfo, TableInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["COLUMN_BYTES", "Checksum", "column_bytes", "row_checksum", "verify_checksum"]

_ZERO_TIMESTAMP = "0000-00-00 00:00:00"


@dataclass(frozen=True, slots=True, kw_only=True)
class Checksum:
    """The ``checksum`` member of a DML message."""

    version: int
    corrupted: bool
    current: int
    """uint32 checksum of the new image; 0 for a DELETE."""
    previous: int
    """uint32 checksum of the old image; 0 for an INSERT."""


def _to_utc(value: TimestampValue) -> str:
    if value.text.startswith(_ZERO_TIMESTAMP) or value.zone in ("UTC", "Etc/UTC"):
        return value.text
    if value.zone is None or value.zone.lower() in ("", "local", "system"):
        raise ValueError(f"TIMESTAMP location {value.zone!r} names no time zone")
    try:
        zone = ZoneInfo(value.zone)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # "America" is a tz folder
        raise ValueError(f"unknown TIMESTAMP location {value.zone!r}") from None
    whole, _, fraction = value.text.partition(".")
    try:
        local = datetime.strptime(whole, "%Y-%m-%d %H:%M:%S").replace(tzinfo=zone)
        utc = local.astimezone(UTC)
    except (ValueError, OverflowError) as error:
        raise ValueError(f"cannot convert TIMESTAMP {value.text!r}: {error}") from None
    return utc.strftime("%Y-%m-%d %H:%M:%S").zfill(19) + (f".{fraction}" if fraction else "")


def _length_value(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def _uint64(column: ColumnInfo, value: Value) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"column {column.name!r}: expected an integer")
    return struct.pack("<Q", value % 2**64)


def _float64(bits: int, column: ColumnInfo, value: Value) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"column {column.name!r}: expected a number")
    try:
        number = float(value)
        if bits == 32:
            number = struct.unpack("<f", struct.pack("<f", number))[0]
    except OverflowError:
        raise ValueError(f"column {column.name!r}: {value!r} is beyond the float range") from None
    return struct.pack("<d", number if math.isfinite(number) else 0.0)


def _timestamp(column: ColumnInfo, value: Value) -> bytes:
    if not isinstance(value, TimestampValue):
        raise ValueError(f"column {column.name!r}: expected a timestamp")
    return _length_value(_to_utc(value).encode())


def _vector(column: ColumnInfo, value: Value) -> bytes:
    if not isinstance(value, str):
        raise ValueError(f"column {column.name!r}: expected the vector text")
    body = value.strip()[1:-1]
    elements = [float(item) for item in body.split(",")] if body.strip() else []
    try:
        return struct.pack(f"<I{len(elements)}f", len(elements), *elements)
    except OverflowError:
        raise ValueError(f"column {column.name!r}: a vector element beyond float32") from None


def _length_text(column: ColumnInfo, value: Value) -> bytes:
    if isinstance(value, DecimalValue):
        value = value.text
    if isinstance(value, str):
        return _length_value(value.encode("utf-8", "surrogateescape"))
    if isinstance(value, bytes):
        return _length_value(value)
    raise ValueError(f"column {column.name!r}: expected text or bytes")


def _nothing(column: ColumnInfo, value: Value) -> bytes:
    del column, value
    return b""


COLUMN_BYTES: dict[MySQLType, Callable[[ColumnInfo, Value], bytes]] = {
    **dict.fromkeys(INTEGER_TYPES | UINT64_TYPES | {"year"}, _uint64),
    "float": partial(_float64, 32),
    "double": partial(_float64, 64),
    "timestamp": _timestamp,
    "vector": _vector,
    **dict.fromkeys(STRING_TYPES | {"date", "time", "datetime", "json", "decimal"}, _length_text),
    "null": _nothing,
    "geometry": _nothing,
}
"""What a column of each type adds to the checksum (NULL and GEOMETRY take no part)."""
_BY_CODE = by_code(COLUMN_BYTES)


def column_bytes(column: ColumnInfo, value: Value) -> bytes:
    """What one column adds to the checksum (``ValueError`` if its value does not fit)."""
    if value is None:
        return b""
    return _BY_CODE.get(column.effective_type_code, _nothing)(column, value)


def row_checksum(table: TableInfo, image: Sequence[Value]) -> int:
    """TiDB's column-level checksum of a row image aligned with ``table.columns`` (§4.6)."""
    if len(image) != len(table.columns):
        raise ValueError("a row image needs one value per column")
    checksum = 0
    for position in schema_columns(table, "tiflow"):  # column-id order
        checksum = zlib.crc32(column_bytes(table.columns[position], image[position]), checksum)
    return checksum


def verify_checksum(row: DecodedRow, table: TableInfo, checksum: Checksum) -> tuple[str, ...]:
    """Why ``row`` does not match ``checksum`` (nothing when it does), as TiCDC's consumer checks.

    ``table`` is the schema the row was typed against. A handle-key-only row, a claim-check
    reference among them, is not verified at all, its ``corrupted`` mark included: TiCDC's
    consumer rebuilds such a row from the upstream's snapshot as a message without a checksum,
    or decodes the stored message and verifies that one's (``assembleHandleKeyOnlyRowChangedEvent``
    and ``assembleClaimCheckRowChangedEvent`` in ``pkg/sink/codec/simple/decoder.go``, both
    architectures), though the encoder writes the checksum on the reference too.
    """
    if row.handle_key_only:
        return ()
    problems = []
    if checksum.corrupted:
        problems.append("TiCDC marked the row corrupted")
    for name, image, expected in (
        ("current", row.after, checksum.current),
        ("previous", row.before, checksum.previous),
    ):
        if expected == 0 or image is None:
            continue
        values = {column.name: column.value for column in image}
        aligned = [values.get(column.name) for column in table.columns]
        try:
            actual = row_checksum(table, aligned)
        except ValueError as error:
            problems.append(f"{name} cannot be computed: {error}")
            continue
        if actual != expected:
            problems.append(f"{name} checksum {expected} does not match the row's {actual}")
    return tuple(problems)
