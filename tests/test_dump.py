"""The dump format: Parquet records with Spark's Kafka columns, and the label sidecar."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ticdc_conformance.generators.dump import (
    DUMP_SCHEMA,
    INCOMPLETE_FILE,
    LABELS_FILE,
    dump_files,
    publishing,
    read_dump,
    read_labels,
    write_dump,
    write_records,
)
from ticdc_conformance.generators.generate import generate
from ticdc_conformance.generators.simulator import Record, StreamSettings

RECORDS = [
    Record(topic="t", partition=0, offset=0, timestamp=1_767_225_600_123, key=None, value=b""),
    Record(
        topic="t",
        partition=2,
        offset=7,
        timestamp=0,
        key=b"\x00\xff",
        value=None,
        headers=(("trace", b"\x01"), ("empty", b"")),
    ),
]


def test_records_and_labels_round_trip(tmp_path: Path) -> None:
    assert write_dump(RECORDS, tmp_path, labels={"faults": []}) == 2
    assert list(read_dump(tmp_path)) == RECORDS
    assert list(read_dump(tmp_path / "part-00000.parquet")) == RECORDS[:1]
    assert list(read_dump(tmp_path / "part-00001.parquet")) == RECORDS[1:]
    assert list(read_dump(str(tmp_path / "part-*.parquet"))) == RECORDS
    assert read_labels(tmp_path) == {"faults": []}
    assert pq.read_schema(tmp_path / "part-00000.parquet").equals(DUMP_SCHEMA)


def test_one_file_per_kafka_partition_in_offset_order(tmp_path: Path) -> None:
    def record(topic: str, partition: int, offset: int) -> Record:
        return Record(
            topic=topic,
            partition=partition,
            offset=offset,
            timestamp=offset,
            key=None,
            value=f"{topic}/{partition}/{offset}".encode(),
        )

    shuffled = [
        record("b", 0, 5),
        record("a", 1, 3),
        record("b", 0, 1),
        record("a", 1, 4),
        record("a", 0, 9),
        record("b", 0, 2),
    ]
    (tmp_path / "part-00007.parquet").write_bytes(b"an older dump's file")
    assert write_dump(shuffled, tmp_path) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "_labels.json",
        "part-00000.parquet",
        "part-00001.parquet",
        "part-00002.parquet",
    ]
    got = [
        [(r.topic, r.partition, r.offset) for r in read_dump(tmp_path / f"part-0000{n}.parquet")]
        for n in range(3)
    ]
    assert got == [
        [("a", 0, 9)],
        [("a", 1, 3), ("a", 1, 4)],
        [("b", 0, 1), ("b", 0, 2), ("b", 0, 5)],
    ]
    assert {r.value for r in read_dump(tmp_path)} == {r.value for r in shuffled}
    one = tmp_path / "one.parquet"
    assert write_records(shuffled, one) == 6
    assert list(read_dump(one)) == shuffled


def test_empty_dump_and_missing_labels(tmp_path: Path) -> None:
    assert write_dump([], tmp_path) == 0
    assert list(read_dump(tmp_path)) == []
    (tmp_path / LABELS_FILE).unlink()
    assert read_labels(tmp_path) == {}


def test_reading_what_is_not_a_dump(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        list(read_dump(tmp_path / "nothing-*.parquet"))
    table = pq.read_table
    write_dump(RECORDS, tmp_path)
    pq.write_table(
        table(tmp_path / "part-00000.parquet").drop_columns(["headers"]),
        tmp_path / "part-00000.parquet",
    )
    with pytest.raises(ValueError, match="missing column"):
        list(read_dump(tmp_path))


def test_generate_is_deterministic_and_labelled(tmp_path: Path) -> None:
    settings = StreamSettings(partitions=3)
    first = generate(
        settings, messages=1200, seed=2, faults=["replay", "missing-ddl"], folder=tmp_path / "a"
    )
    generate(
        settings, messages=1200, seed=2, faults=["replay", "missing-ddl"], folder=tmp_path / "b"
    )
    assert first.records >= 1200
    assert first.faults == 2
    assert list(read_dump(tmp_path / "a")) == list(read_dump(tmp_path / "b"))
    labels = read_labels(tmp_path / "a")
    assert labels == read_labels(tmp_path / "b")
    assert labels["settings"]["protocol"] == "open"
    assert [f["kind"] for f in labels["faults"]] == ["replay", "missing-ddl"]
    assert json.loads((tmp_path / "a" / LABELS_FILE).read_text()) == labels


@pytest.mark.parametrize(("bound", "partition_0_groups"), [(100, 5), (6, 10)])
def test_row_groups_and_bounded_buffering(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: int, partition_0_groups: int
) -> None:
    """A full part is one row group; past the buffer bound the fullest part is written early."""
    from ticdc_conformance.generators import dump as module

    monkeypatch.setattr(module, "_BATCH", 4)
    monkeypatch.setattr(module, "_BUFFERED", bound)
    # partition 0 gets every other record, partitions 1 to 5 the rest in turn
    records = [
        Record(
            topic="t",
            partition=0 if n % 2 else 1 + n % 5,
            offset=n,
            timestamp=n,
            key=None,
            value=b"v",
        )
        for n in range(40)
    ]
    assert write_dump(records, tmp_path) == 40
    first = pq.ParquetFile(tmp_path / "part-00000.parquet").metadata
    assert (first.num_rows, first.num_row_groups) == (20, partition_0_groups)
    by_partition = sorted(records, key=lambda r: (r.partition, r.offset))
    assert [r.offset for r in read_dump(tmp_path)] == [r.offset for r in by_partition]


def test_readers_refuse_a_folder_an_unfinished_capture_left(tmp_path: Path) -> None:
    """Complete-looking files under the marker (a capture killed before its rename) are no dump."""
    from ticdc_conformance.generators.dump import INCOMPLETE_FILE, dump_files

    folder = tmp_path / ".dump.capture-123"
    write_dump(RECORDS, folder)
    assert len(dump_files(folder)) == 2
    (folder / INCOMPLETE_FILE).write_text("")
    for given in (folder, folder / "part-00000.parquet", f"{folder}/part-*.parquet"):
        with pytest.raises(ValueError, match="is an unfinished capture"):
            list(read_dump(given))
        with pytest.raises(ValueError, match="is an unfinished capture"):
            dump_files(given)
    assert dump_files(tmp_path) == []  # a parent folder reads no hidden sibling


def test_publishing_shows_the_dump_only_once_it_is_complete(tmp_path: Path) -> None:
    out = tmp_path / "dump"
    with publishing(out, "test") as folder:
        assert folder.name.startswith(".dump.test-")
        assert (folder / INCOMPLETE_FILE).exists()
        assert not out.exists()
        write_dump([], folder, labels={"a": 1})
        with pytest.raises(ValueError, match="unfinished"):
            dump_files(folder)
    assert sorted(p.name for p in out.iterdir()) == [LABELS_FILE, "part-00000.parquet"]
    assert [p.name for p in tmp_path.iterdir()] == ["dump"]


def test_publishing_leaves_nothing_when_interrupted_and_replaces_only_a_dump(
    tmp_path: Path,
) -> None:
    out = tmp_path / "dump"

    def interrupted() -> None:
        with publishing(out, "test") as folder:
            write_dump([], folder)
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    assert list(tmp_path.iterdir()) == []
    with publishing(out, "test") as folder:
        write_dump([], folder, labels={"old": True})
    with publishing(out, "test") as folder:  # an older dump is replaced
        write_dump([], folder, labels={"new": True})
    assert read_labels(out) == {"new": True}
    assert [p.name for p in tmp_path.iterdir()] == ["dump"]
    (out / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="is not a dump"), publishing(out, "test"):
        pass
    assert (out / "notes.txt").read_text() == "mine"


def test_an_interrupted_generate_leaves_no_dump(tmp_path: Path) -> None:
    out = tmp_path / "dump"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ticdc_conformance.cli",
            "generate",
            "--protocol",
            "open",
            "--messages",
            "200000",
            "--out",
            str(out),
        ],
        stderr=subprocess.PIPE,
    )
    for _ in range(600):  # until it writes its hidden sibling
        if any(tmp_path.glob(f".dump.generate-*/{INCOMPLETE_FILE}")) or process.poll() is not None:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert b"Traceback" not in err
    assert list(tmp_path.iterdir()) == []
