"""Where Simple's ``encode_stream`` and the simulator put TiCDC's BOOTSTRAPs (§6.6)."""

from __future__ import annotations

from typing import Any

import pytest
from simple_helpers import VERSION, codec, feed_all, table

from ticdc_conformance.generators.simulator import StreamSettings, Transaction, simulate
from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecodedBootstrap,
    DecodedRow,
    ResolvedEvent,
    RowChangedEvent,
    simple,
)
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent
from ticdc_conformance.reference.tables import TableInfo

START_MS = 1_700_000_000_000
MINUTE = 60_000


def ts(ms: int) -> int:
    """The TSO whose physical part is ``START_MS + ms`` (logical part 1)."""
    return ((START_MS + ms) << 18) | 1


def row(t: TableInfo, ms: int) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=ts(ms), table=t, op="insert", after=(1,) * len(t.columns))


T = table(name="t")
U = TableInfo(
    schema="test",
    name="u",
    columns=(ColumnInfo(name="id", type="int", key="primary"),),
    table_id=21,
    schema_version=VERSION,
)


def shape(
    events: list[ChangeEvent], encoding: str = "json", profile: str = "tiflow", **options: str
) -> str:
    """The stream as letters: ``B<table>`` a BOOTSTRAP, ``r`` a row, ``W`` a watermark."""
    cfg = codec(encoding).config_from_options(
        {name.replace("_", "-"): value for name, value in options.items()}, profile=profile
    )
    out = []
    for message in codec(encoding).encode_stream(events, cfg):
        (decoded,) = codec(encoding).decode(message)
        if isinstance(decoded, DecodedBootstrap):
            out.append(f"B{decoded.table}")
        elif isinstance(decoded, DecodedRow):
            out.append("r")
        else:
            out.append("W")
    return " ".join(out)


@pytest.mark.parametrize(
    ("count", "expected"),
    [
        # the first row's send resets the counter to 0; each later row adds 1 (bootstraper.go)
        ("1", "Bt r r Bt r Bt r"),
        ("2", "Bt r r r Bt r r Bt r"),
        ("10000", "Bt r r r r r r"),
    ],
)
@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_rows_count_toward_a_resend(count: str, expected: str, encoding: str) -> None:
    rows = len(expected.replace("Bt", "").split())
    events: list[ChangeEvent] = [row(T, 0) for _ in range(rows)]
    assert shape(events, encoding, send_bootstrap_in_msg_count=count) == expected


def test_commit_time_drives_the_interval() -> None:
    events: list[ChangeEvent] = [row(T, ms) for ms in (0, 500, 1000, 1500, 2000)]
    assert shape(events, send_bootstrap_interval_in_sec="1") == "Bt r r Bt r r Bt r"
    events.append(ResolvedEvent(commit_ts=ts(3000)))  # the ticker runs before a checkpoint too
    assert shape(events, send_bootstrap_interval_in_sec="1").endswith("Bt r Bt W")


@pytest.mark.parametrize(("gap", "again"), [(30 * MINUTE, False), (30 * MINUTE + 1, True)])
def test_a_table_idle_for_30_minutes_is_forgotten(gap: int, again: bool) -> None:
    events: list[ChangeEvent] = [row(T, 0), row(T, gap)]
    got = shape(events, send_bootstrap_interval_in_sec="100000")
    assert got == ("Bt r Bt r" if again else "Bt r r")


def test_each_table_has_its_own_schedule() -> None:
    events: list[ChangeEvent] = [
        row(T, 0),
        row(U, 0),
        row(T, 0),
        row(U, 0),
        row(U, 0),
        row(T, 0),
        row(T, 0),
    ]
    got = shape(events, send_bootstrap_in_msg_count="2")
    assert got == "Bt r Bu r r r r Bu r Bt r"


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"send_bootstrap_in_msg_count": "0"}, "r"),
        ({"send_bootstrap_interval_in_sec": "0"}, "r"),
        ({"send_all_bootstrap_at_start": "true"}, "Bt Bt r"),
        # tiflow asks ShouldSendAllBootstrapAtStart; ticdc reads the option alone
        ({"send_all_bootstrap_at_start": "true", "send_bootstrap_in_msg_count": "0"}, "r"),
        (
            {
                "send_all_bootstrap_at_start": "true",
                "send_bootstrap_in_msg_count": "0",
                "profile": "ticdc",
            },
            "Bt r",
        ),
        ({"send_bootstrap_to_all_partition": "false"}, "Bt r"),  # one partition: the same
    ],
)
def test_options_switch_bootstraps(options: dict[str, str], expected: str) -> None:
    assert shape([row(T, 0)], **options) == expected


def test_at_start_bootstraps_the_tables_as_they_were_at_the_start() -> None:
    altered = TableInfo(
        schema="test",
        name="t",
        columns=(*T.columns, ColumnInfo(name="c", type="int")),
        table_id=20,
        schema_version=VERSION + 1,
    )
    events: list[ChangeEvent] = [
        DDLEvent(
            commit_ts=ts(0),
            schema="test",
            table="u",
            query="CREATE TABLE u (id INT PRIMARY KEY)",
            ddl_type=3,
            table_info=U,
        ),
        DDLEvent(
            commit_ts=ts(0),
            schema="test",
            table="t",
            query="ALTER TABLE t ADD COLUMN c INT",
            ddl_type=5,
            table_info=altered,
            pre_table_info=T,
        ),
        RowChangedEvent(commit_ts=ts(1), table=altered, op="insert", after=(1, 2)),
        row(U, 1),
    ]
    cfg = simple.Config(send_all_bootstrap_at_start=True)
    messages = list(codec("json").encode_stream(events, cfg))
    first = codec("json").decode(messages[0])[0]
    assert isinstance(first, DecodedBootstrap)  # u is created after the start: T alone
    assert first.table_info.schema_version == T.schema_version
    assert len(messages) == 1 + 2 + 2 + 2
    feed_all("json", messages)  # every row resolves


def test_an_encode_error_names_the_event_by_its_place() -> None:
    cfg = simple.Config(max_message_bytes=200)
    with pytest.raises(EncodeError) as raised:
        list(codec("json").encode_stream([ResolvedEvent(commit_ts=ts(0)), row(T, 1)], cfg))
    assert raised.value.event_index == 1


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"send-bootstrap-in-msg-count": str(2**31)}, "int32"),
        ({"send-bootstrap-in-msg-count": "-1"}, "whole number"),
        ({"send-bootstrap-to-all-partition": "yes"}, "true or false"),
    ],
)
def test_bad_bootstrap_options_are_refused(options: dict[str, str], problem: str) -> None:
    with pytest.raises(EncodeError, match=problem):
        codec("json").config_from_options(options)


@pytest.mark.parametrize("options", [{}, {"send-bootstrap-in-msg-count": "2"}])
def test_encode_stream_and_the_simulator_agree(options: dict[str, str]) -> None:
    items: list[Any] = []
    for step in range(12):
        event = row(T if step % 3 else U, step * 20_000)
        items.append(Transaction(commit_ts=event.commit_ts, rows=(event,)))
        if step % 4 == 3:
            items.append(ResolvedEvent(commit_ts=event.commit_ts))
    events = [i.rows[0] if isinstance(i, Transaction) else i for i in items]
    settings = StreamSettings(protocol="simple-json", partitions=1, options=tuple(options.items()))
    log = simulate(items, settings)
    cfg = codec("json").config_from_options(options)
    assert [d.message for d in log.partitions[0]] == list(codec("json").encode_stream(events, cfg))
    assert [d.kind for d in log.partitions[0]].count("bootstrap") >= 3
