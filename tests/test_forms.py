"""The two JSON forms and message lines: schemas, round trips, located errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from ticdc_conformance.generators.strategies import change_events
from ticdc_conformance.reference import (
    ChangeEvent,
    ClaimCheckObject,
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    DecodedBootstrap,
    DecodedColumn,
    DecodedRow,
    FormError,
    Message,
    TimestampValue,
    Value,
    open_protocol,
)
from ticdc_conformance.reference.forms import (
    json_schema,
    read_change_event,
    read_decoded_event,
    read_message,
    read_value,
    write_change_event,
    write_decoded_event,
    write_message,
    write_value,
)

CHANGE, DECODED = json_schema("change-event"), json_schema("decoded-event")
REGISTRY = Registry().with_resources(
    [(str(s["$id"]), Resource.from_contents(s)) for s in (CHANGE, DECODED)]
)
CHANGE_VALIDATOR = Draft202012Validator(CHANGE, registry=REGISTRY)
DECODED_VALIDATOR = Draft202012Validator(DECODED, registry=REGISTRY)


def test_schemas_are_valid_schemas() -> None:
    Draft202012Validator.check_schema(CHANGE)
    Draft202012Validator.check_schema(DECODED)


def test_shared_examples_are_valid_and_round_trip(shared: Path) -> None:
    lines = [
        line
        for path in sorted((shared / "design" / "examples").glob("*.change.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert len(lines) == 7
    for line in lines:
        raw = json.loads(line)
        CHANGE_VALIDATOR.validate(raw)
        assert write_change_event(read_change_event(raw)) == raw


@settings(max_examples=40)  # jsonschema costs about half a millisecond per document
@given(st.lists(change_events(), max_size=4), st.sampled_from(open_protocol.PROFILES))
def test_generated_events_fit_both_schemas(events: list[ChangeEvent], profile: str) -> None:
    for event in events:
        raw = write_change_event(event)
        CHANGE_VALIDATOR.validate(raw)
        assert read_change_event(json.loads(json.dumps(raw))) == event
    config = open_protocol.Config(profile=profile)  # type: ignore[arg-type]
    for message in open_protocol.encode(events, config):
        assert read_message(json.loads(json.dumps(write_message(message)))) == message
        for decoded in open_protocol.decode(message):
            raw = write_decoded_event(decoded)
            DECODED_VALIDATOR.validate(raw)
            assert read_decoded_event(json.loads(json.dumps(raw))) == decoded


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (None, None),
        (18446744073709551615, 2**64 - 1),
        (-1.5, -1.5),
        ("text", "text"),
        ({"bytes": "AP8="}, b"\x00\xff"),
        ({"decimal": "-0.10"}, DecimalValue("-0.10")),
        (
            {"timestamp": "2020-01-01 00:00:00.5", "zone": "UTC"},
            TimestampValue("2020-01-01 00:00:00.5", "UTC"),
        ),
    ],
)
def test_values_both_ways(raw: object, value: Value) -> None:
    assert read_value(raw) == value
    assert write_value(value) == raw


ROW = {
    "kind": "row",
    "commit_ts": 1,
    "op": "insert",
    "after": {"a": 1},
    "table": {"schema": "s", "name": "t", "columns": [{"name": "a", "type": "int"}]},
}


def _with(path: str, value: Any) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads(json.dumps(ROW))
    *parents, last = path.strip("/").split("/")
    target: Any = raw
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    if value is KeyError:
        del target[last]
    elif isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return raw


@pytest.mark.parametrize(
    ("raw", "path", "reason"),
    [
        (_with("/kind", "rows"), "/kind", "kind must be"),
        (_with("/commit_ts", -1), "", "uint64"),
        (_with("/commit_ts", "1"), "/commit_ts", "expected int"),
        (_with("/extra", 1), "/extra", "unknown member"),
        (_with("/op", "upsert"), "", "unknown operation"),
        (_with("/after", KeyError), "", "insert takes an after image"),
        (_with("/after/a", value=True), "/after/a", "not a value"),
        (_with("/after/a", 2**64), "/after/a", "range"),
        (_with("/after/a", "\udcff"), "", "valid Unicode"),
        (_with("/after/b", 1), "/after/b", "no such column"),
        (_with("/after", {}), "/after", "missing column 'a'"),
        (_with("/after/a", {"decimal": "1e3"}), "/after/a", "not a decimal"),
        (_with("/after/a", {"bytes": "!!"}), "/after/a/bytes", "base64"),
        (_with("/table/columns/0/type", "int2"), "/table/columns/0", "unknown MySQL type"),
        (_with("/table/columns/0/elements", [1]), "/table/columns/0/elements", "list of strings"),
        (_with("/table/indexes", [{"name": "i", "columns": ["z"]}]), "/table", "unknown columns"),
        (_with("/table/columns", {}), "/table/columns", "expected a list"),
    ],
)
def test_change_event_errors_are_located(raw: dict[str, Any], path: str, reason: str) -> None:
    with pytest.raises(FormError) as info:
        read_change_event(raw, line=7)
    assert (info.value.pointer, info.value.line) == (path, 7)
    assert reason in info.value.reason
    assert str(info.value).startswith(f"line 7, at {path or '/'}: ")


def test_message_lines() -> None:
    message = Message(
        key=None,
        value=b"\x00",
        claim_checks=(ClaimCheckObject(location="file:///x/1.json", content=b"{}"),),
    )
    raw = write_message(message)
    assert raw == {
        "key": None,
        "value": "AA==",
        "claim_checks": [{"location": "file:///x/1.json", "content": "e30="}],
    }
    assert read_message(raw) == message
    for bad, path in [
        ({"key": "!", "value": None}, "/key"),
        ({"value": None}, ""),
        ({"key": None, "value": None, "x": 1}, "/x"),
    ]:
        with pytest.raises(FormError) as info:
            read_message(bad)
        assert info.value.pointer == path


TABLE = {
    "schema": "s",
    "name": "t",
    "charset": "utf8mb4",
    "table_id": 7,
    "schema_version": 9,
    "columns": [
        {
            "name": "a",
            "type": "int",
            "auto_increment": True,
            "column_id": 2,
            "comment": "id",
            "zerofill": True,
        },
        {"name": "b", "type": "timestamp", "on_update_now": True},
    ],
}


def test_ddl_table_infos_both_ways() -> None:
    raw = {
        "kind": "ddl",
        "commit_ts": 5,
        "schema": "s",
        "table": "t",
        "query": "alter table t",
        "ddl_type": 5,
        "pre_table_info": TABLE,
        "table_info": TABLE,
    }
    CHANGE_VALIDATOR.validate(raw)
    event = read_change_event(raw)
    assert isinstance(event, DDLEvent)
    assert event.table_info is not None
    assert event.table_info == event.pre_table_info
    assert event.table_info.columns[0] == ColumnInfo(
        name="a", type="int", auto_increment=True, column_id=2, comment="id", zerofill=True
    )
    assert (event.table_info.charset, event.table_info.schema_version) == ("utf8mb4", 9)
    assert write_change_event(event) == raw
    bare = {k: v for k, v in raw.items() if not k.endswith("table_info")}
    assert write_change_event(read_change_event(bare)) == bare


@pytest.mark.parametrize(
    "raw",
    [
        {"kind": "bootstrap", "commit_ts": 0, "schema": "s", "table": "t", "table_info": TABLE},
        {
            "kind": "ddl",
            "commit_ts": 5,
            "schema": "",
            "table": "",
            "query": "create table t",
            "ddl_type": None,
            "ddl_kind": "CREATE",
            "table_info": TABLE,
            "pre_table_info": None,
        },
    ],
)
def test_decoded_table_events_both_ways(raw: dict[str, Any]) -> None:
    DECODED_VALIDATOR.validate(raw)
    event = read_decoded_event(raw)
    assert write_decoded_event(event) == raw
    if isinstance(event, DecodedBootstrap):
        assert event.table_info.columns[1].on_update_now


def test_decoded_column_ambiguity() -> None:
    column = DecodedColumn(name="a", value=-1, mysql_type="bigint", ambiguity="unsigned-unknown")
    row = DecodedRow(commit_ts=1, schema="s", table="t", op="insert", before=None, after=(column,))
    raw = write_decoded_event(row)
    DECODED_VALIDATOR.validate(raw)
    assert raw["after"] == [
        {
            "name": "a",
            "value": -1,
            "type_code": None,
            "flags": None,
            "handle_key": None,
            "mysql_type": "bigint",
            "ambiguity": "unsigned-unknown",
        }
    ]
    assert read_decoded_event(raw) == row
    with pytest.raises(FormError) as info:
        read_decoded_event({**raw, "kind": "bootstrap"})
    assert (info.value.pointer, info.value.reason) == ("", "missing member 'table_info'")
