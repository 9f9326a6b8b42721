"""Simple claim-check files: the full message a large-message ``claimCheckLocation`` names."""

from __future__ import annotations

import base64
import binascii
import json

from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.message import Message

__all__ = ["read_claim_check"]


def read_claim_check(content: bytes, *, raw_value: bool = False, message_index: int = 0) -> Message:
    """The full message from a claim-check file, ``{"key": null, "value": base64}`` (§1.5).

    ``raw_value`` (``claim-check-raw-value=true``): the file is the value bytes alone
    (``pkg/sink/kafka/claimcheck/claim_check.go`` ``WriteMessage`` in pingcap/tiflow).
    """
    if raw_value:
        return Message(key=None, value=content)
    try:
        document = json.loads(content)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise DecodeError(
            f"not JSON: {error}",
            protocol="simple",
            part="value",
            offset=0,
            message_index=message_index,
        ) from None
    if type(document) is not dict or document.keys() != {"key", "value"}:
        raise DecodeError(
            "a claim-check file is an object with key and value",
            protocol="simple",
            part="value",
            path=(),
            message_index=message_index,
        )
    parts: dict[str, bytes | None] = {}
    for name in ("key", "value"):
        encoded = document[name]
        try:
            parts[name] = None if encoded is None else base64.b64decode(encoded, validate=True)
        except (TypeError, binascii.Error, ValueError):
            raise DecodeError(
                "must be base64 text or null",
                protocol="simple",
                part="value",
                path=(name,),
                message_index=message_index,
            ) from None
    return Message(key=parts["key"], value=parts["value"])
