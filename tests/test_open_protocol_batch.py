"""The batch path reads a message exactly as the entry-by-entry path does.

Two differential tests: a column kind's batch reader (``_many``) against its single reader
value by value, and the decoder with its batch path (``_batch.decode_rows``) against the
decoder without it, on messages of one table whose images are now and then of another
shape, kind or value (the result: the events, or the error with its offset and path).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext

import pytest
from helpers import frame
from hypothesis import given, settings
from hypothesis import strategies as st
from test_open_protocol_plans import misshapen

from ticdc_conformance.reference import DecodeError, Message
from ticdc_conformance.reference._gojson import orjson_active, plain_json_only
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.open_protocol import _batch, _decode, decode
from ticdc_conformance.reference.open_protocol._many import many
from ticdc_conformance.reference.open_protocol._readers import Invalid, reader

_KINDS = [(3, 0), (3, 65), (8, 193), (8, 11), (1, 0), (4, 0), (5, 65), (15, 64), (254, 1)]
_KINDS += [(254, 64), (252, 64), (252, 65), (10, 0), (12, 0), (11, 0), (7, 65), (246, 65)]
_KINDS += [(245, 0), (16, 0), (247, 0), (248, 0), (13, 0), (6, 0), (255, 0)]
_raws: st.SearchStrategy[Json] = st.one_of(
    st.none(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([0, 1, 255, 256, 1901, 2155, 65535, 65536, 2**63, 2**64 - 1, 10**21]),
    st.floats(allow_nan=False),
    st.sampled_from([-0.0, 3.4028234663852886e38, 3.4028235677973366e38, 1e308]),
    st.booleans(),
    st.sampled_from(["2024-02-29", "2023-02-29", "0000-01-01", "2024-13-01", "2024-1-01"]),
    st.sampled_from(["2024-02-29 12:00:00", "2024-02-29 24:00:00", "2024-02-29 23:59:60"]),
    st.sampled_from(["2024-02-29 12:00:00.1234567", "2024-02-29 12:00:00.", "1969-12-31 23:59:59"]),
    st.sampled_from(["2038-01-19 03:14:08.5", "2037-12-31 23:59:59.999999", "1970-01-01 00:00:00"]),
    st.sampled_from(["12:00:00", "-838:59:59", "99:59:59.5", "12:60:00", "1.25", "-0.5", "1e3"]),
    st.sampled_from(["0" * 32, "1." + "0" * 29, "AAEC", "AAE", "AAEC\n", "_w==", "w/8=", "gA=="]),
    st.sampled_from(['{"k": [1, 2]}', "[1e999]", "[NaN]", "{", "[" * 70, '"\\ud800"']),
    st.sampled_from(["\\x89PNG\\r\\n", "\\q", 'a"b', "a\\\\b", "\x7f", "", "ünï", "2024-02-29\n"]),
    st.text(max_size=6),
)


_GOOD: dict[int, list[Json]] = {
    1: [0, 1, -128, 127],
    3: [0, -1, 2**31 - 1, 7],
    8: [0, 2**63 - 1, 2**64 - 1, -1],
    4: [1.5, 0.0, -2.5, 2, 9.2233720368547748e18],
    5: [1 / 3, 1e300, -7, 0.1, 18446744073709552000, -(2**63) - 1, 2.0**63],
    15: ["customer 1", "CN", "", "<b>"],
    254: ["\\x89PNG\\r\\n\\x1a\\n", "CN", "a b"],
    252: ["bG9uZyB0ZXh0IA==", "AAEC", ""],
    10: ["2024-02-29", "1999-12-31"],
    12: ["2024-02-29 12:00:00.123", "2024-02-29 23:59:59"],
    11: ["12:00:00", "-01:02:03.5"],
    7: ["2024-02-29 12:00:00", "1970-01-01 00:00:00.5"],
    246: ["16.25", "-0.5", "7"],
    245: ['{"k": [1, 2]}', "[]", "1"],
    16: [5, 0, 2**64 - 1],
    247: [1, 2, 65535],
    248: [3, 0],
    13: [2024, 1901],
}
"""Values TiCDC writes for a type code: messages whose columns hold them take the batch path."""


def _outcome(read: object) -> object:
    try:
        values = read()  # type: ignore[operator]
    except ValueError as error:
        return "error", str(error)
    except Invalid as invalid:
        return "invalid", repr(invalid.value)
    return repr(values)  # repr: 1, 1.0 and True are equal, their reprs are not


def _accelerators() -> Iterator[AbstractContextManager[None]]:
    yield nullcontext()
    if orjson_active():
        yield plain_json_only()


@settings(max_examples=1500)
@given(st.sampled_from(_KINDS), st.lists(_raws, min_size=1, max_size=5), st.booleans())
def test_a_batch_reader_reads_as_its_single_reader(
    kind: tuple[int, int], values: list[Json], same: bool
) -> None:
    if same:  # a column of one value many times: the batch test passes more often
        values = values[:1] * 3
    single, batch = reader(*kind), many(*kind)
    assert single is not None
    assert batch is not None
    for block in _accelerators():
        with block:
            expected = _outcome(lambda: [None if v is None else single(v) for v in values])
            assert _outcome(lambda: batch(tuple(values))) == expected


_members: st.SearchStrategy[Json] = st.sampled_from([True, False, 1, 0, 1.0, 0.0, 65.0, "1", 2**64])


@st.composite
def _column(draw: st.DrawFn, kind: tuple[int, int, bool], clean: bool) -> Json:
    """A column of ``kind`` as TiCDC writes it, or now and then one that is not (``clean``:
    with a value TiCDC writes, when the kind has some here)."""
    code, flags, handle = kind
    column: dict[str, Json] = {"t": code}
    if handle:
        column["h"] = True
    column["f"] = flags
    good = _GOOD.get(code)
    column["v"] = draw(st.sampled_from(good) | st.none() if good and clean else _raws)
    if clean or not draw(_rarely):
        return column
    change = draw(st.sampled_from(["t", "f", "h", "drop", "extra", "scalar"]))
    return misshapen(draw, column, change, _members)


_rarely = st.integers(min_value=0, max_value=20).map(lambda n: n == 13)
"""True now and then (not 0: Hypothesis draws the bounds often)."""


def _frame(documents: list[bytes], start: bytes = b"") -> bytes:
    return start + b"".join(len(d).to_bytes(8, "big") + d for d in documents)


@st.composite
def _messages(draw: st.DrawFn) -> Message:
    size = draw(st.integers(min_value=1, max_value=4))
    names = [f"c{i}" for i in range(size)]
    kinds = draw(
        st.lists(
            st.tuples(st.sampled_from(_KINDS), st.booleans()).map(lambda k: (*k[0], k[1])),
            min_size=size,
            max_size=size,
        )
    )
    keys, values = [], []
    clean = draw(st.booleans())
    for index in range(draw(st.integers(min_value=1, max_value=4))):
        op = draw(st.sampled_from(["u", "up", "d"] * 3 + ["du", "x", "uu"]))
        document: dict[str, Json] = {}
        for member in op:
            image = {
                name: draw(_column(kind, clean)) for name, kind in zip(names, kinds, strict=True)
            }
            if not clean and draw(_rarely):
                image = {"other": image.popitem()[1]} if image else {}
            document["u" if member == "x" else member] = image
        if op == "uu":
            document = {"p": document["u"]}
        value = json.dumps(document, separators=(",", ":")).encode()
        if draw(_rarely):  # a zero as Go writes a float's -0.0, or as it never writes t or f
            value = value.replace(b":0,", b":-0,").replace(b":0}", b":-0}")
        if draw(_rarely):
            value = draw(
                st.sampled_from([b"[]", b"{", value + b" ", b'{"u":{"c0":{"t":1,"f":-0}}}'])
            )
        key = {"ts": 450_000_000_000_000_000 + index, "scm": "s", "tbl": "t", "t": 1}
        if draw(_rarely):
            key = draw(st.sampled_from([{**key, "t": 3}, {**key, "rid": 7}, {**key, "ts": -1}]))
        keys.append(json.dumps(key, separators=(",", ":")).encode())
        values.append(value)
    value_bytes = _frame(values)
    if draw(_rarely):
        value_bytes = draw(st.sampled_from([value_bytes[:-1], value_bytes + b"\0", b""]))
    return Message(key=_frame(keys, (1).to_bytes(8, "big")), value=value_bytes)


def _decoded(message: Message) -> object:
    try:
        return repr(decode(message))  # repr: 1, 1.0 and True are equal, their reprs are not
    except DecodeError as error:
        return "error", str(error), error.offset, error.path


@settings(max_examples=1000)
@given(_messages(), st.sampled_from([1, 100]))
def test_the_batch_path_decodes_a_message_as_the_entry_path_does(
    message: Message, column_wise: int
) -> None:
    for block in _accelerators():
        with block, pytest.MonkeyPatch.context() as patch:
            # every message read column-wise (1) or image by image (100)
            patch.setattr(_batch, "COLUMN_WISE_ROWS", column_wise)
            _decoded(message)  # makes the plans the batch path needs, where it can
            batch = _decoded(message)
            patch.setattr(_decode, "decode_rows", lambda *_: None)
            assert batch == _decoded(message)


@pytest.mark.skipif(not orjson_active(), reason="orjson is not installed or is turned off")
@settings(max_examples=1000)
@given(_messages(), st.sampled_from([1, 100]))
def test_a_message_decodes_alike_with_and_without_orjson(
    message: Message, column_wise: int
) -> None:
    """orjson's drafts (``_gojson.draft_loads``) are confirmed by the readers of both paths."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_batch, "COLUMN_WISE_ROWS", column_wise)
        _decoded(message)  # makes the plans, where it can
        accelerated = _decoded(message)
        with plain_json_only():
            assert _decoded(message) == accelerated


def test_a_batch_of_rows_takes_the_batch_path() -> None:
    image = {"id": {"t": 8, "h": True, "f": 11, "v": 1}, "at": {"t": 7, "f": 65, "v": None}}
    key = b'{"ts":1,"scm":"s","tbl":"t","t":1}'
    value = json.dumps({"u": image, "p": image}, separators=(",", ":")).encode()
    message = frame([key] * 3, [value] * 3)
    decode(message)
    assert message.key is not None
    assert message.value is not None
    assert _batch.decode_rows(message.key, message.value) == decode(message)


@pytest.mark.parametrize("minus_zero", ["", "text", "number"])
@pytest.mark.parametrize("rows", [3, _batch.COLUMN_WISE_ROWS + 1])
def test_a_batch_of_two_tables_takes_the_batch_path(rows: int, minus_zero: str) -> None:
    """Rows of two tables of other columns, in turns: each image gets its own table's columns.

    ``minus_zero``: ``-0`` in one row's text, inside a string (a value orjson reads as the
    plain path does) or as a DOUBLE's value (orjson reads 0, the plain path -0.0).
    """

    def image(table: int, value: int) -> dict[str, Json]:
        if table:
            text = f"row {'-0 ' if minus_zero == 'text' else ''}{value}"
            return {"name": {"t": 15, "f": 64, "v": text}}
        return {
            "id": {"t": 8, "h": True, "f": 11, "v": value},
            "at": {"t": 7, "f": 65, "v": None},
            "ratio": {"t": 5, "f": 65, "v": 0.5},
        }

    keys, values = [], []
    for index in range(rows):
        table = index % 2
        keys.append(b'{"ts":%d,"scm":"s","tbl":"t%d","t":1}' % (index + 1, table))
        after, before = image(table, index), image(table, -index)
        document = {"u": after, "p": before} if index % 3 else {"d": before}
        value = json.dumps(document, separators=(",", ":")).encode()
        if minus_zero == "number" and index == (rows - 1) // 2 * 2:  # table 0's last row
            head, _, tail = value.rpartition(b'"v":0.5')  # its before image's
            value = head + b'"v":-0' + tail
        values.append(value)
    message = frame(keys, values)
    assert message.key is not None
    assert message.value is not None
    for block in _accelerators():
        with block:
            expected = _decoded(message)  # also makes both plans
            taken = _batch.decode_rows(message.key, message.value)
            # column by column, a 0 taken where the text may hold -0 leaves the message
            assert taken is not None or (minus_zero == "number" and rows > 3)
            assert taken is None or repr(taken) == expected
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(_decode, "decode_rows", lambda *_: None)
                assert _decoded(message) == expected


_VERSION = (1).to_bytes(8, "big")
_ENTRY = (2).to_bytes(8, "big") + b"{}"


@pytest.mark.parametrize(
    ("key", "value", "framed"),
    [
        (_VERSION + _ENTRY * 2, _ENTRY * 2, True),
        (_VERSION, b"", True),  # the empty batch
        (_VERSION + _ENTRY + _ENTRY[:5], _ENTRY * 2, False),  # a key's length cut short
        (_VERSION + _ENTRY * 2, _ENTRY + _ENTRY[:7], False),  # a value's length cut short
        (_VERSION + _ENTRY * 2, _ENTRY + _ENTRY[:-1], False),  # an entry past the end
        (_VERSION + _ENTRY * 2, _ENTRY, False),  # a key without its value
    ],
)
def test_the_frame_is_split_only_where_it_is_whole(key: bytes, value: bytes, framed: bool) -> None:
    entries = len(value) // len(_ENTRY)
    expected = ([b"{}"] * entries, [b"{}"] * entries) if framed else None
    assert _batch._documents(key, value) == expected
