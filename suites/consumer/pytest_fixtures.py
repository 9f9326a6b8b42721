"""The pytest plugin's consumer fixture: the expected state of a stream, for a consumer's test.

Loaded with the plugin (``suites/plugin.py``). With the Kafka fixtures, a consumer author's
whole conformance test (docs/consumers.md, "In pytest")::

    from ticdc_conformance.suites.consumer import assert_consumer_conforms

    def test_my_consumer(ticdc_kafka_topic, ticdc_expected_state, tmp_path):
        stream = "stream.open.tiflow.replay"
        topic = ticdc_kafka_topic(stream)
        run_my_consumer(topic.config, topic.name, tables=tmp_path, log=tmp_path / "log.jsonl")
        assert_consumer_conforms(
            ticdc_expected_state(stream), actual=tmp_path, applied_log=tmp_path / "log.jsonl"
        )

``ticdc_expected_state(source, *, handle_keys=None)`` runs the reference consumer over
``source`` (a stream fixture id, or a dump folder or Parquet file) once per session and returns
its ``ExpectedState``. ``ticdc_postgres`` (session) is the DSN of a throwaway PostgreSQL on
127.0.0.1 (``suites/consumer/postgres.py``, the consumer extra), for a consumer that writes
one; the test is skipped, with the reason, where none can run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ticdc_conformance.suites.consumer.expected import ExpectedState

__all__ = ["ticdc_expected_state", "ticdc_postgres"]


@pytest.fixture(scope="session")
def ticdc_expected_state(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[..., ExpectedState]:
    """A factory: ``ticdc_expected_state(source, *, handle_keys=None)`` → ``ExpectedState``."""
    from ticdc_conformance.suites.consumer.expected import (
        read_expected_state,
        write_expected_state,
    )
    from ticdc_conformance.suites.consumer.job import consume_dump

    made: dict[str, ExpectedState] = {}

    def expected_state(
        source: str | Path, *, handle_keys: Mapping[tuple[str, str], Sequence[str]] | None = None
    ) -> ExpectedState:
        if str(source) not in made:
            protocol, consumed = consume_dump(str(source), None, handle_keys or {})
            folder = tmp_path_factory.mktemp("expected-state")
            write_expected_state(consumed, protocol, folder)
            made[str(source)] = read_expected_state(folder)
        return made[str(source)]

    return expected_state


@pytest.fixture(scope="session")
def ticdc_postgres(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A throwaway PostgreSQL for the session: its DSN (database ``postgres``)."""
    from ticdc_conformance.suites.consumer import postgres

    with contextlib.ExitStack() as stack:
        try:
            folder = tmp_path_factory.mktemp("postgres")
            dsn = stack.enter_context(postgres.running_postgres(folder))
        except postgres.PostgresUnavailableError as error:
            pytest.skip(f"no PostgreSQL: {error}")
        yield dsn
