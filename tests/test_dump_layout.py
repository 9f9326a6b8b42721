"""The stream checker's file plan: when a dump's footers allow reading it without a shuffle."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ticdc_conformance.generators.dump import DUMP_SCHEMA, write_dump, write_records
from ticdc_conformance.generators.simulator import Record
from ticdc_conformance.suites.stream.layout import Unit, balance, plan_files, read_unit


def record(topic: str, partition: int, offset: int) -> Record:
    return Record(
        topic=topic,
        partition=partition,
        offset=offset,
        timestamp=0,
        key=b"k%d" % offset,
        value=b"v%d" % offset,
    )


def uris(*files: Path) -> list[str]:
    return [file.as_uri() for file in files]


def offsets(unit: Unit) -> list[int]:
    return [o for batch in read_unit(unit) for o in batch.column(0).to_pylist()]


def test_a_written_dump_has_one_unit_per_kafka_partition(tmp_path: Path) -> None:
    records = [record("b", 0, o) for o in range(5)] + [record("a", 2, o) for o in (7, 3, 9)]
    write_dump(records, tmp_path)
    units = plan_files(uris(*sorted(tmp_path.glob("*.parquet"))))
    assert units == [
        Unit(topic="a", partition=2, files=tuple(uris(tmp_path / "part-00000.parquet")), rows=3),
        Unit(topic="b", partition=0, files=tuple(uris(tmp_path / "part-00001.parquet")), rows=5),
    ]
    assert isinstance(units, list)
    assert offsets(units[0]) == [3, 7, 9]
    batch = next(read_unit(units[1]))
    assert batch.schema.names == ["offset", "key", "value"]
    assert batch.column(2).to_pylist() == [b"v%d" % o for o in range(5)]


def test_files_of_one_partition_go_in_offset_order(tmp_path: Path) -> None:
    write_records([record("t", 0, o) for o in (5, 6)], tmp_path / "later.parquet")
    write_records([record("t", 0, o) for o in (1, 0, 2)], tmp_path / "earlier.parquet")
    write_records([], tmp_path / "empty.parquet")
    files = sorted(tmp_path.glob("*.parquet"))
    units = plan_files(uris(*files))
    assert isinstance(units, list)
    assert [u.files for u in units] == [
        tuple(uris(tmp_path / "earlier.parquet", tmp_path / "later.parquet"))
    ]
    assert units[0].rows == 5
    assert offsets(units[0]) == [0, 1, 2, 5, 6]  # the unsorted file is sorted in the task


def test_layouts_that_need_the_shuffle(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.parquet"
    write_records([record("t", 0, 0), record("t", 1, 0)], mixed)
    assert "several Kafka partitions" in str(plan_files(uris(mixed)))

    topics = tmp_path / "topics.parquet"
    write_records([record("t", 0, 0), record("u", 0, 1)], topics)
    assert "several Kafka partitions" in str(plan_files(uris(topics)))

    first, second = tmp_path / "first.parquet", tmp_path / "second.parquet"
    write_records([record("t", 0, o) for o in (0, 4)], first)
    write_records([record("t", 0, o) for o in (2, 6)], second)
    assert "overlap" in str(plan_files(uris(first, second)))
    write_records([record("t", 0, o) for o in (4, 6)], second)
    assert "overlap" in str(plan_files(uris(first, second)))  # one offset in both

    bare = tmp_path / "bare.parquet"
    table = pq.read_table(first)
    pq.write_table(table, bare, write_statistics=False)
    assert "no min/max statistics" in str(plan_files(uris(bare)))
    pq.write_table(table.drop_columns(["offset"]), bare)
    assert "no column 'offset'" in str(plan_files(uris(bare)))

    assert "cannot read the footer" in str(plan_files(["s3a://bucket/dump/part-0.parquet"]))
    assert "cannot read the footer" in str(plan_files(uris(tmp_path / "gone.parquet")))
    (tmp_path / "text.parquet").write_text("not Parquet")
    assert "cannot read the footer" in str(plan_files(uris(tmp_path / "text.parquet")))

    write_records([], tmp_path / "empty.parquet")
    assert plan_files(uris(tmp_path / "empty.parquet")) == "no records"


def test_a_task_rejects_files_that_break_the_plan(tmp_path: Path) -> None:
    file = tmp_path / "p.parquet"
    write_records([record("t", 1, 0)], file)
    wrong = Unit(topic="t", partition=0, files=tuple(uris(file)), rows=1)
    with pytest.raises(ValueError, match="another Kafka partition"):
        list(read_unit(wrong))
    twice = Unit(topic="t", partition=1, files=tuple(uris(file, file)), rows=2)
    with pytest.raises(ValueError, match="overlap"):
        list(read_unit(twice))
    repeated = tmp_path / "repeated.parquet"
    write_records([record("t", 1, 0), record("t", 1, 1), record("t", 1, 1)], repeated)
    unit = Unit(topic="t", partition=1, files=tuple(uris(repeated)), rows=3)
    with pytest.raises(ValueError, match="an offset of the partition twice"):
        list(read_unit(unit))


def test_spark_kafka_source_columns_plan_too(tmp_path: Path) -> None:
    """A capture written by Spark's Kafka source (no headers column) plans the same way."""
    file = tmp_path / "capture.parquet"
    table = pa.Table.from_pylist(
        [
            {
                "topic": "t",
                "partition": 3,
                "offset": o,
                "timestamp": None,
                "key": None,
                "value": b"x",
            }
            for o in range(3)
        ],
        schema=pa.schema([DUMP_SCHEMA.field(n) for n in DUMP_SCHEMA.names if n != "headers"]),
    )
    pq.write_table(table, file)
    assert plan_files(uris(file)) == [Unit(topic="t", partition=3, files=(file.as_uri(),), rows=3)]


def test_balance_places_largest_first_heaviest_bucket_first() -> None:
    sizes = {("t", 0): 10, ("t", 1): 7, ("t", 2): 6, ("t", 3): 4, ("u", 0): 1}
    assert balance(sizes, 2) == [[("t", 0), ("t", 3)], [("t", 1), ("t", 2), ("u", 0)]]
    three = {("t", 0): 10, ("t", 1): 7, ("t", 2): 6}
    assert balance(three, 2) == [[("t", 1), ("t", 2)], [("t", 0)]]  # 13 before 10
    assert balance(sizes, 5) == [[("t", 0)], [("t", 1)], [("t", 2)], [("t", 3)], [("u", 0)]]
    assert balance({("t", 0): 3}, 1) == [[("t", 0)]]
