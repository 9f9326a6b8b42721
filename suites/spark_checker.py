"""The Spark stream checker: a topic dump in, per-rule counts and bounded samples out.

The only module that imports pyspark. One pass over the records:

1. read the dump's Parquet (a folder, a file or a glob; several topics may share it);
2. ``repartition`` by (topic, partition), each Kafka partition placed by its record count so
   the tasks are balanced, and sort within Spark partitions by offset, so each Kafka
   partition's records reach one executor task in offset order;
3. ``mapInArrow`` runs ``PartitionChecker`` (``suites/stream_rules.py``) per Kafka partition,
   decoding with the reference codecs (Simple with per-partition schema state) and emitting
   per task: rule counts, the first ``samples`` findings per rule, message accounting, and
   one row per DDL/watermark seen (for the broadcast rules);
4. the broadcast rules (§6.2) group those rows by (topic, rule, commit ts, DDL query) and
   count distinct partitions; every partition missing from a group is one finding.

Only counts and at most ``samples`` findings per rule per task reach the driver; the final
samples are the first ``samples`` per rule in (topic, partition, offset) order.

Run it through ``ticdc-conformance check-stream`` (an embedded ``local[*]`` session bound to
127.0.0.1) or ``spark-submit`` this file with the same arguments and a ``--master``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, Self

import pyarrow as pa
from pyspark import SparkConf
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from ticdc_conformance.suites.stream_rules import (
    Broadcast,
    CheckSettings,
    Finding,
    PartitionChecker,
)

__all__ = ["CheckResult", "bare_decode_count", "check_dump", "main", "session", "spark_int_hash"]

_OUT = pa.schema(
    [
        pa.field("kind", pa.string()),
        pa.field("rule", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("key", pa.binary()),
        pa.field("commit_ts", pa.int64()),
        pa.field("detail", pa.string()),
        pa.field("count", pa.int64()),
    ]
)
_OUT_DDL = (
    "kind string, rule string, topic string, partition int, offset long, key binary, "
    "commit_ts long, detail string, count long"
)
_FLUSH = 4096
_ACCOUNTING = ("_read", "_decoded", "_undecodable")
"""Count names of the message accounting (apart from the rule ids)."""


def session(master: str | None = None, *, shuffle_partitions: int | None = None) -> SparkSession:
    """The session: ``master`` if given, else spark-submit's, else ``local[*]`` on 127.0.0.1."""
    warnings.filterwarnings("ignore", "PySpark does not yet fully support pandas", FutureWarning)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder: Any = SparkSession.builder.appName("ticdc-conformance check-stream")
    if master is not None:
        builder = builder.master(master)
    elif not SparkConf().contains("spark.master"):
        builder = builder.master("local[*]")
    settings = {
        "spark.ui.enabled": "false",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.sql.execution.arrow.maxRecordsPerBatch": "4096",
        "spark.ui.showConsoleProgress": "false",
    }
    if not SparkConf().contains("spark.driver.memory"):
        # local mode: the shuffle and sort of the records run in the driver's JVM
        settings["spark.driver.memory"] = "4g"
    if shuffle_partitions is not None:
        settings["spark.sql.shuffle.partitions"] = str(shuffle_partitions)
    for name, value in settings.items():
        builder = builder.config(name, value)
    spark: SparkSession = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _records(spark: SparkSession, paths: list[str]) -> DataFrame:
    return spark.read.parquet(*paths).select("topic", "partition", "offset", "key", "value")


def _rows(items: list[dict[str, Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(items, schema=_OUT)


def _finding_row(f: Finding) -> dict[str, Any]:
    return {"kind": "finding", "rule": f.rule, "topic": f.topic, "partition": f.partition,
            "offset": f.offset, "key": f.key, "commit_ts": f.commit_ts,
            "detail": f.detail[:300], "count": None}  # fmt: skip


def _broadcast_rows(columns: tuple[list[Any], ...]) -> pa.RecordBatch:
    rules, topics, partitions, stamps, idents = columns
    n = len(rules)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(["broadcast"] * n, pa.string()),
            pa.array(rules, pa.string()),
            pa.array(topics, pa.string()),
            pa.array(partitions, pa.int32()),
            pa.nulls(n, pa.int64()),
            pa.nulls(n, pa.binary()),
            pa.array(stamps, pa.int64()),
            pa.array(idents, pa.string()),
            pa.nulls(n, pa.int64()),
        ],
        schema=_OUT,
    )


def _checker_task(
    settings: CheckSettings, samples: int
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        counts: Counter[str] = Counter()
        kept: dict[str, list[dict[str, Any]]] = {}
        seen: list[dict[str, Any]] = []
        # broadcasts are many (one per watermark per partition): kept as columns, not dicts
        broadcasts: tuple[list[Any], ...] = ([], [], [], [], [])
        checker: PartitionChecker | None = None

        def take(item: Finding | Broadcast) -> None:
            if isinstance(item, Broadcast):
                values = (item.kind, item.topic, item.partition, item.commit_ts, item.ident)
                for column, value in zip(broadcasts, values, strict=True):
                    column.append(value)
                return
            counts[item.rule] += 1
            sample = kept.setdefault(item.rule, [])
            if len(sample) < samples:
                sample.append(_finding_row(item))

        def close(done: PartitionChecker) -> None:
            for item in done.finish():
                take(item)
            counts["_read"] += done.read
            counts["_decoded"] += done.decoded
            counts["_undecodable"] += done.undecodable
            seen.append({"kind": "partition", "topic": done.topic, "partition": done.partition})

        for batch in batches:
            columns = [batch.column(i).to_pylist() for i in range(5)]
            for topic, partition, offset, key, value in zip(*columns, strict=True):
                if checker is None or (checker.topic, checker.partition) != (topic, partition):
                    if checker is not None:
                        close(checker)
                    checker = PartitionChecker(settings, topic, partition)
                for item in checker.feed(offset, key, value):
                    take(item)
            if len(broadcasts[0]) >= _FLUSH:
                yield _broadcast_rows(broadcasts)
                for column in broadcasts:
                    column.clear()
        if checker is not None:
            close(checker)
        if broadcasts[0]:
            yield _broadcast_rows(broadcasts)
        out = [{"kind": "count", "rule": rule, "count": n} for rule, n in counts.items()]
        out.extend(row for rows in kept.values() for row in rows)
        out.extend(seen)
        yield _rows(out)

    return run


def _decode_task(protocol: str) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """The bare job's task: decode every message (stateless) and count messages and events."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from ticdc_conformance.reference import CODECS, DecodeError, Message  # noqa: PLC0415

        codec = CODECS[protocol]
        messages = events = 0
        for batch in batches:
            keys, values = batch.column(3).to_pylist(), batch.column(4).to_pylist()
            for key, value in zip(keys, values, strict=True):
                messages += 1
                try:
                    events += len(codec.decode(Message(key=key, value=value)))
                except DecodeError:
                    continue
        yield pa.RecordBatch.from_pydict(
            {"messages": [messages], "events": [events]},
            schema=pa.schema([("messages", pa.int64()), ("events", pa.int64())]),
        )

    return run


def bare_decode_count(spark: SparkSession, paths: list[str], protocol: str) -> tuple[int, int]:
    """The benchmark's floor: read and decode every message, count messages and events."""
    df = _records(spark, paths).mapInArrow(_decode_task(protocol), "messages long, events long")
    row = df.agg(F.sum("messages"), F.sum("events")).collect()[0]
    return int(row[0] or 0), int(row[1] or 0)


class CheckResult:
    """Counts per rule, bounded samples per rule, and the message accounting."""

    def __init__(
        self, counts: dict[str, int], samples: dict[str, list[dict[str, Any]]], records: int
    ) -> None:
        self.counts = {r: n for r, n in counts.items() if r not in _ACCOUNTING}
        self.samples = samples
        self.read, self.decoded, self.undecodable = (counts.get(n, 0) for n in _ACCOUNTING)
        self.records = records
        """Records in the input, counted apart from the check (every one must be read)."""


def _missing_broadcasts(out: DataFrame, settings: CheckSettings) -> DataFrame:
    groups = (
        out.filter(F.col("kind") == "broadcast")
        .groupBy("rule", "topic", "commit_ts", "detail")
        .agg(F.collect_set("partition").alias("have"))
    )
    if settings.partitions is not None:
        sizes = out.filter(F.col("kind") == "partition").select("topic").distinct()
        sizes = sizes.withColumn("n", F.lit(settings.partitions))
    else:
        sizes = (
            out.filter(F.col("kind") == "partition")
            .groupBy("topic")
            .agg((F.max("partition") + 1).alias("n"))
        )
    missing = F.array_except(F.sequence(F.lit(0), F.col("n") - 1), F.col("have"))
    return (
        groups.join(sizes, "topic")
        .select("rule", "topic", "commit_ts", "detail", F.explode(missing).alias("partition"))
        .select(
            F.lit("finding").alias("kind"),
            "rule",
            "topic",
            "partition",
            F.lit(None).cast("long").alias("offset"),
            F.lit(None).cast("binary").alias("key"),
            "commit_ts",
            "detail",
            F.lit(None).cast("long").alias("count"),
        )
    )


_MASK = 0xFFFFFFFF


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def spark_int_hash(value: int) -> int:
    """Spark SQL's ``hash()`` of an INT (Murmur3 x86 32-bit, seed 42), as ``pmod`` sees it.

    ``repartition(n, column)`` sends a row to ``pmod(hash(column), n)``; knowing the hash lets
    the driver pick values that land in chosen Spark partitions without a probe job.
    """
    k1 = _rotl((value & _MASK) * 0xCC9E2D51 & _MASK, 15) * 0x1B873593 & _MASK
    h1 = (_rotl(42 ^ k1, 13) * 5 + 0xE6546B64) & _MASK
    h1 ^= 4
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 & 0x80000000 else h1


def _slots(sizes: dict[tuple[str, int], int], tasks: int) -> Column:
    """A column placing each Kafka partition in its Spark partition, balanced by size.

    Largest partitions first, each to the least loaded of ``tasks`` buckets (LPT); bucket 0
    gets the heaviest load, so the longest tasks start first. Spark's ``repartition`` hashes
    the column (Murmur3), so each bucket is represented by a value that hashes into it. Only
    the balance depends on this: a Kafka partition always stays in one Spark partition.
    """
    loads = [0] * tasks
    bucket_of: dict[tuple[str, int], int] = {}
    for key, size in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        bucket = loads.index(min(loads))
        bucket_of[key] = bucket
        loads[bucket] += size
    order = sorted(range(tasks), key=lambda b: -loads[b])  # heaviest first
    rank = {b: i for i, b in enumerate(order)}
    value_of: dict[int, int] = {}
    candidate = 0
    while len(value_of) < tasks:
        value_of.setdefault(spark_int_hash(candidate) % tasks, candidate)
        candidate += 1
    pairs: list[Column] = []
    for (topic, partition), bucket in bucket_of.items():
        pairs += [F.lit(f"{topic}\x00{partition}"), F.lit(value_of[rank[bucket]])]
    coordinates = F.concat_ws("\x00", F.col("topic"), F.col("partition").cast("string"))
    return F.create_map(*pairs)[coordinates]


def check_dump(
    spark: SparkSession,
    paths: list[str],
    settings: CheckSettings,
    *,
    samples: int = 10,
    tasks: int | None = None,
) -> CheckResult:
    """Run the whole rule catalog over the dump at ``paths``."""
    records = _records(spark, paths)
    sizes = {
        (r[0], r[1]): int(r[2]) for r in records.groupBy("topic", "partition").count().collect()
    }
    cores = spark.sparkContext.defaultParallelism
    tasks = max(1, min(len(sizes), tasks or cores * 4))
    spark.conf.set("spark.sql.shuffle.partitions", str(max(2, cores * 2)))  # small aggregations
    ordered = (
        records.withColumn("slot", _slots(sizes, tasks))
        .repartition(tasks, "slot")
        .sortWithinPartitions("topic", "partition", "offset")
        .drop("slot")
    )
    out = ordered.mapInArrow(_checker_task(settings, samples), _OUT_DDL).persist()
    try:
        missing = _missing_broadcasts(out, settings).persist()
        counts: Counter[str] = Counter()
        for row in out.filter(F.col("kind") == "count").groupBy("rule").sum("count").collect():
            counts[row[0]] += int(row[1])
        for row in missing.groupBy("rule").count().collect():
            counts[row[0]] += int(row[1])
        first = Window.partitionBy("rule").orderBy("topic", "partition", "offset", "commit_ts")
        chosen = (
            out.filter(F.col("kind") == "finding")
            .unionByName(missing)
            .withColumn("n", F.row_number().over(first))
            .filter(F.col("n") <= samples)
            .orderBy("rule", "n")
            .collect()
        )
        kept: dict[str, list[dict[str, Any]]] = {}
        for row in chosen:
            kept.setdefault(row["rule"], []).append(
                {name: row[name] for name in
                 ("topic", "partition", "offset", "key", "commit_ts", "detail")}
            )  # fmt: skip
        total = sum(sizes.values())
    finally:
        out.unpersist()
    return CheckResult(dict(counts), kept, total)


class Progress:
    """Prints the running stage's task progress on stderr while the job runs."""

    def __init__(self, spark: SparkSession, *, every: float = 2.0) -> None:
        self._tracker = spark.sparkContext.statusTracker()
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        last = ""
        started = time.monotonic()
        while not self._stop.wait(self._every):
            parts = []
            for stage in self._tracker.getActiveStageIds():
                info = self._tracker.getStageInfo(stage)
                if info is not None:
                    parts.append(f"stage {stage}: {info.numCompletedTasks}/{info.numTasks} tasks")
            line = "; ".join(parts)
            if line and line != last:
                elapsed = time.monotonic() - started
                sys.stderr.write(f"[check-stream {elapsed:5.0f} s] {line}\n")
                sys.stderr.flush()
                last = line


def main(argv: list[str] | None = None) -> int:
    """``spark-submit suites/spark_checker.py ARGS``: the same as ``check-stream ARGS``."""
    from ticdc_conformance.suites.stream_report import run_from_command_line  # noqa: PLC0415

    return run_from_command_line(argv)


if __name__ == "__main__":
    sys.exit(main())
