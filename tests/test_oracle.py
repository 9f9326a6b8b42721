"""The cross-protocol oracle: every codec delivers a change as its documented losses allow.

Bounded here; explore longer with ``TICDC_HYPOTHESIS_PROFILE=thorough`` (or pytest's
``--hypothesis-profile=thorough``).
"""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ticdc_conformance.generators.oracle import ORACLE_CONFIGS, disagreements, enum_readings
from ticdc_conformance.generators.strategies import row_changed_events
from ticdc_conformance.reference import CODECS, ColumnInfo, RowChangedEvent, TableInfo, Value
from ticdc_conformance.reference.debezium._read import member_positions
from ticdc_conformance.reference.debezium._types import enum_allowed

PAIRS = [
    (protocol, profile) for protocol in sorted(CODECS) for profile in CODECS[protocol].PROFILES
]


def test_the_oracle_knows_every_protocol() -> None:
    assert set(ORACLE_CONFIGS) == set(CODECS)


def _insert(*columns: tuple[ColumnInfo, Value]) -> RowChangedEvent:
    table = TableInfo(schema="s", name="t", columns=tuple(column for column, _ in columns))
    after = tuple(value for _, value in columns)
    return RowChangedEvent(commit_ts=1, table=table, op="insert", after=after)


def _enum(*elements: str) -> ColumnInfo:
    return ColumnInfo(name="e", type="enum", elements=elements)


# Found by long runs and kept: a trailing backslash read as an escaped comma (the name came
# back and met the index in == as bytes against int), a trailing backslash that moved later
# members one place up, and quote folding that did the same.
@example(_insert((_enum("\\", "0"), 1), (ColumnInfo(name="v", type="vector"), "[1]")))
@example(_insert((_enum("\\", "0"), 2)))
@example(_insert((_enum("a\\", "x", "y", "z"), 4)))
@example(_insert((_enum("a''''", "a''"), 2)))
@given(row_changed_events())
def test_every_protocol_agrees_with_the_projection(event: RowChangedEvent) -> None:
    problems = [p for protocol, profile in PAIRS for p in disagreements(event, protocol, profile)]
    assert problems == []


@pytest.mark.parametrize(
    ("elements", "readings"),
    [
        (("a", "b", "c"), [{1}, {2}, {3}]),
        (("a,b", "c"), [{1}, {2, 3}]),  # a\,b,c is also ('a\\', 'b', 'c')
        (("\\", "0"), [{1}, {2}]),  # \,0 is also ('\\,0',), which holds neither name
        (("a\\", "x", "y", "z"), [{1}, {2}, {2, 3}, {3, 4}]),
        (("a''''", "a''"), [{1}, {2}]),  # written a'' and a'
        (("it's", "it''s", "x"), [{1, 2}, {1, 2}, {3}]),  # both written it's
        (("x\\'y", "z"), [{1}, {2}]),  # written x'y
    ],
)
def test_enum_readings_of_ticdcs_allowed_list(
    elements: tuple[str, ...], readings: list[set[int]]
) -> None:
    assert [enum_readings(elements, name) for name in elements] == readings


_MEMBERS = st.lists(st.text(st.sampled_from("a\\',0 "), min_size=1, max_size=6), unique=True)


@given(_MEMBERS.filter(bool))
def test_the_decoder_places_members_as_the_readings_walk_does(elements: list[str]) -> None:
    allowed = enum_allowed(elements)
    for index, name in enumerate(elements, start=1):
        readings = enum_readings(tuple(elements), name)
        assert index in readings
        assert member_positions(allowed, name) == readings
