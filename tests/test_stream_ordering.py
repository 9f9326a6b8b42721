"""The DDL barrier and the DELETE-before-INSERT order, per partition (both profiles)."""

from __future__ import annotations

import dataclasses

import pytest

from ticdc_conformance.reference import (
    CODECS,
    ColumnInfo,
    DDLEvent,
    DecodedColumn,
    DecodedRow,
    RowChangedEvent,
    TableInfo,
)
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.tables import Profile
from ticdc_conformance.suites.stream.ordering import Redeliveries
from ticdc_conformance.suites.stream.plain import check_records
from ticdc_conformance.suites.stream.rules import CheckSettings

TABLE = TableInfo(
    schema="s",
    name="t",
    columns=(
        ColumnInfo(name="id", type="int", key="primary"),
        ColumnInfo(name="u", type="int", key="unique"),
    ),
)
OTHER = dataclasses.replace(TABLE, name="o")

Record = tuple[str, int, int, bytes | None, bytes | None]


def row(ts: int, op: Operation, key: int, table: TableInfo = TABLE) -> RowChangedEvent:
    image = (key, key * 10)
    before, after = (image, None) if op == "delete" else (None, image)
    return RowChangedEvent(commit_ts=ts, table=table, op=op, before=before, after=after)


def ddl(ts: int, table: TableInfo = TABLE) -> DDLEvent:
    query = f"ALTER TABLE {table.name} ADD COLUMN c INT"
    return DDLEvent(commit_ts=ts, schema=table.schema, table=table.name, query=query, ddl_type=5)


def records(*events: RowChangedEvent | DDLEvent) -> list[Record]:
    """One message per event (Open, max-batch-size 1), on partition 0, in order."""
    codec = CODECS["open"]
    config = codec.config_from_options({"max-batch-size": "1"})
    out: list[Record] = []
    for event in events:
        (message,) = codec.encode([event], config)
        out.append(("t", 0, len(out), message.key, message.value))
    return out


def found(
    recs: list[Record], profile: Profile = "tiflow"
) -> list[tuple[str, int | None, int | None]]:
    outcome = check_records(recs, CheckSettings(protocol="open", profile=profile))
    return sorted((f.rule, f.offset, f.commit_ts) for f in outcome.findings)


@pytest.mark.parametrize("profile", ["tiflow", "ticdc"])
@pytest.mark.parametrize(
    ("events", "expected"),
    [
        # a row of the table older than its DDL, after the DDL
        ([row(100, "insert", 1), ddl(200), row(150, "insert", 2)], [("row-before-ddl", 2, 150)]),
        # newer than the DDL: in order
        ([row(100, "insert", 1), ddl(200), row(250, "insert", 2)], []),
        # another table's row: the DDL holds back only its own table
        ([row(100, "insert", 1, OTHER), ddl(200), row(150, "insert", 2, OTHER)], []),
        # a DDL of a database names no table: a barrier for no row
        (
            [
                row(100, "insert", 1),
                DDLEvent(
                    commit_ts=200, schema="s", table="", query="CREATE DATABASE s", ddl_type=1
                ),
                row(150, "insert", 2),
            ],
            [],
        ),
    ],
)
def test_rows_older_than_a_ddl_of_their_table_do_not_follow_it(
    events: list[RowChangedEvent | DDLEvent], expected: list[tuple[str, int, int]], profile: Profile
) -> None:
    assert found(records(*events), profile) == expected


def test_a_replay_of_a_row_first_delivered_before_the_ddl_is_allowed() -> None:
    first = records(row(150, "insert", 1), ddl(200))
    again = [("t", 0, 2, first[0][3], first[0][4])]  # the same message, byte for byte
    assert found(first + again) == [("allowed-duplicate", 2, 150)]


@pytest.mark.parametrize("profile", ["tiflow", "ticdc"])
@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        (["delete", "insert"], []),  # a split UPDATE as TiCDC sends it
        (["insert", "delete"], [("split-update-order", 1, 5)]),  # its halves swapped
        (["delete", "delete", "insert", "insert"], []),
        (["delete", "insert", "delete", "insert"], [("split-update-order", 2, 5)]),
    ],
)
def test_a_transactions_deletes_of_a_table_come_before_its_inserts(
    ops: list[Operation], expected: list[tuple[str, int, int]], profile: Profile
) -> None:
    events = [row(5, op, k) for k, op in enumerate(ops)]
    assert found(records(*events), profile) == expected


def test_the_order_holds_per_table_and_per_transaction() -> None:
    # an INSERT of another table, or of an earlier transaction, may precede a DELETE
    events = [row(5, "insert", 1, OTHER), row(5, "delete", 2), row(6, "insert", 3)]
    assert found(records(*events, row(7, "delete", 3))) == []


def _decoded(ts: int, op: Operation, name: str) -> DecodedRow:
    after = (DecodedColumn(name="c", value=name),)
    return DecodedRow(commit_ts=ts, schema="s", table="t", op=op, before=None, after=after)


@pytest.mark.parametrize(
    ("runs", "verdicts"),
    [
        # a first delivery is always its own first
        ([[(5, "a"), (5, "b")]], [True, True]),
        # a redelivery repeating the first run row for row
        ([[(5, "a"), (5, "b")], [(5, "a"), (5, "b")]], [True, True, True, True]),
        # a redelivery with other images, or in another order
        ([[(5, "a"), (5, "b")], [(5, "b"), (5, "a")]], [True, True, False, False]),
        # a redelivery longer than the first run
        ([[(5, "a")], [(5, "a"), (5, "c")]], [True, True, False]),
        # one row changed twice in a transaction: matched by position, not key
        ([[(5, "a"), (5, "a")], [(5, "a"), (5, "a")]], [True, True, True, True]),
    ],
)
def test_a_redelivered_transaction_repeats_its_first_run(
    runs: list[list[tuple[int, str]]], verdicts: list[bool]
) -> None:
    seen = Redeliveries()
    got = []
    for number, run in enumerate(runs):
        if number:  # another transaction between the runs ends the run
            assert seen.same_as_first(_decoded(99 + number, "insert", "x"), 99 + number)
        got += [seen.same_as_first(_decoded(ts, "insert", name), ts) for ts, name in run]
    assert got == verdicts


def test_a_watermark_forgets_the_first_runs() -> None:
    seen = Redeliveries()
    assert seen.same_as_first(_decoded(5, "insert", "a"), 5)
    seen.clear()
    assert seen.same_as_first(_decoded(5, "insert", "b"), 5)  # a first delivery again
