"""The JSON examples of the public Simple document (seed 002_4b0a2d3bf3d33a00.txt) decode.

Where the document is stale (ground truth §4.11), the tests pin what TiCDC really writes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ticdc_conformance.reference import (
    ColumnInfo,
    DecodedBootstrap,
    DecodedColumn,
    DecodedDDL,
    DecodedResolved,
    DecodedRow,
    DecodeError,
    Message,
    TableInfo,
    simple_json,
)

SEED = "seeds/002_4b0a2d3bf3d33a00.txt"


def examples(shared: Path) -> list[dict[str, Any]]:
    text = (shared / SEED).read_text()
    return [json.loads(block) for block in re.findall(r"```\s?json\n(.*?)```", text, re.DOTALL)]


def as_message(document: dict[str, Any]) -> Message:
    return Message(key=None, value=json.dumps(document).encode())


def test_every_message_example_decodes(shared: Path) -> None:
    messages = [e for e in examples(shared) if "version" in e and "type" in e]
    kinds = [type(e) for m in messages for e in simple_json.decode(as_message(m))]
    assert kinds == [
        DecodedDDL,
        DecodedRow,
        DecodedRow,
        DecodedRow,
        DecodedResolved,
        DecodedBootstrap,
    ]


def test_consumer_types_the_dml_examples_by_the_ddl_pre_table_schema(shared: Path) -> None:
    """The DML examples name table user at the version of the DDL example's preTableSchema;
    the BOOTSTRAP example describes another table (new_user), so it resolves nothing."""
    ddl, insert, update, delete, watermark, bootstrap = (
        as_message(e) for e in examples(shared)[:6]
    )
    decoder = simple_json.new_decoder()
    assert decoder.feed(insert, message_index=0) == []
    assert [type(e) for e in decoder.feed(bootstrap, message_index=1)] == [DecodedBootstrap]
    assert len(decoder.pending()) == 1
    released = decoder.feed(ddl, message_index=2)
    row = released[1]
    assert isinstance(row, DecodedRow)
    assert row.after == (
        DecodedColumn("id", 1, mysql_type="int"),
        DecodedColumn("name", "John Doe", mysql_type="varchar"),
        DecodedColumn("age", 25, mysql_type="int"),
        DecodedColumn("score", 90.5, mysql_type="float"),
    )
    [up] = decoder.feed(update, message_index=3)
    [de] = decoder.feed(delete, message_index=4)
    assert isinstance(up, DecodedRow)
    assert isinstance(de, DecodedRow)
    assert (up.op, de.op, de.after, de.table_id, de.schema_version) == (
        "update",
        "delete",
        None,
        148,
        447984074911121426,
    )
    assert up.after is not None
    assert up.after[3].value == 95.0
    assert decoder.feed(watermark, message_index=5) == [
        DecodedResolved(commit_ts=447984124732375041)
    ]
    assert decoder.pending() == ()


def test_table_schema_example_is_what_the_encoder_writes(shared: Path) -> None:
    """The TableSchema reference example, re-encoded from the table it describes."""
    documented = next(e for e in examples(shared) if e.get("schema") == "simple" and "columns" in e)
    table = TableInfo(
        schema="simple",
        name="user",
        table_id=148,
        schema_version=447984074911121426,
        columns=(
            ColumnInfo(name="id", type="int", key="primary", length=11),
            ColumnInfo(name="name", type="varchar", length=255),
            ColumnInfo(name="age", type="int", length=11),
            ColumnInfo(name="score", type="float", length=12),
        ),
    )
    written = json.loads(simple_json.encode_bootstrap(table).value or b"")
    assert written["tableSchema"] == documented


def test_stale_timestamp_as_a_plain_string_is_rejected() -> None:
    """§4.11 S1: the document's type table says TIMESTAMP is a string; TiCDC writes
    {"location","value"}, and a consumer typing by the schema must not accept a bare string."""
    table = TableInfo(
        schema="simple",
        name="user",
        schema_version=7,
        columns=(ColumnInfo(name="createTime", type="timestamp"),),
    )
    decoder = simple_json.new_decoder()
    decoder.feed(simple_json.encode_bootstrap(table), message_index=0)
    stale = b'{"version":1,"database":"simple","table":"user","type":"INSERT","commitTs":1,"buildTs":0,"schemaVersion":7,"data":{"createTime":"2024-02-26 08:00:00"}}'
    with pytest.raises(DecodeError, match=r"a TIMESTAMP is a \{location, value\} object"):
        decoder.feed(Message(key=None, value=stale), message_index=1)
