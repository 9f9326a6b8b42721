"""The column writers chosen once per column agree with ``field_value``, value by value.

Differential: for any column, flags, profile and value (NULL and defaults included), a writer
gives the member text ``field_value`` gives, or the same error (the same exception of any
kind for a value the column's type does not take, which ``check_row`` rejects first).
"""

from __future__ import annotations

from datetime import UTC, tzinfo
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.generators.strategies import column_infos, row_changed_events
from ticdc_conformance.reference import ColumnInfo, DecimalValue, RowChangedEvent, Value, debezium
from ticdc_conformance.reference.debezium._json import member
from ticdc_conformance.reference.debezium._payload import column_writer, field_value
from ticdc_conformance.reference.debezium._temporal import write_timestamp


def expected(column: ColumnInfo, flags: int, value: Value, config: debezium.Config) -> str:
    try:
        pairs = field_value(column, flags, value, config)
        # (writing may fail too: text such as "inf" for a DOUBLE has no digits)
        return ",".join(member(name, member_value) for name, member_value in pairs)
    except Exception as error:  # noqa: BLE001 - a value of no type the column takes may fail anyhow
        return f"{type(error).__name__} {error}"


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


@settings(max_examples=1000)
@given(column=column_infos(), flags=st.integers(0, 2**12), config=_configs, data=st.data())
def test_writer_matches_field_value_on_any_value(
    column: ColumnInfo, flags: int, config: debezium.Config, data: st.DataObject
) -> None:
    value: Value = data.draw(
        st.none()
        | st.integers(-(2**64), 2**64)
        | st.text(max_size=4)
        | st.binary(max_size=4)
        | st.floats(-1e30, 1e30)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.sampled_from([1.0, 2.0, -3.0, 1.5, 0.1, 16777216.0, 0.0001, 1e16])
        | st.from_regex(r"-?[0-9]{1,20}(\.[0-9]{1,10})?", fullmatch=True).map(DecimalValue)
        | st.sampled_from(["2024-02-29", "2023-02-29", "0000-00-00", "2024-02-29 12:00:00.5"])
        | st.sampled_from(["CURRENT_TIMESTAMP", '{"k": [1]}', "1970-01-01 00:00:00", "INF"])
    )
    assert actual(column, flags, value, config) == expected(column, flags, value, config)


@given(
    text=st.from_regex(
        r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,7})?", fullmatch=True
    ),
    fsp=st.integers(0, 6),
)
def test_utc_timestamps_match_the_zone_path(text: str, fsp: int) -> None:
    """UTC's offset taken as 0 at once gives what the time zone database's UTC gives."""

    def outcome(zone: tzinfo) -> str:
        try:
            return write_timestamp(text, fsp, zone)
        except ValueError as error:
            return f"error {error}"

    assert outcome(UTC) == outcome(ZoneInfo("UTC"))
