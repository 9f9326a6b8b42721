"""``debezium-include-start-ts`` (profile ``ticdc``): a row's ``source.start_ts`` (§5.6).

ticdc ``pkg/sink/codec/debezium/codec.go`` writes ``start_ts`` after ``commit_ts`` in a DML
payload's source and declares it last in the DML source schema (int64, not optional); DDL and
checkpoint messages carry neither. Expected members are written out here by hand.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecodedRow,
    DecodeError,
    EncodeError,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    debezium,
)
from ticdc_conformance.reference.forms import read_change_event, write_change_event

TABLE = TableInfo(
    schema="test",
    name="t",
    columns=(ColumnInfo(name="id", type="int", key="primary"),),
    table_id=1,
)
COMMIT = 1_767_225_600_000 << 18
ROW = RowChangedEvent(commit_ts=COMMIT, start_ts=COMMIT - 7, table=TABLE, op="insert", after=(1,))
ON = {"debezium-include-start-ts": "true"}


def value(message: Message) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(message.value or b"")
    return document


def source_fields(message: Message) -> list[str]:
    (source,) = (f for f in value(message)["schema"]["fields"] if f["field"] == "source")
    return [f["field"] for f in source["fields"]]


@pytest.mark.parametrize("extension", ["true", "false"])
def test_a_row_carries_and_declares_start_ts(extension: str) -> None:
    config = debezium.config_from_options(
        {**ON, "enable-tidb-extension": extension}, profile="ticdc"
    )
    [message] = debezium.encode([ROW], config)
    source = value(message)["payload"]["source"]
    assert list(source)[-3:] == ["commit_ts", "start_ts", "cluster_id"]
    assert source["start_ts"] == COMMIT - 7
    tidb = ["commit_ts", "cluster_id"] if extension == "true" else []
    assert source_fields(message)[-1 - len(tidb) :] == [*tidb, "start_ts"]
    [decoded] = debezium.decode(message)
    assert isinstance(decoded, DecodedRow)
    assert (decoded.commit_ts, decoded.start_ts) == (COMMIT, COMMIT - 7)


def test_without_the_option_nothing_changes() -> None:
    plain = debezium.config_from_options({}, profile="ticdc")
    [with_start] = debezium.encode([ROW], plain)
    [without] = debezium.encode([RowChangedEvent(**{**_fields(ROW), "start_ts": None})], plain)
    assert with_start == without
    assert "start_ts" not in value(with_start)["payload"]["source"]
    [decoded] = debezium.decode(with_start)
    assert isinstance(decoded, DecodedRow)
    assert decoded.start_ts is None


def _fields(event: RowChangedEvent) -> dict[str, Any]:
    return {name: getattr(event, name) for name in RowChangedEvent.__dataclass_fields__}


def test_ddl_and_checkpoint_never_carry_it() -> None:
    config = debezium.config_from_options({**ON, "enable-tidb-extension": "true"}, profile="ticdc")
    ddl = DDLEvent(
        commit_ts=COMMIT,
        schema="test",
        table="t",
        query="CREATE TABLE t (id INT PRIMARY KEY)",
        ddl_type=3,
        table_info=TABLE,
    )
    for message in debezium.encode([ddl, ResolvedEvent(commit_ts=COMMIT)], config):
        assert "start_ts" not in value(message)["payload"]["source"]
        assert "start_ts" not in source_fields(message)


def test_the_option_needs_profile_ticdc_and_the_rows_start_ts() -> None:
    with pytest.raises(EncodeError, match="only in profile ticdc"):
        debezium.config_from_options(ON, profile="tiflow")
    config = debezium.config_from_options(ON, profile="ticdc")
    unknown = RowChangedEvent(commit_ts=COMMIT, table=TABLE, op="insert", after=(1,))
    with pytest.raises(EncodeError, match="needs the row's start_ts") as raised:
        debezium.encode([ROW, unknown], config)
    assert raised.value.event_index == 1


@pytest.mark.parametrize("bad", [0, -1, 2**64, "1", 1.5])
def test_a_start_ts_ticdc_cannot_write_is_refused(bad: object) -> None:
    [message] = debezium.encode([ROW], debezium.config_from_options(ON, profile="ticdc"))
    document = value(message)
    document["payload"]["source"]["start_ts"] = bad
    broken = Message(key=message.key, value=json.dumps(document).encode())
    with pytest.raises(DecodeError) as raised:
        debezium.decode(broken)
    assert raised.value.path is not None
    assert tuple(raised.value.path)[-1] == "start_ts"


@pytest.mark.parametrize("start_ts", [0, COMMIT, COMMIT + 1])
def test_a_change_event_start_ts_is_below_its_commit_ts(start_ts: int) -> None:
    with pytest.raises(ValueError, match="start_ts"):
        RowChangedEvent(commit_ts=COMMIT, start_ts=start_ts, table=TABLE, op="insert", after=(1,))


def test_the_change_event_form_keeps_start_ts() -> None:
    form = write_change_event(ROW)
    assert form["start_ts"] == COMMIT - 7
    assert read_change_event(form) == ROW
    assert "start_ts" not in write_change_event(
        RowChangedEvent(**{**_fields(ROW), "start_ts": None})
    )
