"""Craft column groups whose sizes or bytes do not add up decode as the full path decodes them.

A size table may place a group past its body (a later size negative makes up for it), and the
group's value lengths may still fill it: the group's end then lies past the message's end,
where no bulk read may look (a float is unpacked where its lengths place it). A commit ts of
a long run of continuation bytes is refused at its eleventh byte. Outcomes are compared as
``repr`` (-0.0 and 0.0 told apart).
"""

from __future__ import annotations

import contextlib

from craft_builders import build
from hypothesis import given, settings
from hypothesis import strategies as st
from test_craft_fast_paths import _both_decodings

from ticdc_conformance.generators.strategies import row_changed_events
from ticdc_conformance.reference import ColumnInfo, EncodeError, RowChangedEvent, TableInfo, craft
from ticdc_conformance.reference.craft.primitives import read_size_tables, write_size_tables


def _regrouped(value: bytes, row: int, cut: int, sizes: list[int]) -> bytes:
    """``value`` (of row events only) with the last ``cut`` bytes of row ``row``'s body taken
    out and its group sizes made ``sizes``; the other sizes follow the body's."""
    tables, start = read_size_tables(value, 1)
    header_size, bodies = tables[0][0], tables[1]
    end = 1 + header_size + sum(bodies[: row + 1])
    bodies[row] -= cut
    tables[2 + row] = sizes
    out = bytearray(value[: end - cut] + value[end:start])
    write_size_tables(out, tables)
    return bytes(out)


def _resized(value: bytes, data: st.DataObject) -> bytes:
    """``value`` with one row's body cut short and its group sizes changed, their sum that of
    the body: a group may then run past its body, and past the message's end."""
    tables, _ = read_size_tables(value, 1)
    if len(tables) < 3:
        return value
    row = data.draw(st.integers(0, len(tables) - 3))
    sizes = list(tables[2 + row])
    cut = data.draw(st.integers(0, tables[1][row]))
    moved = data.draw(st.just(0) | st.integers(-len(value) - 16, len(value) + 16))
    kind = data.draw(st.sampled_from(["shift", "split", "split", "any"]))
    if kind == "shift":  # bytes moved from one group to another
        sizes[0] += moved
        sizes[-1] -= moved
    elif kind == "split":  # the first group's size shared with a new last one
        sizes = [sizes[0] + moved, *sizes[1:], -moved]
    else:
        sizes[data.draw(st.integers(0, len(sizes) - 1))] = moved
    sizes[-1] -= cut
    return _regrouped(value, row, cut, sizes)


BYTES_AND_FLOATS = TableInfo(
    schema="s",
    name="f",
    columns=(
        ColumnInfo(name="id", type="bigint", key="primary"),
        ColumnInfo(name="b", type="blob"),
        ColumnInfo(name="d", type="double"),
        ColumnInfo(name="f", type="float"),
    ),
)
"""Values read where they lie (floats) after values any bytes are (blobs)."""


@settings(max_examples=300)
@given(
    st.lists(row_changed_events() | row_changed_events(BYTES_AND_FLOATS), min_size=1, max_size=4),
    st.data(),
)
def test_fast_groups_with_resized_groups_decode_as_the_full_way(
    events: list[RowChangedEvent], data: st.DataObject
) -> None:
    # repr: -0.0 and 0.0 told apart as the values are
    with contextlib.suppress(EncodeError):
        for message in craft.encode(events):
            value = _resized(message.value or b"", data)
            fast, full = _both_decodings(value)
            assert repr(fast) == repr(full)


def test_a_group_past_the_message_end_decodes_as_the_full_way() -> None:
    # the body cut short by its two values, the group's size kept (sizes [size, -48]): its
    # lengths still fill it, and the double lies past the message's last byte
    table = TableInfo(
        schema="s",
        name="t",
        columns=(ColumnInfo(name="a", type="blob"), ColumnInfo(name="b", type="double")),
    )
    image = (b"x" * 40, 1.5)
    event = RowChangedEvent(commit_ts=1, table=table, op="insert", before=None, after=image)
    [message] = craft.encode([event])
    value = message.value or b""
    [[size]] = read_size_tables(value, 1)[0][2:]
    cut = _regrouped(value, 0, 48, [size, -48])
    fast, full = _both_decodings(cut)
    assert fast == full
    assert fast[:2] == ("error", "column 'b': a float64 has 8 bytes, not 0")  # type: ignore[index]
    assert fast[2] > len(cut)  # type: ignore[index]


def test_a_long_uvarint_in_the_headers_is_refused_as_the_full_way() -> None:
    # a commit ts of 300,000 bytes: refused at its eleventh byte, as the full read refuses it
    fast, full = _both_decodings(build(b"\xff" * 300_000 + b"\x01" + bytes(4), [b""]))
    assert fast == full == ("error", "uvarint overflows 64 bits", 1)


_PAST_THE_END = bytes.fromhex(
    "01000101000001020002f901f9010141008004000102030405060708090a0b0c0d0e0f101112131415161718"
    "191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f4041424344"
    "45464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f70"
    "7172737475767778797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c"
    "9d9e9fa0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7c8"
    "c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebeced0201013031020a"
    "0001f603039a048104530c"
)
"""An UPDATE whose first group's size (a later negative one making up for it) ends past the
message, where its value lengths also end: the next group starts past the last byte."""


def test_a_group_starting_past_the_message_is_refused() -> None:
    fast, full = _both_decodings(_PAST_THE_END)
    assert repr(fast) == repr(full)
    assert isinstance(full, tuple)
    assert full[:2] == ("error", "a column group starts past the message's end")
