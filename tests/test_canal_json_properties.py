"""Hypothesis properties of the Canal-JSON codec: rows of every type round-trip to what the
message keeps (docs/canal-json.md), and the decoder is total: on any input it returns events or
raises ``DecodeError``."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.generators.strategies import (
    change_events,
    json_documents,
    row_changed_events,
)
from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecodedDDL,
    DecodedResolved,
    DecodedRow,
    DecodeError,
    EncodeError,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TimestampValue,
    Value,
    canal_json,
)
from ticdc_conformance.reference._gofloat import format_float_positional
from ticdc_conformance.reference.losses import replace_invalid_utf8
from ticdc_conformance.reference.mysql import BINARY_TYPES, type_to_str

_EXTENSION = {"enable-tidb-extension": "true"}


def expected(column: ColumnInfo, value: Value) -> Value:
    """What the decoder gives back for ``value``: strings keep what the message can carry."""
    if value is None:
        return None
    if isinstance(value, float):
        return float(format_float_positional(value, 32 if column.type == "float" else 64))
    if isinstance(value, TimestampValue):
        return TimestampValue(value.text)
    if isinstance(value, str | bytes):
        data = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        if type_to_str(column.type, column.effective_charset) in BINARY_TYPES:
            return data
        return replace_invalid_utf8(data).decode()
    return value


@pytest.mark.parametrize("profile", canal_json.PROFILES)
@settings(max_examples=40, deadline=None)
@given(event=row_changed_events())
def test_rows_round_trip(profile: str, event: RowChangedEvent) -> None:
    config = canal_json.config_from_options(_EXTENSION, profile=profile)
    (message,) = canal_json.encode([event], config)
    (row,) = canal_json.decode(message)
    assert isinstance(row, DecodedRow)
    assert (row.commit_ts, row.schema, row.table, row.op) == (
        event.commit_ts,
        event.table.schema,
        event.table.name,
        event.op,
    )
    stored = [(i, c) for i, c in enumerate(event.table.columns) if not c.is_virtual]
    for image, decoded in ((event.before, row.before), (event.after, row.after)):
        if image is None:
            assert decoded is None
            continue
        assert decoded is not None
        assert [c.name for c in decoded] == [c.name for _, c in stored]
        for (i, column), got in zip(stored, decoded, strict=True):
            want = expected(column, image[i])
            assert repr(got.value) == repr(want), column


@settings(max_examples=40, deadline=None)
@given(event=change_events())
def test_every_event_decodes_to_its_kind(event: RowChangedEvent | DDLEvent | ResolvedEvent) -> None:
    messages = canal_json.encode([event], canal_json.config_from_options(_EXTENSION))
    decoded = [item for message in messages for item in canal_json.decode(message)]
    if isinstance(event, DDLEvent):
        assert decoded == [
            DecodedDDL(
                commit_ts=event.commit_ts,
                schema=event.schema,
                table=event.table,
                query=event.query,
                ddl_kind=decoded[0].ddl_kind,  # type: ignore[union-attr]
            )
        ]
    elif isinstance(event, ResolvedEvent):
        assert decoded == [DecodedResolved(commit_ts=event.commit_ts)]
    else:
        assert len(decoded) == 1


def _total(value: bytes | None) -> None:
    try:
        events = canal_json.decode(Message(key=None, value=value))
    except DecodeError as error:
        assert error.offset is not None or error.path is not None or value is None
    else:
        assert isinstance(events, list)


@given(value=st.binary(max_size=64) | st.none())
def test_decoder_is_total_on_bytes(value: bytes | None) -> None:
    _total(value)


@given(document=json_documents())
def test_decoder_is_total_on_json(document: object) -> None:
    _total(json.dumps(document).encode())


_REPLACEMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**65), 2**65),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
)


@settings(max_examples=40, deadline=None)
@given(event=row_changed_events(), data=st.data())
def test_decoder_is_total_on_broken_messages(event: RowChangedEvent, data: st.DataObject) -> None:
    """A real message with one member replaced or removed: events or ``DecodeError``."""
    try:
        (message,) = canal_json.encode([event], canal_json.config_from_options(_EXTENSION))
    except EncodeError:
        return
    assert message.value is not None
    document = json.loads(message.value)
    target = document
    name = data.draw(st.sampled_from(sorted(document)))
    if isinstance(document[name], dict) and document[name] and data.draw(st.booleans()):
        target = document[name]
        name = data.draw(st.sampled_from(sorted(target)))
    if data.draw(st.booleans()):
        del target[name]
    else:
        target[name] = data.draw(_REPLACEMENTS)
    _total(json.dumps(document).encode())
