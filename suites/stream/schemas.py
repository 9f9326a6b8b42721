"""What a Simple partition's schema messages say about its DMLs (ground truth §4.6, §6.6).

``SchemaWatch`` feeds one partition's messages to Simple's stateful decoder, which holds a
DML until a BOOTSTRAP or DDL gives the schema version it names, and reports, each at the DML's
own offset (``Unresolved``):

* ``schema-before-dml``: a held DML released by a later schema message. TiCDC queues a
  table's BOOTSTRAP before its first row (tiflow ``pkg/sink/codec/bootstraper.go``
  ``addEvent``, ``pkg/sink/codec/encoder_group.go``), to every partition of the topic by
  default, and writes a DDL, with its new schema, to every partition before any row after it;
  so on each partition a schema comes before the first DML using it. With
  ``send-bootstrap-to-all-partition=false`` a partition other than 0 gets no BOOTSTRAP at all:
  its DMLs wait for a DDL of their table, and only partition 0 is held to this rule.
* ``checksum``: a DML whose row checksum (``[integrity] integrity-check-level="correctness"``)
  does not match its decoded images (tiflow ``pkg/sink/codec/common/verify_checksum.go``,
  ``pkg/sink/codec/simple/decoder.go``); TiCDC's consumer stops at such a row.
* ``schema-resolvable``: a DML whose values do not fit the schema it named, once that arrived,
  or (``unresolved`` at the end) whose schema never arrived.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ticdc_conformance.reference import DecodedRow, DecodeError, Message
from ticdc_conformance.reference.decoded import DecodedEvent

__all__ = ["SchemaWatch", "Unresolved"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Unresolved:
    """A DML a rule reports: the rule, its offset, key and commit ts, and why."""

    rule: str
    offset: int
    key: bytes | None
    commit_ts: int | None
    detail: str


class SchemaWatch:
    """Simple's decoder over one partition, and the DMLs it held, released or rejected."""

    def __init__(
        self,
        codec: Any,  # noqa: ANN401 - Simple's codec module
        decoder: Any,  # noqa: ANN401 - Simple's stateful decoder
        *,
        ordered: bool,
        compression: str = "none",
    ) -> None:
        self._codec = codec
        self._compression = compression
        self.decoder = decoder
        self.ordered = ordered
        """Whether BOOTSTRAPs reach this partition (all, or partition 0): ``schema-before-dml``
        applies."""
        self._held: dict[int, tuple[bytes | None, int | None]] = {}
        """Offset → (key, commit ts) of every DML held and not yet reported."""
        self._rejections = 0

    def decode(self, message: Message, offset: int) -> list[DecodedEvent]:
        """The message's own events: none for a held DML, the schema event of a schema message.

        Rows a schema message releases belong to earlier offsets and are left out.
        """
        events = list(self.decoder.feed(message, message_index=offset))
        if not events:  # a DML held until its schema arrives, or rejected
            try:
                held = self._codec.decode(message, compression=self._compression)
                stamps = [e.commit_ts for e in held if e.commit_ts]
            except DecodeError:
                stamps = []
            self._held[offset] = (message.key, min(stamps) if stamps else None)
            return []
        if not isinstance(events[0], DecodedRow):
            return events[:1]
        return events

    def news(self, offset: int, events: Sequence[DecodedEvent]) -> Iterator[Unresolved]:
        """DMLs rejected since the last call, and those a schema message at ``offset`` released."""
        rejected = self.decoder.rejected()
        for pending in rejected[self._rejections :]:
            rule = "checksum" if pending.reason.startswith("checksum:") else "schema-resolvable"
            yield self._unresolved(rule, pending.message_index, pending.reason)
        self._rejections = len(rejected)
        if not self._held or not events or isinstance(events[0], DecodedRow):
            return
        still = {pending.message_index for pending in self.decoder.pending()}
        for index in sorted(set(self._held) - still):
            detail = f"its schema arrived later, at offset {offset}"
            late = self._unresolved("schema-before-dml", index, detail)
            if self.ordered:
                yield late

    def unresolved(self) -> Iterator[Unresolved]:
        """At the end: DMLs whose schema never arrived."""
        for pending in self.decoder.pending():
            yield self._unresolved("schema-resolvable", pending.message_index, pending.reason)

    def _unresolved(self, rule: str, offset: int, detail: str) -> Unresolved:
        key, ts = self._held.pop(offset, (None, None))
        return Unresolved(rule=rule, offset=offset, key=key, commit_ts=ts, detail=detail)
