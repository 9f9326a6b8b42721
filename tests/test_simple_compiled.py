"""Simple's compiled typing functions agree with their column readers, value by value.

``_compiled`` writes each reader's fast test out inline (``_readers.Quick``). What a compiled
image, update or row function answers must be what calling the readers one by one answers:
the same columns, or ``None`` where a value is refused or the image lacks or adds a column.
"""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from test_simple_plan import _NAMES, _image, _tables
from test_simple_readers import _COLUMNS, _EDGES, _raws

from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.mysql import MySQLType
from ticdc_conformance.reference.simple import _lazy, _rows
from ticdc_conformance.reference.simple._compiled import Column, image_function, update_function
from ticdc_conformance.reference.simple._plan import Plan, _object_column
from ticdc_conformance.reference.simple._readers import Invalid, column_quick
from ticdc_conformance.reference.simple._values import Raw
from ticdc_conformance.reference.simple._wire import Columns
from ticdc_conformance.reference.tables import ColumnInfo, TableInfo
from ticdc_conformance.reference.validation import info_type

Typed = tuple[DecodedColumn, ...] | None
_BINARY: tuple[MySQLType, ...] = ("binary", "varbinary", "blob")


def _one_by_one(columns: list[Column], raw: Columns) -> Typed:
    """The image typed by calling each column's reader in schema order (no fast test)."""
    if len(raw) != len(columns) or any(column.name not in raw for column in columns):
        return None
    try:
        values = [column.read(raw[column.name]) for column in columns]
    except (Invalid, ValueError, KeyError):
        return None
    return tuple(
        DecodedColumn(name=column.name, value=value, mysql_type=column.mysql_type)
        for column, value in zip(columns, values, strict=True)
    )


def _columns(table: TableInfo, *, avro: bool) -> list[Column]:
    columns = []
    for column in table.columns:
        read, quick = column_quick(column, info_type(column, raw_text=avro), avro=avro)
        columns.append(Column(column.name, column.type, read, quick))
    return columns


@settings(max_examples=3000)
@given(st.sampled_from(_COLUMNS), st.none() | _raws, st.booleans())
def test_each_fast_test_written_out_is_its_reader(column: ColumnInfo, raw: Raw, avro: bool) -> None:
    table = TableInfo(schema="s", name="t", columns=(column,))
    columns = _columns(table, avro=avro)
    image = {column.name: raw}
    assert image_function(columns)(image) == _one_by_one(columns, image)


def test_the_readers_edge_values_written_out() -> None:
    for column, raw in _EDGES:
        for avro in (False, True):
            columns = _columns(TableInfo(schema="s", name="t", columns=(column,)), avro=avro)
            image = {column.name: raw}
            assert image_function(columns)(image) == _one_by_one(columns, image)


def test_a_wide_image_written_out_is_its_readers_one_by_one() -> None:
    """Column 64's bounds are ``a64`` and ``b64``, column 100's ``a100``: the compiled
    functions' own names (binascii's base64 reader among them) must never meet a column's."""
    ints = [ColumnInfo(name=f"i{j}", type="int") for j in range(130)]
    binary = [ColumnInfo(name=f"b{j}", type=t, charset="binary") for j, t in enumerate(_BINARY)]
    table = TableInfo(schema="s", name="t", columns=(*ints, *binary))
    for avro, blob in ((False, "AAAA"), (True, b"\0\0\0")):
        columns = _columns(table, avro=avro)
        raw: Columns = {column.name: j if avro else str(j) for j, column in enumerate(ints)}
        raw |= {column.name: blob for column in binary}
        expected = _one_by_one(columns, raw)
        assert expected is not None
        assert image_function(columns)(raw) == expected
        assert update_function(columns)(raw, raw) == (expected, expected)


_images = st.dictionaries(st.sampled_from([*_NAMES, "z"]), st.none() | _raws, max_size=5)


@settings(max_examples=1500)
@given(_tables, _images, st.booleans())
def test_an_image_written_out_is_its_readers_one_by_one(
    table: TableInfo, raw: Columns, avro: bool
) -> None:
    columns = _columns(table, avro=avro)
    assert image_function(columns)(raw) == _one_by_one(columns, raw)


def _parsed_columns(table: TableInfo) -> list[Column]:
    """The columns of a JSON image as parsed, read one by one (TIMESTAMP: its object)."""
    columns = []
    for column, reader in zip(table.columns, _columns(table, avro=False), strict=True):
        ctype = info_type(column, raw_text=False)
        parsed = _object_column(reader, column, ctype) if column.type == "timestamp" else reader
        columns.append(parsed._replace(quick=None))
    return columns


@settings(max_examples=2000)
@given(_tables.flatmap(lambda table: st.tuples(st.just(table), _image(table))))
def test_a_json_image_as_parsed_is_its_readers_one_by_one(drawn: tuple[TableInfo, Json]) -> None:
    table, raw = drawn
    if not isinstance(raw, dict):
        return
    plan = Plan(table, avro=False)
    expected = _one_by_one(_parsed_columns(table), raw)  # type: ignore[arg-type]
    assert plan.parsed_image(raw) == expected  # type: ignore[arg-type]


@st.composite
def _update_documents(draw: st.DrawFn) -> tuple[TableInfo, bytes]:
    """A table and a JSON DML of it, most often an UPDATE whose images share some values."""
    table = draw(_tables)
    data, old = draw(_image(table)), draw(_image(table))
    if not isinstance(data, dict) or not isinstance(old, dict):
        data, old = {}, {}
    if draw(st.booleans()):
        kept = draw(st.sets(st.sampled_from(sorted(data)))) if data else set()
        old = {**old, **{name: data[name] for name in kept}}
    kind = draw(st.sampled_from(["UPDATE", "UPDATE", "INSERT", "DELETE"]))
    images = {"INSERT": {"data": data}, "DELETE": {"old": old}}.get(
        kind, {"data": data, "old": old}
    )
    document = {"version": 1, "database": "s", "table": "t", "type": kind, "commitTs": 5}
    document |= {"buildTs": draw(st.sampled_from([0, 7])), **images}
    return table, json.dumps(document).encode()


@settings(max_examples=1500)
@given(_update_documents())
def test_a_row_written_out_is_the_row_of_its_images(drawn: tuple[TableInfo, bytes]) -> None:
    """``Plan.parsed_row`` is ``_rows.at_once``: the images typed, the row of the members."""
    table, document = drawn
    wire = _lazy.parse(document, 0)
    plan = Plan(table, avro=False)
    assert plan.parsed_row(wire) == _rows.at_once(wire, plan)


def test_an_avro_plan_rows_take_the_general_path() -> None:
    table = TableInfo(schema="s", name="t", columns=(ColumnInfo(name="a", type="int"),))
    document = b'{"version":1,"type":"UPDATE","commitTs":5,"buildTs":0,"data":{"a":"1"},'
    wire = _lazy.parse(document + b'"old":{"a":"2"},"database":"s","table":"t"}', 0)
    plan = Plan(table, avro=True)
    assert plan.parsed_row(wire) is None  # an Avro plan types no UPDATE from JSON images
