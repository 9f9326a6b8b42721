"""Hypothesis properties of the Open Protocol codec.

* Round trip: decoding what the encoder wrote gives what a consumer should see, computed here
  independently of the encoder from the change events (``expected``): the column set, order
  and value forms of ground truth §2.4–§2.5 and the JSON writers of §1.4.
* Totality: on any bytes, and on every proper prefix of a valid message, the decoder returns
  events or raises ``DecodeError``, nothing else.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence

from helpers import frame
from hypothesis import example, given
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
    Message,
    ResolvedEvent,
    TimestampValue,
    Value,
    open_protocol,
)
from ticdc_conformance.reference._gofloat import format_float
from ticdc_conformance.reference._gojson import JsonStyle

_RAW_BYTE = re.compile("[\udc80-\udcff]")


def _as_bytes(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode()


def _text_or_bytes(data: bytes, profile: str) -> Value:
    try:
        return data.decode()
    except UnicodeDecodeError:
        if profile == "ticdc":
            return data  # jsoniter copies the bytes raw (§1.4)
        # encoding/json writes one U+FFFD per byte that is not valid UTF-8 (§1.4)
        return _RAW_BYTE.sub("\ufffd", data.decode("utf-8", "surrogateescape"))


def _seen(column: ColumnInfo, value: Value, flags: int, profile: str) -> Value:
    """The value a consumer reads back for ``value`` in ``column`` (§2.5)."""
    code = column.effective_type_code
    if value is None:
        return None
    if code in (15, 254) and isinstance(value, str | bytes):
        return _as_bytes(value) if flags & 1 else _text_or_bytes(_as_bytes(value), profile)
    if code in (249, 250, 251, 252) and isinstance(value, str | bytes):
        data = _as_bytes(value)  # base64 carries the bytes exactly
        return data if flags & 1 else _text_or_bytes(data, "ticdc")
    if code == 4 and isinstance(value, float):
        return float(format_float(value, 32, JsonStyle.GO_STD))
    if isinstance(value, TimestampValue):
        return TimestampValue(value.text, None)
    return value


def _unchanged(old: Value, new: Value) -> bool:
    """TiCDC's equality for only-output-updated-columns (§2.4): on what it holds."""
    as_held = [
        v.encode("utf-8", "surrogatepass")
        if isinstance(v, str)
        else v.text
        if isinstance(v, TimestampValue)
        else v
        for v in (old, new)
    ]
    return type(as_held[0]) is type(as_held[1]) and as_held[0] == as_held[1]


def expected(event: ChangeEvent, config: open_protocol.Config) -> DecodedEvent:
    """What decoding the encoded ``event`` must give (no large-message substitution)."""
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
    table, profile = event.table, config.profile
    flags = table.column_flags(profile)
    order = [i for i, c in enumerate(table.columns) if not c.is_virtual]
    if profile == "tiflow":
        order.sort(key=lambda i: table.columns[i].name)

    def image(
        values: Sequence[Value] | None, positions: Sequence[int] = order
    ) -> tuple[DecodedColumn, ...] | None:
        if values is None:
            return None
        return tuple(
            DecodedColumn(
                name=table.columns[i].name,
                value=_seen(table.columns[i], values[i], flags[i], profile),
                type_code=table.columns[i].effective_type_code,
                flags=flags[i],
                handle_key=bool(flags[i] & 2),
            )
            for i in positions
        )

    op, before, old_order = event.op, event.before, order
    if op == "update" and config.output_old_value and config.only_output_updated_columns:
        assert event.before is not None
        assert event.after is not None
        old, new = event.before, event.after
        old_order = [i for i in order if not _unchanged(old[i], new[i])]
        if not old_order and profile == "tiflow":
            op, before = "insert", None  # an empty "p" is omitted (§2.4)
    if op == "update" and not config.output_old_value:
        op, before = "insert", None  # without "p" an update reads as an insert (§6.4)
    return DecodedRow(
        commit_ts=event.commit_ts,
        schema=table.schema,
        table=table.name,
        op=op,
        before=image(before, old_order),
        after=image(event.after),
        partition_id=table.partition_id,
        row_id=(event.effective_row_id() or None) if profile == "tiflow" else None,
    )


configs = st.builds(
    open_protocol.Config,
    profile=st.sampled_from(open_protocol.PROFILES),
    max_batch_size=st.integers(1, 4),
    output_old_value=st.booleans(),
    only_output_updated_columns=st.booleans(),
)


@given(st.lists(change_events(), max_size=6), configs)
def test_decode_after_encode_gives_what_consumers_should_see(
    events: list[ChangeEvent], config: open_protocol.Config
) -> None:
    messages = open_protocol.encode(events, config)
    decoded = [e for i, m in enumerate(messages) for e in open_protocol.decode(m, message_index=i)]
    assert decoded == [expected(e, config) for e in events]
    # == holds for 0 and -0.0: the reprs also compare value types and the sign of zero
    assert repr(decoded) == repr([expected(e, config) for e in events])


@given(
    st.lists(row_changed_events().filter(lambda e: e.op == "update"), min_size=1, max_size=4),
    st.sampled_from(open_protocol.PROFILES),
)
def test_only_updated_columns_round_trip(events: list[ChangeEvent], profile: str) -> None:
    config = open_protocol.Config(profile=profile, only_output_updated_columns=True)  # type: ignore[arg-type]
    decoded = [e for m in open_protocol.encode(events, config) for e in open_protocol.decode(m)]
    assert decoded == [expected(e, config) for e in events]


def _decode_or_reject(message: Message) -> None:
    with contextlib.suppress(DecodeError):
        open_protocol.decode(message)


@given(st.none() | st.binary(), st.none() | st.binary())
@example(b"\x00" * 7 + b"\x01", b"")
@example((1).to_bytes(8, "big") + (5).to_bytes(8, "big") + b'{"t":', bytes(8))
def test_decoder_is_total_on_any_bytes(key: bytes | None, value: bytes | None) -> None:
    _decode_or_reject(Message(key=key, value=value))


json_fragments = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["ts", "t", "u", "p", "d", "v", "f", "h", "q", "c", "scm", "ohk"]),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@given(json_fragments, json_fragments)
def test_decoder_is_total_on_any_json(key: object, value: object) -> None:
    import json

    def encoded(document: object) -> bytes:
        return json.dumps(document, allow_nan=True).encode()

    _decode_or_reject(frame([encoded(key)], [encoded(value)]))


@given(st.lists(change_events(), min_size=1, max_size=3), configs, st.data())
def test_decoder_is_total_on_mutated_messages(
    events: list[ChangeEvent], config: open_protocol.Config, data: st.DataObject
) -> None:
    for message in open_protocol.encode(events, config):
        key, value = bytearray(message.key or b""), bytearray(message.value or b"")
        part = data.draw(st.sampled_from([key, value] if value else [key]))
        position = data.draw(st.integers(0, len(part) - 1))
        part[position] = data.draw(st.integers(0, 255))
        _decode_or_reject(Message(key=bytes(key), value=bytes(value)))


@given(st.lists(change_events(), min_size=1, max_size=3), configs)
def test_every_proper_prefix_is_rejected(
    events: list[ChangeEvent], config: open_protocol.Config
) -> None:
    for message in open_protocol.encode(events, config):
        key, value = message.key or b"", message.value or b""
        for cut in range(len(key)):
            _assert_rejected(Message(key=key[:cut], value=value), "key", cut)
        for cut in range(len(value)):
            _assert_rejected(Message(key=key, value=value[:cut]), "value", cut)


def _assert_rejected(message: Message, part: str, cut: int) -> None:
    try:
        open_protocol.decode(message)
    except DecodeError as error:
        if error.part == part:
            assert error.offset is not None
            assert error.offset <= cut
    else:
        raise AssertionError(f"a {part} cut at {cut} bytes decoded")
