"""Canal-JSON claim-check files: the stored message back from its file (docs/canal-json.md).

Under ``large-message-handle-option=claim-check`` TiCDC stores an oversized row's full value as
``{"key": null, "value": base64}``, or as the value bytes alone with
``claim-check-raw-value=true``, and sends a handle-key-only row naming the file
(``_tidb.claimCheckLocation``). ``read_claim_check`` returns the stored message, ready for
``decode``; it raises only ``DecodeError``.
"""

from __future__ import annotations

import json
from typing import NoReturn

from ticdc_conformance.reference._claim_check import stored_message
from ticdc_conformance.reference.canal_json._config import PROTOCOL
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.message import Message

__all__ = ["read_claim_check"]


def read_claim_check(content: bytes, *, raw_value: bool = False, message_index: int = 0) -> Message:
    """The stored message of a claim-check file (``raw_value``: the file is the value)."""
    if raw_value:
        return Message(key=None, value=content)

    def fail(reason: str, path: tuple[str, ...]) -> NoReturn:
        raise DecodeError(
            reason, protocol=PROTOCOL, part="value", path=path, message_index=message_index
        )

    try:
        document = json.loads(content)
    except (ValueError, RecursionError) as error:
        fail(f"a claim-check file is JSON: {error}", ())
    return stored_message(document, fail)
