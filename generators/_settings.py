"""The settings of a simulated changefeed and the items of a workload (``simulator``).

``StreamSettings`` holds what shapes a topic log: protocol, profile, topics and partitions,
dispatchers and routing rules (``generators/_topics.py``), encoder options and
``output-raw-change-event``; ``describe`` is the label sidecar's ``settings``
(docs/dump-format.md). A workload is ``Transaction``, ``DDLEvent`` and ``ResolvedEvent`` items.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ticdc_conformance.generators._topics import check_routes, router_of
from ticdc_conformance.reference import CODECS, Codec, simple
from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.events import DDLEvent, ResolvedEvent, RowChangedEvent
from ticdc_conformance.reference.routing import Router, RoutingRule
from ticdc_conformance.reference.tables import Profile

__all__ = [
    "RAW_CHANGE_EVENT",
    "StreamSettings",
    "Transaction",
    "WorkloadItem",
    "split_sink_options",
]

RAW_CHANGE_EVENT = "output-raw-change-event"
"""TiCDC's Kafka sink option (``[sink.kafka-config]``, tiflow and ticdc ``pkg/config/sink.go``)
that sends key-changing UPDATEs whole. It acts before any encoder, so every protocol has it."""


def split_sink_options(options: Mapping[str, str]) -> tuple[dict[str, str], bool]:
    """``options`` as (the encoder's options, ``output-raw-change-event``).

    ``ValueError`` when ``output-raw-change-event`` is neither ``true`` nor ``false``.
    """
    encoder = dict(options)
    raw = encoder.pop(RAW_CHANGE_EVENT, "false")
    if raw not in ("true", "false"):
        raise ValueError(f"{RAW_CHANGE_EVENT} takes true or false, got {raw!r}")
    return encoder, raw == "true"


@dataclass(frozen=True, slots=True, kw_only=True)
class Transaction:
    """The rows of one upstream transaction, all with its commit ts."""

    commit_ts: int
    rows: tuple[RowChangedEvent, ...]

    def __post_init__(self) -> None:
        if not self.rows:
            raise ValueError("a transaction has at least one row")
        if any(row.commit_ts != self.commit_ts for row in self.rows):
            raise ValueError("every row of a transaction has the transaction's commit ts")


WorkloadItem = Transaction | DDLEvent | ResolvedEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamSettings:
    """The TiCDC settings that shape a topic log."""

    protocol: str = "open"
    profile: Profile = "tiflow"
    topic: str = "ticdc-conformance"
    partitions: int = 3
    dispatcher: DispatchRule = field(default_factory=DispatchRule)
    options: tuple[tuple[str, str], ...] = ()
    """The protocol's encoder options as (TiCDC name, value) pairs (``max-batch-size``, …)."""
    output_raw_change_event: bool = False
    """``true`` sends key-changing UPDATEs whole instead of split (§6.5)."""
    routes: tuple[RoutingRule, ...] = ()
    """``[[sink.dispatchers]]`` in order; ``dispatcher`` is the last, implicit ``*.*`` rule's."""
    case_sensitive: bool = False
    """Whether the rules' matchers compare names as they are (``case-sensitive``)."""

    def __post_init__(self) -> None:
        if self.protocol not in CODECS:
            raise ValueError(f"unknown protocol {self.protocol!r}; known: {sorted(CODECS)}")
        if self.partitions <= 0:
            raise ValueError("a topic has at least one partition")
        check_routes(self.routes, self.profile)

    def router(self) -> Router:
        """The event router of these settings (``generators/_topics.py``)."""
        return router_of(
            self.topic, self.routes, self.dispatcher, case_sensitive=self.case_sensitive
        )

    @property
    def codec(self) -> Codec[Any]:
        """The reference codec of ``protocol``."""
        return CODECS[self.protocol]

    def describe(self) -> dict[str, object]:
        """The settings as JSON-ready data (the label sidecar's ``settings``)."""
        rule = self.dispatcher
        return {
            "protocol": self.protocol,
            "profile": self.profile,
            "topic": self.topic,
            "partitions": self.partitions,
            "dispatcher": {
                "partition": rule.partition,
                "index-name": rule.index_name,
                "columns": list(rule.columns),
            },
            "options": dict(self.options),
            "output-raw-change-event": self.output_raw_change_event,
            **self._bootstrap_settings(),
            **({"dispatchers": [r.config() for r in self.routes]} if self.routes else {}),
            **({"case-sensitive": True} if self.case_sensitive else {}),
        }

    def _bootstrap_settings(self) -> dict[str, object]:
        """Simple's BOOTSTRAP options as the codec reads them (TiCDC's defaults elsewhere)."""
        config = self.codec_config()
        if not isinstance(config, simple.Config):
            config = simple.Config()
        return {
            "send-bootstrap-interval-in-sec": config.send_bootstrap_interval_in_sec,
            "send-bootstrap-in-msg-count": config.send_bootstrap_in_msg_count,
            "send-bootstrap-to-all-partition": config.send_bootstrap_to_all_partition,
            "send-all-bootstrap-at-start": config.send_all_bootstrap_at_start,
        }

    def codec_config(self) -> object:
        """The codec's config for these settings (``EncodeError`` for bad options)."""
        return self.codec.config_from_options(dict(self.options), profile=self.profile)
