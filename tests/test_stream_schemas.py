"""Simple's schema messages per partition: order, broadcast and row checksums."""

from __future__ import annotations

import json

import pytest

from ticdc_conformance.reference import CODECS, ColumnInfo, Message, RowChangedEvent, TableInfo
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.suites.stream.plain import check_records
from ticdc_conformance.suites.stream.rules import CheckSettings

TABLE = TableInfo(
    schema="s",
    name="t",
    columns=(ColumnInfo(name="id", type="int", key="primary"), ColumnInfo(name="v", type="int")),
    schema_version=7,
)
CHECKSUMS = {"integrity-check-level": "correctness"}
CODEC = CODECS["simple-json"]

Record = tuple[str, int, int, bytes | None, bytes | None]
Found = list[tuple[str, int, int | None, int | None]]


def dml(ts: int, v: int, options: dict[str, str] | None = None) -> Message:
    event = RowChangedEvent(commit_ts=ts, table=TABLE, op="insert", after=(1, v))
    (message,) = CODEC.encode([event], CODEC.config_from_options(options or {}))
    return message


SIMPLE = CODECS["simple-json"]
assert isinstance(SIMPLE, SchemaCodec)
BOOTSTRAP = SIMPLE.encode_bootstrap(TABLE)


def on(partition: int, *messages: Message) -> list[Record]:
    return [("t", partition, i, m.key, m.value) for i, m in enumerate(messages)]


def found(recs: list[Record], **options: str) -> Found:
    """The findings; the partition count is the dump's, and affinity is not checked."""
    settings = CheckSettings(protocol="simple-json", options=tuple(sorted(options.items())))
    outcome = check_records(recs, settings)
    return sorted((f.rule, f.partition, f.offset, f.commit_ts) for f in outcome.findings)


def flipped(message: Message) -> Message:
    document = json.loads(message.value or b"")
    document["checksum"]["current"] ^= 1
    return Message(key=message.key, value=json.dumps(document).encode())


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        (on(0, BOOTSTRAP, dml(5, 1)), []),
        # the DML before its schema on the partition: resolved, but late
        (on(0, dml(5, 1), BOOTSTRAP), [("schema-before-dml", 0, 0, 5)]),
        # never resolved: schema-resolvable alone
        (on(0, dml(5, 1)), [("schema-resolvable", 0, 0, 5)]),
        # checksums that verify, and one that does not
        (on(0, BOOTSTRAP, dml(5, 1, CHECKSUMS)), []),
        (on(0, BOOTSTRAP, flipped(dml(5, 1, CHECKSUMS))), [("checksum", 0, 1, 5)]),
        # a checksum failing once its schema arrives: the checksum is what is reported
        (on(0, flipped(dml(5, 1, CHECKSUMS)), BOOTSTRAP), [("checksum", 0, 0, 5)]),
    ],
)
def test_a_partitions_dml_meets_its_schema_first_and_verifies(
    records: list[Record], expected: Found
) -> None:
    assert found(records) == expected


def test_a_bootstrap_reaches_every_partition() -> None:
    both = on(0, BOOTSTRAP, dml(5, 1)) + on(1, BOOTSTRAP)
    assert found(both) == []
    # partition 1 lacks the second sending of the schema version
    again = on(0, BOOTSTRAP, dml(5, 1), BOOTSTRAP) + on(1, BOOTSTRAP)
    assert found(again) == [("bootstrap-broadcast", 1, None, 0)]


def test_bootstraps_to_partition_0_only_are_held_to_neither_rule() -> None:
    only_zero = {"send-bootstrap-to-all-partition": "false"}
    # partition 1 gets no BOOTSTRAP: its DML waits for a DDL, which here never comes
    records = on(0, BOOTSTRAP, dml(5, 1)) + on(1, dml(6, 2))
    assert found(records, **only_zero) == [("schema-resolvable", 1, 0, 6)]
    assert found(on(0, dml(5, 1), BOOTSTRAP), **only_zero) == [("schema-before-dml", 0, 0, 5)]
