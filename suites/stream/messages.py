"""The findings a partition's checker makes of a message as a whole, and how it reports them.

``MessageFindings`` is the part of ``PartitionChecker`` (``suites/stream/rules.py``) that
says what is wrong with a Kafka message before its events are judged one by one: it does not
decode (``undecodable``, and ``message-size`` whether or not it decodes), it is larger than
``max-message-bytes`` (``message-size``, with the smallest commit ts it carries), it holds
values TiCDC cannot have written (``invalid-value``: its events then come from the lenient
decode), its Simple schema announcements (``suites/stream/schemas.py``), its claim-check
references (``claim-check``: ``suites/stream/claim_checks.py``), and it is on a topic its
tables do not route to (``topic-routing``).

A checker reports ``Item``s: findings and broadcasts in the order it meets them, a watermark's
broadcast as its commit ts alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from ticdc_conformance.reference import DecodedRow, DecodeError
from ticdc_conformance.reference.decoded import DecodedEvent
from ticdc_conformance.reference.validation import InvalidValueError
from ticdc_conformance.suites.stream.catalog import Broadcast, Finding
from ticdc_conformance.suites.stream.claim_checks import ClaimChecks
from ticdc_conformance.suites.stream.schemas import SchemaWatch

__all__ = ["Item", "MessageFindings"]

_OVER = "over max-message-bytes"

Item = Finding | Broadcast | int
"""What ``PartitionChecker.check`` reports: a finding, a broadcast, or the commit ts of a
watermark the partition carried, which stands for its ``watermark-broadcast`` (a partition
carries very many: a plain number costs neither an object nor the garbage collector's time).
"""


class MessageFindings:
    """The findings of one partition's checker about messages as a whole."""

    topic: str
    partition: int
    undecodable: int
    _schemas: SchemaWatch | None
    _claim_checks: ClaimChecks

    def _lenient(self, error: InvalidValueError) -> list[DecodedEvent]:
        """A message's events decoded leniently, its values invalid."""
        events = list(error.events)
        if self._schemas is not None and events and not isinstance(events[0], DecodedRow):
            events = events[:1]  # rows released by a schema message belong to earlier offsets
        return events

    def _undecodable(
        self,
        offset: int,
        key: bytes | None,
        error: DecodeError,
        *,
        oversized: bool,
        out: list[Item],
    ) -> None:
        if oversized:
            out.append(self._finding("message-size", offset, key, None, _OVER))
        self.undecodable += 1
        out.append(self._finding("undecodable", offset, key, None, str(error)))

    def _noted(
        self,
        offset: int,
        key: bytes | None,
        events: Sequence[DecodedEvent],
        invalid: InvalidValueError | None,
        *,
        oversized: bool,
        out: list[Item],
    ) -> None:
        """A decoded message's size, schema and value findings, before its events' own."""
        if oversized:  # reported with the commit ts it carries, when the message decodes
            stamps = [e.commit_ts for e in events if e.commit_ts]
            out.append(self._finding("message-size", offset, key, min(stamps, default=None), _OVER))
        if self._schemas is not None:
            out.extend(
                self._finding(u.rule, u.offset, u.key, u.commit_ts, u.detail)
                for u in self._schemas.news(offset, events)
            )
        if invalid is not None:
            out.append(self._invalid_found(offset, key, events, invalid))

    def _invalid_found(
        self,
        offset: int,
        key: bytes | None,
        events: Sequence[DecodedEvent],
        error: InvalidValueError,
    ) -> Finding:
        stamps = [e.commit_ts for e in events if e.commit_ts]
        columns = sorted({getattr(f, "column", None) or "?" for f in error.findings})
        detail = f"columns {', '.join(columns)}: {error}"
        return self._finding("invalid-value", offset, key, min(stamps, default=None), detail)

    def _finding(
        self, rule: str, offset: int | None, key: bytes | None, ts: int | None, detail: str
    ) -> Finding:
        return Finding(
            rule=rule,
            topic=self.topic,
            partition=self.partition,
            offset=offset,
            key=key,
            commit_ts=ts,
            detail=detail,
        )

    def _routed(
        self,
        offset: int,
        key: bytes | None,
        wrong: str | None,
        ts: int | None,
        out: list[Item],
    ) -> None:
        if wrong is not None:
            out.append(self._finding("topic-routing", offset, key, ts, wrong))

    def _claim_checked(
        self, offset: int, key: bytes | None, rows: list[DecodedRow], out: list[Item]
    ) -> None:
        """The ``claim-check`` rule over a message's rows, one of which is a reference."""
        if (stored := self._claim_checks.problems(offset, rows)) is not None:
            out.append(self._finding("claim-check", offset, key, *stored))
