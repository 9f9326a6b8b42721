"""The claim-check file every protocol shares: ``{"key": base64|null, "value": base64|null}``.

TiCDC writes one such JSON object per oversized message under
``large-message-handle-option=claim-check`` (``pkg/sink/codec/common/message.go``,
``ClaimCheckMessage``, in pingcap/tiflow and pingcap/ticdc); each protocol's ``claim_check``
module parses the file its own way and hands the document here.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Callable
from typing import NoReturn

from ticdc_conformance.reference.message import ClaimCheckObject, Message

__all__ = ["claim_check_file", "stored_message"]


def claim_check_file(
    key: bytes | None,
    value: bytes,
    *,
    storage_uri: str,
    raw_value: bool,
    names: uuid.UUID,
) -> ClaimCheckObject:
    """The file TiCDC stores for an oversized message, and its location (§1.5).

    ``{"key": base64|null, "value": base64}``, or with ``claim-check-raw-value`` the value bytes
    alone; the location is ``storage_uri`` without its trailing ``/``, ``/``, the file name.
    TiCDC names the file with a random UUID; the reference derives one from the content in the
    protocol's namespace ``names``, so that its output is reproducible.
    """
    content = (
        value
        if raw_value
        else json.dumps(
            {
                "key": None if key is None else base64.b64encode(key).decode(),
                "value": base64.b64encode(value).decode(),
            },
            separators=(",", ":"),
        ).encode()
    )
    name = uuid.uuid5(names, hashlib.sha256(content).hexdigest())
    return ClaimCheckObject(location=f"{storage_uri.rstrip('/')}/{name}.json", content=content)


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
