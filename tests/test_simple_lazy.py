"""Simple-JSON's lazy DML reader (``_lazy.parse``) against the general reader.

Whatever it accepts is what ``_json.parse`` with ``lazy`` accepts, member for member, with
orjson and without; what it refuses, the general reader refuses too (the decoder then reads
the message in full for the error). The documents vary every envelope member over the values
where orjson's read and the full read part (``-0``, integers beyond 64 bits, floats, deep
nesting) and the ones §4.2 refuses, written compactly and with white space.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager, nullcontext

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simple_helpers import feed_outcome, json_decoders, read_in_full

from ticdc_conformance.reference import Message, TableInfo
from ticdc_conformance.reference._gojson import plain_json_only
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.simple import _json, _lazy
from ticdc_conformance.reference.tables import ColumnInfo

Outcome = tuple[str, object]

_NUMBERS = st.sampled_from(
    ["0", "-0", "1", "-1", "5", "-0.0", "0.0", "1.0", "1e0", "18446744073709551615",
     "18446744073709551616", "9223372036854775807", "9223372036854775808",
     "-9223372036854775808", "-9223372036854775809", "99999999999999999999999"]
)  # fmt: skip
"""Integer members as JSON text: the edges of int64 and uint64, ``-0`` and floats."""
_OTHERS = st.sampled_from(['"x"', '""', "true", "false", "null", "[]", "{}", "[[[[0]]]]", '"-0"'])
_MEMBER = _NUMBERS | _OTHERS
_TIMESTAMP = '{"location":"UTC","value":"2024-02-29 12:00:00"}'
_IMAGES = st.sampled_from(
    [
        '{"a":"1","b":' + _TIMESTAMP + "}",
        '{"a":"-0","b":null}',
        '{"a":-0,"b":null}',
        '{"a":"7"}',
        "{}",
        "null",
        "[]",
        '{"a":"1","b":{"location":"UTC","value":"2024-02-29 12:00:00","x":1}}',
    ]
)
_COMMON = ("version", "type", "commitTs", "buildTs")
_TABLE = TableInfo(
    schema="s",
    name="t",
    columns=(ColumnInfo(name="a", type="int"), ColumnInfo(name="b", type="timestamp")),
)


_VALID = {
    "version": "1",
    "type": '"UPDATE"',
    "commitTs": "5",
    "buildTs": "6",
    "database": '"s"',
    "table": '"t"',
    "tableID": "7",
    "schemaVersion": "9",
    "claimCheckLocation": '"x"',
    "handleKeyOnly": "true",
    "checksum": '{"version":1,"corrupted":false,"current":0,"previous":4294967295}',
    "data": '{"a":"1","b":' + _TIMESTAMP + "}",
    "old": '{"a":"2","b":null}',
}
"""A value every member may have, as TiCDC writes it."""
_ODD: dict[str, st.SearchStrategy[str]] = {
    **dict.fromkeys(_VALID, _MEMBER),
    "type": st.sampled_from(['"INSERT"', '"DELETE"', '"DDL"', '"BOOTSTRAP"', "1", "null"]),
    "handleKeyOnly": st.sampled_from(["false", "1", "null", '"true"']),
    "checksum": st.builds(
        '{{"version":{},"corrupted":{},"current":{},"previous":{}}}'.format,
        _NUMBERS,
        st.sampled_from(["true", "false", "0"]),
        _NUMBERS,
        _NUMBERS,
    )
    | _OTHERS,
    "data": _IMAGES,
    "old": _IMAGES,
}
"""The values a member is drawn from when it is the odd one out."""
_MEMBERS = (*_VALID, "sql", "tableSchema", "extra")


@st.composite
def _documents(draw: st.DrawFn) -> bytes:
    """A DML document of some members, all valid but maybe one (module docstring)."""
    names = [name for name in _VALID if name in _COMMON or draw(st.booleans())]
    members = {name: _VALID[name] for name in names}
    odd = draw(st.sampled_from(_MEMBERS) | st.none())
    if odd is not None:
        members[odd] = draw(_ODD.get(odd, _MEMBER))
    order = draw(st.permutations(list(members)))
    space = draw(st.sampled_from(["", " ", "\n "]))
    text = "{" + f",{space}".join(f'"{name}":{space}{members[name]}' for name in order) + "}"
    return text.encode()


def _outcome(read: object) -> Outcome:
    try:
        return "wire", read() if callable(read) else read
    except DecodeError:
        return "refused", None


def _path(plain: bool) -> AbstractContextManager[None]:
    """The plain ``json`` path (``plain``), or orjson's where it is installed."""
    return plain_json_only() if plain else nullcontext()


@pytest.mark.parametrize("plain", [False, True])
@settings(max_examples=1500)
@given(document=_documents())
def test_a_lazy_read_is_the_general_lazy_read(plain: bool, document: bytes) -> None:
    with _path(plain):
        lazy = _outcome(lambda: _lazy.parse(document, 3))
        if lazy[0] == "wire":
            assert lazy == _outcome(lambda: _json.parse(document, 3, lazy=True))
        else:  # the decoder reads it again in full: that read refuses it too
            assert _outcome(lambda: _json.parse(document, 3))[0] == "refused"


@pytest.mark.parametrize("plain", [False, True])
@settings(max_examples=800)
@given(document=_documents())
def test_a_consumer_reads_every_document_as_in_full(plain: bool, document: bytes) -> None:
    """The decoder's events (or error) are those of a decoder that reads every message in full."""
    message = Message(key=None, value=document)
    lazy, full = json_decoders(_TABLE)
    with _path(plain):
        with read_in_full():
            expected = feed_outcome(full, message)
        assert feed_outcome(lazy, message) == expected


def test_negative_zero_is_read_in_full() -> None:
    """orjson reads ``-0`` as the integer 0; the full read's ``-0.0`` is no integer."""
    document = b'{"version":1,"type":"INSERT","commitTs":5,"buildTs":-0,"data":{"a":"1"}}'
    with pytest.raises(DecodeError) as error:
        _lazy.parse(document, 0)
    assert error.value.pointer == "/buildTs"
    assert _lazy.parse(document.replace(b"-0", b"0"), 0).build_ts == 0


def test_an_ordinary_dml_is_the_general_read() -> None:
    document = json.dumps(
        {
            "version": 1,
            "database": "s",
            "table": "t",
            "tableID": 7,
            "type": "UPDATE",
            "commitTs": 5,
            "buildTs": 6,
            "schemaVersion": 9,
            "claimCheckLocation": "x",
            "handleKeyOnly": True,
            "checksum": {"version": 1, "corrupted": False, "current": 2, "previous": 3},
            "data": {"a": "1"},
            "old": {"a": "2"},
        }
    ).encode()
    assert _lazy.parse(document, 0) == _json.parse(document, 0, lazy=True)
