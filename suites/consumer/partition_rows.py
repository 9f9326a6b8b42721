"""One Kafka partition read by the reference consumer, as the Arrow rows a Spark task sends.

``expected-state``'s Spark job (``spark_state``) hands each task whole Kafka partitions in
offset order; ``reader`` is its ``mapInArrow`` function. For each partition it runs
``reference.consumer.read_partition`` (the plain path's own reading, so both paths agree) and
sends, in ``READ_SCHEMA``:

* one ``partition`` row: the partition's final watermark, its message count and the handle
  keys it learned (JSON);
* one ``not_applied`` row per message the consumer could not apply, with the reason;
* one ``item`` row per change or DDL: its identity (a replay's is the same text), its
  application order (commit ts, DDL rank, operation rank, coordinates, sequence), its delivery
  count and, for a row, its handle keys and the after image rendered as text
  (``values.value_text``) with each column's kind and zone.

No Spark here: the rows are plain Arrow, so this module is tested without a session.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from ticdc_conformance.reference.claim_check import ClaimCheck
from ticdc_conformance.reference.consumer import (
    AppliedDDL,
    Coordinates,
    PartitionRead,
    empties_table,
    read_partition,
)
from ticdc_conformance.reference.fold import HandleKey, TableName
from ticdc_conformance.reference.message import Message
from ticdc_conformance.suites.consumer.expected import key_text
from ticdc_conformance.suites.consumer.values import kind_of, value_text

__all__ = ["READ_DDL", "READ_SCHEMA", "reader"]

READ_SCHEMA = pa.schema(
    [
        ("type", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("commit_ts", pa.int64()),
        ("ddl_rank", pa.int32()),
        ("op_rank", pa.int32()),
        ("seq", pa.int64()),
        ("identity", pa.string()),
        ("deliveries", pa.int32()),
        ("kind", pa.string()),
        ("op", pa.string()),
        ("schema", pa.string()),
        ("table", pa.string()),
        ("key", pa.string()),
        ("old_key", pa.string()),
        ("after", pa.string()),
        ("query", pa.string()),
        ("empties", pa.bool_()),
        ("columns", pa.string()),
        ("watermark", pa.int64()),
        ("messages", pa.int64()),
        ("handle_keys", pa.string()),
        ("reason", pa.string()),
    ]
)
_SPARK_TYPES = {
    pa.string(): "string",
    pa.int32(): "int",
    pa.int64(): "bigint",
    pa.bool_(): "boolean",
}
READ_DDL = ", ".join(f"`{f.name}` {_SPARK_TYPES[f.type]}" for f in READ_SCHEMA)
_BATCH = 4096
"""Rows per Arrow batch a task sends."""


def _key(key: HandleKey) -> str:
    return key_text([value_text(v) for v in key])


def _rows(read: PartitionRead, where: tuple[str, int]) -> Iterator[dict[str, Any]]:
    """The Arrow rows of one partition's reading (the module doc)."""
    keys = [[name[0], name[1], list(columns)] for name, columns in read.handle_keys.items()]
    yield {
        "type": "partition",
        "topic": where[0],
        "partition": where[1],
        "watermark": read.watermark,
        "messages": read.messages,
        "handle_keys": json.dumps(keys),
    }
    for seq, missed in enumerate(read.not_applied):
        source = missed.source
        yield {
            "type": "not_applied",
            "topic": source.topic,
            "partition": source.partition,
            "offset": source.offset,
            "seq": seq,
            "reason": missed.reason,
        }
    for read_item in read.items:
        item = read_item.item
        commit_ts, ddl_rank, op_rank, source, seq = read_item.order
        row: dict[str, Any] = {
            "type": "item",
            "topic": source.topic,
            "partition": source.partition,
            "offset": source.offset,
            "commit_ts": commit_ts,
            "ddl_rank": ddl_rank,
            "op_rank": op_rank,
            "seq": seq,
            "identity": read_item.identity,
            "deliveries": item.deliveries,
            "schema": item.table_name[0],
            "table": item.table_name[1],
        }
        if isinstance(item, AppliedDDL):
            row.update(kind="ddl", query=item.ddl.query, empties=empties_table(item.ddl.query))
            yield row
            continue
        after = item.row.after
        images = [image for image in (after, item.row.before) if image]
        columns = [
            [c.name, kind_of(c.value, c.mysql_type), getattr(c.value, "zone", None)]
            for image in images
            for c in image
        ]
        row.update(
            kind="row",
            op=item.row.op,
            key=_key(item.key),
            old_key=None if item.old_key is None else _key(item.old_key),
            after=None
            if after is None
            else json.dumps({c.name: value_text(c.value) for c in after}, ensure_ascii=False),
            columns=json.dumps(columns, ensure_ascii=False),
        )
        yield row


def reader(
    protocol: str,
    handle_keys: Mapping[TableName, Sequence[str]],
    claim_check: ClaimCheck | None = None,
) -> Any:  # noqa: ANN401 - mapInArrow's function
    """The ``mapInArrow`` function reading each whole Kafka partition of a task's batches.

    ``claim_check`` resolves claim-check references as the plain path does; it travels to the
    executors with the function, so its storage must be readable there (a local folder with a
    local master, a shared one on a cluster).
    """

    def read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        def partitions() -> Iterator[tuple[tuple[str, int], list[tuple[Coordinates, Message]]]]:
            current: tuple[str, int] | None = None
            messages: list[tuple[Coordinates, Message]] = []
            for batch in batches:
                data = batch.to_pydict()
                for topic, partition, offset, key, value in zip(
                    data["topic"],
                    data["partition"],
                    data["offset"],
                    data["key"],
                    data["value"],
                    strict=True,
                ):
                    if (topic, partition) != current:
                        if current is not None:
                            yield current, messages
                        current, messages = (topic, partition), []
                    where = Coordinates(topic, partition, offset)
                    messages.append((where, Message(key=key, value=value)))
            if current is not None:
                yield current, messages

        for where, messages in partitions():
            out: list[dict[str, Any]] = []
            read_messages = read_partition(protocol, messages, handle_keys, claim_check=claim_check)
            for row in _rows(read_messages, where):
                out.append(row)
                if len(out) == _BATCH:
                    yield pa.RecordBatch.from_pylist(out, schema=READ_SCHEMA)
                    out = []
            if out:
                yield pa.RecordBatch.from_pylist(out, schema=READ_SCHEMA)

    return read
