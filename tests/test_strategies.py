"""The generators' strategies give values TiDB could hold (edge cases the oracle found)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.generators.strategies import column_values
from ticdc_conformance.reference import ColumnInfo, Value

_ZERO_TIME = re.compile(r"-00:00:00(\.0*)?")


@given(
    st.integers(0, 6).flatmap(
        lambda fsp: column_values(ColumnInfo(name="t", type="time", decimal=fsp))
    )
)
def test_a_time_of_zero_has_no_minus_sign(value: Value) -> None:
    # TiDB holds a TIME as signed nanoseconds: -0 is 0, printed "00:00:00" (Debezium's
    # microseconds could not carry the sign either)
    assert not (isinstance(value, str) and _ZERO_TIME.fullmatch(value))
