"""The commands broker, replay and capture: what they print and the statuses they end with."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.dump import read_dump
from ticdc_conformance.kafka.broker import Broker

pytestmark = pytest.mark.kafka
pytest.importorskip("confluent_kafka")
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures/data/streams/open.tiflow.replay.parquet"

RECORDS = sum(1 for _ in read_dump(FIXTURE))
"""The fixture's records, as the dump reader of the generators counts them."""


def _broker_process() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "ticdc_conformance.cli", "broker", "--kind", "tansu"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def replay(address: str, *extra: str) -> int:
    """``ticdc-conformance replay`` of the fixture into the cluster at ``address``."""
    return main(["replay", "--input", str(FIXTURE), "--bootstrap-servers", address, *extra])


def test_broker_prints_its_address_and_stops_on_sigterm() -> None:
    process, address = _broker_process()
    try:
        assert re.fullmatch(r"127\.0\.0\.1:\d+", address)
        assert replay(address, "--quiet") == 0
    finally:
        process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 130
    _, err = process.communicate()
    assert "known gap: isolation.level=read_committed is not honoured" in err
    pid = int(re.findall(r"pid (\d+)", err)[0])
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_broker_that_dies_ends_the_command_with_status_3() -> None:
    process, _ = _broker_process()
    assert process.stderr is not None
    pid = int(re.findall(r"pid (\d+)", process.stderr.readline())[0])
    os.kill(pid, signal.SIGKILL)
    assert process.wait(30) == 3
    assert "error: the run broke: the broker stopped: Tansu (pid" in process.communicate()[1]


def test_replay_then_capture(
    ticdc_kafka_broker: Broker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address = ticdc_kafka_broker.bootstrap_servers
    assert replay(address, "--topic-map", "ticdc-conformance=cli", "--compression", "gzip") == 0
    err = capsys.readouterr().err
    assert "ticdc-conformance -> topic cli (3 partitions, created)" in err
    assert f"{RECORDS} read = {RECORDS} delivered; offsets as in the dump" in err
    out = str(tmp_path / "dump")
    codec = ["--parquet-compression", "zstd"]
    assert (
        main(["capture", "--bootstrap-servers", address, "--topic", "cli", "--out", out, *codec])
        == 0
    )
    err = capsys.readouterr().err
    assert re.search(
        rf"captured cli \(3 partitions\) into .* {RECORDS} read = {RECORDS} written$", err.strip()
    )
    assert sum(1 for _ in read_dump(tmp_path / "dump")) == RECORDS
    value = pq.read_metadata(tmp_path / "dump" / "part-00000.parquet").row_group(0).column(5)
    assert (value.path_in_schema, value.compression) == ("value", "ZSTD")


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["replay", "--config", "nonsense"], "--config #1: a librdkafka setting is NAME=VALUE"),
        (["replay", "--topic-map", "a"], "--topic-map takes OLD=NEW"),
        (["replay", "--timeout", "0"], "--timeout must be positive"),
        (["replay", "--rate", "-1"], "--rate must be positive"),
        (["replay", "--config", "no.such.setting=1"], "librdkafka refuses the settings"),
        (["capture", "--topic", "t", "--idle", "3"], "--idle and --max-records stop a --follow"),
        (["capture", "--topic", "absent", "--out", "X"], "the cluster has no topic absent"),
        (["capture", "--topic", "t", "--from-offsets", "x"], "[TOPIC:]PARTITION=OFFSET"),
    ],
)
def test_usage_errors_end_with_status_2(
    ticdc_kafka_broker: Broker,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    said: str,
) -> None:
    command, *rest = arguments
    where = ["--input", str(FIXTURE)] if command == "replay" else []
    if command == "capture" and "--out" not in rest:
        where = ["--out", str(tmp_path / "dump")]
    rest = [str(tmp_path / "dump") if a == "X" else a for a in rest]
    code = main(
        [command, "--bootstrap-servers", ticdc_kafka_broker.bootstrap_servers, *where, *rest]
    )
    assert code == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "dump").exists()


def test_a_topic_with_fewer_partitions_is_refused_with_status_2(
    ticdc_kafka_broker: Broker, capsys: pytest.CaptureFixture[str]
) -> None:
    from confluent_kafka.admin import AdminClient
    from confluent_kafka.cimpl import NewTopic

    address = ticdc_kafka_broker.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": address, "log_level": 0})
    admin.create_topics([NewTopic("narrow", 2)])["narrow"].result()
    assert replay(address, "--topic-map", "ticdc-conformance=narrow") == 2
    assert capsys.readouterr().err == (
        "error: topic narrow has 2 partition(s); the dump needs 3 (partitions 0-2): replay into "
        "a new topic (--topic-map) or add partitions\n"
    )


def test_an_unreachable_cluster_ends_with_status_3(capsys: pytest.CaptureFixture[str]) -> None:
    assert replay("127.0.0.1:1", "--timeout", "1") == 3
    assert "error: the run broke: cannot list the cluster's topics" in capsys.readouterr().err


def test_secrets_are_never_printed(
    ticdc_kafka_broker: Broker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """SASL against a broker that has none: the run fails, and says so without the password."""
    secret = tmp_path / "client.properties"
    secret.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.username=alice\nsasl.password=s3cret-Pa55\n"
    )
    code = main(
        [
            "capture",
            "--bootstrap-servers",
            ticdc_kafka_broker.bootstrap_servers,
            "--config-file",
            str(secret),
            "--topic",
            "t",
            "--out",
            str(tmp_path / "dump"),
            "--timeout",
            "3",
        ]
    )
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("error: ")
    assert "s3cret-Pa55" not in err
    assert not (tmp_path / "dump").exists()
