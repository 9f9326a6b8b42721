"""Simple's fast paths agree with their full paths: a typing plan's one-pass image against its
column-by-column path, and the raw ``data``/``old`` maps read as they are against the map read
value by value (same value, same finding, same error at the same path).
"""

from __future__ import annotations

import dataclasses
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_simple_readers import _COLUMNS, _raws, actual, expected

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
