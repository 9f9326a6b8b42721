"""TiCDC's partition dispatchers for row events (ground truth §6.1).

TiCDC always picks the Kafka partition itself; Kafka's key hashing is never used.

* Hash: an accumulator starts at 0; every ``Write(p1, p2, …)`` XORs in the CRC-32/IEEE of the
  concatenation ``p1‖p2‖…``. Because XOR commutes, the order of the writes does not matter
  (TiCDC walks an index's columns in Go map order). Partition = sum mod partition count.
* ``table`` (and ``default``, which has meant ``table`` since 2023, as in the new
  architecture): one write of schema and table name.
* ``index-value`` (``rowid`` is its deprecated alias): the table write, then one write of column
  name and value string per handle-key column, or per column of ``index-name``'s index.
* ``columns``: the table write, then one per configured column.
* ``ts``: commit ts mod partition count.
* The image hashed is the new row, the old one for a DELETE. A NULL value is the string
  ``null`` in profile ``tiflow``; profile ``ticdc`` skips NULL columns.
* Value string (TiCDC ``ColumnValueString``): integers in decimal; FLOAT and DOUBLE as Go
  ``FormatFloat(v, 'f', -1, 32|64)``; text and bytes as their raw bytes; DECIMAL, dates and
  times as their text.
* A rule name TiCDC does not know falls back to ``default`` on Kafka.

``decoded_partition_of`` recomputes the partition from a *decoded* row (a stream checker has no
change event): the handle-key columns are those the message marks (Open ``h``, Craft flags,
Debezium key), or the names given; value strings come from the decoded values, FLOAT by its
type code (4) or MySQL type name.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from ticdc_conformance.reference._gofloat import format_float_positional
from ticdc_conformance.reference.decoded import DecodedColumn, DecodedRow
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG, ColumnInfo, Profile, TableInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "DISPATCHERS",
    "DispatchRule",
    "column_value_string",
    "decoded_partition_of",
    "dispatch_hash",
    "hashed_columns",
    "partition_of",
    "position_inertia",
]

DISPATCHERS = ("default", "table", "index-value", "rowid", "columns", "ts")
"""The rule names TiCDC knows (``[[sink.dispatchers]] partition = …``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DispatchRule:
    """One ``[[sink.dispatchers]]`` rule's partition settings."""

    partition: str = "default"
    index_name: str | None = None
    """``index-name`` of an ``index-value`` rule: hash this index's columns."""
    columns: tuple[str, ...] = ()
    """``columns`` of a ``columns`` rule."""

    def __post_init__(self) -> None:
        if self.kind == "columns" and not self.columns:
            raise ValueError("a columns dispatcher needs at least one column")

    @property
    def kind(self) -> str:
        """The dispatcher TiCDC runs for this rule (unknown names fall back to ``table``)."""
        if self.partition in ("index-value", "rowid"):
            return "index-value"
        if self.partition in ("columns", "ts"):
            return self.partition
        return "table"


def position_inertia(writes: Iterable[tuple[bytes, ...]]) -> int:
    """TiCDC's ``PositionInertia`` hash: XOR of the CRC-32 of each write's concatenation."""
    total = 0
    for parts in writes:
        total ^= zlib.crc32(b"".join(parts))
    return total


def _value_string(value: Value, *, float32: bool) -> bytes:
    if value is None:
        return b"null"
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, float):
        return format_float_positional(value, 32 if float32 else 64).encode()
    if isinstance(value, DecimalValue | TimestampValue):
        return value.text.encode()
    return str(value).encode()


def column_value_string(column: ColumnInfo, value: Value) -> bytes:
    """TiCDC's ``ColumnValueString`` of a non-virtual column's value, as bytes."""
    return _value_string(value, float32=column.type == "float")


def _positions(table: TableInfo, names: Iterable[str]) -> list[int]:
    positions = []
    for name in names:
        position = table.position(name)
        if position is None:
            raise ValueError(f"dispatcher column {name!r} is not in table {table.name!r}")
        positions.append(position)
    return positions


def _hashed_positions(table: TableInfo, rule: DispatchRule, profile: Profile) -> list[int]:
    """Positions of the columns an ``index-value`` or ``columns`` rule hashes."""
    if rule.kind == "columns":
        return _positions(table, rule.columns)
    if rule.index_name is not None:
        index = next((i for i in table.indexes if i.name == rule.index_name), None)
        if index is None:
            raise ValueError(f"table {table.name!r} has no index {rule.index_name!r}")
        return _positions(table, index.columns)
    flags = table.column_flags(profile)
    return [i for i, bits in enumerate(flags) if bits & HANDLE_KEY_FLAG]


def _column_writes(
    event: RowChangedEvent, rule: DispatchRule, profile: Profile
) -> Iterable[tuple[bytes, ...]]:
    table, image = event.table, event.image
    for position in _hashed_positions(table, rule, profile):
        column, value = table.columns[position], image[position]
        if column.is_virtual or (value is None and profile == "ticdc"):
            continue
        yield column.name.encode(), column_value_string(column, value)


def dispatch_hash(event: RowChangedEvent, rule: DispatchRule, profile: Profile = "tiflow") -> int:
    """The 32-bit sum TiCDC computes for a row under a hashing rule (not ``ts``)."""
    writes: list[tuple[bytes, ...]] = [(event.table.schema.encode(), event.table.name.encode())]
    if rule.kind != "table":
        writes.extend(_column_writes(event, rule, profile))
    return position_inertia(writes)


def partition_of(
    event: RowChangedEvent,
    partitions: int,
    rule: DispatchRule | None = None,
    profile: Profile = "tiflow",
) -> int:
    """The partition TiCDC sends ``event`` to in a topic of ``partitions`` partitions.

    ``ValueError`` when the rule names a column or index the table lacks (TiCDC refuses such a
    changefeed).
    """
    if partitions <= 0:
        raise ValueError("a topic has at least one partition")
    rule = rule if rule is not None else DispatchRule()
    if rule.kind == "ts":
        return event.commit_ts % partitions
    return dispatch_hash(event, rule, profile) % partitions


_FLOAT_TYPE_CODE = 4
"""MySQL ``TypeFloat`` (ground truth §1.6): formatted as float32 in value strings."""


def _decoded_value_string(column: DecodedColumn) -> bytes:
    single = column.type_code == _FLOAT_TYPE_CODE or column.mysql_type == "float"
    return _value_string(column.value, float32=single)


def _is_handle(column: DecodedColumn, names: frozenset[str] | None) -> bool:
    if names is not None:
        return column.name in names
    if column.handle_key is not None:
        return column.handle_key
    return column.flags is not None and bool(column.flags & HANDLE_KEY_FLAG)


def hashed_columns(
    row: DecodedRow, rule: DispatchRule, *, handle_key: frozenset[str] | None = None
) -> list[DecodedColumn] | None:
    """The columns of a decoded row whose values ``rule`` hashes (none for ``table``/``ts``).

    ``None`` when the row does not carry them (no image, a named column the message lacks,
    an ``index-name`` index without ``handle_key``, no handle key marked or named).
    """
    if rule.kind in ("table", "ts"):
        return []
    image = row.after if row.after is not None else row.before
    if image is None:
        return None
    if rule.kind == "columns":
        by_name = {c.name: c for c in image}
        if any(name not in by_name for name in rule.columns):
            return None
        return [by_name[name] for name in rule.columns]
    if rule.index_name is not None and handle_key is None:
        return None  # a message never says which columns an index has
    return _handle_columns(image, handle_key)


def _handle_columns(
    image: tuple[DecodedColumn, ...], names: frozenset[str] | None
) -> list[DecodedColumn] | None:
    """The handle-key columns ``names`` gives or the message marks; ``None`` if neither."""
    carried = any(c.handle_key is not None or c.flags is not None for c in image)
    marked = names is not None or carried
    return [c for c in image if _is_handle(c, names)] if marked else None


def decoded_partition_of(
    row: DecodedRow,
    partitions: int,
    rule: DispatchRule | None = None,
    profile: Profile = "tiflow",
    *,
    handle_key: frozenset[str] | None = None,
) -> int | None:
    """The partition TiCDC would choose for a decoded row, as ``partition_of`` does (§6.1).

    ``handle_key`` names the columns to hash when the message does not mark them (the handle
    key, or the columns of an ``index-name`` index). ``None`` when the row does not carry what
    the rule hashes (a ``ts`` rule without commit ts, or ``hashed_columns`` is ``None``).
    """
    if partitions <= 0:
        raise ValueError("a topic has at least one partition")
    rule = rule if rule is not None else DispatchRule()
    if rule.kind == "ts":
        return None if row.commit_ts is None else row.commit_ts % partitions
    chosen = hashed_columns(row, rule, handle_key=handle_key)
    if chosen is None:
        return None
    writes: list[tuple[bytes, ...]] = [(row.schema.encode(), row.table.encode())]
    writes.extend(
        (c.name.encode(), _decoded_value_string(c))
        for c in chosen
        if not (c.value is None and profile == "ticdc")
    )
    return position_inertia(writes) % partitions
