"""The plugin's Kafka fixtures, as another repository's tests use them (through pytester)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ticdc_conformance.kafka.broker import Broker, docker_engine
from ticdc_conformance.kafka.pytest_fixtures import LoadedTopic

pytestmark = pytest.mark.kafka
pytest_plugins = ["pytester"]
confluent_kafka = pytest.importorskip("confluent_kafka")

CONSUMER_TEST = """
from confluent_kafka import Consumer, TopicPartition


def read_all(topic):
    consumer = Consumer({**topic.config, "group.id": "mine", "enable.partition.eof": True})
    consumer.assign([TopicPartition(topic.name, p, 0) for p in range(topic.partitions)])
    found, ended = [], set()
    while len(ended) < topic.partitions:
        for message in consumer.consume(100, 1):
            if message.error():
                ended.add(message.partition())
            else:
                found.append(message)
    consumer.close()
    return found


def test_my_consumer_reads_a_replayed_stream(ticdc_kafka_topic):
    topic = ticdc_kafka_topic("stream.open.tiflow.replay")
    assert topic.name.startswith("open.tiflow.replay-")
    from ticdc_conformance.generators.dump import read_dump
    from ticdc_conformance.suites.inputs import resolve_input

    dump, _ = resolve_input("stream.open.tiflow.replay")
    assert len(read_all(topic)) == topic.records == sum(1 for _ in read_dump(dump)) > 100
    [fault] = topic.labels["faults"]
    assert fault["kind"] == "replay"


def test_a_dump_folder(ticdc_kafka_topic, ticdc_kafka_broker, tmp_path):
    from ticdc_conformance.generators.dump import write_dump
    from ticdc_conformance.generators.simulator import Record

    write_dump([Record(topic="mine", partition=1, offset=0, timestamp=1, key=None,
                       value=b"x")], tmp_path)
    topic = ticdc_kafka_topic(tmp_path, compression="lz4")
    assert topic.name.startswith("mine-")
    assert topic.partitions == 2
    assert topic.bootstrap_servers == ticdc_kafka_broker.bootstrap_servers
    assert [m.value() for m in read_all(topic)] == [b"x"]
"""


def test_loading_the_plugin_imports_no_kafka_client() -> None:
    code = (
        "import sys, ticdc_conformance.suites.plugin, ticdc_conformance.kafka.pytest_fixtures; "
        "print(sorted(m for m in ('confluent_kafka', 'pyarrow', 'docker') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_a_consumer_test_gets_a_loaded_topic_in_one_line(
    pytester: pytest.Pytester, ticdc_kafka_broker: Broker
) -> None:
    """Against the existing cluster the option names: created topics are deleted afterwards."""
    pytester.makepyfile(test_consumer=CONSUMER_TEST)
    address = ticdc_kafka_broker.bootstrap_servers
    result = pytester.runpytest("-p", "no:cacheprovider", f"--ticdc-kafka={address}")
    result.assert_outcomes(passed=2)
    admin = confluent_kafka.admin.AdminClient({"bootstrap.servers": address, "log_level": 0})
    left = [t for t in admin.list_topics(timeout=10).topics if t.startswith(("open.", "mine-"))]
    assert left == []


def test_the_plugin_starts_a_broker_of_its_own(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_consumer=CONSUMER_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--ticdc-kafka=tansu", "-k", "stream")
    result.assert_outcomes(passed=1)


def test_a_broker_that_cannot_run_skips_with_the_reason(pytester: pytest.Pytester) -> None:
    if docker_engine() is None:
        pytest.skip("a Docker engine answers here: the kafka kind can run")
    pytester.makepyfile(test_consumer=CONSUMER_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", "--ticdc-kafka=kafka", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*no Kafka broker: *Docker engine*"])


def test_a_loaded_topic_of_several_topics_has_no_single_name() -> None:
    topic = LoadedTopic(
        topics={"a": "a-1", "b": "b-1"},
        bootstrap_servers="127.0.0.1:1",
        config={},
        partitions=1,
        records=2,
        labels={},
    )
    with pytest.raises(ValueError, match="several topics"):
        _ = topic.name
    assert (
        LoadedTopic(
            topics={"a": "a-1"}, bootstrap_servers="", config={}, partitions=1, records=0, labels={}
        ).name
        == "a-1"
    )


def test_an_unknown_stream_fixture_is_named(
    pytester: pytest.Pytester, ticdc_kafka_broker: Broker
) -> None:
    pytester.makepyfile(
        test_unknown="def test_it(ticdc_kafka_topic):\n"
        "    ticdc_kafka_topic('stream.open.tiflow.nothing')\n"
    )
    result = pytester.runpytest(
        "-p", "no:cacheprovider", f"--ticdc-kafka={ticdc_kafka_broker.bootstrap_servers}"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no stream fixture 'stream.open.tiflow.nothing'*"])
