"""The date and date-time patterns of ``_fast_checks`` decide as the parse they replace.

The reference is the shape test and ``fromisoformat`` the module used before the patterns
(``_parsed_datetime`` and ``_parsed_date`` below), held to it on a table
of edge dates and times and on Hypothesis' texts near the shape; every text the patterns
accept also passes the full validity check of its column type.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference import _fast_checks as fc
from ticdc_conformance.reference.validity import ColumnType, problem

FSPS: list[int | None] = [None, 0, 1, 2, 3, 4, 5, 6]


def _parsed_date(raw: str) -> bool:
    """``is_date`` as the shape test and ``date.fromisoformat``."""
    if len(raw) != 10 or raw[4] != "-" or raw[7] != "-" or not raw.isascii():
        return False
    try:
        date.fromisoformat(raw)
    except ValueError:
        return False
    return True


def _parsed_datetime(raw: str, fsp: int | None) -> bool:
    """``is_datetime`` as the shape test and ``datetime.fromisoformat``.

    Hours up to 23 are checked here (newer Pythons read 24:00 as the next midnight), the rest
    by ``datetime.fromisoformat`` once the shape is that one.
    """
    size = len(raw)
    if fsp is None:
        shaped = size == 19 or (21 <= size <= 20 + fc.MAX_FSP and raw[19] == ".")
    else:
        shaped = size == 19 if fsp == 0 else (size == 20 + fsp and raw[19] == ".")
    if (
        not shaped
        or raw[4:17:3] != "-- ::"  # the separators at 4, 7, 10, 13 and 16 in one slice
        or raw[11:13] > "23"
        or not raw.isascii()
        or (size > 19 and not raw[20:].isdigit())
    ):
        return False
    try:
        return datetime.fromisoformat(raw).tzinfo is None
    except ValueError:
        return False


def _agree(raw: str) -> None:
    assert fc.is_date(raw) == _parsed_date(raw), raw
    assert bool(fc.DATE_BYTES(raw.encode("utf-8", "surrogatepass"))) == _parsed_date(raw), raw
    if fc.is_date(raw):
        assert problem(raw, ColumnType("date")) is None, raw
    for fsp in FSPS:
        parsed = _parsed_datetime(raw, fsp)
        assert fc.is_datetime(raw, fsp) == parsed, (raw, fsp)
        assert bool(fc.datetime_test(fsp)(raw)) == parsed, (raw, fsp)
        stamp = "1970" <= raw[:4] <= "2037" and parsed
        assert bool(fc.datetime_test(fsp, timestamp=True)(raw)) == stamp, (raw, fsp)
        if parsed:
            assert problem(raw, ColumnType("datetime", scale=fsp)) is None, (raw, fsp)
    assert bool(fc.DATETIME_BYTES(raw.encode("utf-8", "surrogatepass"))) == _parsed_datetime(
        raw, None
    ), raw
    stamp = "1970" <= raw[:4] <= "2037" and _parsed_datetime(raw, None)
    assert bool(fc.TIMESTAMP_BYTES(raw.encode("utf-8", "surrogatepass"))) == stamp, raw


YEARS = [0, 1, 4, 100, 400, 1600, 1900, 1969, 1970, 1972, 2000, 2023, 2024, 2037, 2038, 2100]
YEARS += [2400, 9996, 9999]


@pytest.mark.parametrize("year", YEARS)
def test_every_month_and_day_of_edge_years(year: int) -> None:
    # Feb 29 in leap and other years (1900, 2000 and 2100 among them), months 0 and 13,
    # days 0 and 32, every day 29-31 of every month
    for month in range(14):
        for day in range(33):
            day_text = f"{year:04}-{month:02}-{day:02}"
            _agree(day_text)
            _agree(f"{day_text} 12:34:56")


TIMES = [
    f"{hour:02}:{minute:02}:{second:02}"
    for hour in (0, 9, 10, 19, 20, 23, 24, 25, 29, 99)
    for minute in (0, 59, 60)
    for second in (0, 59, 60, 61)
]
FRACTIONS = ["", ".", ".0", ".5", ".12", ".123", ".1234", ".12345", ".123456", ".1234567"]
FRACTIONS += [".12345678", ".a", ". 5", ".+5", ".-5", ".\u0665"]


@pytest.mark.parametrize("time", TIMES)
def test_times_and_fractions(time: str) -> None:
    for day in ("2024-02-29", "2023-02-28", "1970-01-01", "2037-12-31", "2038-01-01"):
        for fraction in FRACTIONS:
            _agree(f"{day} {time}{fraction}")


ODD = [
    "",
    "2024-02-29T12:00:00",
    "2024-02-29 12:00:00Z",
    "2024-02-29 12:00:00+00:00",
    "2024-2-29 12:00:00",
    "2024-02-29  12:00:00",
    " 2024-02-29",
    "2024-02-29 ",
    "+024-02-29",
    "-024-02-29",
    "2024-02-2\u0669",
    "\u0662024-02-29 12:00:00",
    "20240229",
    "2024-W01-1",
    "2024-02-29 12:00",
    "2024-02-29 12:00:00\n",
    "2024-02-29\n",
    "0000-00-00 00:00:00",
]


@pytest.mark.parametrize("raw", ODD)
def test_other_shapes(raw: str) -> None:
    _agree(raw)


@pytest.mark.parametrize("fsp", [7, 9, -1])
def test_a_precision_without_a_pattern_proves_nothing(fsp: int) -> None:
    """MySQL keeps at most 6 digits: such values go to the full path, which refuses them."""
    for raw in ("2024-02-29 12:00:00.1234567", "2024-02-29 12:00:00.123456789", "2024-02-29"):
        assert not fc.is_datetime(raw, fsp)
        assert not fc.datetime_test(fsp)(raw)
        assert not fc.datetime_test(fsp, timestamp=True)(raw)


def _digits(count: int) -> st.SearchStrategy[str]:
    return st.text("0123456789", min_size=count, max_size=count)


_numbers = st.one_of(st.integers(0, 99).map("{:02}".format), _digits(2), st.text(max_size=3))
_days = st.builds(
    "{}-{}-{}".format,
    st.one_of(st.integers(0, 9999).map("{:04}".format), _digits(4), st.text(max_size=5)),
    _numbers,
    _numbers,
)
_texts = st.one_of(
    _days,
    st.builds(
        "{} {}:{}:{}{}".format,
        _days,
        _numbers,
        _numbers,
        _numbers,
        st.one_of(st.sampled_from(FRACTIONS), st.text(max_size=8).map(".{}".format)),
    ),
    st.text(max_size=28),
)


@settings(max_examples=3000, deadline=None)
@given(raw=_texts)
def test_the_patterns_decide_as_the_parse(raw: str) -> None:
    _agree(raw)


@settings(max_examples=500, deadline=None)
@given(raw=_texts, cut=st.integers(0, 27), char=st.characters())
def test_one_character_changed(raw: str, cut: int, char: str) -> None:
    _agree(raw[:cut] + char + raw[cut + 1 :])


_tests = st.sampled_from(
    [
        fc.date_test(),
        *(fc.datetime_test(fsp) for fsp in (None, *range(fc.MAX_FSP + 1))),
        *(fc.datetime_test(fsp, timestamp=True) for fsp in (None, *range(fc.MAX_FSP + 1))),
    ]
)
_joined_texts = st.one_of(
    _texts,
    _texts.map(lambda text: text + fc.JOINED_SEPARATOR),
    _texts.map(lambda text: fc.JOINED_SEPARATOR + text[:10]),
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(_tests, _joined_texts), min_size=1, max_size=4))
def test_a_joined_test_matches_where_each_test_matches_its_text(
    cases: list[tuple[Callable[[str], object], str]],
) -> None:
    tests = [test for test, _ in cases]
    texts = [text for _, text in cases]
    joined = fc.joined_test(tests)
    assert joined is not None
    each = all(test(text) for test, text in zip(tests, texts, strict=True))
    assert bool(joined(fc.JOINED_SEPARATOR.join(texts))) == each


def test_a_joined_test_is_of_this_module_s_tests_only() -> None:
    assert fc.joinable(fc.date_test())
    assert fc.joinable(fc.datetime_test(3, timestamp=True))
    assert not fc.joinable(str.isdigit)
    assert fc.joined_test([fc.date_test(), str.isdigit]) is None
    assert fc.joined_test([fc.date_test(), fc.date_test()]) is fc.joined_test([fc.date_test()] * 2)
