"""capture: topics back into dumps, byte for byte, atomically, every record accounted for.

The round trips replay a dump (``kafka/replay.py``) into the broker and capture it back.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.dump import (
    INCOMPLETE_FILE,
    read_dump,
    read_labels,
    write_dump,
)
from ticdc_conformance.generators.generate import generate
from ticdc_conformance.generators.progress import Progress
from ticdc_conformance.generators.simulator import Record, StreamSettings
from ticdc_conformance.kafka import broker
from ticdc_conformance.kafka.capture import Follow, capture
from ticdc_conformance.kafka.capture_start import parse_offsets
from ticdc_conformance.kafka.client import PARQUET_CODECS, BrokerError
from ticdc_conformance.kafka.pytest_fixtures import LoadedTopic
from ticdc_conformance.kafka.replay import replay
from ticdc_conformance.reference.errors import UsageError
from ticdc_conformance.suites.stream.plain import check_records
from ticdc_conformance.suites.stream.rules import CheckSettings

pytestmark = pytest.mark.kafka
pytest.importorskip("confluent_kafka")
STREAMS = fixtures.load_manifest()["streams"]
STREAM_FILES = {s["id"]: s["records"] for s in STREAMS}


def _topics(stream: dict[str, Any]) -> int:
    settings = json.loads((fixtures.default_root() / stream["labels"]).read_text())["settings"]
    return len(settings.get("topics", {})) or 1  # labels name the topics of routed dumps only


ONE_TOPIC = [s for s in STREAMS if _topics(s) == 1]
"""The stream fixtures on one topic, each replayed into a topic named by its id; the ones
routed over several topics go through the broker in tests/test_kafka_replay.py."""
Row = tuple[int, int, int, bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


def rows(records: Iterator[Record]) -> dict[str, list[Row]]:
    """Each topic's records as (partition, offset, timestamp, key, value, headers), in order."""
    found: dict[str, list[Row]] = {}
    for r in records:
        found.setdefault(r.topic, []).append(
            (r.partition, r.offset, r.timestamp, r.key, r.value, r.headers)
        )
    return {topic: sorted(rs, key=lambda r: r[:2]) for topic, rs in found.items()}


def findings(
    records: list[Row], labels: dict[str, Any], storage: str | None = None
) -> list[tuple[object, ...]]:
    """What the plain-Python checker finds in one topic's records, without the topic name.

    ``storage``: the folder of the stream's claim-check files, which the topic does not carry.
    """
    settings = CheckSettings.from_labels(labels["settings"], claim_check_storage=storage)
    topic = settings.topic or "t"  # a dump with routing rules: rows on their rules' topic
    outcome = check_records(((topic, p, o, k, v) for p, o, _, k, v, _ in records), settings)
    assert outcome.read == len(records)
    return sorted(
        (f.rule, f.partition, f.offset, f.key, f.commit_ts, f.detail) for f in outcome.findings
    )


def topic_id(topic: LoadedTopic) -> str:
    """The stream fixture id a loaded topic is named after."""
    return "stream." + topic.name.rsplit("-", 1)[0]


@pytest.fixture
def config(ticdc_kafka_broker: broker.Broker) -> dict[str, str]:
    return {**ticdc_kafka_broker.config, "bootstrap.servers": ticdc_kafka_broker.bootstrap_servers}


@pytest.fixture(scope="module")
def every_stream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every shipped stream fixture on one topic in one dump, each in a topic named by its id."""
    folder = tmp_path_factory.mktemp("streams") / "dump"
    root = fixtures.default_root()
    records = [
        dataclasses.replace(r, topic=stream["id"])
        for stream in ONE_TOPIC
        for r in read_dump(root / stream["records"])
    ]
    write_dump(records, folder)
    return folder


def test_every_stream_fixture_round_trips_byte_for_byte(
    every_stream: Path, config: dict[str, str], tmp_path: Path
) -> None:
    """One replay and one capture of all fixtures; the checker finds the same in each."""
    replayed = replay(every_stream, config, compression="zstd")
    assert replayed.moved == 0
    assert {t.target for t in replayed.topics} == {s["id"] for s in ONE_TOPIC}
    result = capture(config, [s["id"] for s in ONE_TOPIC], tmp_path / "captured")
    original, captured = rows(read_dump(every_stream)), rows(read_dump(tmp_path / "captured"))
    assert result.records == replayed.records == sum(len(r) for r in captured.values())
    assert result.past_end == 0
    assert captured == original
    root = fixtures.default_root()
    for stream in ONE_TOPIC:
        labels = json.loads((root / stream["labels"]).read_text())
        storage = stream["claim_check"] and str(root / stream["claim_check"])
        expected = findings(original[stream["id"]], labels, storage)
        assert findings(captured[stream["id"]], labels, storage) == expected
        assert bool(expected) is (stream["fault"] is not None), stream["id"]


@pytest.mark.spark
def test_check_stream_finds_the_same_in_a_captured_fixture(
    spark: Any,
    ticdc_kafka_topic: Callable[..., LoadedTopic],
    config: dict[str, str],
    tmp_path: Path,
) -> None:
    """The operator's way: capture the topic, then ``check-stream`` with the topic's settings."""
    del spark  # the shared session is the one the command finds
    [stream] = [s for s in STREAMS if s["id"] == "stream.open.tiflow.missing-ddl"]
    topic = ticdc_kafka_topic(stream["id"])
    capture(config, [topic.name], tmp_path / "captured")
    settings = topic.labels["settings"]
    flags = ["--protocol", settings["protocol"], "--profile", settings["profile"], "--quiet"]
    flags += [f"--option={k}={v}" for k, v in settings["options"].items()]
    reports = {}
    for name, source in (
        ("original", fixtures.default_root() / stream["records"]),
        ("captured", tmp_path / "captured"),
    ):
        report = tmp_path / f"{name}.json"
        assert main(["check-stream", "--input", str(source), "--report", str(report), *flags]) == 1
        reports[name] = json.loads(report.read_text())
    assert read_labels(tmp_path / "captured")["settings"] == {"topic": topic.name, "partitions": 3}

    def found(report: dict[str, Any]) -> list[tuple[object, ...]]:
        return sorted(
            (r["id"], r["count"], s["partition"], s["offset"], s["commit_ts"])
            for r in report["rules"]
            for s in r["samples"]
        )

    assert found(reports["captured"]) == found(reports["original"])
    assert [r[0] for r in found(reports["captured"])] == ["ddl-broadcast"]
    assert reports["captured"]["messages"] == reports["original"]["messages"]


@pytest.mark.slow
def test_a_generated_100k_dump_round_trips(config: dict[str, str], tmp_path: Path) -> None:
    started = time.perf_counter()
    generate(
        StreamSettings(protocol="open", partitions=6),
        messages=100_000,
        seed=1,
        faults=[],
        folder=tmp_path / "dump",
    )
    generated = time.perf_counter()
    replayed = replay(tmp_path / "dump", config, topic_map={"ticdc-conformance": "large"})
    result = capture(config, ["large"], tmp_path / "captured")
    moved = time.perf_counter()
    assert result.records == replayed.delivered >= 100_000
    assert (
        rows(read_dump(tmp_path / "captured"))["large"]
        == rows(read_dump(tmp_path / "dump"))["ticdc-conformance"]
    )
    sys.stderr.write(
        f"100k round trip: generate {generated - started:.1f} s, replay + capture "
        f"{moved - generated:.1f} s, compare {time.perf_counter() - moved:.1f} s\n"
    )


def test_headers_tombstones_and_empty_bytes_round_trip(
    config: dict[str, str], tmp_path: Path
) -> None:
    records = [
        Record(
            topic="odd",
            partition=0,
            offset=0,
            timestamp=1_700_000_000_000,
            key=None,
            value=b"",
            headers=(("h", b"\x00\xff"), ("h", None), ("", b"")),
        ),
        Record(
            topic="odd", partition=0, offset=1, timestamp=1_700_000_000_001, key=b"", value=None
        ),
        Record(topic="odd", partition=1, offset=0, timestamp=1, key=b"k", value=b"\xff" * 70_000),
    ]
    write_dump(records, tmp_path / "dump")
    replay(tmp_path / "dump", config)
    capture(config, ["odd"], tmp_path / "captured")
    assert list(read_dump(tmp_path / "captured")) == records


def test_every_parquet_codec_keeps_the_records(
    ticdc_kafka_topic: Callable[..., LoadedTopic], config: dict[str, str], tmp_path: Path
) -> None:
    """Uncompressed pages unless a codec is asked; the records byte for byte under each."""
    topic = ticdc_kafka_topic("stream.open.tiflow.clean")
    [records] = rows(read_dump(fixtures.default_root() / STREAM_FILES[topic_id(topic)])).values()
    for codec in (None, *PARQUET_CODECS):
        out = tmp_path / str(codec)
        if codec is None:
            capture(config, [topic.name], out)
        else:
            capture(config, [topic.name], out, compression=codec)
        assert rows(read_dump(out)) == {topic.name: records}
        files = sorted(out.glob("part-*.parquet"))
        assert len(files) == 3
        chunks = {
            meta.row_group(g).column(c).compression
            for meta in (pq.read_metadata(f) for f in files)
            for g in range(meta.num_row_groups)
            for c in range(meta.num_columns)
        }
        assert chunks == {"UNCOMPRESSED" if codec in {None, "none"} else str(codec).upper()}


def test_start_offsets(
    ticdc_kafka_topic: Callable[..., LoadedTopic], config: dict[str, str], tmp_path: Path
) -> None:
    topic = ticdc_kafka_topic("stream.open.tiflow.clean")
    [records] = rows(read_dump(fixtures.default_root() / STREAM_FILES[topic_id(topic)])).values()
    result = capture(
        config,
        [topic.name],
        tmp_path / "offsets",
        from_offsets=parse_offsets([f"{topic.name}:0=10", "2=40"]),
    )
    got = rows(read_dump(tmp_path / "offsets"))[topic.name]
    assert got == [r for r in records if r[1] >= {0: 10, 1: 0, 2: 40}[r[0]]]
    assert result.records == len(got)


def test_start_times(
    ticdc_kafka_broker: broker.Broker,
    ticdc_kafka_topic: Callable[..., LoadedTopic],
    config: dict[str, str],
    tmp_path: Path,
) -> None:
    topic = ticdc_kafka_topic("stream.open.tiflow.clean")
    [records] = rows(read_dump(fixtures.default_root() / STREAM_FILES[topic_id(topic)])).values()
    later = round(time.time() * 1000) + 3_600_000
    middle = sorted(r[2] for r in records)[len(records) // 2]
    got = {}
    for name, since in (("later", later), ("all", 0), ("middle", middle)):
        capture(config, [topic.name], tmp_path / name, from_timestamp=since)
        got[name] = rows(read_dump(tmp_path / name)).get(topic.name, [])
    assert got["all"] == records
    if ticdc_kafka_broker.kind == "tansu":  # a gap (docs/kafka.md): it answers offset 0
        assert got["later"] == got["middle"] == records
        return
    assert got["later"] == []
    first = {
        p: min((r[1] for r in records if r[0] == p and r[2] >= middle), default=None)
        for p in range(3)
    }
    assert got["middle"] == [r for r in records if r[1] >= (first[r[0]] or sys.maxsize)]


def test_usage_errors(
    ticdc_kafka_topic: Callable[..., LoadedTopic], config: dict[str, str], tmp_path: Path
) -> None:
    topic = ticdc_kafka_topic("stream.craft.tiflow.clean")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    cases = [
        ({"topics": [topic.name], "out": tmp_path / "full"}, "exists and is not empty"),
        ({"topics": ["absent-topic"], "out": tmp_path / "a"}, "no topic absent-topic"),
        ({"topics": [], "out": tmp_path / "b"}, "at least one --topic"),
        (
            {"topics": [topic.name], "out": tmp_path / "c", "from_offsets": {("x", 0): 1}},
            r"partitions the topics lack: \[\('x', 0\)\]",
        ),
        (
            {
                "topics": [topic.name],
                "out": tmp_path / "d",
                "from_offsets": {(None, 0): 1},
                "from_timestamp": 5,
            },
            "not both",
        ),
        (
            {"topics": [topic.name], "out": tmp_path / "e", "from_offsets": {(None, 1): 10_000}},
            "start offset 10000 is outside",
        ),
        (
            {"topics": [topic.name], "out": tmp_path / "f", "compression": "lz4"},
            "Parquet compression 'lz4' is not one of none, snappy, zstd, gzip",
        ),
    ]
    for arguments, said in cases:
        with pytest.raises(UsageError, match=said):
            capture(config, **arguments)  # type: ignore[arg-type]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # nothing left behind


def test_follow_stops_after_max_records(
    ticdc_kafka_topic: Callable[..., LoadedTopic], config: dict[str, str], tmp_path: Path
) -> None:
    topic = ticdc_kafka_topic("stream.open.tiflow.clean")
    result = capture(config, [topic.name], tmp_path / "ten", follow=Follow(max_records=10))
    assert result.records == 10
    assert result.records + result.past_end <= topic.records
    assert sum(1 for _ in read_dump(tmp_path / "ten")) == 10
    idle = capture(config, [topic.name], tmp_path / "idle", follow=Follow(idle=0.5))
    assert idle.records == topic.records
    assert read_labels(tmp_path / "idle")["capture"]["follow"] is True


class KillBroker(Progress):
    """A progress line that kills the broker the first time it is shown."""

    def __init__(self, pid: int) -> None:
        super().__init__("moved", out=io.StringIO())
        self.pid = pid

    def update(self, count: int) -> None:
        if count:
            os.kill(self.pid, signal.SIGKILL)


def test_a_broker_dying_midway_leaves_no_dump(tmp_path: Path) -> None:
    records = [
        Record(topic="big", partition=p, offset=o, timestamp=1, key=None, value=bytes(1000))
        for p in range(2)
        for o in range(20_000)
    ]
    write_dump(records, tmp_path / "dump")
    with broker.start("tansu") as running:
        assert running.broker.pid is not None
        config = {"bootstrap.servers": running.broker.bootstrap_servers}
        replay(tmp_path / "dump", config)
        small = {**config, "queued.max.messages.kbytes": "64"}  # little read ahead
        with pytest.raises(BrokerError, match=r"(no broker reachable|nothing from the cluster)"):
            capture(
                small,
                ["big"],
                tmp_path / "captured",
                timeout=2,
                progress=KillBroker(running.broker.pid),
            )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump"]


def _capture_process(bootstrap: str, topic: str, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ticdc_conformance.cli",
            "capture",
            "--bootstrap-servers",
            bootstrap,
            "--topic",
            topic,
            "--out",
            str(out),
            *extra,
        ],
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_killed_capture_leaves_nothing_that_reads_as_a_dump(
    ticdc_kafka_topic: Callable[..., LoadedTopic], config: dict[str, str], tmp_path: Path
) -> None:
    topic = ticdc_kafka_topic("stream.simple-json.tiflow.clean")
    out = tmp_path / "dump"
    process = _capture_process(
        config["bootstrap.servers"], topic.name, out, "--follow", "--idle", "120"
    )
    try:
        _wait_for(lambda: any(tmp_path.glob(".dump.capture-*/" + INCOMPLETE_FILE)))
        time.sleep(1)  # reading, then following: midway
    finally:
        process.kill()
        process.communicate()
    assert not out.exists()
    [left] = tmp_path.glob(".dump.capture-*")
    assert (left / INCOMPLETE_FILE).exists()
    with pytest.raises(ValueError, match="unfinished capture"):
        list(read_dump(left))
    assert main(["check-stream", "--input", str(left), "--protocol", "simple-json"]) == 2
    result = capture(config, [topic.name], out)
    assert result.leftovers == (left,)
    assert result.records == topic.records


def test_ctrl_c_and_a_dead_broker_end_a_capture_cleanly(tmp_path: Path) -> None:
    stream = fixtures.default_root() / "data/streams/craft.tiflow.clean.parquet"
    with broker.start("tansu") as running:
        assert running.broker.pid is not None
        bootstrap = running.broker.bootstrap_servers
        replay(stream, {"bootstrap.servers": bootstrap})
        interrupted = _capture_process(
            bootstrap, "ticdc-conformance", tmp_path / "a", "--follow", "--idle", "120"
        )
        _wait_for(lambda: any(tmp_path.glob(".a.capture-*/" + INCOMPLETE_FILE)))
        interrupted.send_signal(signal.SIGINT)
        assert interrupted.wait(60) == 130
        assert interrupted.communicate()[1] == ""  # quietly
        orphaned = _capture_process(
            bootstrap,
            "ticdc-conformance",
            tmp_path / "b",
            "--follow",
            "--idle",
            "120",
            "--timeout",
            "2",
        )
        _wait_for(lambda: any(tmp_path.glob(".b.capture-*/" + INCOMPLETE_FILE)))
        os.kill(running.broker.pid, signal.SIGKILL)
        assert orphaned.wait(60) == 3
        assert "error: the run broke: no broker reachable" in orphaned.communicate()[1]
    assert list(tmp_path.iterdir()) == []
