"""Canal-JSON claim-check files: the stored message back from its file (docs/canal-json.md).

Under ``large-message-handle-option=claim-check`` TiCDC stores an oversized row's full value as
``{"key": null, "value": base64}``, or as the value bytes alone with
``claim-check-raw-value=true``, and sends a handle-key-only row naming the file
(``_tidb.claimCheckLocation``). ``read_claim_check`` returns the stored message, ready for
``decode``; it raises only ``DecodeError``.
"""

from __future__ import annotations

import base64
import binascii
import json

from ticdc_conformance.reference.canal_json._config import PROTOCOL
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.message import Message

__all__ = ["read_claim_check"]


def read_claim_check(content: bytes, *, raw_value: bool = False, message_index: int = 0) -> Message:
    """The stored message of a claim-check file (``raw_value``: the file is the value)."""
    if raw_value:
        return Message(key=None, value=content)

    def fail(reason: str, path: tuple[str, ...] = ()) -> DecodeError:
        return DecodeError(
            reason, protocol=PROTOCOL, part="value", path=path, message_index=message_index
        )

    try:
        document = json.loads(content)
    except (ValueError, RecursionError) as error:
        raise fail(f"a claim-check file is JSON: {error}") from None
    if type(document) is not dict or document.keys() != {"key", "value"}:
        raise fail("a claim-check file is an object with key and value")
    parts: dict[str, bytes | None] = {}
    for name in ("key", "value"):
        encoded = document[name]
        if encoded is None:
            parts[name] = None
            continue
        if type(encoded) is not str:
            raise fail("must be base64 text or null", (name,))
        try:
            parts[name] = base64.b64decode(encoded, validate=True)
        except binascii.Error as error:
            raise fail(f"invalid base64: {error}", (name,)) from None
    return Message(key=parts["key"], value=parts["value"])
