"""Decoding one partition's messages in order, as a consumer does.

Most protocols decode each message on its own. Simple types a DML row by the schema an
earlier BOOTSTRAP or DDL announced (ground truth §6.6), so its messages go through one stateful
decoder, and a row whose schema never comes is held, then never typed. ``PartitionDecoder``
hides the difference; at the end ``unresolved`` names every row that was never typed, as a
``DecodeError`` at the index of the message that carried it, so that a tool accounts for
every message it read.

Values TiCDC cannot have written for their column type (``validity``) make a message invalid
like any other fault. A lenient decoder (``lenient=True``) decodes such a message anyway and
keeps each invalid value as a warning (``warnings``), a ``DecodeError`` naming the column,
its type and the value with its location (docs/errors.md, "Invalid values").

Given a ``ClaimCheck`` (the storage the caller reads, ``reference.claim_check``), a decoder
resolves every claim-check reference row to the full row its file stores; a file that cannot
be read or decoded is a ``DecodeError`` at the reference's message index. Without one, the
reference row is what the consumer gets (its ``claim_check_location`` says where the row is).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.claim_check import ClaimCheck, resolve
from ticdc_conformance.reference.compression import Compression
from ticdc_conformance.reference.decoded import DecodedEvent, DecodedRow
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.message import Message, SchemaCodec
from ticdc_conformance.reference.validation import InvalidValueError

__all__ = ["PartitionDecoder", "decode_leniently", "decode_messages"]


class PartitionDecoder:
    """Decodes the messages of one Kafka partition (or one case) in order."""

    def __init__(
        self,
        protocol: str,
        *,
        lenient: bool = False,
        compression: Compression = "none",
        claim_check: ClaimCheck | None = None,
    ) -> None:
        self.protocol = protocol
        self.claim_check = claim_check
        """Where claim-check references are resolved; ``None`` keeps the reference rows."""
        self.lenient = lenient
        self.compression: Compression = compression
        """The consumer's ``large-message-handle-compression`` (docs/rules/codec.md#compression)."""
        self.warnings: list[DecodeError] = []
        """Invalid values a lenient decoder decoded anyway, in message order."""
        codec = CODECS[protocol]
        self._stream = (
            codec.new_decoder(compression=compression) if isinstance(codec, SchemaCodec) else None
        )
        self._codec = codec

    def decode(self, message: Message, *, message_index: int = 0) -> Sequence[DecodedEvent]:
        """The events of ``message`` a consumer has now; raise only ``DecodeError``.

        Lenient: a message whose only faults are invalid values gives its events, and each
        invalid value is added to ``warnings``.
        """
        try:
            events = self._decode(message, message_index)
        except InvalidValueError as error:
            if not self.lenient:
                raise
            self.warnings.extend(error.findings)
            events = error.events
        if self.claim_check is None or not any(
            isinstance(e, DecodedRow) and e.claim_check_location for e in events
        ):
            return events
        return [self._resolved(e, message_index) for e in events]

    def _decode(self, message: Message, message_index: int) -> Sequence[DecodedEvent]:
        if self._stream is not None:
            return self._stream.feed(message, message_index=message_index)
        return self._codec.decode(
            message, message_index=message_index, compression=self.compression
        )

    def _resolved(self, event: DecodedEvent, message_index: int) -> DecodedEvent:
        """A claim-check reference row replaced by the row its file stores."""
        if not isinstance(event, DecodedRow) or self.claim_check is None:
            return event
        return resolve(
            self.protocol,
            event,
            self.claim_check,
            lambda stored: self._decode(stored, message_index),
            message_index=message_index,
        )

    def unresolved(self) -> list[DecodeError]:
        """Rows held back or rejected so far, each as an error at its message's index."""
        if self._stream is None:
            return []
        return [
            DecodeError(
                f"row not decoded: {row.reason}",
                protocol=self.protocol,
                message_index=row.message_index,
            )
            for row in (*self._stream.pending(), *self._stream.rejected())
        ]


def decode_messages(
    protocol: str,
    messages: Iterable[Message],
    *,
    compression: Compression = "none",
    claim_check: ClaimCheck | None = None,
) -> list[DecodedEvent]:
    """Every event of ``messages`` decoded in order; the first ``DecodeError`` is raised.

    A Simple row left untyped at the end is a ``DecodeError`` too; ``claim_check`` resolves
    claim-check references (``PartitionDecoder``).
    """
    decoder = PartitionDecoder(protocol, compression=compression, claim_check=claim_check)
    events = [e for i, m in enumerate(messages) for e in decoder.decode(m, message_index=i)]
    for error in decoder.unresolved():
        raise error
    return events


def decode_leniently(
    protocol: str, messages: Iterable[Message], *, compression: Compression = "none"
) -> tuple[list[DecodedEvent], list[DecodeError]]:
    """``decode_messages`` that decodes invalid values anyway: the events and the warnings."""
    decoder = PartitionDecoder(protocol, lenient=True, compression=compression)
    events = [e for i, m in enumerate(messages) for e in decoder.decode(m, message_index=i)]
    for error in decoder.unresolved():
        raise error
    return events, decoder.warnings
