"""The claim-check file every protocol shares: ``{"key": base64|null, "value": base64|null}``.

TiCDC writes one such JSON object per oversized message under
``large-message-handle-option=claim-check`` (``pkg/sink/codec/common/message.go``,
``ClaimCheckMessage``, in pingcap/tiflow and pingcap/ticdc); each protocol's ``claim_check``
module parses the file its own way and hands the document here.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import NoReturn

from ticdc_conformance.reference.message import Message

__all__ = ["stored_message"]


def stored_message(document: object, fail: Callable[[str, tuple[str, ...]], NoReturn]) -> Message:
    """The message a parsed claim-check file holds; ``fail(reason, json_path)`` otherwise."""
    if type(document) is not dict or document.keys() != {"key", "value"}:
        fail("a claim-check file is an object with key and value", ())
    parts: dict[str, bytes | None] = {}
    for name in ("key", "value"):
        encoded = document[name]
        if encoded is None:
            parts[name] = None
            continue
        if type(encoded) is not str:
            fail("must be base64 text or null", (name,))
        try:
            parts[name] = base64.b64decode(encoded, validate=True)
        except ValueError as error:  # binascii.Error, or text that is not ASCII
            fail(f"invalid base64: {error}", (name,))
    return Message(key=parts["key"], value=parts["value"])
