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
from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention
from pyspark.sql import types as T  # noqa: N812

from ticdc_conformance.suites.consumer.actual import Snapshot
from ticdc_conformance.suites.consumer.check import Tally, row_difference
from ticdc_conformance.suites.consumer.expected import KEY_COLUMN, ExpectedState, ExpectedTable
from ticdc_conformance.suites.stream.spark import session

__all__ = ["actual_columns", "check_snapshot", "session"]


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


_FINDINGS = T.StructType(
    [
        T.StructField("rule", T.StringType()),
        T.StructField("key", T.StringType()),
        T.StructField("finding", T.StringType()),
    ]
)


def _findings(table: ExpectedTable) -> Any:  # noqa: ANN401 - a mapInArrow function
    """The findings of the joined rows that are not plainly equal (the module doc)."""
    name = f"{table.schema}.{table.table}"

    def findings(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            out: dict[str, list[str]] = {"rule": [], "key": [], "finding": []}
            for row in batch.to_pylist():
                key = row[KEY_COLUMN]
                expected = {c: row[f"e_{c}"] for c in table.columns}
                actual = {c: row[f"a_{c}"] for c in table.columns}
                found: list[tuple[str, dict[str, Any]]] = []
                if row["_copies"] is None:
                    found.append(
                        ("row-missing", {"detail": "no row at this key", "expected": expected})
                    )
                elif row["_expected"] is None:
                    found.append(("row-unexpected", {"actual": actual}))
                elif differing := row_difference(table, expected, actual):
                    found.append(("row-differs", {"columns": differing}))
                found += [("row-unexpected", {"detail": "a key held twice"})] * (
                    (row["_copies"] or 1) - 1
                )
                for rule, finding in found:
                    out["rule"].append(rule)
                    out["key"].append(key)
                    out["finding"].append(json.dumps({"table": name, "key": key, **finding}))
            yield pa.RecordBatch.from_pydict(out, schema=pa.schema([(f, pa.string()) for f in out]))

    return findings


def _missing_table(wanted: DataFrame, table: ExpectedTable, tally: Tally) -> None:
    name = f"{table.schema}.{table.table}"
    tally.counts["row-missing"] += table.rows
    rows = wanted.select(KEY_COLUMN).limit(tally.samples).collect() if tally.samples else []
    kept = tally.found.setdefault("row-missing", [])
    room = tally.samples - len(kept)
    kept += [{"table": name, "key": row[0], "detail": "no such table"} for row in rows[:room]]


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
    tally.checked["actual rows"] += read.count()
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
    joined = expected_rows.join(actual, KEY_COLUMN, "full_outer")
    unequal = [~F.col(f"e_{c}").eqNullSafe(F.col(f"a_{c}")) for c in table.columns]
    suspicious = F.col("_expected").isNull() | F.col("_copies").isNull() | (F.col("_copies") > 1)
    for column in unequal:
        suspicious = suspicious | column
    findings = joined.filter(suspicious).mapInArrow(_findings(table), _FINDINGS).persist()
    try:
        for row in findings.groupBy("rule").count().collect():
            tally.counts[row["rule"]] += row["count"]
        if tally.samples:
            order = Window.partitionBy("rule").orderBy("key")
            first = findings.withColumn("n", F.row_number().over(order)).filter(
                F.col("n") <= tally.samples
            )
            for row in first.orderBy("rule", "n").collect():
                kept = tally.found.setdefault(row["rule"], [])
                if len(kept) < tally.samples:
                    kept.append(json.loads(row["finding"]))
    finally:
        findings.unpersist()


def check_snapshot(
    spark: SparkSession, expected: ExpectedState, snapshot: Snapshot, tally: Tally
) -> None:
    """The state rules over every expected table, as Spark jobs (the module doc)."""
    for table in expected.tables:
        _check_table(spark, expected, snapshot, table, tally)
