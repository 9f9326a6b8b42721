"""The column writers chosen once per column agree with ``field_value``, value by value.

Differential: for any column, flags, profile and value (NULL and defaults included), a writer
gives the member text ``field_value`` gives, or the same error (the same exception of any
kind for a value the column's type does not take, which ``check_row`` rejects first).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.generators.strategies import column_infos, row_changed_events
from ticdc_conformance.reference import ColumnInfo, RowChangedEvent, Value, debezium
from ticdc_conformance.reference.debezium._json import member
from ticdc_conformance.reference.debezium._payload import column_writer, field_value


def expected(column: ColumnInfo, flags: int, value: Value, config: debezium.Config) -> str:
    try:
        pairs = field_value(column, flags, value, config)
    except Exception as error:  # noqa: BLE001 - a value of no type the column takes may fail anyhow
        return f"{type(error).__name__} {error}"
    return ",".join(member(name, member_value) for name, member_value in pairs)


def actual(column: ColumnInfo, flags: int, value: Value, config: debezium.Config) -> str:
    try:
        return column_writer(column, flags, config)(value)
    except Exception as error:  # noqa: BLE001 - the same failure, whatever it is
        return f"{type(error).__name__} {error}"


_configs = st.builds(
    debezium.Config,
    profile=st.sampled_from(debezium.PROFILES),
    enable_tidb_extension=st.booleans(),
    time_zone=st.sampled_from(["UTC", "Asia/Shanghai"]),
)


@given(event=row_changed_events(), config=_configs)
def test_writer_matches_field_value(event: RowChangedEvent, config: debezium.Config) -> None:
    flags = event.table.column_flags(config.profile)
    for image in (event.before, event.after):
        for i, column in enumerate(event.table.columns):
            value = None if image is None else image[i]
            assert actual(column, flags[i], value, config) == expected(
                column, flags[i], value, config
            )


@given(column=column_infos(), flags=st.integers(0, 2**12), config=_configs, data=st.data())
def test_writer_matches_field_value_on_any_value(
    column: ColumnInfo, flags: int, config: debezium.Config, data: st.DataObject
) -> None:
    value: Value = data.draw(
        st.none() | st.integers(-(2**64), 2**64) | st.text(max_size=4) | st.binary(max_size=4)
    )
    assert actual(column, flags, value, config) == expected(column, flags, value, config)
