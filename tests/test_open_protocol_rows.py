"""The row of an Open Protocol row event is the ``DecodedRow`` its key and images name."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference import DecodedColumn, DecodedRow
from ticdc_conformance.reference.open_protocol import _rows
from ticdc_conformance.reference.open_protocol._keys import Key

_images = st.none() | st.lists(
    st.builds(DecodedColumn, st.text(max_size=3), st.integers() | st.none()), max_size=3
).map(tuple)
_rows_args = st.tuples(
    st.builds(
        Key,
        st.integers(min_value=0, max_value=2**64 - 1),
        st.text(max_size=4),
        st.text(max_size=4),
        st.just(1),
        st.none() | st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.none() | st.integers(min_value=-(2**63), max_value=2**63 - 1),
        st.booleans(),
        st.none() | st.text(max_size=4),
    ),
    st.sampled_from(["insert", "update", "delete"]),
    _images,
    _images,
)


def _constructed(key: Key, op: str, before: object, after: object) -> DecodedRow:
    return DecodedRow(
        commit_ts=key.commit_ts,
        schema=key.schema,
        table=key.table,
        op=op,  # type: ignore[arg-type]
        before=before,  # type: ignore[arg-type]
        after=after,  # type: ignore[arg-type]
        partition_id=key.partition_id,
        row_id=key.row_id,
        handle_key_only=key.handle_key_only,
        claim_check_location=key.location,
    )


@given(args=_rows_args)
def test_the_row_of_an_event_is_the_constructed_one(args: tuple[Key, str, object, object]) -> None:
    row = _rows.new_row(*args)  # type: ignore[arg-type]
    expected = _constructed(*args)
    assert row == expected
    for member in dataclasses.fields(DecodedRow):
        assert getattr(row, member.name) is getattr(expected, member.name)
