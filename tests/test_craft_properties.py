"""Hypothesis properties of the Craft codec.

* Round trip: decoding what the encoder wrote gives what a consumer should see, computed here
  from the change events by the rules of ground truth §3.2–§3.3 (column choice and order,
  value forms), not by the encoder.
* Batching: messages split exactly where TiCDC's estimate rule of §3.4 says.
* Totality: on any bytes, on mutated valid messages, and on every proper prefix of a valid
  message, the decoder returns events or raises ``DecodeError`` — and a prefix always raises.
"""

from __future__ import annotations

import contextlib
import struct
import tracemalloc
from collections.abc import Sequence

import pytest
from craft_builders import GOLDEN, build
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.generators.strategies import change_events, row_changed_events
from ticdc_conformance.reference import (
    ChangeEvent,
    ColumnInfo,
    DDLEvent,
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
    DecodeError,
    EncodeError,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TimestampValue,
    Value,
    craft,
)
from ticdc_conformance.reference.craft import _values, primitives

STRING_CODES = {15, 249, 250, 251, 252, 253, 254}
VALUE_CODES = {1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 16, 225, 245, 246, 247, 248}
"""Type codes with value bytes besides the string types; all others are written as NULL."""


def _seen(column: ColumnInfo, value: Value, flags: int) -> Value:
    """The value a consumer reads back for ``value`` in ``column`` (§3.3)."""
    code = column.effective_type_code
    if value is None or code not in VALUE_CODES | STRING_CODES:
        return None
    if code in STRING_CODES and isinstance(value, str | bytes):
        data = value.encode() if isinstance(value, str) else value
        if flags & 1:
            return data
        try:
            return data.decode()
        except UnicodeDecodeError:
            return data
    if code == 4 and isinstance(value, float | int):
        return struct.unpack("<f", struct.pack("<f", value))[0]  # type: ignore[no-any-return]
    if isinstance(value, TimestampValue):
        return TimestampValue(value.text, None)
    return value


def expected(event: ChangeEvent, config: craft.Config) -> DecodedEvent | None:
    """What decoding the encoded ``event`` gives, or ``None`` when TiCDC cannot encode it."""
    if isinstance(event, ResolvedEvent):
        return DecodedResolved(commit_ts=event.commit_ts)
    if isinstance(event, DDLEvent):
        return DecodedDDL(
            commit_ts=event.commit_ts,
            schema=event.schema,
            table=event.table,
            query=event.query,
            ddl_type=event.ddl_type,
        )
    table = event.table
    flags = table.column_flags("tiflow")
    stored = [i for i, c in enumerate(table.columns) if not c.is_virtual]
    old = stored
    if event.op == "delete" and config.delete_only_output_handle_key_columns:
        old = [i for i in stored if flags[i] & 2]
    if not old or not stored:
        return None

    def image(
        values: Sequence[Value] | None, positions: list[int]
    ) -> tuple[DecodedColumn, ...] | None:
        if values is None:
            return None
        return tuple(
            DecodedColumn(
                table.columns[i].name,
                _seen(table.columns[i], values[i], flags[i]),
                table.columns[i].effective_type_code,
                flags[i],
                bool(flags[i] & 2),
            )
            for i in positions
        )

    return DecodedRow(
        commit_ts=event.commit_ts,
        schema=table.schema,
        table=table.name,
        op=event.op,
        before=image(event.before, old),
        after=image(event.after, stored),
        partition_id=table.partition_id,
    )


configs = st.builds(
    craft.Config,
    max_batch_size=st.integers(1, 4),
    max_message_bytes=st.integers(1, 600) | st.just(10 * 1024 * 1024),
    delete_only_output_handle_key_columns=st.booleans(),
)


def decode_all(messages: list[Message]) -> list[DecodedEvent]:
    return [e for i, m in enumerate(messages) for e in craft.decode(m, message_index=i)]


@given(st.lists(change_events(), max_size=6), configs)
def test_decode_after_encode_gives_what_consumers_should_see(
    events: list[ChangeEvent], config: craft.Config
) -> None:
    wanted = [expected(e, config) for e in events]
    if None in wanted:
        with pytest.raises(EncodeError):
            craft.encode(events, config)
        return
    messages = craft.encode(events, config)
    assert all(m.key is None for m in messages)
    assert decode_all(messages) == wanted


def _estimate(event: RowChangedEvent, config: craft.Config) -> int:
    """TiCDC's estimate (§3.4), value lengths from the value encoder pinned in test_craft.py."""
    table = event.table
    flags = table.column_flags("tiflow")
    size = 32 + len(table.schema.encode()) + len(table.name.encode())
    for image, handle_only in (
        (event.after, False),
        (event.before, event.op == "delete" and config.delete_only_output_handle_key_columns),
    ):
        for i, column in enumerate(table.columns):
            if image is None or column.is_virtual or (handle_only and not flags[i] & 2):
                continue  # virtual generated columns are never written, nor estimated
            data = _values.encode_value(column.effective_type_code, image[i], flags[i])
            size += len(column.name.encode()) + len(data or b"") + 16
    return size


@given(
    st.lists(row_changed_events().filter(lambda e: e.op != "delete"), min_size=1, max_size=8),
    configs,
)
def test_batches_split_where_the_estimate_says(
    events: list[RowChangedEvent], config: craft.Config
) -> None:
    batches, rows, size = [], 0, 0
    for event in events:
        rows, size = rows + 1, size + _estimate(event, config)
        if size > config.max_message_bytes or rows >= config.max_batch_size:
            batches.append(rows)
            rows, size = 0, 0
    if rows:
        batches.append(rows)
    messages = craft.encode(events, config)
    assert [len(craft.decode(m)) for m in messages] == batches


def _decode_or_reject(value: bytes) -> None:
    with contextlib.suppress(DecodeError):
        craft.decode(Message(key=None, value=value))


@given(st.binary(max_size=64))
def test_decoder_is_total_on_any_bytes(value: bytes) -> None:
    _decode_or_reject(value)


@given(st.binary(max_size=40))
def test_decoder_is_total_behind_a_valid_trailer(tables: bytes) -> None:
    # random size tables with a trailer that fits, so the decoder gets past the first checks
    out = bytearray(b"\x01" + tables)
    primitives.write_uvarint_reversed(out, len(tables))
    _decode_or_reject(bytes(out))


def _mutations(value: bytes, data: st.DataObject) -> bytes:
    position = data.draw(st.integers(0, len(value) - 1))
    kind = data.draw(st.sampled_from(["replace", "insert", "delete"]))
    byte = bytes([data.draw(st.integers(0, 255))])
    if kind == "replace":
        return value[:position] + byte + value[position + 1 :]
    if kind == "insert":
        return value[:position] + byte + value[position:]
    return value[:position] + value[position + 1 :]


@given(st.sampled_from(GOLDEN), st.data())
def test_decoder_is_total_on_mutated_golden_messages(value: bytes, data: st.DataObject) -> None:
    for _ in range(3):
        value = _mutations(value, data)
        _decode_or_reject(value)


@given(st.lists(change_events(), min_size=1, max_size=3), st.data())
def test_decoder_is_total_on_mutated_messages(
    events: list[ChangeEvent], data: st.DataObject
) -> None:
    with contextlib.suppress(EncodeError):
        for message in craft.encode(events):
            _decode_or_reject(_mutations(message.value or b"", data))


def _assert_every_prefix_rejected(value: bytes) -> None:
    for cut in range(len(value)):
        try:
            craft.decode(Message(key=None, value=value[:cut]))
        except DecodeError as error:
            assert error.offset is not None
            assert 0 <= error.offset <= cut
        else:
            raise AssertionError(f"a cut at {cut} of {len(value)} bytes decoded")


@pytest.mark.parametrize("value", GOLDEN, ids=["resolved", "ddl", "insert"])
def test_every_proper_prefix_of_a_golden_message_is_rejected(value: bytes) -> None:
    _assert_every_prefix_rejected(value)


@given(st.lists(change_events(), min_size=1, max_size=3))
def test_every_proper_prefix_is_rejected(events: list[ChangeEvent]) -> None:
    with contextlib.suppress(EncodeError):
        for message in craft.encode(events):
            _assert_every_prefix_rejected(message.value or b"")


def _uvarint(value: int) -> bytes:
    out = bytearray()
    primitives.write_uvarint(out, value)
    return bytes(out)


HUGE = _uvarint(2**62)
ADVERSARIAL = {
    # the term dictionary claims 2^62 terms
    "dictionary": build(b"\x01\x02\x01\x00\x01", [b"\x01\x01q"], dictionary=HUGE + b"\x01a"),
    # a DDL query claims 2^62 bytes
    "query": build(b"\x01\x02\x01\x01\x01", [b"\x01" + HUGE + b"q"]),
    # a column group claims 2^62 columns
    "columns": build(
        b"\x01\x01\x01\x00\x02",
        [b"\x01" + HUGE + b"\x04\x0f\x00\x04aa"],
        [b"s", b"t", b"a"],
        [[1 + len(HUGE) + 6]],
    ),
    # the body-size table claims 2^62 events
    "bodies": b"\x01" + b"\x02\x00\x00" + HUGE + b"\x00" + bytes([3 + len(HUGE) + 1]),
}


@pytest.mark.parametrize("value", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_lengths_of_2_to_62_fail_fast_without_allocating(value: bytes) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match="4611686018427387904"):
            craft.decode(Message(key=None, value=value))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024
