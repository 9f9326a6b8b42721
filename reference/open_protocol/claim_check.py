"""Open Protocol claim-check files: the stored message back from its file (ground truth §1.5).

Under ``large-message-handle-option=claim-check`` TiCDC stores an oversized row's single-row
message as ``{"key": base64, "value": base64}`` (either may be null) and sends a
handle-key-only row whose key names the file (``ccl``). ``read_claim_check`` returns the
stored message, ready for ``decode``.
"""

from __future__ import annotations

import base64
import binascii

from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.open_protocol._decode import Entry

__all__ = ["read_claim_check"]


def read_claim_check(content: bytes, *, message_index: int = 0) -> Message:
    """The original message from a claim-check file; raise only ``DecodeError``."""
    entry = Entry("value", 0, message_index)
    document = entry.parse(content)
    if type(document) is not dict or document.keys() != {"key", "value"}:
        entry.fail("a claim-check file is an object with key and value")
    parts: dict[str, bytes | None] = {}
    for name in ("key", "value"):
        encoded = document[name]
        if encoded is None:
            parts[name] = None
            continue
        if type(encoded) is not str:
            entry.fail("must be base64 text or null", name)
        try:
            parts[name] = base64.b64decode(encoded, validate=True)
        except binascii.Error as error:
            entry.fail(f"invalid base64: {error}", name)
    return Message(key=parts["key"], value=parts["value"])
