"""One error tree for the whole kit.

``ProtocolError`` is the root and is never raised itself. It splits by who was wrong:

* ``EncodeError``: the caller's change events cannot be encoded (a value that does not fit its
  column type, an option combination TiCDC rejects, a row too large for ``max-message-bytes``).
* ``DecodeError``: the bytes are not a valid message of the protocol. Every ``DecodeError``
  names the protocol, the message index, the part (``key`` or ``value``) and a location: a byte
  ``offset`` inside that part, a JSON ``path`` (JSON Pointer), or both when JSON sits inside a
  binary frame (Open Protocol).
* ``FormError``: a JSON document of the kit's own forms (change events, decoded events, message
  lines) is malformed; it carries the JSON path and the line number when known.

Every class also derives from ``ValueError`` so that generic callers keep working.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["DecodeError", "EncodeError", "FormError", "Part", "ProtocolError"]

Part = Literal["key", "value"]


class ProtocolError(ValueError):
    """Root of the kit's errors; catch this to catch them all."""

    def __init__(self, reason: str) -> None:
        if type(self) is ProtocolError:
            msg = "ProtocolError is abstract: raise EncodeError, DecodeError or FormError"
            raise TypeError(msg)
        super().__init__(reason)
        self.reason = reason


class EncodeError(ProtocolError):
    """The change events cannot be encoded as the protocol and options require."""

    def __init__(self, reason: str, *, protocol: str, event_index: int | None = None) -> None:
        super().__init__(reason)
        self.protocol = protocol
        self.event_index = event_index

    def __str__(self) -> str:
        where = "" if self.event_index is None else f"event {self.event_index}: "
        return f"{self.protocol}: {where}{self.reason}"


class DecodeError(ProtocolError):
    """The bytes are not a valid message; the attributes say where."""

    def __init__(
        self,
        reason: str,
        *,
        protocol: str,
        part: Part | None = None,
        offset: int | None = None,
        path: str | None = None,
        message_index: int = 0,
    ) -> None:
        super().__init__(reason)
        self.protocol = protocol
        self.part = part
        self.offset = offset
        self.path = path
        self.message_index = message_index

    def __str__(self) -> str:
        where = [f"message {self.message_index}"]
        if self.part is not None:
            where.append(self.part if self.offset is None else f"{self.part} byte {self.offset}")
        if self.path is not None:
            where.append(f"at {self.path or '/'}")
        return f"{self.protocol}: {', '.join(where)}: {self.reason}"


class FormError(ProtocolError):
    """A document of the kit's JSON forms is malformed."""

    def __init__(self, reason: str, *, path: str = "", line: int | None = None) -> None:
        super().__init__(reason)
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = "" if self.line is None else f"line {self.line}, "
        return f"{where}at {self.path or '/'}: {self.reason}"
