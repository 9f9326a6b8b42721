"""replay: a dump into topics, its partitions, order and bytes kept, every delivery verified."""

from __future__ import annotations

import io
import os
import signal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from stream_helpers import routed_dump

from ticdc_conformance.generators.dump import read_dump, read_labels, write_dump
from ticdc_conformance.generators.progress import Progress
from ticdc_conformance.generators.simulator import Record
from ticdc_conformance.kafka import broker
from ticdc_conformance.kafka.capture import capture
from ticdc_conformance.kafka.client import COMPRESSIONS, BrokerError
from ticdc_conformance.kafka.dump_reader import plan_dump
from ticdc_conformance.kafka.replay import _Deliveries, replay
from ticdc_conformance.reference.errors import UsageError
from ticdc_conformance.suites.stream.plain import check_records
from ticdc_conformance.suites.stream.rules import CheckSettings

pytestmark = pytest.mark.kafka
confluent_kafka = pytest.importorskip("confluent_kafka")
STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "data" / "streams"
FIXTURE = STREAMS / "open.tiflow.replay.parquet"

RECORDS = sum(1 for _ in read_dump(FIXTURE))
"""The fixture's records, as the dump reader of the generators counts them."""


def _record(partition: int, offset: int, **fields: object) -> Record:
    base: dict[str, object] = {
        "topic": "t",
        "partition": partition,
        "offset": offset,
        "timestamp": 1_700_000_000_000 + offset,
        "key": b"k",
        "value": b"v%d" % offset,
    }
    return Record(**{**base, **fields})  # type: ignore[arg-type]


def _read(config: dict[str, str], topic: str, partitions: int) -> list[tuple[Any, ...]]:
    """Every record of ``topic`` as (partition, offset, timestamp, key, value, headers)."""
    consumer = confluent_kafka.Consumer(
        {**config, "group.id": "t", "log_level": 0, "enable.partition.eof": True}
    )
    consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(partitions)])
    found: list[tuple[Any, ...]] = []
    ended: set[int] = set()
    while len(ended) < partitions:
        for message in consumer.consume(100, 0.1):
            if message.error() is not None:
                ended.add(message.partition())
                continue
            found.append(
                (
                    message.partition(),
                    message.offset(),
                    message.timestamp(),
                    message.key(),
                    message.value(),
                    message.headers(),
                )
            )
    consumer.close()
    return sorted(found, key=lambda r: (r[0], r[1]))


@pytest.fixture
def config(ticdc_kafka_broker: broker.Broker) -> dict[str, str]:
    return {**ticdc_kafka_broker.config, "bootstrap.servers": ticdc_kafka_broker.bootstrap_servers}


def test_labels_give_the_partition_count_of_empty_partitions(
    tmp_path: Path, config: dict[str, str]
) -> None:
    write_dump([_record(0, 0)], tmp_path, labels={"settings": {"topic": "t", "partitions": 4}})
    result = replay(tmp_path, config, topic_map={"t": "four"})
    assert [(t.target, t.partitions, t.created) for t in result.topics] == [("four", 4, True)]


def test_records_keep_their_bytes_order_and_partition(
    tmp_path: Path, config: dict[str, str]
) -> None:
    records = [
        _record(1, 0, key=None, headers=(("h", b"\x00\xff"), ("h", b""), ("z", None))),
        _record(1, 1, value=None),  # a tombstone
        _record(0, 0, value=b"", key=b""),
        _record(1, 2, timestamp=0),  # no timestamp in the dump: the producer stamps it
        _record(0, 1, value=bytes(range(256)) * 3500),  # 896 000 bytes, below Kafka's 1 MiB
    ]
    write_dump(records, tmp_path)
    result = replay(tmp_path, config, topic_map={"t": "bytes"})
    assert (result.records, result.delivered, result.moved) == (5, 5, 0)
    found = _read(config, "bytes", 2)
    create_time = confluent_kafka.TIMESTAMP_CREATE_TIME
    by_place = {(r.partition, r.offset): r for r in records}
    for partition, offset, (kind, stamp), key, value, headers in found:
        record = by_place[partition, offset]
        assert (key, value) == (record.key, record.value)
        assert (headers or []) == list(record.headers)
        assert kind == create_time
        assert stamp == record.timestamp or (record.timestamp == 0 and stamp > 0)
    assert len(found) == 5


def test_an_unordered_dump_is_replayed_in_offset_order(
    tmp_path: Path, config: dict[str, str]
) -> None:
    from ticdc_conformance.generators.dump import write_records

    write_records([_record(0, 2), _record(0, 0), _record(0, 1)], tmp_path / "part-00000.parquet")
    assert not plan_dump(tmp_path).ordered
    replay(tmp_path, config, topic_map={"t": "sorted"})
    assert [(r[1], r[4]) for r in _read(config, "sorted", 1)] == [
        (0, b"v0"),
        (1, b"v1"),
        (2, b"v2"),
    ]


def test_a_topic_with_fewer_partitions_is_refused(config: dict[str, str]) -> None:
    admin = confluent_kafka.admin.AdminClient({**config, "log_level": 0})
    admin.create_topics([confluent_kafka.admin.NewTopic("two", 2)])["two"].result()
    with pytest.raises(UsageError, match=r"topic two has 2 partition\(s\); the dump needs 3"):
        replay(FIXTURE, config, topic_map={"ticdc-conformance": "two"})
    assert _read(config, "two", 2) == []  # nothing was sent


def test_a_second_replay_says_offsets_moved(config: dict[str, str]) -> None:
    first = replay(FIXTURE, config, topic_map={"ticdc-conformance": "twice"})
    assert (first.moved, first.first_moved) == (0, None)
    second = replay(FIXTURE, config, topic_map={"ticdc-conformance": "twice"})
    assert [t.created for t in second.topics] == [False]
    assert second.moved == RECORDS
    on_0 = sum(1 for r in read_dump(FIXTURE) if r.partition == 0)  # the first replay's records
    assert second.first_moved == f"twice/0: dump offset 0 is topic offset {on_0}"


@pytest.mark.parametrize(
    ("topic_map", "said"),
    [
        ({"absent": "x"}, r"names \['absent'\], which the dump lacks"),
        ({"ticdc-conformance": "no spaces"}, "no legal Kafka topic name"),
        ({"ticdc-conformance": ".."}, "no legal Kafka topic name"),
    ],
)
def test_bad_topic_maps(config: dict[str, str], topic_map: dict[str, str], said: str) -> None:
    with pytest.raises(UsageError, match=said):
        replay(FIXTURE, config, topic_map=topic_map)


@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_every_kafka_compression(config: dict[str, str], compression: str) -> None:
    topic = f"compressed-{compression}"
    result = replay(
        FIXTURE, config, topic_map={"ticdc-conformance": topic}, compression=compression
    )
    assert result.delivered == RECORDS

    expected = sorted((r.partition, r.offset, r.value) for r in read_dump(FIXTURE))
    assert [(r[0], r[1], r[4]) for r in _read(config, topic, 3)] == expected


def test_paced_replay(config: dict[str, str]) -> None:
    result = replay(FIXTURE, config, topic_map={"ticdc-conformance": "paced"}, rate=250)
    assert result.delivered == RECORDS
    assert result.seconds >= (RECORDS - 10) / 250  # at 250 a second, the first few at once


class KillBroker(Progress):
    """A progress line that kills the broker once the command has moved ``after`` records."""

    def __init__(self, pid: int, after: int = 0) -> None:
        super().__init__("moved", out=io.StringIO())
        self.pid, self.after, self.killed = pid, after, False

    def update(self, count: int) -> None:
        if not self.killed and count >= self.after:
            os.kill(self.pid, signal.SIGKILL)
            self.killed = True


@pytest.mark.slow
def test_a_broker_dying_midway_breaks_the_replay(tmp_path: Path) -> None:
    records = [_record(p, o, value=bytes(1000)) for p in range(2) for o in range(20_000)]
    write_dump(records, tmp_path)
    with broker.start("tansu") as running:
        assert running.broker.pid is not None
        config = {"bootstrap.servers": running.broker.bootstrap_servers}
        with pytest.raises(BrokerError, match=r"(no broker reachable|nothing from the cluster)"):
            replay(tmp_path, config, timeout=2, progress=KillBroker(running.broker.pid))
        assert running.exited() is not None


def test_a_record_the_producer_refuses_is_named(tmp_path: Path, config: dict[str, str]) -> None:
    write_dump([_record(0, 0), _record(0, 1, value=bytes(5000))], tmp_path)
    small = {**config, "message.max.bytes": "2000"}  # --config wins over replay's own limit
    with pytest.raises(UsageError, match=r"^t/0 offset 1: .*too large \(the producer's settings"):
        replay(tmp_path, small, topic_map={"t": "small"})


def test_delivery_reports_are_matched_to_the_records_sent_in_order() -> None:
    deliveries = _Deliveries()
    part = deliveries.partition("t", 0)
    part.sent += [pa.array([5, 6], pa.int64()), pa.array([7, 8], pa.int64())]
    timed_out = confluent_kafka.KafkaError(confluent_kafka.KafkaError._MSG_TIMED_OUT)
    for error, offset in [(None, 5), (timed_out, -1001), (None, 9), (None, 8)]:
        part(error, confluent_kafka.Message(offset=offset))  # -1001: librdkafka's no offset
    assert (deliveries.reported(), deliveries.failed()) == (4, 1)
    assert deliveries.first_failure() == "t/0: dump offset 6 failed: Local: Message timed out"
    assert deliveries.moved() == (1, "t/0: dump offset 7 is topic offset 9")


def test_a_multi_topic_dump_goes_through_the_broker_and_back(
    tmp_path: Path, config: dict[str, str]
) -> None:
    folder = routed_dump("open", messages=300)
    settings = read_labels(folder)["settings"]
    topics = sorted(settings["topics"])
    assert len(topics) == 3
    result = replay(folder, config)
    assert sorted(t.target for t in result.topics) == topics
    assert result.delivered == result.records
    assert result.moved == 0
    captured = capture(config, topics, tmp_path / "captured")
    assert captured.records == result.records

    def coordinates(path: Path) -> list[tuple[Any, ...]]:
        return sorted((r.topic, r.partition, r.offset, r.key, r.value) for r in read_dump(path))

    records = coordinates(tmp_path / "captured")
    assert records == coordinates(folder)
    assert check_records(records, CheckSettings.from_labels(settings)).findings == ()
