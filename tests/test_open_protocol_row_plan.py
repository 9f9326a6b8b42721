"""Open Protocol row plans write what the full path writes, and refuse what it refuses.

``_row_plan.RowPlan`` writes a row's key and value JSON from a plan made once per table;
every value it does not vouch for sends the row to the full path. Here every encode runs both
ways, with plans and with every table's plan taken away, on valid rows, rows with one value
swapped for any other value, NULL primary keys, and with checks off (``unchecked_values``):
the same messages, or the same error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from itertools import islice
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.generators.simulator import Transaction
from ticdc_conformance.generators.strategies import row_changed_events, table_infos
from ticdc_conformance.generators.workload import SHOP_TABLES, shop_workload
from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    EncodeError,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
    open_protocol,
)
from ticdc_conformance.reference._gojson import JsonStyle
from ticdc_conformance.reference.open_protocol import _encode, _row_plan
from ticdc_conformance.reference.open_protocol._columns import write_value
from ticdc_conformance.reference.open_protocol._config import Config
from ticdc_conformance.reference.open_protocol._plan_writers import Unplanned, column_writer
from ticdc_conformance.reference.validation import column_checks, unchecked_values

ANY_VALUE: st.SearchStrategy[Value] = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**64 - 1),
    st.sampled_from([0, -1, 1901, 2155, 2156, 255, 256, 2**63 - 1, 2**63, 2**64 - 1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from([0.0, -0.0, 3.4028234663852886e38, 3.4028235677973366e38, 1e-7, 0.1]),
    st.text(max_size=40),
    st.binary(max_size=40),
    st.sampled_from(["2026-01-02 03:04:05", "2026-01-02 03:04:05.123", "12:00:00", "{}", "[1]"]),
    st.builds(DecimalValue, st.sampled_from(["1.50", "-0.01", "12345", "123456789012.5"])),
    st.builds(
        TimestampValue,
        st.sampled_from(["2026-01-02 03:04:05", "2026-01-02 03:04:05.000001"]),
        st.sampled_from([None, "UTC"]),
    ),
)
CONFIGS = st.builds(
    Config,
    profile=st.sampled_from(["tiflow", "ticdc"]),
    output_old_value=st.booleans(),
    only_output_updated_columns=st.booleans(),
    delete_only_output_handle_key_columns=st.booleans(),
    max_batch_size=st.integers(1, 4),
)


@contextmanager
def full_path_only() -> Iterator[None]:
    """No table has a plan: every row takes the full path."""
    with mock.patch.object(_encode, "plan_of", return_value=None):
        yield


def outcome(events: Sequence[RowChangedEvent], config: Config) -> object:
    """The messages ``encode`` writes, or its error's text and event index."""
    try:
        return [(m.key, m.value) for m in open_protocol.encode(events, config)]
    except EncodeError as error:
        return ("error", str(error), error.event_index)


@st.composite
def swapped(draw: st.DrawFn, event: RowChangedEvent) -> RowChangedEvent:
    """``event`` with one value of one image swapped for any value."""
    images = [name for name in ("before", "after") if getattr(event, name) is not None]
    name = draw(st.sampled_from(images))
    image = list(getattr(event, name))
    if not image:
        return event
    image[draw(st.integers(0, len(image) - 1))] = draw(ANY_VALUE)
    if name == "before":
        return dataclasses.replace(event, before=tuple(image))
    return dataclasses.replace(event, after=tuple(image))


@st.composite
def table_rows(draw: st.DrawFn) -> list[RowChangedEvent]:
    """A few rows of one table, some with a value swapped."""
    table = draw(table_infos())
    rows = draw(st.lists(row_changed_events(table), min_size=1, max_size=4))
    return [draw(swapped(row)) if draw(st.booleans()) else row for row in rows]


@settings(max_examples=400)
@given(rows=table_rows(), config=CONFIGS, checked=st.booleans())
def test_plans_write_what_the_full_path_writes(
    rows: list[RowChangedEvent], config: Config, checked: bool
) -> None:
    with unchecked_values() if not checked else nullcontext():
        planned = outcome(rows, config)
        with full_path_only():
            assert planned == outcome(rows, config)


@given(config=CONFIGS, count=st.integers(1, 400))
def test_plans_write_the_shop_rows_as_the_full_path(config: Config, count: int) -> None:
    rows = [
        row
        for item in islice(shop_workload(count), count)
        if isinstance(item, Transaction)
        for row in item.rows
    ]
    planned = outcome(rows, config)
    with full_path_only():
        assert planned == outcome(rows, config)


def test_the_shop_tables_rows_take_their_plans() -> None:
    config = Config()
    for item in islice(shop_workload(3), 3000):
        if not isinstance(item, Transaction):
            continue
        for row in item.rows:
            plan = _row_plan.plan_of(row.table, config)
            assert plan is not None
            plan.encode(row)  # no Unplanned: no shop row needs the full path
    assert all(_row_plan.plan_of(table, config) is not None for table in SHOP_TABLES)


def test_a_virtual_column_or_a_column_option_leaves_the_table_unplanned() -> None:
    table = SHOP_TABLES[0]
    virtual = dataclasses.replace(
        table,
        columns=(*table.columns[:-1], dataclasses.replace(table.columns[-1], generated="virtual")),
    )
    assert _row_plan.plan_of(virtual, Config()) is None
    assert _row_plan.plan_of(table, Config(only_output_updated_columns=True)) is None
    assert _row_plan.plan_of(table, Config(delete_only_output_handle_key_columns=True)) is None


WRITER_COLUMNS = (
    [ColumnInfo(name="c", type="datetime", decimal=fsp) for fsp in (None, 0, 3, 6)]
    + [ColumnInfo(name="c", type="timestamp", decimal=fsp) for fsp in (None, 0, 6)]
    + [
        ColumnInfo(name="c", type="varchar", length=5),
        ColumnInfo(name="c", type="char", length=3),
        ColumnInfo(name="c", type="text"),
        ColumnInfo(name="c", type="varchar", length=8, key="primary"),
        ColumnInfo(name="c", type="blob"),
        ColumnInfo(name="c", type="decimal", length=6, decimal=2),
        ColumnInfo(name="c", type="decimal", length=4, decimal=0),
        ColumnInfo(name="c", type="decimal", length=65, decimal=30, key="primary"),
        ColumnInfo(name="c", type="decimal"),
        ColumnInfo(name="c", type="blob", key="primary"),
        ColumnInfo(name="c", type="tinyblob"),
        ColumnInfo(name="c", type="float"),
        ColumnInfo(name="c", type="double"),
        ColumnInfo(name="c", type="bigint", unsigned=True),
        ColumnInfo(name="c", type="tinyint"),
        ColumnInfo(name="c", type="year"),
        ColumnInfo(name="c", type="bit", length=8),
        ColumnInfo(name="c", type="enum", elements=("a", "b")),
        ColumnInfo(name="c", type="set", elements=("a", "b", "c")),
    ]
)
CLOSE_TO_VALID = st.builds(
    "{:04d}-{:02d}-{:02d} {:02d}:{:02d}:{:02d}{}".format,
    st.sampled_from([0, 1969, 1970, 2026, 2037, 2038, 9999]),
    st.integers(0, 13),
    st.integers(0, 32),
    st.integers(0, 24),
    st.integers(0, 60),
    st.integers(0, 60),
    st.sampled_from(["", ".", ".1", ".123", ".123456", ".1234567"]),
)
"""Datetimes around the edges of the quick forms: most valid, some not, some zero."""
NEAR_TEMPORAL = st.from_regex(
    r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}( [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{0,7})?)?\Z"
)


@settings(max_examples=1500)
@given(
    column=st.sampled_from(WRITER_COLUMNS),
    style=st.sampled_from(list(JsonStyle)),
    value=st.one_of(
        ANY_VALUE,
        NEAR_TEMPORAL,
        CLOSE_TO_VALID,
        CLOSE_TO_VALID.filter(
            lambda text: 0 != len(text.partition(".")[2]) <= 6 or "." not in text
        ).map(TimestampValue),
        st.builds(
            TimestampValue,
            st.from_regex(
                r"\A[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?\Z"
            ),
            st.sampled_from([None, "UTC"]),
        ),
        st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=9),
    ),
)
def test_a_plan_writer_writes_only_valid_values_as_the_full_path(
    column: ColumnInfo, style: JsonStyle, value: Value
) -> None:
    table = TableInfo(schema="s", name="t", table_id=1, columns=(column,))
    flags = table.column_flags("tiflow")[0]
    writer = column_writer(column, flags, column_checks(table)[0], style)
    assert writer is not None
    try:
        text = writer(value)
    except Unplanned:
        return
    if value is None:
        assert column.key != "primary"
    else:
        ctype, check = column_checks(table)[0]
        assert check(value, ctype) is None
    assert text == write_value(column.effective_type_code, value, flags, style)


NEAR_DECIMAL = st.builds(DecimalValue, st.from_regex(r"\A-?[0-9]{1,8}(\.[0-9]{1,4})?\Z"))
"""DECIMALs around the quick forms' digit counts."""


@settings(max_examples=1500)
@given(
    column=st.sampled_from(WRITER_COLUMNS),
    profile=st.sampled_from(["tiflow", "ticdc"]),
    value=st.one_of(ANY_VALUE, NEAR_DECIMAL, NEAR_TEMPORAL, CLOSE_TO_VALID),
)
def test_a_plan_image_writes_what_its_writer_writes(
    column: ColumnInfo, profile: str, value: Value
) -> None:
    # the compiled image tests each writer's quick form inline, then calls the writer
    table = TableInfo(schema="s", name="t", table_id=1, columns=(column,))
    config = Config(profile=profile)  # type: ignore[arg-type]
    style = JsonStyle.GO_STD if profile == "tiflow" else JsonStyle.JSONITER
    flags = table.column_flags(config.profile)[0]
    writer = column_writer(column, flags, column_checks(table)[0], style)
    plan = _row_plan.plan_of(table, config)
    assert writer is not None
    assert plan is not None
    try:
        text = writer(value)
    except Unplanned:
        with pytest.raises(Unplanned):
            plan.image((value,))
        return
    prefix = _row_plan.column_prefix((column.name, column.effective_type_code, flags), style)
    assert plan.image((value,)) == "{" + prefix + text + "}}"


def test_a_table_at_a_new_schema_version_keeps_its_plan() -> None:
    config = Config()
    table = SHOP_TABLES[0]
    plan = _row_plan.plan_of(table, config)
    moved = dataclasses.replace(table, schema_version=(table.schema_version or 0) + 1)
    assert _row_plan.plan_of(moved, config) is plan
    renamed = dataclasses.replace(table, name="orders2")
    assert _row_plan.plan_of(renamed, config) is not plan
    assert _row_plan.plan_of(table, Config(profile="ticdc")) is not plan


@pytest.mark.parametrize("value", [3.4028235677973366e38, -1e300])
def test_an_unchecked_float_beyond_float32_is_an_encode_error_both_ways(value: float) -> None:
    """Go cannot hold it in a FLOAT: a writer's refusal, with or without a plan."""
    table = TableInfo(schema="s", name="t", columns=(ColumnInfo(name="f", type="float"),))
    event = RowChangedEvent(commit_ts=1, table=table, op="insert", after=(value,))
    config = Config(profile="tiflow")
    with unchecked_values():
        planned = outcome([event], config)
        with full_path_only():
            assert outcome([event], config) == planned
    assert planned == (
        "error",
        f"open: event 0: column 'f': {value!r} does not fit a FLOAT (float32)",
        0,
    )
