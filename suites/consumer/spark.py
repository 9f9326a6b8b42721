r"""The consumer check's state rules as a Spark job, for snapshots too large for Python.

Per expected table, one Spark job: a full outer join of the expected rows with the consumer's
rows on ``_key``, on the executors, keeping the rows that may break a rule. When they are few
(``_DRIVER_ROWS``), the driver takes them and judges them; else each Spark partition judges its
own and sends each rule's count and at most ``samples`` findings. The consumer's columns become
text with Spark's own functions, rendered as ``values.actual_text`` renders them (integers and
decimals by cast, binary as ``\x`` and hex, a zoned TIMESTAMP as its UTC text with ``Z``), so
equal text is equal and needs no Python; only the rows left (missing, unexpected, held twice, or
with an unequal text) go through Python, where ``values.same_value`` decides whether a
difference is one of meaning.

Parquet and CSV snapshots are read by Spark itself; JSON Lines and PostgreSQL are read as Arrow
(``actual.Snapshot``) and handed to Spark.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pa_compute
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention
from pyspark.sql import types as T  # noqa: N812 - Spark's own convention

from ticdc_conformance.suites.consumer.actual import Snapshot
from ticdc_conformance.suites.consumer.check import Tally, row_difference
from ticdc_conformance.suites.consumer.expected import KEY_COLUMN, ExpectedState, ExpectedTable
from ticdc_conformance.suites.stream import spark as stream_spark
from ticdc_conformance.suites.stream.phases import Phases

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
    return None if arrow is None else spark.createDataFrame(_wall_clocks_as_text(arrow))


def _wall_clocks_as_text(arrow: pa.Table) -> pa.Table:
    """``arrow`` with each timestamp column without a zone as its text.

    Spark takes an Arrow timestamp without a zone (PostgreSQL's ``timestamp``, a DATETIME) as
    an instant in the session's zone, which would render it in UTC: a wall clock stays text.
    """
    columns = [
        pa_compute.cast(column, pa.string())
        if pa.types.is_timestamp(column.type) and column.type.tz is None
        else column
        for column in arrow.columns
    ]
    return pa.Table.from_arrays(columns, names=arrow.column_names)


_SUMMARY = T.StructType(
    [
        T.StructField("rule", T.StringType()),
        T.StructField("count", T.LongType()),
        T.StructField("finding", T.StringType()),
    ]
)
_DRIVER_ROWS = 50_000
"""Rows left to judge that the driver takes whole; past it, the executors judge them."""
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


class _Summary:
    """One Spark partition's findings: each rule's count and first ``samples`` findings."""

    def __init__(self, table: ExpectedTable, samples: int) -> None:
        self.name = f"{table.schema}.{table.table}"
        self.samples = samples
        self.counts: dict[str, int] = {}
        self.kept: dict[str, list[str]] = {}

    def found(self, rule: str, finding: dict[str, Any]) -> None:
        self.counts[rule] = self.counts.get(rule, 0) + 1
        if len(kept := self.kept.setdefault(rule, [])) < self.samples:
            kept.append(json.dumps({"table": self.name, **finding}, ensure_ascii=False))

    def batch(self) -> pa.RecordBatch:
        """A count row per rule (``finding`` null), then its kept findings (``count`` 0)."""
        out: dict[str, list[Any]] = {"rule": [], "count": [], "finding": []}
        for rule, count in self.counts.items():
            for finding in [None, *self.kept.get(rule, [])]:
                out["rule"].append(rule)
                out["count"].append(count if finding is None else 0)
                out["finding"].append(finding)
        return pa.RecordBatch.from_pydict(out, schema=_ARROW_SUMMARY)


def _judge(table: ExpectedTable, row: dict[str, Any], summary: _Summary) -> None:
    """The state rules over one joined row (a key's first row when the key is held twice)."""
    key = row[KEY_COLUMN]
    expected = {c: row[f"e_{c}"] for c in table.columns}
    actual = {c: row[f"a_{c}"] for c in table.columns}
    if row["_copies"] is None:
        summary.found(
            "row-missing", {"key": key, "detail": "no row at this key", "expected": expected}
        )
        return
    for _ in range(row["_copies"] - 1):
        summary.found("row-unexpected", {"key": key, "detail": "a key held twice"})
    if row["_expected"] is None:
        summary.found("row-unexpected", {"key": key, "actual": actual})
    elif differing := row_difference(table, expected, actual):
        summary.found("row-differs", {"key": key, "columns": differing})


def _summarize(table: ExpectedTable, rows: Iterable[dict[str, Any]], summary: _Summary) -> _Summary:
    """The state rules over joined rows, a key held by ``n`` rows counted and compared once.

    A key held by ``n`` rows comes out of the join ``n`` times, all in one Spark partition (the
    join shuffles by the key): it is ``n - 1`` extra rows, and one comparison.
    """
    judged: set[str] = set()  # keys held more than once, already judged
    for row in rows:
        if (row["_copies"] or 0) > 1:
            if row[KEY_COLUMN] in judged:
                continue
            judged.add(row[KEY_COLUMN])
        _judge(table, row, summary)
    return summary


def _findings(table: ExpectedTable, samples: int) -> Any:  # noqa: ANN401 - a mapInArrow function
    """Per Spark partition, each rule's count and first ``samples`` findings."""

    def findings(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rows = (row for batch in batches for row in batch.to_pylist())
        yield _summarize(table, rows, _Summary(table, samples)).batch()

    return findings


def _summaries(joined: DataFrame, table: ExpectedTable, samples: int) -> Iterator[_Summary]:
    """The findings of the joined rows: judged on the driver when few, else on the executors.

    A consumer that is mostly right leaves few rows to judge: they come to the driver in the
    join's own job, and no Python worker starts. Past ``_DRIVER_ROWS`` the rows stay where they
    are and each Spark partition sends its counts and samples.
    """
    few = joined.limit(_DRIVER_ROWS + 1).collect()
    if len(few) <= _DRIVER_ROWS:
        yield _summarize(table, (row.asDict() for row in few), _Summary(table, samples))
        return
    for row in joined.mapInArrow(_findings(table, samples), _SUMMARY).collect():
        summary = _Summary(table, samples)
        if row["finding"] is None:
            summary.counts[row["rule"]] = row["count"]
        else:
            summary.kept[row["rule"]] = [row["finding"]]
        yield summary


def _check_table(
    spark: SparkSession,
    expected: ExpectedState,
    snapshot: Snapshot,
    table: ExpectedTable,
    tally: Tally,
) -> None:
    """The join, its suspicious rows judged (``_summaries``), the counts and samples kept."""
    wanted = spark.read.parquet(str(expected.folder / table.file))
    tally.checked["rows"] += table.rows
    read = _read_actual(spark, snapshot, table)
    if read is None:
        _missing_table(wanted, table, tally)
        return
    counts: dict[str, int] = {}
    for summary in _summaries(_joined(wanted, read, table), table, tally.samples):
        for rule, count in summary.counts.items():
            counts[rule] = counts.get(rule, 0) + count
        for rule, kept in summary.kept.items():
            for finding in kept:
                tally.keep(rule, json.loads(finding))
    for rule, count in counts.items():
        tally.counts[rule] += count
    # every key the snapshot holds is expected or unexpected; a key held twice adds its copies
    present = table.rows - counts.get("row-missing", 0)
    tally.checked["actual rows"] += present + counts.get("row-unexpected", 0)


def check_snapshot(
    spark: SparkSession,
    expected: ExpectedState,
    snapshot: Snapshot,
    tally: Tally,
    phases: Phases | None = None,
) -> None:
    """The state rules over every expected table, as Spark jobs (the module doc).

    One phase per table (``suites/stream/phases.py``): ``joining table schema.table``.
    """
    phases = phases or Phases(None, command="check-consumer", quiet=True)
    for table in expected.tables:
        with phases.phase(f"joining table {table.schema}.{table.table}"):
            _check_table(spark, expected, snapshot, table, tally)
