"""The row checksum a consumer recomputes (ground truth §4.6).

Expected values are CRC-32/IEEE (``zlib.crc32``) over bytes assembled here with ``struct``
from the rules, column by column in column-id order.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

import pytest

from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    DecodedColumn,
    DecodedRow,
    Operation,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
    simple,
)

C = ColumnInfo


def u64(n: int) -> bytes:
    return struct.pack("<Q", n % 2**64)


def text(data: str | bytes) -> bytes:
    raw = data.encode() if isinstance(data, str) else data
    return struct.pack("<I", len(raw)) + raw


# (column, value, the bytes it adds)
COLUMNS: list[tuple[ColumnInfo, Value, bytes]] = [
    (C(name="i", type="int"), -1, u64(-1)),
    (C(name="u", type="bigint", unsigned=True), 2**64 - 1, u64(2**64 - 1)),
    (C(name="y", type="year"), 2024, u64(2024)),
    (C(name="e", type="enum", elements=("a", "b")), 2, u64(2)),
    (C(name="s", type="set", elements=("a", "b")), 3, u64(3)),
    (C(name="b", type="bit", length=8), 255, u64(255)),
    # FLOAT: the float32 widened to float64, then its bits
    (
        C(name="f", type="float"),
        0.1,
        struct.pack("<d", struct.unpack("<f", struct.pack("<f", 0.1))[0]),
    ),
    (C(name="d", type="double"), 0.1, struct.pack("<d", 0.1)),
    (C(name="v", type="varchar"), "测", text("测")),
    (C(name="bl", type="blob"), b"\x00\xff", text(b"\x00\xff")),
    (C(name="dt", type="datetime"), "2024-01-01 00:00:00", text("2024-01-01 00:00:00")),
    (C(name="dc", type="decimal", decimal=2), DecimalValue("1.50"), text("1.50")),
    (C(name="j", type="json"), '{"a": 1}', text('{"a": 1}')),
    # TIMESTAMP: converted from its location to UTC first
    (
        C(name="ts", type="timestamp", decimal=3),
        TimestampValue("2024-01-01 08:00:00.123", "Asia/Shanghai"),
        text("2024-01-01 00:00:00.123"),
    ),
    (
        C(name="tz", type="timestamp"),
        TimestampValue("0000-00-00 00:00:00", "Asia/Shanghai"),
        text("0000-00-00 00:00:00"),
    ),
    # VECTOR: element count, then float32 values, little-endian
    (C(name="vec", type="vector"), "[1,2.5]", struct.pack("<Iff", 2, 1.0, 2.5)),
    (C(name="n", type="int"), None, b""),
]


@pytest.mark.parametrize(("column", "value", "expected"), COLUMNS, ids=[c[0].name for c in COLUMNS])
def test_column_bytes(column: ColumnInfo, value: Value, expected: bytes) -> None:
    t = TableInfo(schema="s", name="t", columns=(column,))
    assert simple.row_checksum(t, (value,)) == zlib.crc32(expected)


def test_columns_are_hashed_in_column_id_order() -> None:
    t = TableInfo(
        schema="s",
        name="t",
        columns=(C(name="b", type="int", column_id=2), C(name="a", type="varchar", column_id=1)),
    )
    assert simple.row_checksum(t, (7, "x")) == zlib.crc32(text("x") + u64(7))
    assert simple.row_checksum(t, (7, "x")) != zlib.crc32(u64(7) + text("x"))


def test_whole_row() -> None:
    t = TableInfo(schema="s", name="t", columns=tuple(c for c, _, _ in COLUMNS))
    assert simple.row_checksum(t, tuple(v for _, v, _ in COLUMNS)) == zlib.crc32(
        b"".join(b for _, _, b in COLUMNS)
    )


@pytest.mark.parametrize("zone", [None, "Local", "Mars/Olympus"])
def test_a_timestamp_needs_a_real_location(zone: str | None) -> None:
    t = TableInfo(schema="s", name="t", columns=(C(name="ts", type="timestamp"),))
    with pytest.raises(ValueError, match=r"location|names no time zone"):
        simple.row_checksum(t, (TimestampValue("2024-01-01 00:00:00", zone),))


T = TableInfo(
    schema="s",
    name="t",
    columns=(C(name="id", type="int", key="primary"), C(name="v", type="varchar")),
)


def row(before: list[Value] | None, after: list[Value] | None, **kw: Any) -> DecodedRow:
    def image(values: list[Value] | None) -> tuple[DecodedColumn, ...] | None:
        return (
            None
            if values is None
            else tuple(DecodedColumn(c.name, v) for c, v in zip(T.columns, values, strict=True))
        )

    op: Operation = "update" if before and after else "insert" if after else "delete"
    return DecodedRow(
        commit_ts=1, schema="s", table="t", op=op, before=image(before), after=image(after), **kw
    )


def test_verify_checksum() -> None:
    good = zlib.crc32(u64(1) + text("a"))
    old = zlib.crc32(u64(1) + text("z"))
    ok = simple.Checksum(version=1, corrupted=False, current=good, previous=old)
    assert simple.verify_checksum(row([1, "z"], [1, "a"]), T, ok) == ()
    assert simple.verify_checksum(row([1, "z"], [1, "b"]), T, ok) == (
        f"current checksum {good} does not match the row's {zlib.crc32(u64(1) + text('b'))}",
    )
    # 0 means "not computed": it is not verified, as TiCDC's consumer does
    assert (
        simple.verify_checksum(
            row(None, [1, "b"]),
            T,
            simple.Checksum(version=1, corrupted=False, current=0, previous=0),
        )
        == ()
    )
    assert simple.verify_checksum(
        row(None, [1, "a"]), T, simple.Checksum(version=1, corrupted=True, current=good, previous=0)
    ) == ("TiCDC marked the row corrupted",)
    # a handle-key-only row (a claim-check reference too) is never verified, as TiCDC's
    # consumer rebuilds it without the checksum: not even a corrupted mark
    bad = simple.Checksum(version=1, corrupted=True, current=good + 1, previous=0)
    assert simple.verify_checksum(row(None, [1, "b"], handle_key_only=True), T, bad) == ()


def test_encoder_checksums_are_tidbs() -> None:
    """INSERT: previous 0; DELETE: current 0; both halves 0 means no checksum (§4.6)."""
    cfg = simple.Config(enable_row_checksum=True)
    insert = RowChangedEvent(commit_ts=1, table=T, op="insert", after=(1, "a"))
    delete = RowChangedEvent(commit_ts=1, table=T, op="delete", before=(1, "a"))
    nulls = RowChangedEvent(
        commit_ts=1,
        table=TableInfo(schema="s", name="n", columns=(C(name="x", type="int"),)),
        op="insert",
        after=(None,),
    )
    assert simple.event_checksum(insert, cfg) == simple.Checksum(
        version=1, corrupted=False, current=zlib.crc32(u64(1) + text("a")), previous=0
    )
    assert simple.event_checksum(delete, cfg) == simple.Checksum(
        version=1, corrupted=False, current=0, previous=zlib.crc32(u64(1) + text("a"))
    )
    assert simple.event_checksum(nulls, cfg) is None
