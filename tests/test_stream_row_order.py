"""``RowOrder.broken``, the one-loop order rules, against the rules row by row.

The checker runs the order rules of a message's rows in one loop with the redelivery
bookkeeping inline, and ``Redeliveries`` fingerprints a first run only when a redelivery is
compared with it. The reference here is the rules as stated, one row at a time:
``TableOrder.before_ddl``, the newest commit ts per table, ``TableOrder.delete_after_insert``,
and a redelivery matched against eagerly fingerprinted first runs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference import DecodedColumn, DecodedDDL, DecodedRow
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.suites.stream import ordering
from ticdc_conformance.suites.stream.ordering import (
    BROKEN_AFTER_ORDER,
    RowOrder,
    TableOrder,
    _fingerprint,
)
from ticdc_conformance.suites.stream.range_state import RangeTracker, message_hash

_Table = tuple[str, str]


class _Eager:
    """Redeliveries as first written: every first-run row fingerprinted as it comes."""

    def __init__(self) -> None:
        self.runs: dict[int, list[int]] = {}
        self.run_ts: int | None = None
        self.position = 0
        self.replaying = False

    def clear(self) -> None:
        self.runs.clear()
        self.run_ts = None

    def same_as_first(self, row: DecodedRow, ts: int) -> bool:
        if ts != self.run_ts:
            self.run_ts, self.position = ts, 0
            self.replaying = ts in self.runs
            if not self.replaying:
                self.runs[ts] = []
        first = self.runs[ts]
        if not self.replaying:
            first.append(_fingerprint(row))
            return True
        position, self.position = self.position, self.position + 1
        return position < len(first) and first[position] == _fingerprint(row)


class _RowByRow:
    """The order rules one row at a time, with a range tracker's records."""

    def __init__(self) -> None:
        self.tables = TableOrder()
        self.redeliveries = _Eager()
        self.newest: dict[_Table, int] = {}
        self.tracker = RangeTracker()

    def rules(self, row: DecodedRow, *, misplaced: bool) -> tuple[str, ...]:
        if row.commit_ts is None:
            return ()
        table = (row.schema, row.table)
        self.tracker.ordered(table, row.commit_ts)
        if self.tables.before_ddl(row) is not None:
            return ("row-before-ddl",)
        newest = self.newest.get(table)
        if newest is not None and row.commit_ts < newest:
            return ("commit-ts-order",)
        self.newest[table] = row.commit_ts
        self.tracker.run(row.commit_ts)
        split = self.tables.delete_after_insert(row)
        same = misplaced or self.redeliveries.same_as_first(row, row.commit_ts)
        return BROKEN_AFTER_ORDER[split, same]

    def broken(self, rows: list[DecodedRow], *, misplaced: bool) -> dict[str, list[DecodedRow]]:
        found: dict[str, list[DecodedRow]] = {}
        for row in rows:
            for rule in self.rules(row, misplaced=misplaced):
                found.setdefault(rule, []).append(row)
        return found


def _row(ts: int | None, table: str, op: Operation, value: int) -> DecodedRow:
    image = (DecodedColumn(name="c", value=value),)
    before, after = (image, None) if op == "delete" else (None, image)
    if op == "update":
        before = (DecodedColumn(name="c", value=value - 1),)
    return DecodedRow(commit_ts=ts, schema="s", table=table, op=op, before=before, after=after)


_rows = st.builds(
    _row,
    st.one_of(st.none(), st.integers(1, 8)),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["insert", "update", "delete"]),
    st.integers(0, 2),
)
_steps = st.lists(
    st.one_of(
        st.tuples(st.just("rows"), st.lists(_rows, max_size=6), st.booleans()),
        st.tuples(st.just("watermark"), st.none(), st.booleans()),
        st.tuples(st.just("ddl"), st.sampled_from(["a", "b"]), st.integers(1, 8)),
    ),
    max_size=30,
)


@pytest.mark.parametrize("held", [1, 3, None])
@settings(max_examples=400, deadline=None)
@given(steps=_steps)
def test_one_loop_breaks_what_the_rules_row_by_row_break(
    held: int | None, steps: list[tuple[str, object, object]]
) -> None:
    default = ordering._HELD
    ordering._HELD = default if held is None else held  # held rows fingerprinted midway
    try:
        _compare(steps)
    finally:
        ordering._HELD = default


def _compare(steps: list[tuple[str, object, object]]) -> None:
    fast, slow = RowOrder(RangeTracker()), _RowByRow()
    for kind, what, flag in steps:
        if kind == "watermark":
            fast.redeliveries.clear()
            slow.redeliveries.clear()
        elif kind == "ddl":
            ddl = DecodedDDL(commit_ts=flag, schema="s", table=what, query="ALTER")  # type: ignore[arg-type]
            fast.tables.ddl(ddl)
            slow.tables.ddl(ddl)
        else:
            rows: list[DecodedRow] = what  # type: ignore[assignment]
            assert (fast.broken(rows, misplaced=bool(flag)) or {}) == slow.broken(
                rows, misplaced=bool(flag)
            )
        assert fast.newest == slow.newest
        assert fast.tables.run_ts == slow.tables.run_ts
        assert fast.tracker is not None
        assert fast.tracker.floors == slow.tracker.floors
        assert fast.tracker.first_run_ts == slow.tracker.first_run_ts


@given(st.one_of(st.none(), st.binary()), st.one_of(st.none(), st.binary()))
def test_equal_records_have_equal_message_hashes(key: bytes | None, value: bytes | None) -> None:
    copy = (
        None if key is None else bytes(bytearray(key)),
        None if value is None else bytes(bytearray(value)),
    )
    assert message_hash(key, value) == message_hash(*copy)


def test_a_missing_key_or_value_is_not_an_empty_one() -> None:
    assert len({message_hash(None, None), message_hash(b"", None), message_hash(None, b"")}) == 3
    assert message_hash(b"", b"") not in {message_hash(None, b""), message_hash(b"", None)}


def test_message_hashes_are_the_same_in_every_process() -> None:
    """Ranges are checked in other processes (Spark's workers): their hashes must agree."""
    program = (
        "from ticdc_conformance.suites.stream.range_state import message_hash;"
        "print(message_hash(b'key', b'value'), message_hash(None, b'value'))"
    )
    expected = f"{message_hash(b'key', b'value')} {message_hash(None, b'value')}"
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", program], env=environment, capture_output=True, check=True
        )
        assert done.stdout.decode().strip() == expected
