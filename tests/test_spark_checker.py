"""The Spark stream checker: the same findings as the plain rules, through Spark and the CLI.

Spark jobs are the slow part, so the labelled dumps are checked together where the settings
allow: every Open fault kind and a clean Open dump in one check (one topic each), once on the
file path and once on the shuffle path, and the two results compared whole.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from stream_helpers import CLEAN, FAULTY, comparable, dump, labelled

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.dump import (
    CLAIM_CHECK_FOLDER,
    read_dump,
    read_labels,
    write_dump,
    write_records,
)
from ticdc_conformance.generators.faults import FAULT_KINDS, inject_faults
from ticdc_conformance.generators.simulator import (
    Record,
    StreamSettings,
    Transaction,
    WorkloadItem,
    simulate,
)
from ticdc_conformance.generators.workload import shop_workload
from ticdc_conformance.reference import CODECS, ColumnInfo, RowChangedEvent, TableInfo
from ticdc_conformance.reference.dispatch import DispatchRule, partition_of
from ticdc_conformance.suites.stream.phases import Phases, PhaseUpdate
from ticdc_conformance.suites.stream.rules import CheckSettings
from ticdc_conformance.suites.stream.spark import (
    CHECK_PHASES,
    CheckResult,
    check_dump,
    spark_int_hash,
)

pytestmark = pytest.mark.spark

Coordinates = tuple[str, int, int | None, int | None]
SAMPLES = 100
"""More than any labelled dump has findings of one rule: every finding comes back."""


def found(report: dict[str, Any]) -> list[Coordinates]:
    return sorted(
        (rule["id"], s["partition"], s["offset"], s["commit_ts"])
        for rule in report["rules"]
        for s in rule["samples"]
    )


def found_in(result: CheckResult, topic: str) -> list[Coordinates]:
    return sorted(
        (rule, s["partition"], s["offset"], s["commit_ts"])
        for rule, samples in result.samples.items()
        for s in samples
        if s["topic"] == topic
    )


def records_in(*folders: Path) -> int:
    return sum(1 for folder in folders for _ in read_dump(folder))


def cli(folder: Path, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """``check-stream`` on ``folder`` (the shared session is the one the command finds)."""
    report = tmp_path / "report.json"
    code = main(
        [
            "check-stream",
            "--input",
            str(folder),
            "--report",
            str(report),
            "--quiet",
            "--spark",
            *extra,
        ]
    )
    return code, json.loads(report.read_text(encoding="utf-8"))


@dataclass(frozen=True, slots=True)
class Checked:
    """One dump set checked on both paths."""

    folders: dict[str | None, Path]
    files: CheckResult
    shuffle: CheckResult
    progress: list[PhaseUpdate]
    """The phases' updates while the file path ran."""


def check_both(spark: Any, protocol: str, faults: list[str]) -> Checked:
    folders: dict[str | None, Path] = {kind: dump(protocol, kind) for kind in [None, *faults]}
    settings = CheckSettings.from_labels(read_labels(folders[None])["settings"])
    paths = [str(folder) for folder in folders.values()]
    updates: list[PhaseUpdate] = []
    context = spark.sparkContext
    with Phases(context, command="check-stream", listener=updates.append, every=0.05) as phases:
        files = check_dump(spark, paths, settings, samples=SAMPLES, phases=phases)
    shuffle = check_dump(spark, paths, settings, samples=SAMPLES, shuffle=True)
    return Checked(folders, files, shuffle, updates)


@pytest.fixture(scope="module")
def open_checked(spark: Any) -> Checked:
    return check_both(spark, "open", sorted(k for k, p in FAULTY.items() if p == "open"))


@pytest.fixture(scope="module")
def simple_checked(spark: Any) -> Checked:
    return check_both(spark, "simple-json", sorted(k for k, p in FAULTY.items() if p != "open"))


@pytest.fixture(params=["open", "simple-json"])
def checked(request: pytest.FixtureRequest) -> Checked:
    fixture = "open_checked" if request.param == "open" else "simple_checked"
    value: Checked = request.getfixturevalue(fixture)
    return value


@pytest.mark.parametrize(("fault", "protocol"), sorted(FAULTY.items()))
def test_each_fault_is_reported_where_labelled(
    open_checked: Checked, simple_checked: Checked, fault: str, protocol: str
) -> None:
    both = open_checked if protocol == "open" else simple_checked
    folder = both.folders[fault]
    expected = labelled(read_labels(folder))
    got = found_in(both.files, folder.name)
    assert got == comparable(got, expected)
    assert both.files.counts[FAULT_KINDS[fault]] == len(expected)


def test_clean_dumps_in_the_same_check_have_no_finding(checked: Checked) -> None:
    assert found_in(checked.files, checked.folders[None].name) == []
    rules = {FAULT_KINDS[kind] for kind in checked.folders if kind is not None}
    assert {rule for rule, n in checked.files.counts.items() if n} == rules


def test_both_paths_give_the_same_result(checked: Checked) -> None:
    assert checked.files.plan == "files"
    assert checked.shuffle.plan == "shuffle: the shuffle path was asked for"
    assert {**vars(checked.files), "plan": None} == {**vars(checked.shuffle), "plan": None}


def test_every_message_is_accounted_for(checked: Checked) -> None:
    result = checked.files
    assert result.read == result.decoded + result.undecodable == result.records
    assert result.records == records_in(*checked.folders.values())
    assert result.undecodable == (1 if "corrupted-message" in checked.folders else 0)


def test_progress_follows_the_jobs_own_phases(spark: Any, open_checked: Checked) -> None:
    updates = open_checked.progress
    started = [u.phase for u in updates if u.done == 0 and u.total is None and not u.ended]
    ended = [u.phase for u in updates if u.ended]
    assert started == ended == list(CHECK_PHASES)
    for update in updates:  # each update falls inside its phase
        assert started.index(update.phase) == update.index - 1
    assert [u.index for u in updates] == sorted(u.index for u in updates)
    for update in updates:
        assert update.total is None or 0 <= update.done <= update.total
    # the phases' Spark jobs ran in the phases' job groups, so stage progress maps to them
    tracker = spark.sparkContext.statusTracker()
    [decoding] = [u for u in updates if u.ended and u.phase == CHECK_PHASES[1]]
    assert tracker.getJobIdsForGroup(decoding.group)
    assert decoding.total is not None
    assert decoding.total > 0


@pytest.mark.parametrize("protocol", [p for p in CLEAN if p not in ("open", "simple-json")])
def test_clean_dumps_pass(spark: Any, protocol: str) -> None:
    folder = dump(protocol)
    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    result = check_dump(spark, [str(folder)], settings)
    assert result.plan == "files"
    assert result.counts == {}
    assert result.samples == {}
    assert result.read == result.decoded == result.records == records_in(folder) > 0


def _without_samples(items: Iterator[WorkloadItem]) -> Iterator[WorkloadItem]:
    """The shop workload without the ``samples`` table, which has no ``id`` column."""
    for item in items:
        if isinstance(item, Transaction):
            rows = tuple(r for r in item.rows if r.table.name != "samples")
            if not rows:
                continue
            item = replace(item, rows=rows)  # noqa: PLW2901 - the filtered transaction
        yield item


def columns_dump(folder: Path, topic: str, faults: tuple[str, ...]) -> Path:
    """A dump under the ``columns`` dispatcher (on ``id``), with its labels."""
    rule = DispatchRule(partition="columns", columns=("id",))
    settings = StreamSettings(protocol="open", topic=topic, dispatcher=rule)
    log = simulate(_without_samples(shop_workload(3)), settings, messages=400)
    injected = inject_faults(log, faults, 3)
    labels = {
        "settings": settings.describe(),
        "faults": [
            {
                "kind": f.kind,
                "findings": [
                    {
                        "rule": x.rule,
                        "partition": x.partition,
                        "offset": x.offset,
                        "commit_ts": x.commit_ts,
                    }
                    for x in f.findings
                ],
            }
            for f in injected
        ],
    }
    write_dump(log.records(), folder, labels=labels)
    return folder


def test_the_columns_dispatcher_end_to_end(spark: Any, tmp_path: Path) -> None:
    clean = columns_dump(tmp_path / "clean", "columns-clean", ())
    faulty = columns_dump(tmp_path / "faulty", "columns-wrong", ("wrong-partition",))
    settings = CheckSettings.from_labels(read_labels(clean)["settings"])
    assert settings.dispatcher.kind == "columns"
    result = check_dump(spark, [str(clean), str(faulty)], settings, samples=SAMPLES)
    assert found_in(result, "columns-clean") == []
    expected = labelled(read_labels(faulty))
    assert [rule for rule, *_ in expected] == ["partition-affinity"]
    assert found_in(result, "columns-wrong") == expected
    assert result.counts == {"partition-affinity": 1}
    assert result.read == result.decoded == result.records == records_in(clean, faulty)


def redelivered(folder: Path) -> Path:
    """A topic ``redelivered`` whose transaction at ts 5 comes again with another value.

    On the partition the default dispatcher picks in a topic of 3 (``dump``'s settings).
    """
    table = TableInfo(
        schema="s",
        name="t",
        columns=(
            ColumnInfo(name="id", type="int", key="primary"),
            ColumnInfo(name="v", type="int"),
        ),
    )
    other = replace(table, name="g")
    events = [
        RowChangedEvent(commit_ts=ts, table=t, op="insert", after=(1, v))
        for ts, v, t in ((5, 1, table), (6, 1, other), (5, 2, table))
    ]
    partition = partition_of(events[0], 3)
    assert partition_of(events[1], 3) == partition  # s.t and s.g: the same partition
    records = []
    for offset, event in enumerate(events):
        (m,) = CODECS["open"].encode([event])
        records.append(
            Record(
                topic="redelivered",
                partition=partition,
                offset=offset,
                timestamp=0,
                key=m.key,
                value=m.value,
            )
        )
    write_dump(records, folder)
    return folder


def _families() -> dict[str, list[dict[str, Any]]]:
    """The stream fixtures grouped by the settings they were written with."""
    root = fixtures.default_root()
    families: dict[str, list[dict[str, Any]]] = {}
    for stream in fixtures.load_manifest()["streams"]:
        settings = json.loads((root / stream["labels"]).read_text(encoding="utf-8"))["settings"]
        options = "-".join(f"{k}={v}" for k, v in sorted(settings["options"].items()))
        if settings.get("dispatchers"):  # routed: one per job (test_routed_streams_...)
            continue
        if stream["claim_check"]:  # its own stored files: one per job (test_claim_check_...)
            continue
        dispatcher = settings["dispatcher"]["partition"]
        name = "-".join(filter(None, [stream["protocol"], stream["profile"], dispatcher, options]))
        families.setdefault(name, []).append(stream)
    return families


FAMILIES = _families()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_stream_fixture_is_reported_where_labelled(
    spark: Any, name: str, tmp_path: Path
) -> None:
    """One job per family of settings: each fixture of the family is a topic of its own."""
    del spark  # the shared session is the one the command finds
    root = fixtures.default_root()
    family = FAMILIES[name]
    inputs: list[str] = []
    expected: list[tuple[str, str, int, int | None, int | None]] = []
    for stream in family:
        folder = tmp_path / stream["id"]
        folder.mkdir()
        table = pq.read_table(root / stream["records"])
        at = table.schema.get_field_index("topic")
        topic = pa.array([stream["id"]] * table.num_rows, pa.string())
        pq.write_table(
            table.set_column(at, table.schema.field(at), topic), folder / "part-00000.parquet"
        )
        shutil.copy(root / stream["labels"], folder / "_labels.json")
        inputs += ["--input", str(folder)]
        expected += [(stream["id"], *f) for f in labelled(read_labels(folder))]
    reports = {}
    for engine in ("plain", "spark"):
        report_file = tmp_path / f"report-{engine}.json"
        code = main(
            [
                "check-stream",
                *inputs,
                "--report",
                str(report_file),
                "--quiet",
                "--samples",
                "1000",
                "--engine",
                engine,
            ]
        )
        reports[engine] = json.loads(report_file.read_text(encoding="utf-8"))
        assert reports[engine]["engine"] == engine
    # the fast path and Spark: the same findings, samples, counts, accounting and watermarks
    same = ("rules", "messages", "errors", "warnings", "settings", "watermarks")
    assert {k: reports["plain"][k] for k in same} == {k: reports["spark"][k] for k in same}
    report = reports["spark"]
    got = sorted(
        (s["topic"], rule["id"], s["partition"], s["offset"], s["commit_ts"])
        for rule in report["rules"]
        for s in rule["samples"]
    )
    # a corrupted record no longer says its commit ts: the checker reports none
    want = sorted((t, r, p, o, None if r == "undecodable" else ts) for t, r, p, o, ts in expected)
    assert got == want
    counts = {rule["id"]: rule["count"] for rule in report["rules"] if rule["count"]}
    assert counts == {r: sum(1 for e in expected if e[1] == r) for r in {e[1] for e in expected}}
    assert {t for t, *_ in got} == {s["id"] for s in family if s["fault"] is not None}
    assert code == (1 if any(e[1] != "allowed-duplicate" for e in expected) else 0)
    m = report["messages"]
    assert m["read"] == m["decoded"] + m["undecodable"] == m["input"]


ROUTED = [
    "stream.open.tiflow.wrong-partition-by-columns",
    "stream.open.tiflow.row-after-ddl-by-columns",
    "stream.simple-avro.tiflow.insert-before-delete-by-columns",
    "stream.canal-json.tiflow.wrong-topic-routed",
    "stream.debezium.tiflow.wrong-topic-routed",
    "stream.open.ticdc.wrong-topic-routed",
    "stream.simple-json.tiflow.clean-routed",
]
"""Streams with ``[[sink.dispatchers]]`` rules, whose faults sit where those rules put rows:
a rule per table on one topic, and three topics (each its own job: a check takes one routing
configuration, the dump's); Simple's clean one has BOOTSTRAPs on every topic, and ticdc's
renames tables (target-schema, target-table). The plain checker takes every such fixture
(``tests/test_fixtures_streams.py``)."""


@pytest.mark.parametrize("stream_id", ROUTED)
def test_routed_streams_are_reported_where_labelled(
    spark: Any, stream_id: str, tmp_path: Path
) -> None:
    del spark
    root = fixtures.default_root()
    [stream] = [s for s in fixtures.load_manifest()["streams"] if s["id"] == stream_id]
    folder = tmp_path / "dump"
    folder.mkdir()
    shutil.copy(root / stream["records"], folder / "part-00000.parquet")
    shutil.copy(root / stream["labels"], folder / "_labels.json")
    expected = sorted(labelled(read_labels(folder)))
    assert bool(expected) == (stream["fault"] is not None)
    for engine in ("plain", "spark"):
        report_file = tmp_path / f"report-{engine}.json"
        args = ["check-stream", "--input", str(folder), "--report", str(report_file)]
        assert main([*args, "--quiet", "--engine", engine]) == (1 if expected else 0)
        report = json.loads(report_file.read_text(encoding="utf-8"))
        got = sorted(
            (rule["id"], s["partition"], s["offset"], s["commit_ts"])
            for rule in report["rules"]
            for s in rule["samples"]
        )
        assert got == expected, engine


def test_claim_check_stream_is_reported_where_labelled(spark: Any, tmp_path: Path) -> None:
    """A fixture's stored files as its dump's ``_claim_check`` folder: found by layout."""
    del spark
    root = fixtures.default_root()
    stream_id = "stream.canal-json.tiflow.swapped-claim-check"
    [stream] = [s for s in fixtures.load_manifest()["streams"] if s["id"] == stream_id]
    folder = tmp_path / "dump"
    folder.mkdir()
    shutil.copy(root / stream["records"], folder / "part-00000.parquet")
    shutil.copy(root / stream["labels"], folder / "_labels.json")
    shutil.copytree(root / stream["claim_check"], folder / CLAIM_CHECK_FOLDER)
    expected = sorted(labelled(read_labels(folder)))
    assert [rule for rule, *_ in expected] == ["claim-check"]
    for engine in ("plain", "spark"):
        report_file = tmp_path / f"report-{engine}.json"
        args = ["check-stream", "--input", str(folder), "--report", str(report_file)]
        assert main([*args, "--quiet", "--engine", engine]) == 1
        report = json.loads(report_file.read_text(encoding="utf-8"))
        got = sorted(
            (rule["id"], s["partition"], s["offset"], s["commit_ts"])
            for rule in report["rules"]
            for s in rule["samples"]
        )
        assert got == expected, engine
        assert report["messages"]["decoded"] == report["messages"]["read"] > 0


def test_samples_are_bounded_and_counts_are_not(spark: Any, tmp_path: Path) -> None:
    """Limits and redeliveries (the rules no fault kind covers): two inputs in one check."""
    del spark
    code, report = cli(
        dump("open"),
        tmp_path,
        "--option",
        "max-batch-size=1",
        "--option",
        "max-message-bytes=700",
        "--samples",
        "2",
        "--input",
        str(redelivered(tmp_path / "redelivered")),
    )
    rules = {rule["id"]: rule for rule in report["rules"]}
    assert code == 1
    assert report["plan"] == "files"
    m = report["messages"]
    assert m["read"] == m["input"] == records_in(dump("open"), tmp_path / "redelivered")
    for limit in ("batch-size", "message-size"):
        assert len(rules[limit]["samples"]) == 2
        assert rules[limit]["count"] > 2
    (again,) = rules["duplicate-identical"]["samples"]
    assert (again["topic"], again["offset"], again["commit_ts"]) == ("redelivered", 2, 5)
    assert rules["duplicate-identical"]["count"] == 1


def test_usage_errors(spark: Any, tmp_path: Path) -> None:
    del spark
    assert main(["check-stream", "--input", str(tmp_path / "nothing")]) == 2
    assert main(["check-stream", "--input", str(dump("open")), "--partitions", "0"]) == 2


def test_a_file_that_is_no_dump_is_a_usage_error(spark: Any, tmp_path: Path) -> None:
    """Found from the footers before Spark starts, on either engine."""
    del spark
    pq.write_table(pa.table({"topic": ["t"], "partition": [0]}), tmp_path / "part-0.parquet")
    for engine in ("plain", "spark"):
        assert (
            main(
                [
                    "check-stream",
                    "--input",
                    str(tmp_path),
                    "--protocol",
                    "open",
                    "--quiet",
                    "--engine",
                    engine,
                ]
            )
            == 2
        )


def test_one_file_of_all_partitions_without_labels(spark: Any, tmp_path: Path) -> None:
    """A mixed file: the shuffle path; a replay is only a warning, so the check passes."""
    del spark
    folder = dump("open", "replay")
    write_records(read_dump(folder), tmp_path / "records.parquet")
    file = str(tmp_path / "records.parquet")
    assert main(["check-stream", "--input", file, "--quiet"]) == 2  # no protocol known
    code, report = cli(tmp_path / "records.parquet", tmp_path, "--protocol", "open")
    assert code == 0
    assert report["plan"].startswith("shuffle: ")
    assert "holds several Kafka partitions" in report["plan"]
    assert report["warnings"] == 1
    # the partition count comes from the records when no labels give it: the same findings
    assert found(report) == labelled(read_labels(folder))


@pytest.mark.slow
def test_spark_submit_runs_the_same_job(tmp_path: Path) -> None:
    submit = Path(sys.executable).with_name("spark-submit")
    if not submit.exists() and shutil.which("spark-submit") is None:
        pytest.skip("spark-submit is not installed")
    script = Path(__file__).resolve().parents[1] / "suites" / "stream" / "spark.py"
    folder = dump("open", "wrong-partition")
    report = tmp_path / "report.json"
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }
    done = subprocess.run(
        [
            str(submit if submit.exists() else "spark-submit"),
            "--master",
            "local[2]",
            "--conf",
            "spark.ui.enabled=false",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.driver.bindAddress=127.0.0.1",
            str(script),
            "--input",
            str(folder),
            "--report",
            str(report),
            "--quiet",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-2000:]
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["plan"] == "files"
    assert found(written) == labelled(read_labels(folder))


def test_the_driver_knows_sparks_int_hash(spark: Any) -> None:
    from pyspark.sql import functions as F  # noqa: N812 - Spark's own convention

    rows = spark.range(-50, 200).select("id", F.hash(F.col("id").cast("int"))).collect()
    assert [spark_int_hash(int(r[0])) for r in rows] == [int(r[1]) for r in rows]
