"""``expected-state`` as a Spark job: the reference consumer over a dump too large for Python.

It writes the folder ``expected.write_expected_state`` writes (docs/consumers.md, "The
expected state on disk"), from the same reading (``reference.consumer.read_partition``):

* The dump is repartitioned by (topic, partition) and sorted by offset within partitions, so
  each Kafka partition is whole and in order inside one Spark task; ``mapInArrow`` reads each
  with ``read_partition`` and sends one row per change or DDL (its identity, application
  order, delivery count and rendered texts), one per message not applied and one per
  partition (its final watermark, message count and the handle keys it learned).
* On the driver, from the partitions' rows: the global watermark (``global_watermark``) and
  the handle keys, merged in (topic, partition) order as ``consume`` merges them.
* On the executors: each identity once, at its first delivery in application order with its
  deliveries summed; the changes above the global watermark are pending; the log is the rest
  in application order; a key's final row is the last effect on it (an INSERT or UPDATE writes
  it, an UPDATE's old key and a DELETE remove it) after the last DDL that empties its table.

The rows reach the driver only to be written, a Spark partition at a time (``toLocalIterator``),
as one Parquet file per table and one log, as the plain path writes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention

from ticdc_conformance.generators.dump import dump_files
from ticdc_conformance.reference.consumer import (
    AppliedDDL,
    Coordinates,
    PartitionRead,
    empties_table,
    global_watermark,
    read_partition,
)
from ticdc_conformance.reference.fold import HandleKey, TableName
from ticdc_conformance.reference.message import Message
from ticdc_conformance.suites.consumer.expected import (
    FORMAT,
    KEY_COLUMN,
    LOG_SCHEMA,
    MANIFEST_FILE,
    VERSION,
    key_text,
)
from ticdc_conformance.suites.consumer.values import kind_of, value_text
from ticdc_conformance.suites.stream.phases import Phases

__all__ = ["write_expected_state"]

_READ_SCHEMA = pa.schema(
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
_READ_DDL = ", ".join(f"`{f.name}` {_SPARK_TYPES[f.type]}" for f in _READ_SCHEMA)
_ORDER = ("commit_ts", "ddl_rank", "op_rank", "topic", "partition", "offset", "seq")
_BATCH = 4096


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


def _reader(protocol: str, handle_keys: Mapping[TableName, Sequence[str]]) -> Any:  # noqa: ANN401 - mapInArrow's function
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
            for row in _rows(read_partition(protocol, messages, handle_keys), where):
                out.append(row)
                if len(out) == _BATCH:
                    yield pa.RecordBatch.from_pylist(out, schema=_READ_SCHEMA)
                    out = []
            if out:
                yield pa.RecordBatch.from_pylist(out, schema=_READ_SCHEMA)

    return read


def _order(sub: int) -> Column:
    return F.struct(*(F.col(name) for name in _ORDER), F.lit(sub).alias("sub"))


def _write(frame: DataFrame, file: Path, schema: pa.Schema, *, sequence: bool = False) -> int:
    """Write ``frame``'s rows, in its order, into one Parquet file; return how many."""
    file.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    names = [name for name in schema.names if not (sequence and name == "sequence")]
    with pq.ParquetWriter(file, schema) as writer:
        chunk: list[dict[str, Any]] = []

        def flush() -> None:
            writer.write_table(pa.Table.from_pylist(chunk, schema=schema))
            chunk.clear()

        for row in frame.select(*(F.col(f"`{n}`") for n in names)).toLocalIterator():
            record = dict(zip(names, row, strict=True))
            if sequence:
                record["sequence"] = written
            chunk.append(record)
            written += 1
            if len(chunk) == _BATCH:
                flush()
        if chunk or written == 0:
            flush()
    return written


def _columns(rows: DataFrame) -> dict[TableName, list[dict[str, Any]]]:
    """Per table, its columns in order of first appearance, each with its first kind."""
    cells = rows.select(
        "schema",
        "table",
        _order(0).alias("order"),
        F.posexplode(F.from_json("columns", "array<array<string>>")).alias("pos", "cell"),
    ).select(
        "schema",
        "table",
        F.struct("order", "pos").alias("at"),
        F.col("cell")[0].alias("name"),
        F.col("cell")[1].alias("kind"),
        F.col("cell")[2].alias("zone"),
    )
    first = cells.groupBy("schema", "table", "name").agg(F.min("at").alias("at"))
    typed = (
        cells.where(F.col("kind").isNotNull())
        .groupBy("schema", "table", "name")
        .agg(F.min(F.struct("at", "kind", "zone")).alias("typed"))
    )
    found: dict[TableName, list[tuple[Any, dict[str, Any]]]] = {}
    for row in first.join(typed, ["schema", "table", "name"], "left").collect():
        typed_row = row["typed"]
        column = {
            "name": row["name"],
            "kind": None if typed_row is None else typed_row["kind"],
            "zone": None if typed_row is None else typed_row["zone"],
        }
        found.setdefault((row["schema"], row["table"]), []).append((row["at"], column))
    return {name: [c for _, c in sorted(cols, key=lambda p: p[0])] for name, cols in found.items()}


def _final(applied: DataFrame) -> DataFrame:
    """The final rows: per (table, key), the last effect after its table was last emptied."""
    rows = applied.where(F.col("kind") == "row")
    writes = rows.select(
        "schema",
        "table",
        "key",
        F.when(F.col("op") != "delete", F.col("after")).alias("after"),
        _order(1).alias("order"),
    )
    moves = rows.where(F.col("old_key").isNotNull()).select(
        "schema",
        "table",
        F.col("old_key").alias("key"),
        F.lit(None).cast("string").alias("after"),
        _order(0).alias("order"),
    )
    cuts = (
        applied.where((F.col("kind") == "ddl") & F.col("empties"))
        .groupBy("schema", "table")
        .agg(F.max(_order(0)).alias("cut"))
    )
    effects = writes.unionByName(moves).join(cuts, ["schema", "table"], "left")
    effects = effects.where(F.col("cut").isNull() | (F.col("order") > F.col("cut")))
    last = effects.groupBy("schema", "table", "key").agg(
        F.max(F.struct("order", "after")).alias("last")
    )
    return last.select("schema", "table", "key", F.col("last.after").alias("after")).where(
        F.col("after").isNotNull()
    )


def _partitions(
    read: DataFrame, given: Mapping[TableName, Sequence[str]]
) -> tuple[int | None, int, dict[TableName, tuple[str, ...]]]:
    """The global watermark, the messages read and the handle keys, from the partitions."""
    rows = read.where(F.col("type") == "partition").select(
        "topic", "partition", "watermark", "messages", "handle_keys"
    )
    ordered = sorted(rows.collect(), key=lambda r: (r["topic"], r["partition"]))
    keys = {name: tuple(columns) for name, columns in given.items()}
    for row in ordered:
        for schema, table, columns in json.loads(row["handle_keys"]):
            keys.setdefault((schema, table), tuple(columns))
    watermark = global_watermark(row["watermark"] for row in ordered)
    return watermark, sum(row["messages"] for row in ordered), keys


def write_expected_state(
    spark: SparkSession,
    dump: Path,
    protocol: str,
    out: Path,
    *,
    handle_keys: Mapping[TableName, Sequence[str]] | None = None,
    phases: Phases | None = None,
) -> dict[str, Any]:
    """Write the expected state of the dump ``dump`` into ``out``; return the manifest.

    Its phases (``suites/stream/phases.py``): reading the dump, decoding partitions (the
    reference consumer per Kafka partition), applying changes, writing each table, writing
    the change log.
    """
    phases = phases or Phases(None, command="expected-state", quiet=True)
    given = dict(handle_keys or {})
    records = spark.read.parquet(*(str(p) for p in dump_files(dump)))
    # each Kafka partition lands whole in one task whatever the count; no more tasks than
    # partitions, nor than twice the cores (each task starts a Python worker)
    with phases.phase("reading the dump"):
        partitions = records.select("topic", "partition").distinct().count()
    tasks = max(1, min(partitions, 2 * spark.sparkContext.defaultParallelism))
    read = (
        records.select("topic", "partition", "offset", "key", "value")
        .repartition(tasks, "topic", "partition")
        .sortWithinPartitions("topic", "partition", "offset")
        .mapInArrow(_reader(protocol, given), _READ_DDL)
        .persist()
    )
    try:
        return _write_folder(read, protocol, out, given, phases)
    finally:
        read.unpersist()


def _write_folder(
    read: DataFrame,
    protocol: str,
    out: Path,
    given: Mapping[TableName, Sequence[str]],
    phases: Phases,
) -> dict[str, Any]:
    with phases.phase("decoding partitions"):  # the first action on ``read`` runs the reader
        watermark, messages, keys = _partitions(read, given)
        missed = sorted(
            read.where(F.col("type") == "not_applied").collect(),
            key=lambda r: (r["topic"], r["partition"], r["offset"], r["seq"]),
        )
    items = read.where(F.col("type") == "item")
    first = F.row_number().over(Window.partitionBy("identity").orderBy(*_ORDER))
    unique = (
        items.withColumn("deliveries", F.sum("deliveries").over(Window.partitionBy("identity")))
        .withColumn("first", first)
        .where(F.col("first") == 1)
        .drop("first")
    )
    below = F.col("commit_ts").isNotNull() if watermark is None else F.col("commit_ts") <= watermark
    applied = unique.where(below).persist()
    try:
        with phases.phase("applying changes"):
            pending = unique.where(~below).count()
            counts = {r["kind"]: r["count"] for r in applied.groupBy("kind").count().collect()}
            columns = _columns(applied.where(F.col("kind") == "row"))
            names = sorted(
                (r["schema"], r["table"])
                for r in applied.select("schema", "table").distinct().collect()
            )
        final = _final(applied).persist()
        tables = []
        for name in names:
            with phases.phase(f"writing table {name[0]}.{name[1]}"):
                tables.append(_write_table(final, out, name, keys, columns.get(name, [])))
        final.unpersist()
        with phases.phase("writing the change log"):
            _write(applied.orderBy(*_ORDER), out / "log.parquet", LOG_SCHEMA, sequence=True)
    finally:
        applied.unpersist()
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "protocol": protocol,
        "watermark": watermark,
        "messages": messages,
        "changes": counts.get("row", 0),
        "ddls": counts.get("ddl", 0),
        "pending": pending,
        "not_applied": [
            {
                "topic": r["topic"],
                "partition": r["partition"],
                "offset": r["offset"],
                "reason": r["reason"],
            }
            for r in missed
        ],
        "tables": tables,
        "log": "log.parquet",
    }
    (out / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _write_table(
    final: DataFrame,
    out: Path,
    name: TableName,
    keys: Mapping[TableName, tuple[str, ...]],
    columns: list[dict[str, Any]],
) -> dict[str, Any]:
    """Write one table's rows sorted by ``_key``; return its manifest entry."""
    file = f"tables/{quote(name[0], safe='')}.{quote(name[1], safe='')}.parquet"
    texts = F.from_json("after", "map<string,string>")
    rows = (
        final.where((F.col("schema") == name[0]) & (F.col("table") == name[1]))
        .select(F.col("key").alias(KEY_COLUMN), texts.alias("texts"))
        .select(KEY_COLUMN, *(F.col("texts")[c["name"]].alias(c["name"]) for c in columns))
        .orderBy(KEY_COLUMN)
    )
    schema = pa.schema([(KEY_COLUMN, pa.string())] + [(c["name"], pa.string()) for c in columns])
    written = _write(rows, out / file, schema)
    return {
        "schema": name[0],
        "table": name[1],
        "key": list(keys.get(name, ())),
        "columns": columns,
        "rows": written,
        "file": file,
    }
