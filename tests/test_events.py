"""Change events and values validate on construction (ground truth §1.1, §2.3); the unchecked
constructors for producers and readers that checked already make the same objects."""

from __future__ import annotations

import dataclasses
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.generators.strategies import row_changed_events
from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    IndexInfo,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
)
from ticdc_conformance.reference.events import valid_row_event
from ticdc_conformance.reference.values import check_value, valid_decimal, valid_timestamp

INT_PK = TableInfo(
    schema="s", name="t", columns=(ColumnInfo(name="id", type="bigint", key="primary"),)
)
TEXT_PK = TableInfo(
    schema="s", name="t", columns=(ColumnInfo(name="id", type="varchar", key="primary"),)
)
UNSIGNED_PK = TableInfo(
    schema="s",
    name="t",
    columns=(ColumnInfo(name="id", type="bigint", unsigned=True, key="primary"),),
)
PK_INDEX = TableInfo(
    schema="s",
    name="t",
    columns=(ColumnInfo(name="id", type="int"),),
    indexes=(IndexInfo(name="PRIMARY", columns=("id",), primary=True),),
)


@pytest.mark.parametrize(
    ("event", "row_id"),
    [
        (RowChangedEvent(commit_ts=1, table=INT_PK, op="insert", after=(42,)), 42),
        (RowChangedEvent(commit_ts=1, table=INT_PK, op="delete", before=(7,)), 7),
        (RowChangedEvent(commit_ts=1, table=PK_INDEX, op="insert", after=(5,)), 5),
        (RowChangedEvent(commit_ts=1, table=UNSIGNED_PK, op="insert", after=(2**64 - 1,)), -1),
        (RowChangedEvent(commit_ts=1, table=TEXT_PK, op="insert", after=("a",)), 0),
        (RowChangedEvent(commit_ts=1, table=TEXT_PK, op="insert", after=("a",), row_id=9), 9),
    ],
)
def test_row_id_is_the_int_handle(event: RowChangedEvent, row_id: int) -> None:
    assert event.effective_row_id() == row_id


@pytest.mark.parametrize(
    "make",
    [
        lambda: RowChangedEvent(commit_ts=-1, table=INT_PK, op="insert", after=(1,)),
        lambda: RowChangedEvent(commit_ts=2**64, table=INT_PK, op="insert", after=(1,)),
        lambda: RowChangedEvent(commit_ts=1, table=INT_PK, op="merge", after=(1,)),  # type: ignore[arg-type]
        lambda: RowChangedEvent(commit_ts=1, table=INT_PK, op="insert", before=(1,)),
        lambda: RowChangedEvent(commit_ts=1, table=INT_PK, op="update", after=(1,)),
        lambda: RowChangedEvent(commit_ts=1, table=INT_PK, op="insert", after=(1, 2)),
        lambda: RowChangedEvent(commit_ts=1, table=INT_PK, op="insert", after=(True,)),
        lambda: RowChangedEvent(commit_ts=1, table=INT_PK, op="insert", after=(1,), row_id=2**63),
        lambda: DDLEvent(commit_ts=1, schema="", table="", query="", ddl_type=256),
        lambda: ResolvedEvent(commit_ts=True),
        lambda: DecimalValue("1e5"),
        lambda: TimestampValue("2020-01-01T00:00:00"),
    ],
)
def test_invalid_events_are_rejected(make: object) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - each message is specific to its case
        make()  # type: ignore[operator]


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (None, None),
        (2**64 - 1, None),
        (-(2**63), None),
        (b"", None),
        (1.5, None),
        (2**64, "outside"),
        (float("nan"), "NaN"),
        (True, "BOOL"),
        ([1], "list"),
    ],
)
def test_check_value(value: object, problem: str | None) -> None:
    result = check_value(value)
    assert (result is None) if problem is None else (problem in (result or ""))


def test_valid_row_event_takes_the_members_in_order_with_their_defaults() -> None:
    parameters = list(inspect.signature(valid_row_event).parameters.values())
    members = dataclasses.fields(RowChangedEvent)
    assert [p.name for p in parameters] == [m.name for m in members]
    for parameter, member in zip(parameters, members, strict=True):
        default = member.default
        assert parameter.default == (
            inspect.Parameter.empty if default is dataclasses.MISSING else default
        )


@given(row_changed_events())
def test_valid_row_event_makes_the_event_the_constructor_makes(event: RowChangedEvent) -> None:
    members = [getattr(event, m.name) for m in dataclasses.fields(RowChangedEvent)]
    made = valid_row_event(*members)
    assert made == event
    assert hash(made) == hash(event)
    assert repr(made) == repr(event)
    assert [getattr(made, m.name) for m in dataclasses.fields(RowChangedEvent)] == members
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.op = "delete"  # type: ignore[misc]


@given(st.from_regex(r"-?[0-9]{1,30}(\.[0-9]{1,30})?", fullmatch=True))
def test_valid_decimal_makes_the_value_the_constructor_makes(text: str) -> None:
    made, expected = valid_decimal(text), DecimalValue(text)
    assert (made, hash(made), repr(made)) == (expected, hash(expected), repr(expected))
    assert made.text is text


@given(
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}", fullmatch=True),
    st.none() | st.sampled_from(["UTC", "Asia/Shanghai"]),
)
def test_valid_timestamp_makes_the_value_the_constructor_makes(text: str, zone: str | None) -> None:
    made, expected = valid_timestamp(text, zone), TimestampValue(text, zone)
    assert (made, hash(made), repr(made)) == (expected, hash(expected), repr(expected))
    assert valid_timestamp(text) == TimestampValue(text)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.zone = "UTC"  # type: ignore[misc]
