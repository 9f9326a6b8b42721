"""The stream check's fast path: every stream fixture in one process, the engine switch.

The Spark path gives the same report on every stream fixture (``test_spark_checker.py``
compares the two); here the plain checker alone meets each fixture's labels, ``auto`` picks it
for small dumps, and inputs that are no dump are one-line usage errors before any engine runs.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from stream_helpers import comparable, labelled

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.suites.stream import plain
from ticdc_conformance.suites.stream.arguments import SPARK_ABOVE_RECORDS, add_arguments
from ticdc_conformance.suites.stream.job import engine_for
from ticdc_conformance.suites.stream.rules import CheckSettings

STREAMS = fixtures.load_manifest()["streams"]
STREAMS_BY_ID = {s["id"]: s for s in STREAMS}


@pytest.mark.parametrize("stream", STREAMS, ids=lambda s: s["id"])
def test_every_stream_fixture_is_reported_where_labelled(stream: dict[str, Any]) -> None:
    root = fixtures.default_root()
    labels = json.loads((root / stream["labels"]).read_text(encoding="utf-8"))
    files = plain.input_files([str(root / stream["records"])])
    # a claim-check stream's references name the files of its own folder
    storage = None if stream["claim_check"] is None else str(root / stream["claim_check"])
    settings = CheckSettings.from_labels(labels["settings"], claim_check_storage=storage)
    result = plain.check_dump(files, settings, samples=1000)
    found = sorted(
        (rule, s["partition"], s["offset"], s["commit_ts"])
        for rule, samples in result.samples.items()
        for s in samples
    )
    assert found == comparable(found, labelled(labels))
    assert sum(result.counts.values()) == len(found)
    assert result.read == result.decoded + result.undecodable == result.records
    assert result.records == plain.count_records(files) > 0
    assert result.plan == "in-process"


def test_samples_are_the_first_per_rule_and_counts_are_all() -> None:
    [stream] = [s for s in STREAMS if s["id"] == "stream.open.tiflow.missing-watermark"]
    root = fixtures.default_root()
    labels = json.loads((root / stream["labels"]).read_text(encoding="utf-8"))
    files = plain.input_files([str(root / stream["records"])])
    settings = CheckSettings.from_labels(labels["settings"])
    every = plain.check_dump(files, settings, samples=1000)
    one = plain.check_dump(files, settings, samples=1)
    assert one.counts == every.counts
    assert every.counts["watermark-broadcast"] >= 1
    assert one.samples == {rule: found[:1] for rule, found in every.samples.items()}
    assert plain.check_dump(files, settings, samples=0).samples == {}


def namespace(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(["--input", "x", *argv])


@pytest.mark.parametrize(
    ("argv", "records", "engine"),
    [
        ((), 124, "plain"),
        ((), SPARK_ABOVE_RECORDS, "plain"),
        ((), SPARK_ABOVE_RECORDS + 1, "spark"),
        (("--spark",), 124, "spark"),
        (("--master", "local[2]"), 124, "spark"),
        (("--engine", "spark"), 124, "spark"),
        (("--engine", "plain"), 10 * SPARK_ABOVE_RECORDS, "plain"),
    ],
)
def test_the_engine_is_what_was_asked_else_by_size(
    argv: tuple[str, ...], records: int, engine: str
) -> None:
    assert engine_for(namespace(*argv), records) == engine


def test_a_small_dump_is_checked_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [stream] = [s for s in STREAMS if s["id"] == "stream.open.tiflow.wrong-partition"]
    records = fixtures.default_root() / stream["records"]
    report = tmp_path / "report.json"
    code = main(
        [
            "check-stream",
            "--input",
            str(records),
            "--protocol",
            "open",
            "--partitions",
            "3",
            "--report",
            str(report),
            "--quiet",
        ]
    )
    assert code == 1
    written = json.loads(report.read_text(encoding="utf-8"))
    assert (written["engine"], written["plan"]) == ("plain", "in-process")
    assert "engine: plain (in-process)" in capsys.readouterr().out
    assert written["rules"][0]["doc"] == "docs/rules/stream.md#undecodable"


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("notes.parquet", b"plain text, not Parquet\n", "is not a Parquet file"),
        ("records.json", b'{"topic": "t"}\n', "is not a Parquet file"),
    ],
)
def test_a_file_that_is_no_parquet_is_a_one_line_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes, says: str
) -> None:
    (tmp_path / name).write_bytes(content)
    code = main(["check-stream", "--input", str(tmp_path / name), "--protocol", "open"])
    err = capsys.readouterr().err
    assert code == 2
    assert says in err
    assert err.count("\n") == 1
    assert "Traceback" not in err


@pytest.mark.slow
def test_an_interrupted_check_exits_130_and_leaves_no_report(tmp_path: Path) -> None:
    """Ctrl-C while the in-process check runs: status 130, no traceback, no report file."""
    dump = tmp_path / "dump"
    dump.mkdir()
    stream = STREAMS_BY_ID["stream.open.tiflow.clean"]
    table = pq.read_table(fixtures.default_root() / stream["records"])
    copies = []
    for n in range(2000):  # the same topic again and again, at later offsets
        at = table.schema.get_field_index("offset")
        shifted = pc.add(table["offset"], n * 1_000_000)
        copies.append(table.set_column(at, table.schema.field(at), shifted))
    pq.write_table(pa.concat_tables(copies), dump / "part-00000.parquet")
    (dump / "_labels.json").write_bytes((fixtures.default_root() / stream["labels"]).read_bytes())
    report = tmp_path / "report.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ticdc_conformance.cli",
            "check-stream",
            "--input",
            str(dump),
            "--report",
            str(report),
            "--html",
            str(tmp_path / "report.html"),
            "--engine",
            "plain",
            "--quiet",
        ],
        stderr=subprocess.PIPE,
    )
    time.sleep(4)  # past start-up, into the check of 240 000 records (a minute or more)
    if process.poll() is not None:
        _, err = process.communicate()
        pytest.fail(f"the check ended before it could be interrupted: {err.decode()}")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert b"Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump"]


def _offsets_set(table: pa.Table, offsets: list[int | None]) -> pa.Table:
    index = table.schema.get_field_index("offset")
    return table.set_column(index, "offset", pa.array(offsets, table.schema.field("offset").type))


def _bad_dump(kind: str, folder: Path) -> None:
    """A dump folder with one fault of ``kind``, from a clean stream fixture."""
    source = fixtures.default_root() / STREAMS[0]["records"]
    table = pq.read_table(source)
    offsets = table["offset"].to_pylist()
    if kind == "truncated":
        data = source.read_bytes()
        (folder / "part-0.parquet").write_bytes(data[: len(data) // 2])
    elif kind == "missing-column":
        pq.write_table(table, folder / "part-0.parquet")
        pq.write_table(table.drop_columns(["key"]), folder / "part-1.parquet")
    elif kind == "null-offset":
        pq.write_table(_offsets_set(table, [None, *offsets[1:]]), folder / "part-0.parquet")
    elif kind == "offset-twice-in-a-file":
        pq.write_table(_offsets_set(table, [offsets[0], *offsets[:-1]]), folder / "part-0.parquet")
    elif kind == "offset-as-text":
        pq.write_table(table, folder / "part-0.parquet")
        index = table.schema.get_field_index("offset")
        text = table.set_column(index, "offset", table["offset"].cast(pa.string()))
        pq.write_table(text, folder / "part-1.parquet")
    elif kind == "partition-as-int64":
        pq.write_table(table, folder / "part-0.parquet")
        index = table.schema.get_field_index("partition")
        wide = table.set_column(index, "partition", table["partition"].cast(pa.int64()))
        pq.write_table(wide.slice(0, 0), folder / "part-1.parquet")
    elif kind == "offset-in-two-files":
        pq.write_table(table, folder / "part-0.parquet")
        pq.write_table(table.slice(0, 1), folder / "part-1.parquet")


BAD_DUMPS = [
    ("truncated", "part-0.parquet is not a Parquet file"),
    ("missing-column", "part-1.parquet: not a topic dump, missing column(s) ['key']"),
    ("empty-folder", "no Parquet file in"),
    ("null-offset", "part-0.parquet: 1 record(s) with no offset: not a topic dump"),
    ("offset-twice-in-a-file", "not a topic dump: ticdc-conformance/0: offset 0 twice"),
    ("offset-in-two-files", "not a topic dump: ticdc-conformance/0: offset 0 twice"),
    ("offset-as-text", "part-1.parquet: column 'offset' is string: not a topic dump"),
    (
        "partition-as-int64",
        "part-1.parquet: column 'partition' is int64 where",
    ),
]


@pytest.mark.parametrize(
    ("kind", "says", "engine"),
    [
        *((kind, says, "plain") for kind, says in BAD_DUMPS),
        # on Spark the file's task finds it, and the job says it the same way
        pytest.param(
            "offset-twice-in-a-file",
            "not a topic dump: ",
            "spark",
            marks=pytest.mark.spark,
            id="offset-twice-in-a-file-on-spark",
        ),
    ],
)
def test_a_dump_no_kafka_partition_can_be_is_a_usage_error_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, says: str, engine: str
) -> None:
    folder = tmp_path / "dump"
    folder.mkdir()
    _bad_dump(kind, folder)
    report = tmp_path / "report.json"
    argv = ["check-stream", "--input", str(folder), "--protocol", "open", "--quiet"]
    code = main([*argv, "--engine", engine, "--report", str(report)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert says in err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert not report.exists()  # nothing that looks like a finished check


@pytest.mark.parametrize("engine", ["plain", pytest.param("spark", marks=pytest.mark.spark)])
def test_files_beside_the_parquet_files_are_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    folder = tmp_path / "dump"
    folder.mkdir()
    source = fixtures.default_root() / STREAMS[0]["records"]
    (folder / "part-0.parquet").write_bytes(source.read_bytes())
    (folder / "notes.txt").write_text("not a record\n")
    argv = ["check-stream", "--input", str(folder), "--protocol", STREAMS[0]["protocol"]]
    main([*argv, "--quiet", "--engine", engine, "--report", str(tmp_path / "r.json")])
    written = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert written["messages"]["read"] == pq.read_metadata(source).num_rows
    assert written["engine"] == engine
    capsys.readouterr()
