r"""The consumer check's state rules as a Spark job, for snapshots too large for Python.

Per expected table, one full outer join of the expected rows with the consumer's rows on
``_key``, on the executors; the driver receives counts and at most ``samples`` findings per
rule. The consumer's columns become text with Spark's own functions, rendered as
``values.actual_text`` renders them (integers and decimals by cast, binary as ``\x`` and hex,
a zoned TIMESTAMP as its UTC text with ``Z``), so equal text is equal and needs no Python;
only rows with an unequal column go through ``values.same_value`` (in Arrow batches on the
executors), which decides whether the difference is one of meaning.

Parquet and CSV snapshots are read by Spark itself; JSON Lines and PostgreSQL are read as
Arrow (``actual.Snapshot``) and handed to Spark.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame, SparkSession
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


_DIFFERENCES = T.StructType(
    [T.StructField("key", T.StringType()), T.StructField("columns", T.StringType())]
)
_CANDIDATE = "candidate"


def _differences(table: ExpectedTable) -> Any:  # noqa: ANN401 - a mapInArrow function
    """The rows whose unequal texts differ in meaning, with their differing columns."""

    def differences(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            keys, found = [], []
            for row in batch.to_pylist():
                expected = {c: row[f"e_{c}"] for c in table.columns}
                actual = {c: row[f"a_{c}"] for c in table.columns}
                if differing := row_difference(table, expected, actual):
                    keys.append(row[KEY_COLUMN])
                    found.append(json.dumps(differing, ensure_ascii=False))
            yield pa.RecordBatch.from_pydict(
                {"key": keys, "columns": found},
                schema=pa.schema([("key", pa.string()), ("columns", pa.string())]),
            )

    return differences


def _missing_table(wanted: DataFrame, table: ExpectedTable, tally: Tally) -> None:
    name = f"{table.schema}.{table.table}"
    tally.counts["row-missing"] += table.rows
    rows = wanted.select(KEY_COLUMN).limit(tally.samples).collect() if tally.samples else []
    for row in rows:
        tally.keep("row-missing", {"table": name, "key": row[0], "detail": "no such table"})


def _joined(wanted: DataFrame, read: DataFrame, table: ExpectedTable) -> DataFrame:
    """Expected and actual rows side by side, and ``_rule``: what a row may break."""
    actual = (
        actual_columns(read, table)
        .groupBy(KEY_COLUMN)
        .agg(
            F.count(F.lit(1)).alias("_copies"),
            *(F.first(F.col(f"`{c}`")).alias(f"a_{c}") for c in table.columns),
        )
    )
    expected_rows = wanted.select(
        KEY_COLUMN,
        F.lit(True).alias("_expected"),  # noqa: FBT003 - a Spark literal
        *(F.col(f"`{c}`").alias(f"e_{c}") for c in table.columns),
    )
    unequal = F.lit(False)  # noqa: FBT003
    for column in table.columns:
        unequal = unequal | ~F.col(f"e_{column}").eqNullSafe(F.col(f"a_{column}"))
    rule = (
        F.when(F.col("_copies").isNull(), "row-missing")
        .when(F.col("_expected").isNull(), "row-unexpected")
        .when(unequal, _CANDIDATE)
        .when(F.col("_copies") > 1, "twice")
    )
    return expected_rows.join(actual, KEY_COLUMN, "full_outer").withColumn("_rule", rule)


def _sample(row: Any, table: ExpectedTable, rule: str) -> dict[str, Any]:  # noqa: ANN401
    name = f"{table.schema}.{table.table}"
    if rule == "row-missing":
        expected = {c: row[f"e_{c}"] for c in table.columns}
        return {
            "table": name,
            "key": row[KEY_COLUMN],
            "detail": "no row at this key",
            "expected": expected,
        }
    if row["_copies"] > 1:
        return {"table": name, "key": row[KEY_COLUMN], "detail": "a key held twice"}
    return {
        "table": name,
        "key": row[KEY_COLUMN],
        "actual": {c: row[f"a_{c}"] for c in table.columns},
    }


def _check_table(
    spark: SparkSession,
    expected: ExpectedState,
    snapshot: Snapshot,
    table: ExpectedTable,
    tally: Tally,
) -> None:
    wanted = spark.read.parquet(str(expected.folder / table.file))
    tally.checked["rows"] += table.rows
    read = _read_actual(spark, snapshot, table)
    if read is None:
        _missing_table(wanted, table, tally)
        return
    tally.checked["actual rows"] += read.count()  # Parquet: from the footers alone
    suspicious = _joined(wanted, read, table).filter(F.col("_rule").isNotNull()).persist()
    try:
        totals = suspicious.groupBy("_rule").agg(
            F.count(F.lit(1)).alias("rows"),
            F.sum(F.when(F.col("_copies") > 1, F.col("_copies") - 1)).alias("twice"),
        )
        counts = {row["_rule"]: (row["rows"], row["twice"] or 0) for row in totals.collect()}
        for rule in ("row-missing", "row-unexpected"):
            tally.counts[rule] += counts.get(rule, (0, 0))[0]
        tally.counts["row-unexpected"] += sum(twice for _, twice in counts.values())
        if tally.samples:
            picks = [
                suspicious.filter(condition).limit(tally.samples)
                for condition in (
                    F.col("_rule") == "row-missing",
                    F.col("_rule") == "row-unexpected",
                    F.col("_copies") > 1,
                )
            ]
            for row in picks[0].unionAll(picks[1]).unionAll(picks[2]).collect():
                rule = "row-missing" if row["_rule"] == "row-missing" else "row-unexpected"
                tally.keep(rule, _sample(row, table, rule))
        if counts.get(_CANDIDATE):
            candidates = suspicious.filter(F.col("_rule") == _CANDIDATE).coalesce(2)
            differing = candidates.mapInArrow(_differences(table), _DIFFERENCES).persist()
            try:
                tally.counts["row-differs"] += differing.count()
                name = f"{table.schema}.{table.table}"
                for row in differing.limit(tally.samples).collect() if tally.samples else []:
                    kept = tally.found.setdefault("row-differs", [])
                    if len(kept) < tally.samples:
                        kept.append(
                            {
                                "table": name,
                                "key": row["key"],
                                "columns": json.loads(row["columns"]),
                            }
                        )
            finally:
                differing.unpersist()
    finally:
        suspicious.unpersist()


def check_snapshot(
    spark: SparkSession, expected: ExpectedState, snapshot: Snapshot, tally: Tally
) -> None:
    """The state rules over every expected table, as Spark jobs (the module doc)."""
    for table in expected.tables:
        _check_table(spark, expected, snapshot, table, tally)
