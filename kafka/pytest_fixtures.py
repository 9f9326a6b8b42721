"""The pytest plugin's Kafka fixtures: a broker for the session, topics loaded from dumps.

Loaded with the plugin (``suites/plugin.py``); nothing here imports a Kafka client until a
fixture runs. In a test of another repository, one line gives a loaded topic::

    def test_my_consumer(ticdc_kafka_topic):
        topic = ticdc_kafka_topic("stream.open.tiflow.replay")  # a shipped stream fixture
        run_my_consumer(topic.config, topic.name)               # bootstrap.servers and all

Fixtures:

* ``ticdc_kafka_broker`` (session): the ``Broker`` every test of the run shares; the test is
  skipped, with the reason, when no broker can run (no kafka extra, no Docker for ``kafka``);
* ``ticdc_kafka_topic`` (function): ``ticdc_kafka_topic(source, *, compression=None)`` replays
  ``source`` (a stream fixture id such as ``stream.open.tiflow.replay``, or a dump folder,
  Parquet file or glob) into a new topic named after it with a random suffix, with the dump's
  partitions, and returns a ``LoadedTopic``; the topics it created are deleted afterwards.

Options: ``--ticdc-kafka=auto|tansu|kafka|HOST:PORT`` (default ``auto``: Apache Kafka in
Docker where an engine answers, else the embedded Tansu; ``HOST:PORT`` an existing cluster;
also the environment variable ``TICDC_KAFKA``) and ``--ticdc-kafka-config NAME=VALUE``
(librdkafka settings of an existing cluster, repeatable). docs/kafka.md has the details.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ticdc_conformance.kafka.broker import Broker

__all__ = ["LoadedTopic", "ticdc_kafka_broker", "ticdc_kafka_topic"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadedTopic:
    """A topic holding a dump's records, as ``ticdc_kafka_topic`` loaded it."""

    topics: Mapping[str, str]
    """The dump's topic → the Kafka topic its records went to."""
    bootstrap_servers: str
    config: Mapping[str, str]
    """librdkafka settings a client needs: ``bootstrap.servers`` and any security options."""
    partitions: int
    records: int
    labels: Mapping[str, Any]
    """The dump's labels: settings, and the findings its faults must give."""

    @property
    def name(self) -> str:
        """The Kafka topic, for a dump of one topic."""
        if len(self.topics) != 1:
            raise ValueError(f"the dump had several topics: {dict(self.topics)}")
        return next(iter(self.topics.values()))


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--ticdc-kafka`` and ``--ticdc-kafka-config``."""
    group = parser.getgroup("ticdc", "TiCDC protocol conformance (ticdc-conformance)")
    group.addoption(
        "--ticdc-kafka",
        metavar="auto|tansu|kafka|HOST:PORT",
        default=os.environ.get("TICDC_KAFKA", "auto"),
        help="broker of the ticdc_kafka_* fixtures (default auto: Kafka in Docker "
        "where an engine answers, else the embedded Tansu)",
    )
    group.addoption(
        "--ticdc-kafka-config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a librdkafka setting for an existing cluster (repeatable)",
    )


@pytest.fixture(scope="session")
def ticdc_kafka_broker(request: pytest.FixtureRequest) -> Iterator[Broker]:
    """The run's broker: started on 127.0.0.1 and stopped at the end, or an existing one."""
    from ticdc_conformance.kafka import broker
    from ticdc_conformance.kafka.client import parse_config

    kind: str = request.config.getoption("--ticdc-kafka")
    config = parse_config(request.config.getoption("--ticdc-kafka-config"))
    if kind not in {"auto", "tansu", "kafka"}:
        yield broker.Broker.external(kind, config)
        return
    with contextlib.ExitStack() as stack:
        try:
            running = stack.enter_context(broker.start(kind))  # type: ignore[arg-type]
        except broker.BrokerUnavailableError as error:
            pytest.skip(f"no Kafka broker: {error}")
        yield running.broker


def _is_stream(source: str | Path) -> bool:
    return isinstance(source, str) and source.startswith("stream.")


def _source(source: str | Path) -> Path:
    """A stream fixture id's records file, or the dump path given."""
    if not _is_stream(source):
        return Path(source)
    from ticdc_conformance import fixtures

    for stream in fixtures.load_manifest()["streams"]:
        if stream["id"] == source:
            return fixtures.default_root() / str(stream["records"])
    raise ValueError(f"no stream fixture {source!r} (ids: `ticdc-conformance fixtures list`)")


@pytest.fixture
def ticdc_kafka_topic(
    ticdc_kafka_broker: Broker,
) -> Iterator[Callable[..., LoadedTopic]]:
    """A factory: ``ticdc_kafka_topic(source, *, compression=None)`` → ``LoadedTopic``."""
    from ticdc_conformance.kafka.client import confluent
    from ticdc_conformance.kafka.dump_reader import plan_dump
    from ticdc_conformance.kafka.replay import replay

    config = {
        **ticdc_kafka_broker.config,
        "bootstrap.servers": ticdc_kafka_broker.bootstrap_servers,
    }
    created: list[str] = []

    def load(source: str | Path, *, compression: str | None = None) -> LoadedTopic:
        path = _source(source)
        suffix = uuid.uuid4().hex[:8]
        plan = plan_dump(path)
        # a stream fixture's topic is named after the fixture: "open.tiflow.replay-1a2b3c4d"
        lone = _is_stream(source) and len(plan.partitions) == 1
        base = str(source).removeprefix("stream.") if lone else None
        mapping = {t: f"{base or t}-{suffix}" for t in plan.partitions}
        result = replay(path, config, topic_map=mapping, compression=compression)
        created.extend(t.target for t in result.topics if t.created)
        return LoadedTopic(
            topics=mapping,
            bootstrap_servers=ticdc_kafka_broker.bootstrap_servers,
            config=config,
            partitions=max(t.partitions for t in result.topics),
            records=result.delivered,
            labels=plan.labels,
        )

    yield load
    if created:
        admin = confluent().admin.AdminClient({**config, "log_level": 0})
        for future in admin.delete_topics(created, request_timeout=10).values():
            future.exception()  # a topic left behind is no test failure
