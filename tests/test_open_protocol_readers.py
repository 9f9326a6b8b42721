"""The decoder's column readers agree with ``read_value`` plus the validity check, value by value.

Each reader's fast test may only ever accept what the two together accept, with the same value;
everything else must come out as they decide (the same value, error text or invalid finding).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference._gojson import orjson_active, plain_json_only
from ticdc_conformance.reference._gostrconv import quote
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.mysql import TYPE_CODES
from ticdc_conformance.reference.open_protocol._columns import is_known, read_value
from ticdc_conformance.reference.open_protocol._readers import Invalid, reader
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG
from ticdc_conformance.reference.validation import code_check

CODES = sorted({*TYPE_CODES.values(), 14, 253})
FLAGS = [0, BINARY_FLAG, UNSIGNED_FLAG, BINARY_FLAG | UNSIGNED_FLAG, 11, 65, 193]

Outcome = tuple[str, str]


def expected(type_code: int, flags: int, raw: Json) -> Outcome:
    """What ``read_value`` and the validity check make of ``raw``."""
    try:
        value = read_value(type_code, raw, flags)
    except ValueError as error:
        return "error", str(error)
    checked = code_check(type_code, flags)
    invalid = checked is not None and value is not None and checked[1](value, checked[0])
    return ("invalid" if invalid else "value"), f"{type(value).__name__} {value!r}"


def actual(type_code: int, flags: int, raw: Json) -> Outcome:
    read = reader(type_code, flags)
    assert read is not None
    try:
        value = read(raw)
    except ValueError as error:
        return "error", str(error)
    except Invalid as invalid:
        return "invalid", f"{type(invalid.value).__name__} {invalid.value!r}"
    return "value", f"{type(value).__name__} {value!r}"


def _digits(count: int) -> st.SearchStrategy[str]:
    return st.text("0123456789", min_size=count, max_size=count)


_dates = st.builds(
    "{}-{}-{}".format,
    st.sampled_from(["0000", "1900", "1969", "1970", "2000", "2024", "2037", "2038", "2100"])
    | _digits(4),
    st.sampled_from(["00", "01", "02", "04", "12", "13"]) | _digits(2),
    st.sampled_from(["00", "28", "29", "30", "31", "32"]) | _digits(2),
)
_clocks = st.builds(
    "{}:{}:{}{}".format,
    st.sampled_from(["00", "23", "24", "99", "838", "839"]) | _digits(2),
    st.sampled_from(["00", "59", "60"]),
    st.sampled_from(["00", "59", "60"]),
    st.sampled_from(["", ".", ".1", ".123456", ".1234567", "Z", "+01:00", ".1+01", ",1", " "]),
)
_texts = st.one_of(
    _dates,
    st.builds("{}{}{}".format, _dates, st.sampled_from([" ", "T", "  "]), _clocks),
    st.builds("{} {}".format, _dates, st.sampled_from(["12:00+01", "1200", "12:00", "120000"])),
    _clocks,
    st.from_regex(r"-?[0-9]{1,40}(\.[0-9]{0,35})?", fullmatch=True),
    st.binary(max_size=12).map(lambda b: base64.b64encode(b).decode()),
    st.text("AB+/=a \n-_", max_size=10),
    st.binary(max_size=12).map(quote),
    st.text(max_size=12).map(lambda t: quote(t.encode("utf-8", "surrogatepass"))),
    st.text(r"\abfnrtvx0129AFq'" + '"', max_size=10),
    st.sampled_from(['{"k": [1, 2]}', "[1e999]", "[NaN]", "{", "[[[[1]]]]", '"\\ud800"']),
    st.text(max_size=12),
)
_raws: st.SearchStrategy[Json] = st.one_of(
    st.integers(min_value=-(2**65), max_value=2**65),
    st.sampled_from([0, -1, 1900, 1901, 2155, 2156, 65535, 65536, 2**63, 2**64, 10**21]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([-0.0, 3.4028234663852886e38, 3.4028235677973366e38, 1.7976931348623157e308]),
    st.booleans(),
    _texts,
)


@settings(max_examples=1500)
@given(st.sampled_from(CODES), st.sampled_from(FLAGS), _raws)
def test_reader_agrees_with_read_value_and_the_check(type_code: int, flags: int, raw: Json) -> None:
    assert actual(type_code, flags, raw) == expected(type_code, flags, raw)


def _accelerators() -> Iterator[AbstractContextManager[None]]:
    yield nullcontext()
    if orjson_active():
        yield plain_json_only()


@pytest.mark.parametrize("raw", ['{"k": [1, 2]}', "[1e999]", "[NaN]", "{", '"\\ud800"', "[" * 70])
def test_json_text_is_judged_alike_with_and_without_orjson(raw: str) -> None:
    code = TYPE_CODES["json"]
    outcomes = set()
    for block in _accelerators():
        with block:
            outcomes.add(actual(code, 0, raw))
    assert outcomes == {expected(code, 0, raw)}


@pytest.mark.parametrize(("type_code", "flags"), [(200, 0), (3, -1), (3, 2**64)])
def test_no_reader_for_what_ticdc_never_writes(type_code: int, flags: int) -> None:
    assert not is_known(type_code) or flags not in range(2**64)
    assert reader(type_code, flags) is None
