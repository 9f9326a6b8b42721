"""The Arrow rows each Spark task of ``expected-state`` sends (suites/consumer/partition_rows.py),
checked without Spark against the plain reference consumer over the same dump."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.reference.consumer import AppliedDDL
from ticdc_conformance.suites.consumer.job import consume_dump
from ticdc_conformance.suites.consumer.partition_rows import READ_SCHEMA, reader

STREAMS = ("stream.open.tiflow.replay", "stream.simple-json.tiflow.replay")
"""A replay of each kind: Open Protocol, and Simple with its schema messages."""


def _read(stream_id: str, batch_rows: int) -> list[dict[str, Any]]:
    """The rows ``reader`` sends for the stream's dump, fed in batches of ``batch_rows``."""
    entry = next(s for s in fixtures.load_manifest()["streams"] if s["id"] == stream_id)
    records = pq.read_table(fixtures.default_root() / entry["records"])
    records = records.select(["topic", "partition", "offset", "key", "value"]).sort_by(
        [("topic", "ascending"), ("partition", "ascending"), ("offset", "ascending")]
    )
    sent = list(reader(entry["protocol"], {})(iter(records.to_batches(batch_rows))))
    assert all(batch.schema == READ_SCHEMA for batch in sent)
    rows: list[dict[str, Any]] = pa.Table.from_batches(sent, schema=READ_SCHEMA).to_pylist()
    return rows


@pytest.mark.parametrize("stream_id", STREAMS)
@pytest.mark.parametrize("batch_rows", [7, 100_000])
def test_the_rows_hold_what_the_plain_consumer_reads(stream_id: str, batch_rows: int) -> None:
    rows = _read(stream_id, batch_rows)
    _, consumed = consume_dump(stream_id, None, {})
    kinds = Counter(row["type"] for row in rows)
    partitions = [row for row in rows if row["type"] == "partition"]
    # one row per Kafka partition, however the batches cut the partitions
    assert len(partitions) == len({(r["topic"], r["partition"]) for r in partitions}) > 1
    assert sum(r["messages"] for r in partitions) == consumed.messages
    assert kinds["not_applied"] == len(consumed.not_applied)
    applied = (*consumed.log, *consumed.pending)
    changes = [row for row in rows if row["type"] == "item" and row["kind"] == "row"]
    assert len(changes) == len({r["identity"] for r in changes})
    assert len(changes) == sum(not isinstance(a, AppliedDDL) for a in applied)
    # the replay: some change came twice, and its row says so
    assert max(r["deliveries"] for r in changes) > 1
    ddls = {r["identity"] for r in rows if r["type"] == "item" and r["kind"] == "ddl"}
    assert len(ddls) == sum(isinstance(a, AppliedDDL) for a in applied)
