r"""The consumer check's state rules as a Spark job, for snapshots too large for Python.

Per expected table, one Spark job: a full outer join of the expected rows with the consumer's
rows on ``_key``, on the executors; the driver receives, per Spark partition, each rule's count
and at most ``samples`` findings. The consumer's columns become text with Spark's own
functions, rendered as ``values.actual_text`` renders them (integers and decimals by cast,
binary as ``\x`` and hex, a zoned TIMESTAMP as its UTC text with ``Z``), so equal text is equal
and needs no Python; only the rows left (missing, unexpected, held twice, or with an unequal
text) go through Python, where ``values.same_value`` decides whether a difference is one of
meaning.

Parquet and CSV snapshots are read by Spark itself; JSON Lines and PostgreSQL are read as
Arrow (``actual.Snapshot``) and handed to Spark.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention
from pyspark.sql import types as T  # noqa: N812

from ticdc_conformance.suites.consumer.actual import Snapshot
from ticdc_conformance.suites.consumer.check import Tally, row_difference
from ticdc_conformance.suites.consumer.expected import KEY_COLUMN, ExpectedState, ExpectedTable
from ticdc_conformance.suites.stream import spark as stream_spark

__all__ = ["actual_columns", "check_snapshot", "session"]


def session(master: str | None = None) -> SparkSession:
    """The stream checker's session; in local mode, two shuffle partitions per core.

    Spark's default of 200 shuffle partitions makes a local join of a few million rows pay
    for 200 tasks per stage, several times per table.
    """
    spark = stream_spark.session(master)
    if str(spark.sparkContext.master).startswith("local"):
        cores = spark.sparkContext.defaultParallelism
        spark.conf.set("spark.sql.shuffle.partitions", str(2 * cores))
    return spark


def _as_text(column: str, kind: T.DataType) -> Column:
    value = F.col(f"`{column}`")
    if isinstance(kind, T.StringType):
        return value
    if isinstance(kind, T.BinaryType):
        return F.concat(F.lit("\\x"), F.lower(F.hex(value)))
    if isinstance(kind, T.BooleanType):
        return value.cast("int").cast("string")
    if isinstance(kind, T.TimestampType):
        utc = F.to_utc_timestamp(value, F.current_timezone())
        return F.concat(F.date_format(utc, "yyyy-MM-dd HH:mm:ss.SSSSSS"), F.lit("Z"))
    if isinstance(kind, T.TimestampNTZType):
        return F.date_format(value, "yyyy-MM-dd HH:mm:ss.SSSSSS")
    return value.cast("string")


def actual_columns(frame: DataFrame, table: ExpectedTable) -> DataFrame:
    """The consumer's rows as ``_key`` and one text column per expected column."""
    kinds = {field.name: field.dataType for field in frame.schema.fields}
    texts = {
        name: _as_text(name, kinds[name]) if name in kinds else F.lit(None).cast("string")
        for name in table.columns
    }
    key = F.to_json(F.array(*(texts[name] for name in table.key)))
    return frame.select(key.alias(KEY_COLUMN), *(texts[n].alias(n) for n in table.columns))


def _read_actual(spark: SparkSession, snapshot: Snapshot, table: ExpectedTable) -> DataFrame | None:
    found = None if snapshot.is_database else snapshot.file(table)
    if found is not None and found[1] == "parquet":
        return spark.read.parquet(str(found[0]))
    if found is not None and found[1] == "csv":
        return spark.read.csv(str(found[0]), header=True, inferSchema=False)
    arrow = snapshot.table(table)
    return None if arrow is None else spark.createDataFrame(arrow)


_SUMMARY = T.StructType(
    [
        T.StructField("rule", T.StringType()),
        T.StructField("count", T.LongType()),
        T.StructField("finding", T.StringType()),
    ]
)
_ARROW_SUMMARY = pa.schema([("rule", pa.string()), ("count", pa.int64()), ("finding", pa.string())])


def _missing_table(wanted: DataFrame, table: ExpectedTable, tally: Tally) -> None:
    name = f"{table.schema}.{table.table}"
    tally.counts["row-missing"] += table.rows
    rows = wanted.select(KEY_COLUMN).limit(tally.samples).collect() if tally.samples else []
    for row in rows:
        tally.keep("row-missing", {"table": name, "key": row[0], "detail": "no such table"})


def _joined(wanted: DataFrame, read: DataFrame, table: ExpectedTable) -> DataFrame:
    """The rows that may break a rule: missing, unexpected, held twice, or with unequal text.

    ``_copies`` (how many rows hold the key) is a window over the key, which shares the
    join's shuffle and sort by the key: no aggregate, no second exchange.
    """
    actual = actual_columns(read, table).select(
        KEY_COLUMN,
        F.count(F.lit(1)).over(Window.partitionBy(KEY_COLUMN)).alias("_copies"),
        *(F.col(f"`{c}`").alias(f"a_{c}") for c in table.columns),
    )
    expected_rows = wanted.select(
        KEY_COLUMN,
        F.lit(True).alias("_expected"),  # noqa: FBT003 - a Spark literal
        *(F.col(f"`{c}`").alias(f"e_{c}") for c in table.columns),
    )
    suspicious = F.col("_copies").isNull() | F.col("_expected").isNull() | (F.col("_copies") > 1)
    for column in table.columns:
        suspicious = suspicious | ~F.col(f"e_{column}").eqNullSafe(F.col(f"a_{column}"))
    return expected_rows.join(actual, KEY_COLUMN, "full_outer").filter(suspicious)


def _findings(table: ExpectedTable, samples: int) -> Any:  # noqa: ANN401 - a mapInArrow function
    """Per Spark partition, each rule's count and first ``samples`` findings.

    A key held by ``n`` rows comes out of the join ``n`` times (all in one partition, as the
    join shuffles by the key): it is counted once as ``n - 1`` extra rows, and compared once.
    """
    name = f"{table.schema}.{table.table}"

    def findings(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        counts: dict[str, int] = {}
        kept: dict[str, list[str]] = {}
        judged: set[str] = set()  # keys held more than once, already judged

        def found(rule: str, finding: dict[str, Any]) -> None:
            counts[rule] = counts.get(rule, 0) + 1
            if len(kept.setdefault(rule, [])) < samples:
                kept[rule].append(json.dumps({"table": name, **finding}, ensure_ascii=False))

        for batch in batches:
            for row in batch.to_pylist():
                key = row[KEY_COLUMN]
                if (row["_copies"] or 0) > 1:
                    if key in judged:
                        continue
                    judged.add(key)
                expected = {c: row[f"e_{c}"] for c in table.columns}
                actual = {c: row[f"a_{c}"] for c in table.columns}
                if row["_copies"] is None:
                    found(
                        "row-missing",
                        {"key": key, "detail": "no row at this key", "expected": expected},
                    )
                    continue
                for _ in range(row["_copies"] - 1):
                    found("row-unexpected", {"key": key, "detail": "a key held twice"})
                if row["_expected"] is None:
                    found("row-unexpected", {"key": key, "actual": actual})
                elif differing := row_difference(table, expected, actual):
                    found("row-differs", {"key": key, "columns": differing})
        out: dict[str, list[Any]] = {"rule": [], "count": [], "finding": []}
        for rule, count in counts.items():
            for finding in [None, *kept.get(rule, [])]:
                out["rule"].append(rule)
                out["count"].append(count if finding is None else 0)
                out["finding"].append(finding)
        yield pa.RecordBatch.from_pydict(out, schema=_ARROW_SUMMARY)

    return findings


def _check_table(
    spark: SparkSession,
    expected: ExpectedState,
    snapshot: Snapshot,
    table: ExpectedTable,
    tally: Tally,
) -> None:
    """One Spark job: the join, the suspicious rows summarized per partition, collected."""
    wanted = spark.read.parquet(str(expected.folder / table.file))
    tally.checked["rows"] += table.rows
    read = _read_actual(spark, snapshot, table)
    if read is None:
        _missing_table(wanted, table, tally)
        return
    summary = _joined(wanted, read, table).mapInArrow(_findings(table, tally.samples), _SUMMARY)
    counts: dict[str, int] = {}
    for row in summary.collect():
        if row["finding"] is None:
            counts[row["rule"]] = counts.get(row["rule"], 0) + row["count"]
        else:
            tally.keep(row["rule"], json.loads(row["finding"]))
    for rule, count in counts.items():
        tally.counts[rule] += count
    # every key the snapshot holds is expected or unexpected; a key held twice adds its copies
    present = table.rows - counts.get("row-missing", 0)
    tally.checked["actual rows"] += present + counts.get("row-unexpected", 0)


def check_snapshot(
    spark: SparkSession, expected: ExpectedState, snapshot: Snapshot, tally: Tally
) -> None:
    """The state rules over every expected table, as Spark jobs (the module doc)."""
    for table in expected.tables:
        _check_table(spark, expected, snapshot, table, tally)
