"""``decoded_row``, the decoders' constructor by position, makes the ``DecodedRow`` the class's
own keyword constructor makes, for every member (reference/decoded.py)."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference.decoded import DecodedColumn, DecodedRow, decoded_row

_ints = st.none() | st.integers(min_value=-(2**63), max_value=2**64 - 1)
_texts = st.none() | st.text(max_size=4)
_images = st.none() | st.lists(
    st.builds(DecodedColumn, st.text(max_size=3), st.integers() | st.text(max_size=3)),
    max_size=3,
).map(tuple)
_members = st.fixed_dictionaries(
    {
        "commit_ts": _ints,
        "schema": st.text(max_size=4),
        "table": st.text(max_size=4),
        "op": st.sampled_from(["insert", "update", "delete"]),
        "before": _images,
        "after": _images,
        "partition_id": _ints,
        "table_id": _ints,
        "row_id": _ints,
        "schema_version": _ints,
        "handle_key_only": st.booleans(),
        "claim_check_location": _texts,
        "cluster_id": _texts,
        "start_ts": _ints,
    }
)


def test_its_parameters_are_the_members_in_order_with_their_defaults() -> None:
    parameters = list(inspect.signature(decoded_row).parameters.values())
    members = dataclasses.fields(DecodedRow)
    assert [p.name for p in parameters] == [m.name for m in members]
    for parameter, member in zip(parameters, members, strict=True):
        default = member.default
        assert parameter.default == (
            inspect.Parameter.empty if default is dataclasses.MISSING else default
        )


@given(_members)
def test_it_makes_the_row_the_constructor_makes(members: dict[str, Any]) -> None:
    row = decoded_row(*(members[m.name] for m in dataclasses.fields(DecodedRow)))
    expected = DecodedRow(**members)
    assert type(row) is DecodedRow
    assert row == expected
    assert hash(row) == hash(expected)
    assert repr(row) == repr(expected)
    for name, value in members.items():
        assert getattr(row, name) is value


def test_the_row_is_as_frozen_as_any() -> None:
    row = decoded_row(1, "s", "t", "insert", None, ())
    assert row == DecodedRow(commit_ts=1, schema="s", table="t", op="insert", before=None, after=())
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.table = "u"  # type: ignore[misc]
