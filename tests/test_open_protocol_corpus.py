"""Open Protocol against outside material: the normative examples, the seeds' event stream,
and the legacy binary batches of TiCDC's Java example (shared/upstream)."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest
from helpers import frame

from ticdc_conformance.reference import (
    DecodedColumn,
    DecodedDDL,
    DecodedResolved,
    DecodedRow,
    DecodeError,
    Message,
    Value,
    open_protocol,
)
from ticdc_conformance.reference.forms import read_change_event

EXAMPLES = resources.files("ticdc_conformance.fixtures").joinpath("examples")


def _events(text: str) -> list:  # type: ignore[type-arg]
    return [read_change_event(json.loads(line)) for line in text.splitlines() if line]


def _size(messages: list[Message]) -> int:
    return sum(len(m.key or b"") + len(m.value or b"") for m in messages)


@pytest.mark.parametrize(("name", "size"), [("case0", 708), ("case1", 2816)])
def test_craft_benchmark_cases_have_the_documented_json_size(name: str, size: int) -> None:
    """Ground truth §8: the Craft document's JSON column, 708 and 2816 bytes (profile tiflow)."""
    text = EXAMPLES.joinpath(f"craft-benchmark-{name}.change.jsonl").read_text()
    messages = open_protocol.encode(_events(text), open_protocol.Config(profile="tiflow"))
    assert len(messages) == 1  # case 1's four rows share one batch
    assert _size(messages) == size


def test_bundled_examples_are_the_shared_examples(shared: Path) -> None:
    """The demo's bundled copies must stay identical to shared/design/examples."""
    originals = sorted((shared / "design" / "examples").glob("*.change.jsonl"))
    assert originals
    for original in originals:
        assert EXAMPLES.joinpath(original.name).read_bytes() == original.read_bytes()


def test_shared_examples_encode_and_decode(shared: Path) -> None:
    for path in sorted((shared / "design" / "examples").glob("*.change.jsonl")):
        for profile in open_protocol.PROFILES:
            events = _events(path.read_text())
            messages = open_protocol.encode(events, open_protocol.Config(profile=profile))
            decoded = [e for m in messages for e in open_protocol.decode(m)]
            assert [type(e).__name__ for e in decoded] == [
                {"row": "DecodedRow", "ddl": "DecodedDDL", "resolved": "DecodedResolved"}[
                    json.loads(line)["kind"]
                ]
                for line in path.read_text().splitlines()
            ]


# ---------------------------------------------------------------- the seeds' event stream
LOG_LINE = re.compile(r'^(\d+)\. \[partition=(\d)\] \[key="(.*)"\] \[value=(.*)\]$', re.MULTILINE)


def _seed_logs(shared: Path) -> dict[int, tuple[bytes, str]]:
    text = (shared / "seeds" / "000_ee6dc61864b28f69.txt").read_text()
    logs = {}
    for number, _partition, key, value in LOG_LINE.findall(text):
        value_json = value.removeprefix('"').removesuffix('"').replace('\\"', '"')
        logs[int(number)] = (key.replace('\\"', '"').encode(), value_json)
    return logs


def _legacy(name: str, value: Value, t: int, handle: bool = False) -> DecodedColumn:
    return DecodedColumn(name=name, value=value, type_code=t, flags=None, handle_key=handle)


def _seed_row(ts: int, op: str, columns: list[DecodedColumn]) -> DecodedRow:
    images = (
        {"before": tuple(columns), "after": None}
        if op == "delete"
        else {"before": None, "after": tuple(columns)}
    )
    return DecodedRow(commit_ts=ts, schema="test", table="t1", op=op, **images)  # type: ignore[arg-type]


def _id(v: int) -> DecodedColumn:
    return _legacy("id", v, 3, handle=True)


T1, T2, T3 = 415508856908021766, 415508878783938562, 415508881418485761
CREATE = DecodedDDL(
    commit_ts=T1,
    schema="test",
    table="t1",
    ddl_type=3,
    query="CREATE TABLE test.t1(id int primary key, val varchar(16))",
)
# The seed's VARCHAR values are base64 ("YWE=" is "aa"): the 2020 encoder's form, stale since
# (ground truth §2.8 O1). Today VARCHAR is plain text, so a consumer reads the literal text.
SEED_STREAM = {
    1: CREATE,
    2: DecodedResolved(commit_ts=T1),
    3: CREATE,
    4: DecodedResolved(commit_ts=T1),
    5: _seed_row(T2, "insert", [_id(1), _legacy("val", "YWE=", 15)]),
    6: _seed_row(T2, "insert", [_id(2), _legacy("val", "YmI=", 15)]),
    7: _seed_row(T2, "insert", [_id(3), _legacy("val", "Y2M=", 15)]),
    8: _seed_row(T2, "insert", [_id(3), _legacy("val", "Y2M=", 15)]),
    # logs 9-10: the seed's deletes carry only the key; TiCDC sends all columns today (O6)
    9: _seed_row(T3, "delete", [_id(1)]),
    10: _seed_row(T3, "delete", [_id(2)]),
    # logs 11-12 are UPDATEs in the SQL, but without "p" they read as inserts (O7)
    11: _seed_row(T3, "insert", [_id(3), _legacy("val", "ZGQ=", 15)]),
    12: _seed_row(T3, "insert", [_id(4), _legacy("val", "ZWU=", 15)]),
    13: DecodedResolved(commit_ts=415508881038376963),
    14: DecodedResolved(commit_ts=415508881038376963),
}


def test_seed_event_stream_decodes(shared: Path) -> None:
    """Seeds 000/003, logs 1-14, framed as Kafka messages, with today's resolved value."""
    logs = _seed_logs(shared)
    assert sorted(logs) == list(range(1, 15))
    for number, (key, value) in logs.items():
        # "Value: None" in the seed; TiCDC writes a zero-length entry (§2.8 O4)
        entry = value.encode() if value else b""
        [event] = open_protocol.decode(frame([key], [entry]))
        assert event == SEED_STREAM[number], f"log {number}"


def test_seed_resolved_without_value_is_rejected(shared: Path) -> None:
    """Taken literally ("Value: None"), a resolved key has no value entry: TiCDC's decoder
    panics on that, the reference says where it is wrong."""
    key, _ = _seed_logs(shared)[2]
    message = frame([key], [])
    with pytest.raises(DecodeError, match="8 zero bytes") as info:
        open_protocol.decode(Message(key=message.key, value=b""))
    assert (info.value.part, info.value.offset) == ("value", 0)


# --------------------------------------------------- legacy batches of TiCDC's Java example
def _upstream(shared: Path, kind: str, number: int) -> Message:
    base = shared / "upstream/pingcap+tiflow/examples/java/src/test/resources/data"
    return Message(
        key=(base / "key" / f"{kind}_key_{number}").read_bytes(),
        value=(base / "value" / f"{kind}_value_{number}").read_bytes(),
    )


def _legacy_row(ts: int, table: str, value: str, partition: int | None = None) -> DecodedRow:
    return DecodedRow(
        commit_ts=ts,
        schema="a",
        table=table,
        op="insert",
        before=None,
        after=(_legacy("col1", value, 1),),
        partition_id=partition,
    )


def _legacy_ddl(ts: int, letter: str, action: int) -> DecodedDDL:
    return DecodedDDL(
        commit_ts=ts, schema="a", table="b", query=f"create table {letter}", ddl_type=action
    )


UPSTREAM = {
    ("ddl", 0): [_legacy_ddl(1, "a", 1)],
    ("ddl", 1): [_legacy_ddl(1, "a", 1), _legacy_ddl(2, "b", 2), _legacy_ddl(3, "c", 3)],
    ("ddl", 2): [],
    # synthetic type/value ("aa" in a TINYINT): legacy columns without f pass v through
    ("row", 0): [_legacy_row(1, "b", "aa")],
    ("row", 1): [
        _legacy_row(1, "b", "aa"),
        _legacy_row(2, "b", "bb"),
        _legacy_row(3, "b", "bb"),
        _legacy_row(4, "c", "cc", partition=6),
    ],
    ("row", 2): [],
    ("rts", 0): [DecodedResolved(commit_ts=1)],
    ("rts", 1): [DecodedResolved(commit_ts=ts) for ts in (1, 2, 3)],
    ("rts", 2): [],
}


@pytest.mark.parametrize(("kind", "number"), sorted(UPSTREAM), ids=str)
def test_legacy_java_example_batches(shared: Path, kind: str, number: int) -> None:
    """shared/upstream/README.md: 1 or 3 DDLs, 1 or 4 rows, 1 or 3 resolved, empty batches."""
    assert open_protocol.decode(_upstream(shared, kind, number)) == UPSTREAM[kind, number]
