"""The Craft codec's compiled group readers join adjacent text tests into one pattern.

A run of DATE, DATETIME and TIMESTAMP columns is tested by one joined pattern, each column's
bytes one group of it (``_group_code``): whatever the bytes, a message decodes exactly as the
full way decodes it, and the joined match holds each column to its own test.
"""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from test_craft_fast_paths import _both_decodings, switched_off

from ticdc_conformance.reference import (
    ColumnInfo,
    RowChangedEvent,
    TableInfo,
    craft,
)
from ticdc_conformance.reference._fast_checks import DATE_BYTES, DATETIME_BYTES, TIMESTAMP_BYTES
from ticdc_conformance.reference.craft import _encode, _group_code
from ticdc_conformance.reference.validation import unchecked_values
from ticdc_conformance.reference.values import valid_timestamp

TABLE = TableInfo(
    schema="s",
    name="t",
    columns=(
        ColumnInfo(name="id", type="bigint", key="primary"),
        ColumnInfo(name="d", type="date"),
        ColumnInfo(name="ts", type="timestamp"),
        ColumnInfo(name="dt", type="datetime", decimal=3),
        ColumnInfo(name="d2", type="date"),
        ColumnInfo(name="v", type="varchar"),
    ),
)

_days = st.sampled_from(["2024-02-29", "2023-02-29", "0000-01-01", "1970-01-01", "2037-12-31"])
_times = st.sampled_from(["00:00:00", "23:59:59", "24:00:00", "12:00:00.123", "1:2:3"])
_texts = st.one_of(
    _days,
    st.builds("{} {}".format, _days, _times),
    st.text(alphabet="0123456789-: .", max_size=24),
)
_cells = st.one_of(st.none(), _texts)


@given(st.lists(st.tuples(_cells, _cells, _cells, _cells), min_size=1, max_size=3), st.data())
def test_joined_text_tests_decode_as_the_full_way(
    rows: list[tuple[str | None, ...]], data: st.DataObject
) -> None:
    events = []
    for i, (day, stamp, moment, other) in enumerate(rows):
        stamped = None if stamp is None else valid_timestamp(stamp)  # unchecked, as drawn
        image = (i, day, stamped, moment, other, "x")
        events.append(
            RowChangedEvent(commit_ts=1 + i, table=TABLE, op="update", before=image, after=image)
        )
    with unchecked_values():
        messages = craft.encode(events)
    for message in messages:
        value = message.value or b""
        if data.draw(st.booleans()):  # a byte changed: lengths, sizes or text
            position = data.draw(st.integers(0, len(value) - 1))
            value = (
                value[:position] + bytes([data.draw(st.integers(0, 255))]) + value[position + 1 :]
            )
        fast, full = _both_decodings(value)
        assert repr(fast) == repr(full)


def test_joined_patterns_look_ahead_only_at_their_start() -> None:
    # a lookaround anywhere else could read a neighbour's bytes in a joined match
    for test in (DATE_BYTES, DATETIME_BYTES, TIMESTAMP_BYTES):
        pattern = test.__self__.pattern  # type: ignore[attr-defined]
        rest = re.sub(rb"^(?:\(\?[=!][^()]*\))+", b"", pattern)
        assert re.compile(rest).groups == 0
        for token in (b"(?=", b"(?!", b"(?<", b"^", b"$", b"\\b", b"\\B", b"\\A", b"\\Z"):
            assert token not in rest, (pattern, token)
        # a match is 10 bytes at least, so the lookaheads' 4 bytes lie inside it
        assert re._parser.parse(pattern).getwidth()[0] >= 10, pattern  # type: ignore[attr-defined]
        assert re._parser.parse(rest).getwidth()[0] >= 10, pattern  # type: ignore[attr-defined]


def test_a_run_needs_two_combinable_tests() -> None:
    tests = [DATE_BYTES, None, TIMESTAMP_BYTES, DATETIME_BYTES, DATE_BYTES, None, DATE_BYTES]
    assert _group_code._runs(tests) == [(2, 5)]


def test_a_wide_tables_image_writer_keeps_each_columns_names_apart() -> None:
    # FLOAT's writer names "pack32" and DOUBLE's "pack": columns 5 and 325 must not share one
    kinds = {5: "float", 325: "double"}
    table = TableInfo(
        schema="s",
        name="wide",
        columns=tuple(
            ColumnInfo(name=f"c{i}", type=kinds.get(i, "int"), key="primary" if i == 0 else None)  # type: ignore[arg-type]
            for i in range(330)
        ),
    )
    image = tuple(1.1 if i in kinds else i for i in range(330))
    event = RowChangedEvent(commit_ts=1, table=table, op="insert", before=None, after=image)
    craft.encode([event])  # the table's first sighting: the full way
    fast = craft.encode([event])
    with switched_off(_encode, "fast_row", lambda *_: None):
        full = craft.encode([event])
    assert fast == full
