"""Open Protocol claim-check files: the stored message back from its file (ground truth §1.5).

Under ``large-message-handle-option=claim-check`` TiCDC stores an oversized row's single-row
message as ``{"key": base64, "value": base64}`` (either may be null) and sends a
handle-key-only row whose key names the file (``ccl``). ``read_claim_check`` returns the
stored message, ready for ``decode``.
"""

from __future__ import annotations

from ticdc_conformance.reference._claim_check import stored_message
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.open_protocol._decode import Entry

__all__ = ["read_claim_check"]


def read_claim_check(content: bytes, *, message_index: int = 0) -> Message:
    """The original message from a claim-check file; raise only ``DecodeError``."""
    entry = Entry("value", 0, message_index)
    return stored_message(entry.parse(content), lambda reason, path: entry.fail(reason, *path))
