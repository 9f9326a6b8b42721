"""Craft's column readers agree with ``decode_value`` plus the validity check, value by value.

Each reader's fast test may only ever accept what the two together accept, with the same value;
everything else must come out as they decide (the same value, error text or invalid finding).
"""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference.craft import _group_code
from ticdc_conformance.reference.craft._readers import Invalid, bulk_reader, reader
from ticdc_conformance.reference.craft._values import decode_value
from ticdc_conformance.reference.mysql import TYPE_CODES
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG
from ticdc_conformance.reference.validation import code_check

CODES = sorted({*TYPE_CODES.values(), 0, 14, 253})
FLAGS = [0, BINARY_FLAG, UNSIGNED_FLAG, BINARY_FLAG | UNSIGNED_FLAG, 11, 65, 193]

Outcome = tuple[str, str]


def expected(type_code: int, flags: int, data: bytes) -> Outcome:
    """What ``decode_value`` and the validity check make of ``data``."""
    try:
        value = decode_value(type_code, data, flags)
    except ValueError as error:
        return "error", str(error)
    checked = code_check(type_code, flags)
    invalid = checked is not None and value is not None and checked[1](value, checked[0])
    return ("invalid" if invalid else "value"), f"{type(value).__name__} {value!r}"


def actual(type_code: int, flags: int, data: bytes) -> Outcome:
    try:
        value = reader(type_code, flags)(data)
    except ValueError as error:
        return "error", str(error)
    except Invalid as invalid:
        checked = code_check(type_code, flags)
        assert checked is not None
        assert invalid.ctype == checked[0]
        return "invalid", f"{type(invalid.value).__name__} {invalid.value!r}"
    return "value", f"{type(value).__name__} {value!r}"


def _uvarint(value: int) -> bytes:
    """A uvarint of any size: ``primitives.write_uvarint`` refuses values past uint64, which
    the readers must see too."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


JSON_TEXTS = [
    '{"k": [1, 2]}',
    "null",
    "3.5",
    "1e400",
    "NaN",
    "Infinity",
    "[1,",
    '"\\ud800"',
    '{"a": 1, "a": 2}',
    "[" * 70 + "]" * 70,
    "[" * 2000 + "]" * 2000,
    " [] ",
    "\u00e9",
    '"\u00e9"',
]
"""JSON texts valid and not, shallow and deep (orjson's verdict stands only on shallow ones)."""


def _digits(count: int) -> st.SearchStrategy[str]:
    return st.text("0123456789", min_size=count, max_size=count)


_dates = st.builds("{}-{}-{}".format, _digits(4), _digits(2), _digits(2))
_times = st.builds(
    "{}:{}:{}{}".format,
    _digits(2),
    _digits(2),
    _digits(2),
    st.sampled_from(["", ".", ".5", ".123456", ".1234567"]),
)
_texts = st.one_of(
    _dates,
    st.builds("{} {}".format, _dates, _times),
    _times,
    st.builds("-{}".format, _times),
    st.sampled_from(
        ["2024-02-29", "2023-02-29", "1970-01-01 00:00:00", "2038-01-19 03:14:07", "0000-00-00"]
    ),
    st.from_regex(r"-?[0-9]{1,40}(\.[0-9]{1,35})?", fullmatch=True),
    st.text(max_size=12),
    st.sampled_from(JSON_TEXTS),
)
DATA = st.one_of(
    st.integers(0, 2**64 - 1).map(_uvarint),
    st.integers(0, 2**70).map(_uvarint),
    st.floats().map(struct.Struct("<d").pack),
    _texts.map(str.encode),
    st.binary(max_size=12),
)


@settings(max_examples=400, deadline=None)
@given(type_code=st.sampled_from(CODES), flags=st.sampled_from(FLAGS), data=DATA)
def test_a_reader_decides_as_decode_value_and_the_check(
    type_code: int, flags: int, data: bytes
) -> None:
    assert actual(type_code, flags, data) == expected(type_code, flags, data)


CASES = [
    (8, 0, b"\x01", "value", "int -1"),  # ZigZag
    (8, UNSIGNED_FLAG, b"\xff\x01", "value", "int 255"),
    (1, 0, b"\x80\x04", "invalid", "int 256"),  # outside TINYINT
    (1, 0, b"\x02\x00", "error", "1 bytes after the varint"),
    (13, 0, b"\xd0\x1f", "value", "int 2024"),  # YEAR: ZigZag
    (16, 0, _uvarint(2**64 - 1), "value", f"int {2**64 - 1}"),  # BIT: 10 bytes
    (8, UNSIGNED_FLAG, _uvarint(2**64 - 1), "value", f"int {2**64 - 1}"),
    (8, 0, _uvarint(2**64 - 1), "value", f"int {-(2**63)}"),  # ZigZag of int64's least
    (8, UNSIGNED_FLAG, _uvarint(2**64), "error", None),  # the 10th byte 2: past 64 bits
    (8, UNSIGNED_FLAG, _uvarint(2**70), "error", None),  # 11 bytes
    (8, UNSIGNED_FLAG, b"\x80" * 9 + b"\x01", "value", f"int {2**63}"),
    (15, 0, b"abc", "value", "str 'abc'"),
    (15, BINARY_FLAG, b"\xff", "value", "bytes b'\\xff'"),
    (5, 0, struct.pack("<d", 1.5), "value", "float 1.5"),
    (4, 0, struct.pack("<d", 1e300), "invalid", "float 1e+300"),  # FLOAT: float32's range
    (10, 0, b"2023-02-29", "invalid", "str '2023-02-29'"),
    (12, 0, b"2024-02-29 23:59:59.5", "value", "str '2024-02-29 23:59:59.5'"),
    (11, 0, b"-99:00:00", "value", "str '-99:00:00'"),
    (246, 0, b"-1.25", "value", "DecimalValue DecimalValue(text='-1.25')"),
    (245, 0, b'{"k": [1, 2]}', "value", "str '{\"k\": [1, 2]}'"),
    (245, 0, b"NaN", "invalid", "str 'NaN'"),
    (245, 0, b"\xff", "error", "value is not UTF-8 text"),
    (7, 0, b"1970-01-01 00:00:00", "value", None),
    (7, 0, b"1969-12-31 23:59:59", "value", None),  # the full path: the zone is unknown
]


@pytest.mark.parametrize(("type_code", "flags", "data", "kind", "shown"), CASES)
def test_known_values(
    type_code: int, flags: int, data: bytes, kind: str, shown: str | None
) -> None:
    outcome = actual(type_code, flags, data)
    assert outcome == expected(type_code, flags, data)
    assert outcome[0] == kind
    if shown is not None:
        assert outcome[1] == shown


def bulk_actual(type_code: int, flags: int, data: bytes) -> Outcome:
    """``actual`` with the bulk reader (values that are ``bytes``): where it raises a
    ``ValueError``, the bulk read leaves the value to the full read, so only the kind counts."""
    try:
        value = bulk_reader(type_code, flags)(data)
    except ValueError:
        return "error", ""
    except Invalid as invalid:
        return "invalid", f"{type(invalid.value).__name__} {invalid.value!r}"
    return "value", f"{type(value).__name__} {value!r}"


@settings(max_examples=400, deadline=None)
@given(type_code=st.sampled_from(CODES), flags=st.sampled_from(FLAGS), data=DATA)
def test_a_bulk_reader_reads_as_the_reader(type_code: int, flags: int, data: bytes) -> None:
    kind, shown = actual(type_code, flags, data)
    for _ in range(2):  # read again: a value kept is the value read
        found = bulk_actual(type_code, flags, data)
        if found[0] == "error":
            # bytes.decode refuses text that is not UTF-8, which the reader keeps as bytes
            assert kind == "error" or (kind == "value" and shown.startswith("bytes "))
        else:
            assert found == (kind, shown)


def _inline_outcome(type_code: int, flags: int, data: bytes) -> Outcome:
    """A column's value as a compiled group reader reads it: its inline form, compiled alone."""
    read = bulk_reader(type_code, flags)
    form, used, _ = _group_code.inline_read(0, type_code, flags, read)
    namespace: dict[str, object] = {**used, "r0": read}
    source = (
        "def inline(v):\n"
        "    value, a0, l0 = v, 0, len(v) << 1\n"
        f"    return {form.replace('@a', 'a0').replace('@l', 'l0').replace('@', 'v')}"
    )
    exec(compile(source, "<inline read>", "exec"), namespace)  # noqa: S102
    try:
        value = namespace["inline"](data)  # type: ignore[operator]
    except (ValueError, Invalid):
        return "refused", ""
    return "value", f"{type(value).__name__} {value!r}"


@settings(max_examples=400, deadline=None)
@given(type_code=st.sampled_from(CODES), flags=st.sampled_from(FLAGS), data=DATA)
def test_an_inline_read_reads_as_the_bulk_reader(type_code: int, flags: int, data: bytes) -> None:
    try:
        value = bulk_reader(type_code, flags)(data)
    except (ValueError, Invalid):
        expected_outcome: Outcome = ("refused", "")
    else:
        expected_outcome = ("value", f"{type(value).__name__} {value!r}")
    assert _inline_outcome(type_code, flags, data) == expected_outcome
