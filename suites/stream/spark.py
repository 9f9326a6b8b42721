"""The Spark stream checker: a topic dump in, per-rule counts and bounded samples out.

The only module that imports pyspark. One pass over the records; each Kafka partition's
records reach one executor task in offset order, by one of two paths (docs/stream-checker.md):

* **file path**, no shuffle, when the input files' Parquet footers show one (topic, partition)
  per file and no overlapping offset ranges per partition (``suites/stream/layout.py``, read on
  the driver with pyarrow): units (one per Kafka partition: its files, its record count from
  the footers) are placed in tasks largest first, and each task of a small DataFrame of task
  numbers reads its units' files with pyarrow in ``mapInArrow``;
* **shuffle path**, for any other input: count records per (topic, partition), ``repartition``
  by a column placing each Kafka partition in its task the same way, ``sortWithinPartitions``
  by offset, then ``mapInArrow``.

Either task (``suites/stream/tasks.py``) runs ``PartitionChecker`` (``suites/stream/rules.py``)
per Kafka partition, in (topic, partition) order, decoding with the reference codecs (Simple
with per-partition schema state), and emits the same rows: rule counts, the first ``samples``
findings per rule, message accounting, and one row per DDL/watermark seen. The broadcast
rules (§6.2) group those rows by (topic, rule, commit ts, DDL query) and count distinct
partitions; every partition missing from a group is one finding.

Only counts and at most ``samples`` findings per rule per task reach the driver; the final
samples are the first ``samples`` per rule in (topic, partition, offset) order.

Run it through ``ticdc-conformance check-stream`` (an embedded ``local[*]`` session bound to
127.0.0.1) or ``spark-submit`` this file with the same arguments and a ``--master``.
"""

from __future__ import annotations

import functools
import os
import pickle
import sys
import warnings
from collections import Counter
from typing import Any

from pyspark import SparkConf
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's usual alias

from ticdc_conformance.suites.stream.catalog import CheckResult, watermark_series
from ticdc_conformance.suites.stream.layout import Key, Unit, balance, plan_files
from ticdc_conformance.suites.stream.phases import Phases
from ticdc_conformance.suites.stream.range_state import RangeState, chain_problem
from ticdc_conformance.suites.stream.ranges import Piece, split, splittable
from ticdc_conformance.suites.stream.rules import CheckSettings
from ticdc_conformance.suites.stream.tasks import OUT_DDL, decode_task, file_task, shuffle_task

__all__ = [
    "CHECK_PHASES",
    "CheckResult",
    "bare_decode_count",
    "check_dump",
    "main",
    "plan",
    "session",
    "spark_int_hash",
]

"""Count names of the message accounting (apart from the rule ids)."""


def session(master: str | None = None) -> SparkSession:
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
    for name, value in settings.items():
        builder = builder.config(name, value)
    spark: SparkSession = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _records(spark: SparkSession, paths: list[str]) -> DataFrame:
    return spark.read.parquet(*paths).select("topic", "partition", "offset", "key", "value")


def bare_decode_count(spark: SparkSession, paths: list[str], protocol: str) -> tuple[int, int]:
    """The benchmark's floor: read and decode every message, count messages and events."""
    df = _records(spark, paths).mapInArrow(decode_task(protocol), "messages long, events long")
    row = df.agg(F.sum("messages"), F.sum("events")).collect()[0]
    return int(row[0] or 0), int(row[1] or 0)


def _watermarks(out: DataFrame) -> list[dict[str, Any]]:
    """Each partition's watermarks, thinned on the driver as the plain path does."""
    rows = (
        out.filter((F.col("kind") == "broadcast") & (F.col("rule") == "watermark-broadcast"))
        .groupBy("topic", "partition")
        .agg(F.collect_list("commit_ts").alias("stamps"))
        .collect()
    )
    return watermark_series({(r["topic"], r["partition"]): list(r["stamps"]) for r in rows})


def _missing_broadcasts(out: DataFrame, settings: CheckSettings) -> DataFrame:
    seen = out.filter(F.col("kind") == "broadcast")
    if settings.routes and settings.topic is not None:
        # every watermark is owed to the default topic too (rules.missing_broadcasts)
        owed = seen.filter(F.col("rule") == "watermark-broadcast").withColumns(
            {"topic": F.lit(settings.topic), "partition": F.lit(None)}
        )
        seen = seen.unionByName(owed.withColumn("partition", F.col("partition").cast("int")))
    groups = seen.groupBy("rule", "topic", "commit_ts", "detail").agg(
        F.collect_set("partition").alias("have")
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
            # a watermark has no query: said as rules.missing_broadcasts says it
            F.when(F.col("detail") == "", F.concat(F.lit("watermark "), F.col("commit_ts")))
            .otherwise(F.col("detail"))
            .alias("detail"),
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


def _slots(buckets: list[list[Key]]) -> Column:
    """A column placing each Kafka partition in the Spark partition of its bucket.

    ``buckets`` come from ``balance``, heaviest first: bucket ``i`` goes to Spark partition
    ``i``, so the longest tasks start first. Spark's ``repartition`` hashes the column
    (Murmur3), so each bucket is represented by a value that hashes into its partition. Only
    the balance depends on this: a Kafka partition always stays in one Spark partition.
    """
    tasks = len(buckets)
    value_of: dict[int, int] = {}
    candidate = 0
    while len(value_of) < tasks:
        value_of.setdefault(spark_int_hash(candidate) % tasks, candidate)
        candidate += 1
    pairs: list[Column] = []
    for rank, bucket in enumerate(buckets):
        for topic, partition in bucket:
            pairs += [F.lit(f"{topic}\x00{partition}"), F.lit(value_of[rank])]
    coordinates = F.concat_ws("\x00", F.col("topic"), F.col("partition").cast("string"))
    return F.create_map(*pairs)[coordinates]


def plan(records: DataFrame) -> list[Unit] | str:
    """The file plan of the records' input files (``suites/stream/layout.py``), or why none."""
    try:
        uris = records.inputFiles()
    except Exception as error:  # noqa: BLE001 - any listing problem: the shuffle path decides
        return f"cannot list the input files: {error}"
    return plan_files(sorted(uris)) if uris else "no input files"


def _checked(
    spark: SparkSession,
    records: DataFrame,
    settings: CheckSettings,
    units: list[Unit] | str,
    *,
    samples: int,
    tasks: int | None,
    split_above: int | None,
) -> tuple[DataFrame, int]:
    """The per-task output rows (either path) and the input's record count."""
    cores = spark.sparkContext.defaultParallelism
    if isinstance(units, str):
        counted = records.groupBy("topic", "partition").count().collect()
        sizes = {(r[0], r[1]): int(r[2]) for r in counted}
        buckets = balance(sizes, max(1, min(len(sizes), tasks or cores * 4)))
        ordered = (
            records.withColumn("slot", _slots(buckets))
            .repartition(len(buckets), "slot")
            .sortWithinPartitions("topic", "partition", "offset")
            .drop("slot")
        )
        out = ordered.mapInArrow(shuffle_task(settings, samples), OUT_DDL)
        return out, sum(sizes.values())
    ranged = split_above is not None and splittable(settings)
    wanted = tasks or cores * 4
    split_units = split(units, wanted, above=split_above or 0) if ranged else list(units)
    pieces: dict[tuple[str, int] | tuple[str, int, int], Unit | Piece]
    pieces = {p.key: p for p in split_units}
    loads = {key: p.cost for key, p in pieces.items()}
    placed = [[pieces[key] for key in b] for b in balance(loads, max(1, min(len(pieces), wanted)))]
    # one row per bucket, one bucket per Spark partition: range slices evenly
    ids = spark.range(0, len(placed), 1, numPartitions=len(placed))
    out = ids.mapInArrow(file_task(settings, samples, placed), OUT_DDL)
    return out, sum(u.rows for u in units)


CHECK_PHASES = (
    "reading the dump",
    "decoding partitions and applying rules",
    "matching broadcasts across partitions",
    "collecting findings",
)
"""``check_dump``'s phases, in order (``suites/stream/phases.py``)."""


SPLIT_ABOVE_RECORDS = 50_000
"""A Kafka partition of more records than this and more than its share of the tasks (four
per core) is checked in ranges (``suites/stream/ranges.py``)."""


def _ranges_problem(out: DataFrame) -> tuple[int, str | None]:
    """How many ranges the tasks checked, and why they may not add up (``None``: they do)."""
    rows = out.filter(F.col("kind") == "range").select("topic", "partition", "key").collect()
    by_partition: dict[Key, list[RangeState]] = {}
    for row in rows:
        state = pickle.loads(row["key"])  # noqa: S301 - written by this job's own tasks
        by_partition.setdefault((row["topic"], row["partition"]), []).append(state)
    for (topic, partition), states in sorted(by_partition.items()):
        problem = chain_problem(sorted(states, key=lambda s: s.index))
        if problem is not None:
            return len(rows), f"{topic}/{partition} {problem}"
    return len(rows), None


def check_dump(
    spark: SparkSession,
    paths: list[str],
    settings: CheckSettings,
    *,
    samples: int = 10,
    tasks: int | None = None,
    shuffle: bool = False,
    split_above: int | None = SPLIT_ABOVE_RECORDS,
    phases: Phases | None = None,
) -> CheckResult:
    """Run the whole rule catalog over the dump at ``paths``, in ``CHECK_PHASES``.

    The file path when the input files' footers allow it (``suites/stream/layout.py``), else
    (or with ``shuffle``) the shuffle path; ``CheckResult.plan`` says which ran, and why. On
    the file path a Kafka partition of more than ``split_above`` records (``None``: never)
    and more than its share of the tasks is checked in ranges; when the ranges' states do not
    add up to the unsplit check (``range_state.chain_problem``), the dump is checked again
    unsplit, and the plan says why.
    """
    phases = phases or Phases(None, command="check-stream", quiet=True)
    run = functools.partial(
        _check, spark, paths, settings, samples=samples, tasks=tasks, shuffle=shuffle, phases=phases
    )
    try:
        return run(split_above=split_above)
    except _RangesDoNotAddUp as why:
        again = run(split_above=None)
        again.plan = f"files, checked whole again: the ranges {why}"
        return again


class _RangesDoNotAddUp(Exception):  # noqa: N818 - a signal between two functions, no error
    """A partition's ranges may not add up to its unsplit check: why."""


def _check(
    spark: SparkSession,
    paths: list[str],
    settings: CheckSettings,
    *,
    samples: int,
    tasks: int | None,
    shuffle: bool,
    split_above: int | None,
    phases: Phases,
) -> CheckResult:
    """``check_dump`` once; ``_RangesDoNotAddUp`` when its ranges do not add up."""
    reading, checking, matching, collecting = CHECK_PHASES
    with phases.phase(reading):  # the footers; on the shuffle path, the records per partition
        records = _records(spark, paths)
        units = "the shuffle path was asked for" if shuffle else plan(records)
        cores = spark.sparkContext.defaultParallelism
        spark.conf.set("spark.sql.shuffle.partitions", str(max(2, cores * 2)))  # small
        checked, total = _checked(
            spark, records, settings, units, samples=samples, tasks=tasks, split_above=split_above
        )
    out = checked.persist()
    missing = _missing_broadcasts(out, settings).persist()
    try:
        counts: Counter[str] = Counter()
        with phases.phase(checking):  # the first action on ``out`` runs the tasks
            rows = out.filter(F.col("kind") == "count").groupBy("rule").sum("count").collect()
            ranges, problem = _ranges_problem(out)
        if problem is not None:
            raise _RangesDoNotAddUp(problem)
        for row in rows:
            counts[row[0]] += int(row[1])
        with phases.phase(matching):
            rows = missing.groupBy("rule").count().collect()
        for row in rows:
            counts[row[0]] += int(row[1])
        first = Window.partitionBy("rule").orderBy(
            "topic", "partition", "offset", "commit_ts", "detail"
        )
        with phases.phase(collecting):
            chosen = (
                out.filter(F.col("kind") == "finding")
                .unionByName(missing)
                .withColumn("n", F.row_number().over(first))
                .filter(F.col("n") <= samples)
                .orderBy("rule", "n")
                .collect()
            )
            watermarks = _watermarks(out)
        kept: dict[str, list[dict[str, Any]]] = {}
        for row in chosen:
            kept.setdefault(row["rule"], []).append(
                {
                    name: row[name]
                    for name in ("topic", "partition", "offset", "key", "commit_ts", "detail")
                }
            )
    finally:
        missing.unpersist()
        out.unpersist()
    how = "files" if not isinstance(units, str) else f"shuffle: {units}"
    if ranges:
        how = f"files, {ranges} ranges"
    return CheckResult(dict(counts), kept, total, plan=how, watermarks=watermarks)


def main(argv: list[str] | None = None) -> int:
    """``spark-submit suites/stream/spark.py ARGS``: ``check-stream --spark ARGS``."""
    from ticdc_conformance.suites.stream.job import run_from_command_line

    return run_from_command_line([*(sys.argv[1:] if argv is None else argv), "--spark"])


if __name__ == "__main__":
    sys.exit(main())
