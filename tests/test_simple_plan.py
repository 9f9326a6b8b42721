"""Simple's fast paths agree with their full paths: a typing plan's one-pass image against its
column-by-column path, and the raw ``data``/``old`` maps read as they are against the map read
value by value (same value, same finding, same error at the same path).
"""

from __future__ import annotations

import dataclasses
import json
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simple_helpers import feed_outcome, json_decoders, read_in_full
from test_simple_readers import _COLUMNS, _raws, _texts, actual, expected

from ticdc_conformance.reference import Message
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.simple import _avro, _json
from ticdc_conformance.reference.simple._plan import Found, Plan
from ticdc_conformance.reference.simple._values import TIMESTAMP_RECORD, UNSIGNED_RECORD
from ticdc_conformance.reference.simple._wire import Columns, failer
from ticdc_conformance.reference.tables import ColumnInfo, TableInfo

Outcome = tuple[str, object]

_NAMES = ("a", "b", "c", "d")


def _outcome(read: object) -> Outcome:
    """What a read returned, or the error it raised (reason and path)."""
    try:
        return "value", read() if callable(read) else read
    except DecodeError as error:
        return "error", (error.reason, error.pointer)


_tables = st.lists(st.sampled_from(_COLUMNS), min_size=0, max_size=4).map(
    lambda columns: TableInfo(
        schema="s",
        name="t",
        columns=tuple(
            dataclasses.replace(column, name=name)
            for column, name in zip(columns, _NAMES, strict=False)
        ),
    )
)
_images = st.dictionaries(
    st.sampled_from([*_NAMES, "z"]), st.none() | _raws, min_size=0, max_size=5
)


@settings(max_examples=1500)
@given(_tables, _images, st.booleans())
def test_an_image_in_one_pass_is_the_image_column_by_column(
    table: TableInfo, raw: Columns, avro: bool
) -> None:
    plan = Plan(table, avro=avro)
    fail = failer("simple", 0)
    fast: Found = []
    full: Found = []
    assert _outcome(lambda: plan.image("data", raw, 7, fail, fast)) == _outcome(
        lambda: plan._full("data", raw, 7, fail, full)
    )
    assert fast == full


def test_a_full_image_of_valid_values_takes_one_pass() -> None:
    table = TableInfo(
        schema="s",
        name="t",
        columns=(ColumnInfo(name="a", type="int"), ColumnInfo(name="b", type="varchar")),
    )
    found: Found = []
    image = Plan(table, avro=False).image("data", {"b": "x", "a": "-3"}, 1, failer("s", 0), found)
    assert [(c.name, c.value, c.mysql_type) for c in image] == [
        ("a", -3, "int"),
        ("b", "x", "varchar"),
    ]
    assert found == []


_json_values: st.SearchStrategy[Json] = st.one_of(
    st.none(),
    st.text(max_size=4),
    st.integers(),
    st.booleans(),
    st.lists(st.none(), max_size=1),
    st.fixed_dictionaries(
        {
            "location": st.sampled_from(["UTC", 3]),
            "value": st.sampled_from(["2024-02-29 12:00:00", "2024-02-29 12:00:00.5", "bad", None]),
        }
    ),
    st.fixed_dictionaries({"location": st.just("UTC")}),
)


def _json_by_value(raw: Json, member: str) -> Columns:
    fail = failer("simple-json", 0)
    assert type(raw) is dict
    return {name: _json._raw_value(value, member, name, fail) for name, value in raw.items()}


@settings(max_examples=1000)
@given(st.dictionaries(st.sampled_from(_NAMES), _json_values, max_size=4))
def test_json_maps_read_as_they_are_agree_with_every_value_read(raw: dict[str, Json]) -> None:
    fail = failer("simple-json", 0)
    assert _outcome(lambda: _json._raw_columns(raw, "old", fail)) == _outcome(
        lambda: _json_by_value(raw, "old")
    )


_avro_values = st.one_of(
    st.none(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(),
    st.text(max_size=3),
    st.binary(max_size=3),
    st.just((TIMESTAMP_RECORD, {"location": "UTC", "value": "2024-02-29 12:00:00"})),
    st.just((TIMESTAMP_RECORD, {"location": "UTC", "value": "bad"})),
    st.just((UNSIGNED_RECORD, {"value": -1})),
    st.just(("com.pingcap.simple.avro.Other", {})),
)


@settings(max_examples=1000)
@given(st.dictionaries(st.sampled_from(_NAMES), _avro_values, max_size=4))
def test_avro_maps_read_as_they_are_agree_with_every_value_read(raw: dict[str, object]) -> None:
    fail = failer("simple-avro", 0)
    path = ("payload", "data")

    def by_value() -> Columns:
        return {name: _avro._raw_value(v, (*path, name), fail) for name, v in raw.items()}

    assert _outcome(lambda: _avro._raw_columns(raw, path, fail)) == _outcome(by_value)


@settings(max_examples=3000)
@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_avro_float_columns_read_every_float32_as_the_full_path(bits: int) -> None:
    """Every float32, as fastavro widens it, is read as its shortest float32 text reads."""
    raw = struct.unpack("<f", struct.pack("<I", bits))[0]
    assert actual(_FLOAT, raw, avro=True) == expected(_FLOAT, raw, avro=True)


_FLOAT = ColumnInfo(name="c", type="float")


@pytest.mark.parametrize(
    "text", ["1.5", "0.1", "-1234.5", "3.4028235e38", "1e-45", "16777216", "0", "-0", "1e-4"]
)
def test_short_float32_values(text: str) -> None:
    raw = struct.unpack("<f", struct.pack("<f", float(text)))[0]
    for value in (raw, float(text)):  # as the float and as the double branch holds it
        assert actual(_FLOAT, value, avro=True) == expected(_FLOAT, value, avro=True)


_wire_values: st.SearchStrategy[Json] = st.one_of(
    _json_values,
    _texts,
    st.sampled_from(["1", "-5", "2024-02-29", "2024-02-29 12:00:00", "1.5", "YQ==", '{"k":1}']),
)


_VALID: dict[str, Json] = {
    "timestamp": {"location": "UTC", "value": "2024-02-29 12:00:00"},
    "date": "2024-02-29",
    "datetime": "2024-02-29 12:00:00.123",
    "time": "12:00:00",
    "float": "1.5",
    "double": "-0.25",
    "decimal": "12.5",
    "json": '{"k": [1, 2]}',
    "year": "2024",
    "vector": "[1,2]",
    **dict.fromkeys(
        ("tinyint", "smallint", "mediumint", "int", "bigint", "bit", "enum", "set"), "1"
    ),
}
"""A value each type often holds (text and binary columns take base64, which is ASCII)."""


def _image(table: TableInfo) -> st.SearchStrategy[Json]:
    columns = {
        column.name: st.just(_VALID.get(column.type, "YQ==")) | st.none() | _wire_values
        for column in table.columns
    }
    full = st.fixed_dictionaries(columns, optional={"z": _wire_values})
    some = st.dictionaries(st.sampled_from([*_NAMES, "z"]), _wire_values, max_size=5)
    return full | some | st.none() | st.just([])


@settings(max_examples=1000)
@given(
    _tables.flatmap(lambda table: st.tuples(st.just(table), _image(table), _image(table))),
    st.sampled_from(["INSERT", "UPDATE", "DELETE"]),
    st.sampled_from(["data", "old", "both"]),
    st.sampled_from([{}, {}, {"tableID": "x"}, {"schemaVersion": -1}, {"handleKeyOnly": 1}]),
)
def test_a_json_dml_typed_as_parsed_is_the_dml_read_in_full(
    drawn: tuple[TableInfo, Json, Json], kind: str, members: str, extra: dict[str, Json]
) -> None:
    """Images typed straight from the parsed document agree with the message read in full."""
    table, data, old = drawn
    images = {"data": data, "old": old} if members == "both" else {members: data}
    document = {
        "version": 1,
        "database": "s",
        "table": "t",
        "type": kind,
        "commitTs": 5,
        "buildTs": 0,
        **extra,
        **images,
    }
    message = Message(key=None, value=json.dumps(document).encode())
    lazy, full = json_decoders(table)
    with read_in_full():
        expected_outcome = feed_outcome(full, message)
    assert feed_outcome(lazy, message) == expected_outcome


@st.composite
def _updates(draw: st.DrawFn) -> tuple[TableInfo, Json, Json]:
    """A table and an UPDATE's new and old images: the old one the new one with some changes."""
    table = draw(_tables)
    data = draw(_image(table))
    old = draw(_image(table))
    if isinstance(data, dict) and isinstance(old, dict) and draw(st.booleans()):
        kept = draw(st.sets(st.sampled_from(sorted(data)))) if data else set()
        old = {**old, **{name: data[name] for name in kept}}
    return table, data, old


@settings(max_examples=1500)
@given(_updates())
def test_an_update_typed_as_parsed_is_its_two_images_typed(
    drawn: tuple[TableInfo, Json, Json],
) -> None:
    """Columns the old image repeats are the new image's: the same as typing both in turn."""
    table, data, old = drawn
    if not isinstance(data, dict) or not isinstance(old, dict):
        return
    plan = Plan(table, avro=False)
    new_image, old_image = plan.parsed_image(data), plan.parsed_image(old)  # type: ignore[arg-type]
    expected = None if new_image is None or old_image is None else (new_image, old_image)
    assert plan.parsed_update(data, old) == expected  # type: ignore[arg-type]


@settings(max_examples=800)
@given(_updates())
def test_a_json_update_typed_as_parsed_is_the_update_read_in_full(
    drawn: tuple[TableInfo, Json, Json],
) -> None:
    table, data, old = drawn
    document = {"version": 1, "type": "UPDATE", "commitTs": 5, "buildTs": 0, "data": data}
    document |= {"old": old, "database": "s", "table": "t"}
    message = Message(key=None, value=json.dumps(document).encode())
    lazy, full = json_decoders(table)
    with read_in_full():
        expected_outcome = feed_outcome(full, message)
    assert feed_outcome(lazy, message) == expected_outcome


def test_an_avro_plan_never_types_an_update_from_equal_values() -> None:
    """Avro's numbers are equal across kinds (0.0 == -0.0, 1 == True): no reuse for them."""
    table = TableInfo(
        schema="s", name="t", columns=(ColumnInfo(name="d", type="double", key="primary"),)
    )
    assert Plan(table, avro=True).parsed_update({"d": 0.0}, {"d": -0.0}) is None
    json_plan = Plan(table, avro=False)
    typed = json_plan.parsed_update({"d": "1.5"}, {"d": "1.5"})
    assert typed is not None
    assert typed[0] == typed[1]
