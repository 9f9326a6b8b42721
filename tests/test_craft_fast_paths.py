"""The Craft codec's bulk paths agree with its full paths, outcome by outcome.

* Decode: ``_fast_groups`` reads a column group, the size tables or the headers only when the
  full read would give the same; every message decodes to the same events, the same
  ``DecodeError`` (reason, offset) or the same invalid-value findings with it switched off.
* Encode: ``_fast_rows.fast_row`` writes a row only when ``check_row`` passes it and the full
  writer gives the same bytes; every event list encodes to the same messages or the same
  ``EncodeError`` with it switched off (and the kept message skeletons made anew), values
  valid, perturbed or unchecked. Each column's
  one-pass function either refuses a value or returns the writer's bytes for a value the
  validity check accepts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
from collections.abc import Iterator

from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.generators.strategies import (
    change_events,
    column_infos,
    column_values,
    row_changed_events,
    table_infos,
)
from ticdc_conformance.reference import (
    ChangeEvent,
    ColumnInfo,
    DecimalValue,
    DecodeError,
    EncodeError,
    Message,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
    craft,
)
from ticdc_conformance.reference.craft import _decode, _encode, _puts, _row_bodies, _values
from ticdc_conformance.reference.validation import InvalidValueError, info_type, unchecked_values
from ticdc_conformance.reference.validity import FLOAT32_MAX, problem
from ticdc_conformance.reference.values import check_value

configs = st.builds(
    craft.Config,
    max_batch_size=st.integers(1, 4),
    max_message_bytes=st.integers(1, 600) | st.just(10 * 1024 * 1024),
    delete_only_output_handle_key_columns=st.booleans(),
)

EDGES = sorted(
    {
        edge + step
        for bits in (7, 8, 15, 16, 23, 24, 31, 32, 63, 64)
        for edge in (2**bits, -(2**bits))
        for step in (-1, 0, 1)
    }
    | {0, 1900, 1901, 2155, 2156}
)
"""Integers at the edges of the integer types' ranges (and YEAR's)."""

odd_values: st.SearchStrategy[Value] = st.one_of(
    st.none(),
    st.integers(),
    st.sampled_from(EDGES),
    st.floats(),
    st.sampled_from([FLOAT32_MAX, math.nextafter(FLOAT32_MAX, math.inf), -1e300]),
    st.text(max_size=12),
    st.binary(max_size=12),
    st.sampled_from(
        [
            "2024-02-29",
            "2023-02-29",
            "0000-00-00",
            "2024-02-29 12:00:00",
            "2024-02-29 12:00:00.123",
            "2024-02-29 24:00:00",
            "1969-12-31 23:59:59",
            "2037-12-31 23:59:59.1234567",
            "1970-01-01 00:00:00",
            "12:00:00",
            '{"k": 1}',
            "\ud800",
            "é" * 3,
        ]
    ),
    st.builds(DecimalValue, st.sampled_from(["1.25", "-0.5", "1" * 70, "1." + "0" * 31])),
    st.builds(
        TimestampValue,
        st.sampled_from(["2024-02-29 12:00:00", "1969-12-31 23:59:59", "2038-01-19 03:14:07"]),
        st.none() | st.just("UTC"),
    ),
).filter(lambda value: not check_value(value))
"""Values of any type and shape a change event may hold (``check_value``)."""


@contextlib.contextmanager
def switched_off(module: object, name: str, stand_in: object) -> Iterator[None]:
    saved = getattr(module, name)
    setattr(module, name, stand_in)
    try:
        yield
    finally:
        setattr(module, name, saved)


def _encoded(events: list[ChangeEvent], config: craft.Config) -> object:
    try:
        return craft.encode(events, config)
    except EncodeError as error:
        return "error", error.reason, error.event_index


def _both_encodings(events: list[ChangeEvent], config: craft.Config) -> tuple[object, object]:
    first = _encoded(events, config)  # a table met the first time takes the full way
    fast = _encoded(events, config)  # then its plan
    assert repr(first) == repr(fast)
    # the full way: every row through check_row and the full writer, every skeleton made anew
    with (
        switched_off(_encode, "fast_row", lambda *_: None),
        switched_off(_encode, "_skeletons", {}),
    ):
        full = _encoded(events, config)
    return fast, full


@st.composite
def perturbed_rows(draw: st.DrawFn) -> RowChangedEvent:
    """A row event with some values replaced by anything."""
    event = draw(row_changed_events())
    images = {}
    for side in ("before", "after"):
        image = getattr(event, side)
        if image is None or not draw(st.booleans()):
            continue
        values = list(image)
        for i in draw(st.lists(st.integers(0, len(values) - 1), max_size=3)):
            values[i] = draw(odd_values)
        images[side] = tuple(values)
    return dataclasses.replace(event, **images)  # type: ignore[arg-type]


@given(st.lists(change_events() | perturbed_rows(), max_size=6), configs)
def test_fast_rows_encode_as_the_full_way(events: list[ChangeEvent], config: craft.Config) -> None:
    fast, full = _both_encodings(events, config)
    assert fast == full


@given(st.lists(perturbed_rows(), min_size=1, max_size=4), configs)
def test_fast_rows_with_values_unchecked(events: list[ChangeEvent], config: craft.Config) -> None:
    with unchecked_values():
        fast, full = _both_encodings(events, config)
    assert fast == full


FIXED_VALUES: list[Value] = [
    *EDGES,
    0.0,
    -1.5,
    FLOAT32_MAX,
    math.nextafter(FLOAT32_MAX, math.inf),
    1e300,
    math.inf,
    math.nan,
    "",
    "abc",
    "x" * 300,
    "é",
    "\ud800",
    b"",
    b"\xff" * 5,
    b"x" * 300,
    "2024-02-29",
    "2023-02-29",
    "0000-00-00",
    "2024-02-29 12:00:00",
    "2024-02-29 12:00:00.123",
    "2024-02-29 12:00:00.1234567",
    "2024-02-29 24:00:00",
    "1969-12-31 23:59:59",
    "1970-01-01 00:00:00.5",
    "2037-12-31 23:59:59",
    "2038-01-19 03:14:07",
    "12:00:00",
    '{"k": 1}',
    "[1,2]",
    DecimalValue("1.25"),
    DecimalValue("1" * 70),
    TimestampValue("2024-02-29 12:00:00", None),
    TimestampValue("1969-12-31 23:59:59", "UTC"),
    TimestampValue("2037-01-01 00:00:00.123456", None),
]
"""Values every column's one-pass function is tried with."""


@given(column_infos(), st.sampled_from([0, 1, 2, 3, 32, 33, 64, 65]), st.data())
def test_a_column_put_refuses_or_writes_what_the_writer_writes(
    column: ColumnInfo, flag: int, data: st.DataObject
) -> None:
    writer = _values.value_writer(column.effective_type_code)
    put = _puts.put_of(column, writer, flag)
    ctype = info_type(column, raw_text=True)
    drawn = data.draw(st.lists(column_values(column) | odd_values, max_size=5))
    for value in [*FIXED_VALUES, *drawn]:
        if value is None:
            continue
        try:
            written = put(value)
        except (_puts.Slow, ValueError):
            continue
        assert problem(value, ctype) is None, value
        assert written == writer(value, flag), value


def _inline_put(put: _puts.Put) -> _puts.Put:
    """The put's inline form compiled on its own, as the image writer writes it."""
    form = _puts.inline_form(put)
    if form is None:
        return put
    text, used = form
    namespace: dict[str, object] = {f"{name}_": value for name, value in used.items()}
    namespace["put_"] = put
    local = {name: f"{name}_" for name in [*used, "put"]}
    source = f"def inline(v):\n    return {text.format(**local).replace('@', 'v')}"
    exec(compile(source, "<inline put>", "exec"), namespace)  # noqa: S102
    return namespace["inline"]  # type: ignore[return-value]


def _put_outcome(put: _puts.Put, value: Value) -> object:
    try:
        return "written", put(value)
    except _puts.Slow:
        return "slow"
    except ValueError as error:
        return "error", str(error)


@given(column_infos(), st.sampled_from([0, 1, 2, 3, 32, 33, 64, 65]), st.data())
def test_a_column_puts_inline_form_gives_what_the_put_gives(
    column: ColumnInfo, flag: int, data: st.DataObject
) -> None:
    writer = _values.value_writer(column.effective_type_code)
    put = _puts.put_of(column, writer, flag)
    inline = _inline_put(put)
    drawn = data.draw(st.lists(column_values(column) | odd_values, max_size=5))
    for value in [*FIXED_VALUES, *drawn]:
        if value is not None:
            assert _put_outcome(inline, value) == _put_outcome(put, value), value


def _decoded(message: Message) -> object:
    try:
        return craft.decode(message)
    except InvalidValueError as error:
        found = [(f.reason, f.offset) for f in error.findings]
        return "invalid", found, list(error.events)
    except DecodeError as error:
        return "error", error.reason, error.offset


def _both_decodings(value: bytes) -> tuple[object, object]:
    message = Message(key=None, value=value)
    first = _decoded(message)  # a header met the first time is read the full way
    fast = _decoded(message)  # then by its compiled readers
    assert repr(first) == repr(fast)
    with (
        switched_off(_row_bodies, "fast_group", lambda *_: None),
        switched_off(_row_bodies, "fast_update", lambda *_: None),
        switched_off(_decode, "fast_size_tables", lambda *_: None),
        switched_off(_decode, "uvarints_filling", lambda *_: None),
        switched_off(_decode, "header_uvarints", lambda *_: None),
        switched_off(_decode, "terms_at_once", lambda *_: None),
    ):
        full = _decoded(message)
    return fast, full


BYTES = [0, 1, 2, 3, 4, 5, 0x7E, 0x7F, 0x80, 0x81, 0xFF]
"""Replacement bytes that move a varint's value or length, or a ZigZag length's sign."""


def _mutated(value: bytes, data: st.DataObject) -> bytes:
    for _ in range(data.draw(st.integers(0, 3))):
        position = data.draw(st.integers(0, max(0, len(value) - 1)))
        byte = bytes([data.draw(st.sampled_from(BYTES) | st.integers(0, 255))])
        kind = data.draw(st.sampled_from(["replace", "insert", "delete"]))
        if kind == "replace":
            value = value[:position] + byte + value[position + 1 :]
        elif kind == "insert":
            value = value[:position] + byte + value[position:]
        else:
            value = value[:position] + value[position + 1 :]
    return value


@given(st.lists(row_changed_events(), min_size=1, max_size=6), st.data())
def test_fast_groups_decode_as_the_full_way(
    events: list[RowChangedEvent], data: st.DataObject
) -> None:
    with contextlib.suppress(EncodeError):
        for message in craft.encode(events):
            value = _mutated(message.value or b"", data)
            fast, full = _both_decodings(value)
            assert fast == full


@given(st.data())
def test_fast_groups_decode_invalid_values_as_the_full_way(data: st.DataObject) -> None:
    table = data.draw(table_infos())
    events = data.draw(st.lists(row_changed_events(table), min_size=1, max_size=4))
    events = [
        dataclasses.replace(e, after=tuple(data.draw(odd_values) for _ in e.after))
        if e.after is not None and data.draw(st.booleans())
        else e
        for e in events
    ]
    try:
        with unchecked_values():
            messages = craft.encode(events)
    except EncodeError:
        return
    for message in messages:
        fast, full = _both_decodings(message.value or b"")
        assert fast == full


def test_every_one_byte_change_decodes_as_the_full_way() -> None:
    table = TableInfo(
        schema="s",
        name="t",
        columns=(
            ColumnInfo(name="id", type="bigint", key="primary"),
            ColumnInfo(name="u", type="bigint", unsigned=True),
            ColumnInfo(name="y", type="year"),
            ColumnInfo(name="d", type="double"),
            ColumnInfo(name="v", type="varchar"),
            ColumnInfo(name="b", type="blob"),
            ColumnInfo(name="n", type="int"),
        ),
    )
    images = [(i, 2**64 - 1 - i, 2024, i / 3, "x" * 70, b"\xff" * i, None) for i in range(3)]
    events = [
        RowChangedEvent(commit_ts=1 + i, table=table, op="update", before=old, after=new)
        for i, (old, new) in enumerate(itertools.pairwise(images))
    ]
    [message] = craft.encode(events)
    value = message.value or b""
    for position in range(len(value)):
        for byte in BYTES:
            changed = value[:position] + bytes([byte]) + value[position + 1 :]
            fast, full = _both_decodings(changed)
            assert fast == full, (position, byte)
        for changed in (
            value[:position] + value[position + 1 :],
            value[:position] + b"\x00" + value[position:],
        ):
            fast, full = _both_decodings(changed)
            assert fast == full, position
