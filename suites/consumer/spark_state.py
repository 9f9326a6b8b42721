"""``expected-state`` as a Spark job: the reference consumer over a dump too large for Python.

It writes the folder ``expected.write_expected_state`` writes (docs/consumers.md, "The
expected state on disk"), from the same reading (``reference.consumer.read_partition``):

* The dump is repartitioned by (topic, partition) and sorted by offset within partitions, so
  each Kafka partition is whole and in order inside one Spark task; ``mapInArrow`` reads each
  with ``read_partition`` (``partition_rows.reader``) and sends one row per change or DDL (its
  identity, application order, delivery count and rendered texts), one per message not
  applied and one per partition (its final watermark, message count and the handle keys it
  learned).
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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention

from ticdc_conformance.generators.dump import dump_files
from ticdc_conformance.reference.claim_check import ClaimCheck
from ticdc_conformance.reference.consumer import global_watermark
from ticdc_conformance.reference.fold import TableName
from ticdc_conformance.suites.consumer.expected import (
    FORMAT,
    KEY_COLUMN,
    LOG_SCHEMA,
    MANIFEST_FILE,
    VERSION,
)
from ticdc_conformance.suites.consumer.partition_rows import READ_DDL, reader
from ticdc_conformance.suites.stream.phases import Phases

__all__ = ["FETCH_ROWS", "write_expected_state"]

_ORDER = ("commit_ts", "ddl_rank", "op_rank", "topic", "partition", "offset", "seq")
_BATCH = 4096
FETCH_ROWS = 100_000
"""Rows the driver fetches at a time while writing a table or the log."""


def _order(sub: int) -> Column:
    return F.struct(*(F.col(name) for name in _ORDER), F.lit(sub).alias("sub"))


def _write(
    frame: DataFrame,
    order: Sequence[str],
    file: Path,
    schema: pa.Schema,
    *,
    fetch_rows: int,
    sequence: bool = False,
) -> int:
    """Write ``frame``'s rows, sorted by ``order``, into one Parquet file; return how many.

    The rows are range-partitioned into Spark partitions of about ``fetch_rows`` rows, each
    sorted, so the driver fetches one bounded partition at a time, in order (a plain
    ``orderBy`` makes as many partitions as the shuffle setting, and one of a few million
    rows is more than a driver's heap holds).
    """
    file.parent.mkdir(parents=True, exist_ok=True)
    parts = max(1, -(-frame.count() // fetch_rows))
    frame = frame.repartitionByRange(parts, *order).sortWithinPartitions(*order)
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
    claim_check: ClaimCheck | None = None,
    phases: Phases | None = None,
    fetch_rows: int = FETCH_ROWS,
) -> dict[str, Any]:
    """Write the expected state of the dump ``dump`` into ``out``; return the manifest.

    The driver holds at most about ``fetch_rows`` rows of a table or of the log at a time.
    ``claim_check`` resolves claim-check references on the executors, as ``consume`` does
    (``job.claim_check_of``: the dump's ``_claim_check/`` folder or the given storage).

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
        .mapInArrow(reader(protocol, given, claim_check), READ_DDL)
        .persist()
    )
    try:
        return _write_folder(read, protocol, out, given, phases, fetch_rows=fetch_rows)
    finally:
        read.unpersist()


def _write_folder(
    read: DataFrame,
    protocol: str,
    out: Path,
    given: Mapping[TableName, Sequence[str]],
    phases: Phases,
    *,
    fetch_rows: int,
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
                columns_of = columns.get(name, [])
                table = _write_table(final, out, name, keys, columns_of, fetch_rows=fetch_rows)
                tables.append(table)
        final.unpersist()
        with phases.phase("writing the change log"):
            log = out / "log.parquet"
            _write(applied, _ORDER, log, LOG_SCHEMA, fetch_rows=fetch_rows, sequence=True)
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
    *,
    fetch_rows: int,
) -> dict[str, Any]:
    """Write one table's rows sorted by ``_key``; return its manifest entry."""
    file = f"tables/{quote(name[0], safe='')}.{quote(name[1], safe='')}.parquet"
    texts = F.from_json("after", "map<string,string>")
    rows = (
        final.where((F.col("schema") == name[0]) & (F.col("table") == name[1]))
        .select(F.col("key").alias(KEY_COLUMN), texts.alias("texts"))
        .select(KEY_COLUMN, *(F.col("texts")[c["name"]].alias(c["name"]) for c in columns))
    )
    schema = pa.schema([(KEY_COLUMN, pa.string())] + [(c["name"], pa.string()) for c in columns])
    written = _write(rows, (KEY_COLUMN,), out / file, schema, fetch_rows=fetch_rows)
    return {
        "schema": name[0],
        "table": name[1],
        "key": list(keys.get(name, ())),
        "columns": columns,
        "rows": written,
        "file": file,
    }
