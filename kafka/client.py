"""librdkafka settings for ``replay`` and ``capture``, and how a broken cluster is told.

Rules:

* settings come from ``--config NAME=VALUE`` and ``--config-file FILE`` (one ``NAME=VALUE`` a
  line, ``#`` comments), handed to librdkafka unchanged, so SASL and TLS work as for any
  librdkafka client (its CONFIGURATION.md names them). A file keeps secrets out of the process
  list. The settings a command relies on for its accounting (``RESERVED``) cannot be set;
* no value is ever printed, logged or written into a dump: text shown to a user passes through
  ``redact``, which replaces every value of a secret-looking setting (``is_secret``);
* a cluster that cannot be reached, refuses the credentials or goes away midway ends the run
  with ``BrokerError`` (exit status 3): at once for an authentication or fatal error, after
  ``timeout`` seconds without progress for anything else (librdkafka retries on its own
  until then).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from ticdc_conformance.reference.errors import RunBrokenError, UsageError

if TYPE_CHECKING:
    from confluent_kafka import KafkaError

T = TypeVar("T")

__all__ = [
    "COMPRESSIONS",
    "PARQUET_CODECS",
    "RESERVED",
    "BrokerError",
    "Watch",
    "confluent",
    "is_secret",
    "parse_config",
    "redact",
]

COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")
"""Kafka's ``compression.type`` values: TiCDC's producer may use any of them."""
PARQUET_CODECS = ("none", "snappy", "zstd", "gzip")
"""The codecs ``capture`` may write a dump's Parquet pages with (``none`` unless asked): every
Parquet reader, Spark's and pyarrow's, reads them (docs/dump-format.md)."""
RESERVED = frozenset(
    {
        "enable.partition.eof",
        "enable.auto.commit",
        "enable.auto.offset.store",
        "group.id",
        "error_cb",
        "on_delivery",
        "logger",
    }
)
"""Settings ``capture`` and ``replay`` set themselves: their accounting depends on them."""

_SECRET_WORDS = (
    "password",
    "secret",
    "token",
    "jaas",
    "credential",
    "private",
    "key.pem",
    "ssl.key",
    "keystore",
)
"""Parts of librdkafka setting names whose values are secrets (``sasl.password``,
``sasl.oauthbearer.client.secret``, ``ssl.key.password``, ``ssl.keystore.password``, ...)."""

_IMMEDIATE = {
    "_AUTHENTICATION",
    "SASL_AUTHENTICATION_FAILED",
    "_SSL",
    "TOPIC_AUTHORIZATION_FAILED",
    "CLUSTER_AUTHORIZATION_FAILED",
    "GROUP_AUTHORIZATION_FAILED",
    "_INVALID_ARG",
    "_UNKNOWN_PROTOCOL",
}
"""librdkafka errors no retry mends: wrong credentials, certificates or permissions."""


class BrokerError(RunBrokenError):
    """The cluster failed the run: unreachable, refusing, or gone midway (exit status 3)."""


def confluent() -> ModuleType:
    """``confluent_kafka``, or a ``UsageError`` naming the extra that brings it."""
    try:
        import confluent_kafka.admin
    except ImportError as error:
        raise UsageError(f"this command needs the kafka extra (confluent-kafka): {error}") from None
    return confluent_kafka


def is_secret(name: str) -> bool:
    """Whether the value of the librdkafka setting ``name`` must never be shown."""
    return any(word in name.lower() for word in _SECRET_WORDS)


def redact(text: str, config: Mapping[str, str]) -> str:
    """``text`` with every secret setting's value in ``config`` replaced by ``***``."""
    for name, value in config.items():
        if value and is_secret(name):
            text = text.replace(value, "***")
    return text


def _pair(text: str, where: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or not name or any(c.isspace() for c in name):
        raise UsageError(f"{where}: a librdkafka setting is NAME=VALUE")  # no text: a secret?
    if name in RESERVED:
        raise UsageError(f"{where}: {name} is set by the command itself")
    return name, value.strip()


def parse_config(pairs: Iterable[str] = (), files: Iterable[str | Path] = ()) -> dict[str, str]:
    """The librdkafka settings from ``--config-file`` files, then ``--config`` pairs (which win).

    A malformed entry raises ``UsageError`` naming where it is, never its value.
    """
    config: dict[str, str] = {}
    for file in files:
        try:
            lines = Path(file).read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise UsageError(f"--config-file {file}: {error.strerror}") from None
        for number, line in enumerate(lines, start=1):
            if line.strip() and not line.lstrip().startswith("#"):
                name, value = _pair(line, f"{file} line {number}")
                config[name] = value
    for number, pair in enumerate(pairs, start=1):
        name, value = _pair(pair, f"--config #{number}")
        config[name] = value
    return config


class Watch:
    """librdkafka's error callback, and the verdict on whether the cluster failed the run.

    ``progress()`` is called whenever records move; ``check()`` raises ``BrokerError`` after a
    fatal or authentication error, when every broker has been unreachable for ``timeout``
    seconds, or (unless idling is expected) when nothing moved for ``timeout`` seconds.
    """

    __slots__ = ("_config", "_down", "_fatal", "_last", "_moved", "timeout")

    def __init__(self, config: Mapping[str, str], timeout: float) -> None:
        self._config = config
        self.timeout = timeout
        self._fatal: str | None = None
        self._last: str | None = None
        self._down: float | None = None
        self._moved = time.monotonic()

    def __call__(self, error: KafkaError) -> None:
        """The ``error_cb`` of librdkafka: keep what the user must be told."""
        text = redact(f"{error.name()}: {error.str()}", self._config)
        if error.fatal() or error.name() in _IMMEDIATE:
            self._fatal = text
        if error.name() == "_ALL_BROKERS_DOWN" and self._down is None:
            self._down = time.monotonic()
        self._last = text

    @property
    def down(self) -> bool:
        """Whether librdkafka said every broker is unreachable, and nothing moved since."""
        return self._down is not None

    def client(
        self, kind: Callable[[dict[str, object]], T], fixed: Mapping[str, object] | None = None
    ) -> T:
        """A librdkafka client of ``kind`` with ``settings(fixed)``; ``UsageError`` if refused."""
        try:
            return kind(self.settings(fixed))
        except (confluent().KafkaException, ValueError, TypeError) as error:
            raise UsageError(
                redact(f"librdkafka refuses the settings: {error}", self._config)
            ) from None

    def settings(self, fixed: Mapping[str, object] | None = None) -> dict[str, object]:
        """A client's settings: the user's, then the command's own ``fixed``, then this watch.

        librdkafka's own log lines are off unless the user asked for them (``debug``,
        ``log_level``): errors reach the user through this watch, in the command's words.
        """
        quiet = {} if {"debug", "log_level"} & set(self._config) else {"log_level": 0}
        return {**quiet, **self._config, **(fixed or {}), "error_cb": self}

    def progress(self) -> None:
        """Records moved: the clock of ``timeout`` starts again."""
        self._moved = time.monotonic()
        self._down = None

    def check(self, doing: str, *, idle_ok: bool = False) -> None:
        """Raise ``BrokerError`` if the cluster failed the run while ``doing``.

        ``idle_ok``: nothing moving is no failure by itself (a capture following a topic).
        """
        if self._fatal is not None:
            raise BrokerError(f"the cluster refused the run: {self._fatal}")
        now = time.monotonic()
        said = f" (last error: {self._last})" if self._last else ""
        if self._down is not None and now - self._down > self.timeout:
            raise BrokerError(
                f"no broker reachable for {now - self._down:.0f} s while {doing}{said}"
            )
        if not idle_ok and now - self._moved > self.timeout:
            raise BrokerError(
                f"nothing from the cluster for {now - self._moved:.0f} s while {doing}{said}"
            )

    def fail(self, what: str, error: BaseException, client: Any = None) -> BrokerError:  # noqa: ANN401 - a confluent-kafka client of any kind
        """A ``BrokerError`` for a call of ``client`` that raised ``error``, redacted.

        It names librdkafka's error and the last one its callback reported (the cause, often:
        a refused connection, a failed TLS or SASL handshake); ``client``'s pending callbacks
        are served first.
        """
        if client is not None:
            client.poll(0)
        said = error.args[0].str() if error.args and hasattr(error.args[0], "str") else error
        last = f" (last error: {self._last})" if self._last else ""
        return BrokerError(redact(f"{what}: {said}{last}", self._config))
