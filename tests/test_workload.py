"""The shop workload writes only what TiDB can commit, and every kind of key change."""

from __future__ import annotations

import os
from collections import Counter
from itertools import islice
from types import GeneratorType

import pytest

from ticdc_conformance.generators import _live_rows
from ticdc_conformance.generators.simulator import Transaction
from ticdc_conformance.generators.truth import final_tables
from ticdc_conformance.generators.workload import LARGE_BLOB, _Shop, shop_workload
from ticdc_conformance.reference import ColumnInfo, RowChangedEvent, Value
from ticdc_conformance.reference.validity import ColumnType, problem

ORDERS, CUSTOMERS = 0, 1
A: tuple[Value, ...] = (7, 1, None, 1, None, "2026-01-01 00:00:00.000", None)
B, C = (7, 2, *A[2:]), (7, 3, *A[2:])


def net(*statements: tuple[Value, ...] | None, live: bool) -> list[tuple[str, object, object]]:
    """The rows one transaction writes for ``statements`` on orders row 7 (live before or not)."""
    shop = _Shop(1)
    if live:
        shop._set(ORDERS, 7, A)
        shop.commit(1)
    for image in statements:
        shop._set(ORDERS, 7, image)
    return [(r.op, r.before, r.after) for r in shop.commit(2)]


NET_EFFECT = [
    ("insert then update: an insert of the last image", (B, C), False, [("insert", None, C)]),
    ("update then update: one update, first old to last new", (B, C), True, [("update", A, C)]),
    ("update then delete: a delete of the first old image", (B, None), True, [("delete", A, None)]),
    ("insert then delete: nothing", (B, None), False, []),
    ("update back to the old image: nothing", (B, A), True, []),
]


@pytest.mark.parametrize(
    ("statements", "live", "expected"), [c[1:] for c in NET_EFFECT], ids=[c[0] for c in NET_EFFECT]
)
def test_a_transaction_writes_each_row_key_once(
    statements: tuple[tuple[Value, ...] | None, ...],
    live: bool,
    expected: list[tuple[str, object, object]],
) -> None:
    assert net(*statements, live=live) == expected


def items(seed: int, count: int, *, large_blobs: bool = False) -> list[Transaction]:
    workload = islice(shop_workload(seed, large_blobs=large_blobs), count)
    return [item for item in workload if isinstance(item, Transaction)]


def kinds(row: RowChangedEvent) -> str:
    """What a row does to its keys."""
    assert row.before is not None
    assert row.after is not None
    changed = [
        c.name
        for c, old, new in zip(row.table.columns, row.before, row.after, strict=True)
        if old != new and c.name in ("id", "email", "host", "at")
    ]
    return f"{row.table.name} {row.op} {'+'.join(changed) or 'values'}"


def test_every_kind_of_key_change_occurs() -> None:
    seen: Counter[str] = Counter()
    for transaction in items(3, 4000):
        ops = Counter((row.table.name, row.op) for row in transaction.rows)
        seen.update(kinds(row) for row in transaction.rows if row.op == "update")
        # a new clustered id: TiDB removes the row and adds it again, in one transaction
        if ops[("orders", "delete")] and ops[("orders", "insert")]:
            seen["orders delete+insert"] += 1
    for kind in (
        "customers update id",
        "customers update email",
        "customers update values",
        "samples update host+at",
        "orders update values",
        "orders delete+insert",
    ):
        assert seen[kind] > 20, (kind, seen)
    assert not [kind for kind in seen if kind.startswith("orders update id")]


def test_rows_under_tidb_rowid_keep_it_through_key_changes() -> None:
    for transaction in items(4, 3000):
        for row in transaction.rows:
            expected = row.table.name in ("customers", "samples")
            assert (row.row_id is not None) is expected


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_handles_and_unique_keys_stay_unique_and_each_key_changes_once(seed: int) -> None:
    # final_tables checks TiDB's rules at every transaction (WorkloadError otherwise)
    upstream = final_tables(shop_workload(seed, ddl_every=40), 10_000)
    assert upstream.transactions > 8_000
    assert all(len(rows) > 300 for rows in upstream.tables.values())


def test_a_seed_always_gives_the_same_workload() -> None:
    assert items(11, 500) == items(11, 500)
    assert items(11, 500) != items(12, 500)
    assert items(11, 500, large_blobs=True) == items(11, 500, large_blobs=True)
    assert items(11, 500, large_blobs=True) != items(12, 500, large_blobs=True)


def test_large_blobs_change_a_quarter_of_the_avatars_and_nothing_else() -> None:
    """The same transactions, rows and values, but for some ``avatar`` BLOBs of 4 to 6 KiB."""
    plain, large = items(13, 3000), items(13, 3000, large_blobs=True)
    assert len(plain) == len(large)
    written, grown = 0, 0
    for one, other in zip(plain, large, strict=True):
        assert (one.commit_ts, len(one.rows)) == (other.commit_ts, len(other.rows))
        for row, twin in zip(one.rows, other.rows, strict=True):
            assert (row.table, row.op, row.row_id) == (twin.table, twin.op, twin.row_id)
            kept = len(row.table.columns) - (row.table.name == "customers")  # avatar is last
            for image, big in ((row.before, twin.before), (row.after, twin.after)):
                assert (image is None) == (big is None)
                if image is not None and big is not None:
                    assert image[:kept] == big[:kept]
                    pairs = zip(row.table.columns, big, strict=True)
                    assert not [p for c, v in pairs if (p := _problem(c, v)) is not None]
            if row.table.name == "customers" and row.after and twin.after:
                written += 1
                avatar = twin.after[-1]
                if avatar != row.after[-1]:
                    assert isinstance(avatar, bytes)
                    assert LARGE_BLOB[0] <= len(avatar) <= LARGE_BLOB[1] < 65_536  # a BLOB's most
                    grown += 1
    assert 0.15 < grown / written < 0.35, (grown, written)


def _problem(column: ColumnInfo, value: Value) -> str | None:
    """Why ``value`` cannot be in ``column`` (reference/validity.py), or ``None``."""
    return None if value is None else problem(value, ColumnType.of_column(column, raw_text=False))


@pytest.mark.parametrize("buffer", [1, 100, 4096])
def test_live_rows_read_back_from_the_store_file_as_from_its_buffer(
    buffer: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Images the store wrote to its file read back as those still in its buffer."""
    expected = items(5, 3000)
    monkeypatch.setattr(_live_rows, "STORE_BUFFER", buffer)
    assert items(5, 3000) == expected


def test_closing_the_workload_closes_the_store_file() -> None:
    stream = shop_workload(1)
    assert isinstance(stream, GeneratorType)
    next(stream)
    assert stream.gi_frame is not None
    store = stream.gi_frame.f_locals["shop"].store
    os.fstat(store.descriptor)  # open
    stream.close()
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(store.descriptor)
