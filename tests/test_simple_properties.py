"""Hypothesis properties of the Simple codec, both encodings and both profiles.

* Round trip: a consumer (``SimpleDecoder``) reads back what a TiCDC consumer should see,
  computed here from the change events: columns in table order, values per §4.3/§4.8 (FLOAT as
  its shortest float32 digits, TIMESTAMP in the encoder's zone, invalid UTF-8 text replaced
  by U+FFFD in JSON but kept as bytes in Avro, binary strings as bytes).
* Totality: arbitrary bytes, JSON of any shape, valid messages cut short or with a flipped
  byte: decoding returns events or raises ``DecodeError``, nothing else.
"""

from __future__ import annotations

import contextlib
import json
import re

from hypothesis import given
from hypothesis import strategies as st
from simple_helpers import codec, config, with_bootstrap

from ticdc_conformance.generators.strategies import (
    change_events,
    json_documents,
    row_changed_events,
    table_infos,
)
from ticdc_conformance.reference import (
    ColumnInfo,
    DecodedBootstrap,
    DecodedRow,
    DecodeError,
    Message,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
    simple_json,
)
from ticdc_conformance.reference._gofloat import format_float
from ticdc_conformance.reference._gojson import JsonStyle

_RAW_BYTE = re.compile("[\udc80-\udcff]")
_BINARY = {"binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob"}
_STRINGS = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext"}
COMBINATIONS = st.sampled_from([(e, p) for e in ("json", "avro") for p in ("tiflow", "ticdc")])


def seen(column: ColumnInfo, value: Value, encoding: str) -> Value:
    """What a consumer reads back for ``value`` (§4.3, §4.8)."""
    if value is None:
        return None
    if column.type in _BINARY:
        return value.encode() if isinstance(value, str) else value
    if column.type in _STRINGS and isinstance(value, bytes):
        try:
            return value.decode()
        except UnicodeDecodeError:
            if encoding == "avro":
                return value  # goavro writes the Go string's bytes raw
            return _RAW_BYTE.sub("\ufffd", value.decode("utf-8", "surrogateescape"))
    if column.type == "float" and isinstance(value, float):
        return float(format_float(value, 32, JsonStyle.GO_STD))
    if isinstance(value, TimestampValue):
        return TimestampValue(value.text, "UTC")
    return value


@given(data=st.data(), combination=COMBINATIONS)
def test_round_trip(data: st.DataObject, combination: tuple[str, str]) -> None:
    encoding, profile = combination
    table: TableInfo = data.draw(table_infos())
    event: RowChangedEvent = data.draw(row_changed_events(table))
    bootstrap, message = with_bootstrap(encoding, [event], config(profile))
    decoder = codec(encoding).new_decoder()
    [schema] = decoder.feed(bootstrap, message_index=0)
    assert isinstance(schema, DecodedBootstrap)
    assert [(c.name, c.type) for c in schema.table_info.columns] == [
        (c.name, c.type) for c in table.columns
    ]
    [row] = decoder.feed(message, message_index=1)
    assert isinstance(row, DecodedRow)
    assert (row.commit_ts, row.op, row.schema, row.table) == (
        event.commit_ts,
        event.op,
        table.schema,
        table.name,
    )
    assert row.table_id == (
        table.partition_id if table.partition_id is not None else table.table_id or 0
    )
    assert row.schema_version == (table.schema_version or 0)
    for image, decoded in ((event.before, row.before), (event.after, row.after)):
        if image is None:
            assert decoded is None
            continue
        assert decoded is not None
        expected = [
            (c.name, seen(c, v, encoding))
            for c, v in zip(table.columns, image, strict=True)
            if not c.is_virtual  # never written (§4.2)
        ]
        assert [(c.name, c.value) for c in decoded] == expected


@given(value=st.binary(max_size=64), combination=COMBINATIONS)
def test_any_bytes_raise_only_decode_error(value: bytes, combination: tuple[str, str]) -> None:
    encoding, _ = combination
    with contextlib.suppress(DecodeError):
        codec(encoding).decode(Message(key=None, value=value))
    with contextlib.suppress(DecodeError):
        codec(encoding).new_decoder().feed(Message(key=None, value=value))


@given(document=json_documents())
def test_json_of_any_shape_raises_only_decode_error(document: object) -> None:
    with contextlib.suppress(DecodeError):
        simple_json.decode(Message(key=None, value=json.dumps(document).encode()))


_MESSAGE_TYPES = st.sampled_from(
    ["WATERMARK", "BOOTSTRAP", "CREATE", "QUERY", "INSERT", "UPDATE", "DELETE"]
)


@given(
    members=st.dictionaries(
        st.sampled_from(
            [
                "version",
                "database",
                "table",
                "tableID",
                "sql",
                "commitTs",
                "buildTs",
                "schemaVersion",
                "claimCheckLocation",
                "handleKeyOnly",
                "checksum",
                "data",
                "old",
                "tableSchema",
                "preTableSchema",
            ]
        ),
        json_documents(max_leaves=6),
    ),
    message_type=_MESSAGE_TYPES,
)
def test_envelopes_of_the_wrong_shape_raise_only_decode_error(
    members: dict[str, object], message_type: str
) -> None:
    document = {"version": 1, "commitTs": 1, "buildTs": 0, **members, "type": message_type}
    decoder = simple_json.new_decoder()
    with contextlib.suppress(DecodeError):
        decoder.feed(Message(key=None, value=json.dumps(document).encode()))


@given(data=st.data(), combination=COMBINATIONS)
def test_damaged_messages_raise_only_decode_error(
    data: st.DataObject, combination: tuple[str, str]
) -> None:
    encoding, profile = combination
    events = [data.draw(change_events())]
    messages = codec(encoding).encode(events, config(profile))
    value = data.draw(st.sampled_from(messages)).value or b""
    cut = data.draw(st.integers(0, max(len(value) - 1, 0)))
    flipped = bytearray(value)
    if flipped:
        flipped[cut] ^= data.draw(st.integers(1, 255))
    decoder = codec(encoding).new_decoder()
    for damaged in (value[:cut], bytes(flipped)):
        with contextlib.suppress(DecodeError):
            decoder.feed(Message(key=None, value=damaged))
