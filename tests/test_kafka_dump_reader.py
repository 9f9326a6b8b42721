"""Reading a dump for replay: records and partitions counted, order checked, read ahead."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from ticdc_conformance.generators.dump import INCOMPLETE_FILE, read_dump, write_dump, write_records
from ticdc_conformance.generators.simulator import Record
from ticdc_conformance.kafka.dump_reader import plan_dump, read_ahead
from ticdc_conformance.reference.errors import UsageError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/data/streams/open.tiflow.replay.parquet"


def _record(partition: int, offset: int, topic: str = "t") -> Record:
    return Record(
        topic=topic,
        partition=partition,
        offset=offset,
        timestamp=offset,
        key=None,
        value=b"%d" % offset,
    )


def test_plan_counts_partitions_and_records() -> None:
    plan = plan_dump(FIXTURE)
    assert plan.records == sum(1 for _ in read_dump(FIXTURE))
    assert plan.partitions == {"ticdc-conformance": 3}
    assert plan.ordered
    assert plan.labels["settings"]["protocol"] == "open"  # the fixture's X.labels.json


@pytest.mark.parametrize(
    ("records", "said"),
    [
        ([_record(0, 0), _record(0, 0)], "holds offset 0 twice"),
        ([], None),
    ],
)
def test_plan_refuses_bad_dumps(tmp_path: Path, records: list[Record], said: str | None) -> None:
    write_records(records, tmp_path / "part-00000.parquet")
    if said is None:
        assert plan_dump(tmp_path).records == 0
        return
    with pytest.raises(UsageError, match=said):
        plan_dump(tmp_path)


def test_plan_refuses_what_is_no_dump(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no dump at"):
        plan_dump(tmp_path / "absent")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "part-00000.parquet").write_bytes(b"not parquet")
    with pytest.raises(UsageError, match="not a topic dump"):
        plan_dump(tmp_path / "bad")
    write_dump([_record(0, 0)], tmp_path / "half")
    (tmp_path / "half" / INCOMPLETE_FILE).write_text("")
    with pytest.raises(UsageError, match="unfinished capture"):
        plan_dump(tmp_path / "half")


@pytest.mark.parametrize(
    ("files", "ordered"),
    [
        ([[(0, 0), (0, 1)], [(1, 0)], [(0, 2)]], True),  # one partition a file, in order
        ([[(0, 0), (1, 0), (0, 1)]], True),  # partitions mixed in a file, each in order
        ([[(0, 2)], [(0, 0), (0, 1)]], False),  # a later file goes back
        ([[(0, 1), (0, 0)]], False),
    ],
)
def test_order_in_any_layout(
    tmp_path: Path, files: list[list[tuple[int, int]]], ordered: bool
) -> None:
    for number, places in enumerate(files):
        write_records([_record(p, o) for p, o in places], tmp_path / f"part-{number:05d}.parquet")
    plan = plan_dump(tmp_path)
    assert plan.ordered is ordered
    assert plan.partitions == {"t": 2 if any(p for f in files for p, _ in f) else 1}
    read = [(run.partition, o) for run in read_ahead(plan) for o in run.offsets]
    assert sorted(read) == sorted(x for f in files for x in f)
    for partition in {p for p, _ in read}:
        offsets = [o for p, o in read if p == partition]
        assert offsets == sorted(offsets)


def test_read_ahead_hands_on_a_failure(tmp_path: Path) -> None:
    write_dump([_record(0, 0)], tmp_path)
    plan = plan_dump(tmp_path)
    (tmp_path / "part-00000.parquet").write_bytes(b"not parquet")
    with pytest.raises(pa.ArrowInvalid, match="Parquet magic bytes"):  # raised in the reader
        list(read_ahead(plan))
