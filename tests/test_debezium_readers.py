"""The readers chosen once per field schema agree with ``read_column`` plus the validity check.

Differential: for any field schema and payload value, a reader gives the same column (value,
its Python type, ambiguity, codes) and names the same type exactly when the value is invalid
for it, or gives the same error, as ``read_column``, ``field_type`` and ``problem`` value by
value. The decoder's schema cache may never change
a decoded result: a document whose ``schema`` text cannot be told, or that names ``schema``
twice, is read afresh.
"""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference import debezium
from ticdc_conformance.reference.debezium import _decode, _readers
from ticdc_conformance.reference.debezium._read import LOGICAL_TYPES, field_type, read_column
from ticdc_conformance.reference.debezium._readers import (
    Reader,
    column_reader,
    schema_text,
    whole_value,
)
from ticdc_conformance.reference.decoded import DecodedRow
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.jsondoc import Json, JsonObject
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.validity import problem

Outcome = tuple[str, ...]

_TIDB_TYPES = [
    "bigint unsigned",
    "bigint",
    "int unsigned",
    "tinyint",
    "smallint unsigned",
    "decimal",
    "double",
    "float",
    "year",
    "bit",
    "binary",
    "blob",
    "varchar",
    "text",
    "enum",
    "set",
    "datetime",
    "timestamp",
    "date",
    "time",
    "json",
    "char(5)",
    "",
]

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**65), 2**65)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)


@st.composite
def fields(draw: st.DrawFn) -> JsonObject:
    """A field schema, mostly well formed, sometimes not."""
    field: JsonObject = {}
    if draw(st.booleans()):
        field["type"] = draw(
            st.sampled_from(["boolean", "int16", "int32", "int64", "float", "double"])
            | st.sampled_from(["bytes", "string", "struct"])
            | _scalars
        )
    if draw(st.booleans()):
        field["name"] = draw(st.sampled_from(sorted(LOGICAL_TYPES)) | st.just("x") | _scalars)
    if draw(st.booleans()):
        field["tidb_type"] = draw(st.sampled_from(_TIDB_TYPES) | _scalars)
    if draw(st.booleans()):
        field["optional"] = draw(st.booleans() | _scalars)
    if draw(st.booleans()):
        field["default"] = draw(_scalars | st.sampled_from(["2020", "YQ==", "a"]))
    if draw(st.booleans()):
        parameters: list[Json] = [
            {"allowed": "a,b,c"},
            {"allowed": "a\\,b,c"},
            {"length": "3"},
            {"length": "x"},
            {},
            "p",
        ]
        field["parameters"] = draw(st.sampled_from(parameters))
    return field


_values = (
    _scalars
    | st.sampled_from(["a", "a,b", "c,a", "YQ==", "AQI=", "2020", "05", "[1,2]", "{}"])
    | st.sampled_from(["2020-01-02T03:04:05Z", "2020-01-02T03:04:05.5Z", "x\udcff"])
    | st.binary(max_size=6).map(lambda data: base64.b64encode(data).decode())
    | st.integers(-(2**63), 2**63 - 1)
    | st.lists(st.integers(), max_size=2)
    # days, epoch ms and µs of years 0000-9999 (the readers skip the check of their dates)
    | st.integers(-719_528, 2_932_896)
    | st.integers(-62_167_219_200_000, 253_402_300_799_999)
    | st.integers(-62_167_219_200_000_000, 253_402_300_799_999_999)
    | st.sampled_from(["2020-02-30T00:00:00Z", "2039-01-01T00:00:00Z", "1970-01-01T24:00:00Z"])
)


def expected(field: JsonObject, raw: Json, handle_key: bool | None) -> Outcome:
    """What ``read_column`` and the check's type (unless a NULL or raw default) make of it."""
    try:
        column = read_column("c", raw, field, handle_key)
    except ValueError as error:
        return "error", str(error)
    value = column.value
    raw_default = column.ambiguity == "null-or-default" or (
        "default" in field and column.mysql_type == "year" and type(value) is int and value < 100
    )
    ctype = None if value is None or raw_default else field_type(field, column.mysql_type)
    if ctype is not None and problem(value, ctype) is None:
        ctype = None  # valid: the reader names no type
    return "column", repr(column), type(value).__name__, repr(ctype)


def actual(
    field: JsonObject, raw: Json, handle_key: bool | None, reader: Reader | None = None
) -> Outcome:
    try:
        column, ctype = (reader or column_reader(field))("c", raw, handle_key)
    except ValueError as error:
        return "error", str(error)
    return "column", repr(column), type(column.value).__name__, repr(ctype)


@settings(max_examples=3000)
@given(field=fields(), raw=_values, handle_key=st.none() | st.booleans())
def test_reader_matches_read_column(field: JsonObject, raw: Json, handle_key: bool | None) -> None:
    assert actual(field, raw, handle_key) == expected(field, raw, handle_key)


_ENUM_FIELDS: list[JsonObject] = [
    {"type": "string", "name": name, "parameters": {"allowed": allowed}, "field": "c"}
    for name in ("io.debezium.data.Enum", "io.debezium.data.EnumSet")
    for allowed in ("a,b,c", "a\\,b,c", "a,a", "x\\'y,z")
]


@settings(max_examples=500)
@given(
    field=st.sampled_from(_ENUM_FIELDS) | fields(),
    raws=st.lists(_values | st.sampled_from(["a", "b", "", "a,b", "a,a", "z", "x'y"]), max_size=8),
)
def test_a_reader_reads_a_value_again_alike(field: JsonObject, raws: list[Json]) -> None:
    """One reader, each value read twice (ENUM and SET readers remember the members they
    placed): every outcome is ``read_column``'s."""
    reader = column_reader(field)
    for raw in raws + raws:
        assert actual(field, raw, None, reader) == expected(field, raw, None)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('{"payload":{},"schema":{"a":1}}', '{"a":1}'),
        ('{"payload":{"schema":1},"schema":{}}', "{}"),
        ('{"schema":{},"payload":{}}', None),  # no comma before the name
        ('{"payload":{},"schema":{}} ', None),  # the text does not end with the brace
    ],
)
def test_schema_text(text: str, key: str | None) -> None:
    assert schema_text(text) == key


@pytest.mark.parametrize(
    ("text", "whole"),
    [('{"a":1}', True), ("{}}", False), ('1,"b":2', False), (" {}", False), ("{", False)],
)
def test_whole_value(text: str, whole: bool) -> None:
    assert whole_value(text) is whole


_FIELD = '{"type":"int16","optional":false,"field":"a"}'


def _value(payload: str, schema_fields: str, *, twice: str = "") -> bytes:
    image = f'{{"type":"struct","optional":true,"field":"after","fields":[{schema_fields}]}}'
    schema = f'{{"type":"struct","fields":[{image}]}}'
    return (f'{{"payload":{payload}{twice},"schema":{schema}}}').encode()


def test_a_cached_schema_does_not_outlive_a_name_twice() -> None:
    """``schema`` twice: the first is the one read, though the last text is a cached one."""
    row = '{"op":"c","source":{},"before":null,"after":{"a":70000}}'
    wide = '{"type":"int32","optional":false,"field":"a"}'
    cached = _value(row, _FIELD)
    with pytest.raises(DecodeError, match="int16"):
        debezium.decode(Message(key=None, value=cached))  # the plan for int16 is now kept
    first = _value(row, wide).decode().removesuffix("}")
    last = cached.decode().split(',"schema":', 1)[1]
    twice = (first + ',"schema":' + last).encode()
    (event,) = debezium.decode(Message(key=None, value=twice))
    assert isinstance(event, DecodedRow)
    assert event.after is not None
    assert event.after[0].value == 70000


@settings(max_examples=300)
@given(values=st.lists(st.integers(-(2**15), 2**15) | st.none(), min_size=1, max_size=4))
def test_cached_and_fresh_decodes_agree(values: list[int | None]) -> None:
    for value in values:
        member = "null" if value is None else str(value)
        row = '{"op":"c","source":{},"before":null,"after":{"a":' + member + "}}"
        message = Message(key=None, value=_value(row, _FIELD))
        cached = _outcome(message)
        _decode._PLANS.clear()
        assert _outcome(message) == cached


def _outcome(message: Message) -> str:
    try:
        return repr(debezium.decode(message))
    except DecodeError as error:
        return f"error {error}"


_ROW = '{"op":"c","source":{},"before":null,"after":{"a":1}}'


@pytest.mark.parametrize(
    "head",
    [
        "{",  # `{,"schema":…}`: no member before the comma
        '{"payload":' + _ROW + ",",
        '{"payload":1',
        '{"x":1,"payload":' + _ROW,
        '{"payload":' + _ROW + ',"schema":{}',
        '{"payload":' + _ROW + ',"payload":' + _ROW,
        '{"payload":' + _ROW,
    ],
)
def test_a_known_schema_reads_as_the_whole_document(head: str) -> None:
    """The document after a known schema's text decodes as it does with nothing kept."""
    schema = _value(_ROW, _FIELD).decode().split(',"schema":', 1)[1]
    message = Message(key=None, value=(head + ',"schema":' + schema).encode())
    debezium.decode(Message(key=None, value=_value(_ROW, _FIELD)))  # the schema is known now
    known = _outcome(message)
    _decode._PLANS.clear()
    _readers._SCHEMAS.clear()
    assert _outcome(message) == known


_DATE_FIELDS: list[JsonObject] = [
    {"type": "int32", "optional": True, "name": "io.debezium.time.Date", "field": "c"},
    {"type": "int64", "optional": True, "name": "io.debezium.time.Timestamp", "field": "c"},
    {"type": "int64", "optional": True, "name": "io.debezium.time.MicroTimestamp", "field": "c"},
    {"type": "string", "optional": True, "name": "io.debezium.time.ZonedTimestamp", "field": "c"},
]
_ZONED = st.from_regex(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?Z", fullmatch=True
)


@settings(max_examples=1500)
@given(
    field=st.sampled_from(_DATE_FIELDS),
    raw=st.integers(-62_167_219_200_000_000, 253_402_300_799_999_999)
    | st.integers(-719_528, 2_932_896)
    | _ZONED,
)
def test_dates_read_are_valid(field: JsonObject, raw: int | str) -> None:
    """The dates and datetimes the readers skip the check of: always valid, or an error."""
    assert actual(field, raw, None) == expected(field, raw, None)


def _source_outcome(read: Callable[[], object]) -> str:
    try:
        return repr(read())
    except DecodeError as error:
        return f"error {error} {error.path}"


_members: st.SearchStrategy[Json] = (
    st.none() | st.booleans() | st.integers(-2, 2**64) | st.text(max_size=2) | st.just([])
)


@given(
    source=st.dictionaries(
        st.sampled_from(["commit_ts", "start_ts", "db", "table", "cluster_id", "x"]), _members
    )
    | _members,
    present=st.booleans(),
)
def test_row_source_matches_source_and_start_ts(source: Json, present: bool) -> None:
    """A row's source read at once agrees with ``_source`` then ``_start_ts``, errors too."""
    obj: JsonObject = {"source": source} if present else {}
    doc = _decode._Doc("value", 0)
    payload = doc.members(obj, "payload")

    def full() -> object:
        return (*_decode._source(payload, doc), _decode._start_ts(payload, doc))

    assert _source_outcome(lambda: _decode._row_source(payload, doc)) == _source_outcome(full)
