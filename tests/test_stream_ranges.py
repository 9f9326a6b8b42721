"""A Kafka partition checked in ranges (suites/stream/ranges.py, range_state.py): wherever it
is split, either the ranges' findings are the unsplit checker's, or ``chain_problem`` says
they may not be. Run in one process over every splittable stream fixture and over generated
dumps with each fault kind; then the ranges' reader (``read_unit(start=...)``) and the Spark
job with forced ranges, which must report what the unsplit job reports."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from stream_helpers import FAULTY, dump

from ticdc_conformance import fixtures
from ticdc_conformance.generators.dump import read_dump, read_labels
from ticdc_conformance.reference import CODECS, DecodedRow, Message
from ticdc_conformance.suites.stream.catalog import Broadcast, CheckSettings, Finding
from ticdc_conformance.suites.stream.layout import RECORD_COST, Unit, plan_files, read_unit
from ticdc_conformance.suites.stream.range_state import RangeState, chain_problem
from ticdc_conformance.suites.stream.ranges import Piece, RangeChecker, split, splittable
from ticdc_conformance.suites.stream.rules import PartitionChecker

ROOT = fixtures.default_root()
Record = tuple[int, bytes | None, bytes | None]


def _item(item: Finding | Broadcast) -> tuple[Any, ...]:
    if isinstance(item, Broadcast):
        return ("broadcast", item.kind, item.partition, item.commit_ts, item.ident)
    return ("finding", item.rule, item.partition, item.offset, item.commit_ts, item.detail)


Found = Counter[tuple[Any, ...]]
"""Findings and broadcasts as comparable tuples, with ``READ`` records checked."""
READ = ("read",)


def _whole(settings: CheckSettings, topic: str, partition: int, records: list[Record]) -> Found:
    checker = PartitionChecker(settings, topic, partition)
    found: Found = Counter()
    for offset, key, value in records:
        found.update(_item(i) for i in checker.feed(offset, key, value))
    found.update(_item(i) for i in checker.finish())
    found[READ] = checker.read
    return found


def _ranged(
    settings: CheckSettings, topic: str, partition: int, records: list[Record], count: int
) -> tuple[Found, list[RangeState]]:
    unit = Unit(topic=topic, partition=partition, files=(), rows=len(records))
    found: Found = Counter()
    states = []
    for index in range(count):
        start, stop = len(records) * index // count, len(records) * (index + 1) // count
        piece = Piece(unit=unit, index=index, count=count, start=start, stop=stop)
        ranged = RangeChecker(settings, piece)
        for offset, key, value in records[start:]:
            found.update(_item(i) for i in ranged.feed(offset, key, value))
            if ranged.done:
                break
        found.update(_item(i) for i in ranged.checker.finish())
        found[READ] += ranged.checker.read
        states.append(ranged.state())
    return found, states


def _partitions(folder: Path) -> dict[tuple[str, int], list[Record]]:
    by: dict[tuple[str, int], list[Record]] = {}
    for r in read_dump(folder):
        by.setdefault((r.topic, r.partition), []).append((r.offset, r.key, r.value))
    return {k: sorted(v, key=lambda m: m[0]) for k, v in sorted(by.items())}


def _compare(
    partitions: dict[tuple[str, int], list[Record]],
    settings: CheckSettings,
    tally: Counter[str],
    counts: tuple[int, ...] = (2, 3, 5, 7),
) -> None:
    """Every partition split in each of ``counts`` ranges against its unsplit check."""
    for (topic, partition), records in partitions.items():
        whole = _whole(settings, topic, partition, records)
        for count in counts:
            found, states = _ranged(settings, topic, partition, records, count)
            assert found[READ] == whole[READ], "every record is checked by one range"
            problem = chain_problem(states)
            if problem is None:
                assert found == whole, (topic, partition, count)
                tally["held"] += 1
            else:
                tally["fell back"] += 1
                tally["differ"] += found != whole


def _checked_in_ranges(folder: Path) -> Counter[str]:
    tally: Counter[str] = Counter()
    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    _compare(_partitions(folder), settings, tally)
    return tally


STREAMS = [
    s
    for s in fixtures.load_manifest()["streams"]
    if s["protocol"] not in ("simple-json", "simple-avro") and s["claim_check"] is None
]


@pytest.mark.parametrize("stream", STREAMS, ids=[s["id"] for s in STREAMS])
def test_ranges_of_a_fixture_add_up_or_say_why_not(stream: dict[str, Any]) -> None:
    labels = json.loads((ROOT / stream["labels"]).read_text(encoding="utf-8"))
    tally: Counter[str] = Counter()
    settings = CheckSettings.from_labels(labels["settings"])
    _compare(_partitions(ROOT / stream["records"]), settings, tally, counts=(2, 5))
    assert tally["held"] + tally["fell back"] > 0


@pytest.mark.parametrize("kind", sorted(k for k, p in FAULTY.items() if p == "open"))
def test_ranges_of_a_faulty_dump_add_up_or_say_why_not(kind: str) -> None:
    folder = dump("open", kind, messages=600)
    tally: Counter[str] = Counter()
    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    _compare(_partitions(folder), settings, tally, counts=(2, 5))
    assert tally["held"] > 0, tally  # most splits miss the one fault


def test_a_clean_dump_splits_everywhere() -> None:
    tally = _checked_in_ranges(dump("open", None, messages=1200))
    assert tally["fell back"] == 0
    assert tally["held"] > 0


def _replayed(records: list[Record], at: int) -> list[Record]:
    """``records`` with the first row message from position ``at`` delivered again at the end."""
    codec = CODECS["open"]
    row = next(
        (key, value)
        for _, key, value in records[at:]
        if any(isinstance(e, DecodedRow) for e in codec.decode(Message(key=key, value=value)))
    )
    return [*records, (records[-1][0] + 1, *row)]


@pytest.mark.parametrize("at", [5, 100, 250])
def test_a_repeat_of_an_earlier_range_is_caught(at: int) -> None:
    """An early row message delivered again at the end: the partition's checker counts an
    allowed duplicate, a fresh last range would not know it; so the ranges must fall back."""
    folder = dump("open", None, messages=1200)
    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    (topic, partition), records = max(_partitions(folder).items(), key=lambda i: len(i[1]))
    replayed = _replayed(records, at)
    whole = _whole(settings, topic, partition, replayed)
    assert any(k[:2] == ("finding", "allowed-duplicate") for k in whole)
    tally: Counter[str] = Counter()
    _compare({(topic, partition): replayed}, settings, tally)
    assert tally["fell back"] > 0
    assert tally["differ"] > 0


T = ("shop", "orders")


def _state(index: int, **given: Any) -> RangeState:
    base: dict[str, Any] = {
        "index": index,
        "first_watermark": None,
        "floors": {},
        "first_run_ts": None,
        "hashes": frozenset(),
        "watermark": None,
        "newest": {},
        "barriers": {},
        "last_run_ts": None,
        "checked": 1,
    }
    return RangeState(**{**base, **given})


FIRST = _state(
    0, watermark=10, newest={T: 9}, barriers={T: 5}, last_run_ts=9, hashes=frozenset({1})
)
FITS = {"first_watermark": 10, "floors": {T: 11}, "first_run_ts": 11, "hashes": frozenset({2})}


@pytest.mark.parametrize(
    ("later", "problem"),
    [
        (FITS, None),
        ({**FITS, "first_watermark": 9}, "range 1 starts below the watermark 10"),
        ({**FITS, "floors": {T: 8}}, "range 1: shop.orders at 8, below 9 before it"),
        ({**FITS, "floors": {("shop", "items"): 1}}, None),  # a table not seen before
        ({**FITS, "first_run_ts": 9}, "range 1 continues the run of commit ts 9"),
        ({**FITS, "hashes": frozenset({1, 2})}, "range 1 repeats a message of an earlier range"),
        ({"first_watermark": 3, "floors": {T: 1}, "checked": 0}, None),  # checked nothing
    ],
)
def test_chain_problem_names_the_first_assumption_that_fails(
    later: dict[str, Any], problem: str | None
) -> None:
    assert chain_problem([FIRST, _state(1, **later)]) == problem


def test_a_range_is_judged_against_every_range_before_it() -> None:
    """The state two ranges leave: the newest commit ts and DDL barrier by maximum, the
    hashes together, the watermark and last run of the later one."""
    second = _state(1, **FITS, watermark=20, newest={T: 11}, last_run_ts=15)
    third = {"first_watermark": 20, "floors": {T: 12}, "first_run_ts": 21}
    assert chain_problem([FIRST, second, _state(2, **third)]) is None
    too_low = [
        ({**third, "first_watermark": 15}, "range 2 starts below the watermark 20"),
        ({**third, "floors": {T: 10}}, "range 2: shop.orders at 10, below 11 before it"),
        ({**third, "first_run_ts": 15}, "range 2 continues the run of commit ts 15"),
        ({**third, "hashes": frozenset({1})}, "range 2 repeats a message of an earlier range"),
    ]
    for given, problem in too_low:
        assert chain_problem([FIRST, second, _state(2, **given)]) == problem
    barrier = _state(1, **FITS, watermark=20, barriers={T: 30})
    assert chain_problem([FIRST, barrier, _state(2, **third)]) == (
        "range 2: shop.orders at 12, below 30 before it"
    )


def test_only_protocols_that_decode_alone_split() -> None:
    assert splittable(CheckSettings(protocol="open"))
    assert not splittable(CheckSettings(protocol="simple-json"))
    assert not splittable(CheckSettings(protocol="simple-avro"))


@pytest.mark.parametrize(
    ("rows", "tasks", "above", "pieces"),
    [
        ((100, 100), 2, 0, [100, 100]),  # balanced: nothing to split
        ((300, 50, 50), 2, 0, [150, 150, 50, 50]),
        ((300, 50, 50), 2, 300, [300, 50, 50]),  # not above the floor
        ((700, 100), 4, 0, [175, 175, 175, 175, 100]),
        ((1,), 8, 0, [1]),
    ],
)
def test_split_gives_ranges_of_about_a_share(
    rows: tuple[int, ...], tasks: int, above: int, pieces: list[int]
) -> None:
    units = [Unit(topic="t", partition=p, files=(), rows=n) for p, n in enumerate(rows)]
    placed = split(units, tasks, above=above)
    assert [p.stop - p.start if isinstance(p, Piece) else p.rows for p in placed] == pieces
    for item in placed:
        if isinstance(item, Piece):
            assert 0 <= item.index < item.count


def test_split_weighs_bytes_with_records() -> None:
    """A partition of few large messages costs more than one of many watermarks."""
    large = Unit(topic="t", partition=0, files=(), rows=1_000, bytes=4_000_000)
    marks = Unit(topic="t", partition=1, files=(), rows=10_000, bytes=300_000)
    placed = split([large, marks], 2)
    assert [(p.start, p.stop) for p in placed if isinstance(p, Piece)] == [(0, 500), (500, 1000)]
    assert placed[-1] is marks


def test_the_plan_weighs_a_partition_by_its_bytes() -> None:
    folder = dump("open", None, messages=1200)
    units = plan_files([p.as_uri() for p in sorted(folder.glob("*.parquet"))])
    assert isinstance(units, list)
    payload = {}
    for unit in units:
        (part,) = (p for p in folder.glob("*.parquet") if p.as_uri() in unit.files)
        table = pq.read_table(part, columns=["key", "value"])
        payload[unit.partition] = sum(len(v or b"") for c in table.columns for v in c.to_pylist())
        assert unit.bytes > 0  # the footers' sizes: encoded pages, so only about the payload
        assert unit.cost == unit.bytes + RECORD_COST * unit.rows
    heaviest = max(units, key=lambda u: u.bytes)
    assert payload[heaviest.partition] == max(payload.values())


def _write(path: Path, offsets: list[int], row_group: int) -> None:
    table = pa.table(
        {
            "topic": ["t"] * len(offsets),
            "partition": pa.array([0] * len(offsets), pa.int32()),
            "offset": pa.array(offsets, pa.int64()),
            "key": [None] * len(offsets),
            "value": [str(o).encode() for o in offsets],
        }
    )
    pq.write_table(table, path, row_group_size=row_group)


@pytest.mark.parametrize("start", [0, 1, 9, 10, 11, 25, 39, 40, 41, 55, 70])
def test_read_unit_from_a_position_skips_exactly_the_records_before_it(
    tmp_path: Path, start: int
) -> None:
    _write(tmp_path / "a.parquet", list(range(40)), row_group=10)  # row groups of 10
    _write(tmp_path / "b.parquet", list(range(55, 40, -1)), row_group=4)  # out of order
    _write(tmp_path / "c.parquet", list(range(60, 70)), row_group=3)
    files = tuple(str(tmp_path / n) for n in ("a.parquet", "b.parquet", "c.parquet"))
    unit = Unit(topic="t", partition=0, files=files, rows=65)
    whole = [o for b in read_unit(unit) for o in b.column(0).to_pylist()]
    assert whole == sorted(whole)
    assert len(whole) == 65
    assert [o for b in read_unit(unit, start) for o in b.column(0).to_pylist()] == whole[start:]


def _with_an_early_row_again(tmp_path: Path) -> Path:
    """A clean dump whose largest partition ends with one of its first row messages again."""
    folder = tmp_path / "repeated"
    shutil.copytree(dump("open", None, messages=1200), folder)
    largest = max(folder.glob("*.parquet"), key=lambda f: pq.read_metadata(f).num_rows)
    table = pq.read_table(largest)
    records = [(r["offset"], r["key"], r["value"]) for r in table.to_pylist()]
    offset, key, value = _replayed(records, 5)[-1]
    extra = {name: table.column(name)[0].as_py() for name in table.column_names}
    extra.update(offset=offset, key=key, value=value)
    pq.write_table(pa.concat_tables([table, pa.Table.from_pylist([extra], table.schema)]), largest)
    return folder


@pytest.mark.spark
@pytest.mark.parametrize("case", ["clean", "replay", "reordered-versions", "early-row-again"])
def test_spark_in_forced_ranges_reports_what_the_unsplit_job_does(
    spark: Any, tmp_path: Path, case: str
) -> None:
    from ticdc_conformance.suites.stream.spark import check_dump

    folder = {
        "clean": lambda: dump("open", None, messages=1200),
        "replay": lambda: dump("open", "replay", messages=1200),
        "reordered-versions": lambda: dump("open", "reordered-versions", messages=1200),
        "early-row-again": lambda: _with_an_early_row_again(tmp_path),
    }[case]()
    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    whole = check_dump(spark, [str(folder)], settings, split_above=None)
    ranged = check_dump(spark, [str(folder)], settings, split_above=0, tasks=8)
    assert whole.plan == "files"
    if case == "early-row-again":  # the last range repeats a message of the first
        assert ranged.plan.startswith("files, checked whole again: the ranges ")
        assert "repeats a message of an earlier range" in ranged.plan
        assert whole.counts["allowed-duplicate"] == 1
    else:
        assert re.fullmatch(r"files, [0-9]+ ranges", ranged.plan)
    assert {**vars(whole), "plan": None} == {**vars(ranged), "plan": None}
