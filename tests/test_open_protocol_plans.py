"""Row-image plans read an image exactly as the decoder's column loop does.

A plan made from one image (``first``) is tried on another of the same column names
(``second``), whose columns may differ in kind, shape, member types or value; the result (the
columns, or the error and whether the entry was marked for its value-by-value check) must be
the column loop's on ``second`` alone.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference import DecodedColumn, DecodeError
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.open_protocol import _decode, _plans

_KINDS = [(3, 0), (3, 65), (8, 193), (4, 0), (5, 65), (15, 64), (254, 1), (252, 64), (252, 65)]
_KINDS += [(10, 0), (12, 0), (7, 65), (246, 65), (245, 0), (16, 0), (1, 0)]
_raws: st.SearchStrategy[Json] = st.one_of(
    st.none(),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.sampled_from([0, 1, 255, 256, 257, 2**63, 2**64 - 1, 10**21]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([2.0**63, -(2.0**63), 9.2233720368547748e18, 1e300]),
    st.booleans(),
    st.sampled_from(["2024-02-29", "2023-02-29", "2024-02-29 12:00:00", "2024-02-29 24:00:00"]),
    st.sampled_from(["1.25", "-0.5", "1e3", "AAEC", "AAE", '{"k": [1, 2]}', "\\x89PNG", "\\q"]),
    st.sampled_from(["1969-12-31 23:59:59", "2038-01-19 03:14:08.5", "text", "ünï", ""]),
)
Members = st.SearchStrategy[Json]
_members: Members = st.one_of(
    st.integers(min_value=0, max_value=300),
    st.sampled_from([True, False, 1.0, 65.0, None, "1", 2**64, -1]),
)

_NOT_OBJECTS: list[Json] = [1, "c", None, [1]]


@st.composite
def _column(draw: st.DrawFn, kind: tuple[int, int]) -> Json:
    """A column of ``kind`` as TiCDC writes it, or now and then one that is not."""
    column: dict[str, Json] = {"t": kind[0]}
    if draw(st.booleans()):
        column["h"] = draw(st.sampled_from([True, True, False, 1]))
    column["f"] = kind[1]
    column["v"] = draw(_raws)
    change = draw(st.sampled_from(["none"] * 6 + ["t", "f", "drop", "extra", "scalar"]))
    return column if change == "none" else misshapen(draw, column, change, _members)


def misshapen(draw: st.DrawFn, column: dict[str, Json], change: str, members: Members) -> Json:
    """``column`` with ``change`` made: ``t``, ``f`` or ``h`` set to one of ``members``, a
    member dropped (``drop``) or added (``extra``), or another value than an object
    (``scalar``)."""
    if change in ("t", "f", "h"):
        column[change] = draw(members)
    elif change == "drop":
        del column[draw(st.sampled_from(["t", "f", "v"]))]
    elif change == "extra":
        column["x"] = 1
    elif change == "scalar":
        return draw(st.sampled_from(_NOT_OBJECTS))
    return column


@st.composite
def _images(draw: st.DrawFn) -> tuple[dict[str, Json], dict[str, Json]]:
    size = draw(st.integers(min_value=1, max_value=5))
    names = [f"c{i}" for i in range(size)]
    kinds = draw(st.lists(st.sampled_from(_KINDS), min_size=size, max_size=size))
    second_kinds = [draw(st.sampled_from([kind, kind, kind, *_KINDS[:4]])) for kind in kinds]
    first = {name: draw(_column(kind)) for name, kind in zip(names, kinds, strict=True)}
    second = {name: draw(_column(kind)) for name, kind in zip(names, second_kinds, strict=True)}
    return first, second


Outcome = tuple[str, object, bool]


def _clear_plans() -> None:
    _plans._PLANS.clear()
    _plans._READERS.clear()
    _plans._MADE.clear()


def _read(image: dict[str, Json], *, loop: bool) -> Outcome:
    entry = _decode.Entry("value", 8, 0)
    try:
        if loop:
            columns: tuple[DecodedColumn, ...] = _decode._column_loop(
                tuple(image), image, "u", entry
            )
        else:
            columns = _decode._columns(image, "u", entry)
    except DecodeError as error:
        return "error", str(error), entry.invalid
    return "columns", [(c, type(c.value)) for c in columns], entry.invalid


@given(_images(), st.booleans())
def test_a_plan_reads_an_image_as_the_column_loop_does(
    images: tuple[dict[str, Json], dict[str, Json]], compiled: bool
) -> None:
    first, second = images
    with pytest.MonkeyPatch.context() as patch:
        if not compiled:  # the loop that reads an image too wide to compile its reader
            patch.setattr(_plans, "_MAX_COMPILED", 0)
        _clear_plans()
        _read(first, loop=False)  # makes the plan when the loop reads first cleanly
        planned = _read(second, loop=False)
        _clear_plans()
        assert planned == _read(second, loop=True)


def test_a_clean_image_makes_a_plan_that_the_next_one_uses() -> None:
    image: dict[str, Json] = {
        "id": {"t": 8, "h": True, "f": 11, "v": 1},
        "name": {"t": 15, "f": 64, "v": "x"},
        "at": {"t": 7, "f": 65, "v": None},
    }
    _clear_plans()
    first = _read(image, loop=False)
    assert _plans.plan_for(tuple(image)) is not None
    read = _plans.reader_for(tuple(image))
    assert read is not None
    assert read(image) is not None
    assert _read(image, loop=False) == first
    invalid: dict[str, Json] = {**image, "name": {"t": 15, "f": 64, "v": 1}}
    assert read(invalid) is None


def test_plans_of_the_same_names_taking_turns_keep_their_readers() -> None:
    """Two tables of the same column names but other flags, in turn: each plan's reader is
    made once, and plans of one shape share one compiled factory."""
    nullable: dict[str, Json] = {"id": {"t": 8, "f": 64, "v": 1}, "n": {"t": 15, "f": 64, "v": "x"}}
    strict: dict[str, Json] = {"id": {"t": 8, "f": 0, "v": 1}, "n": {"t": 15, "f": 0, "v": "x"}}
    _clear_plans()
    readers = []
    for image in (nullable, strict, nullable, strict):
        assert _read(image, loop=False) == _read(image, loop=True)
        readers.append(_plans.reader_for(tuple(image)))
    assert readers[0] is readers[2]
    assert readers[1] is readers[3]
    assert readers[0] is not readers[1]
    assert readers[0].__code__ is readers[1].__code__  # type: ignore[union-attr]


_TIME_KINDS = [(10, 0), (12, 0), (7, 65), (7, 0), (12, 64), (11, 0), (15, 0)]
"""DATE, DATETIME and TIMESTAMP columns, and TIME and VARCHAR ones, whose tests are not
joined."""
_time_values = st.one_of(
    st.sampled_from(["2024-02-29", "2023-02-29", "2024-02-29 12:00:00", "2038-01-19 03:14:08"]),
    st.sampled_from(["1970-01-01 00:00:00", "0000-01-01", "2024-02-29\x002024-02-29", "\x00"]),
    st.sampled_from(["2024-02-29 12:00:00.5", "2024-02-29 24:00:00", "", None, 1, 2.5, True]),
    st.sampled_from(["12:00:00", "-838:59:59", "x"]),
)
_CLEAN = {10: "2024-02-29", 12: "2024-02-29 12:00:00", 7: "2024-02-29 12:00:00", 11: "12:00:00"}
_CLEAN[15] = "x"


@given(
    st.lists(st.sampled_from(_TIME_KINDS), min_size=2, max_size=5),
    st.data(),
)
def test_date_and_time_columns_read_together_as_the_column_loop_reads_them(
    kinds: list[tuple[int, int]], data: st.DataObject
) -> None:
    """A plan of two or more date and time columns tests their texts with one pattern."""
    names = [f"c{i}" for i in range(len(kinds))]
    first: dict[str, Json] = {
        name: {"t": code, "f": flags, "v": _CLEAN[code]}
        for name, (code, flags) in zip(names, kinds, strict=True)
    }
    second: dict[str, Json] = {
        name: {"t": code, "f": flags, "v": data.draw(_time_values)}
        for name, (code, flags) in zip(names, kinds, strict=True)
    }
    _clear_plans()
    _read(first, loop=False)
    assert _plans.reader_for(tuple(first)) is not None  # the plan the second image is read by
    planned = _read(second, loop=False)
    _clear_plans()
    assert planned == _read(second, loop=True)
