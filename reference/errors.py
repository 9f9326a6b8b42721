"""One error tree for the whole kit.

``ProtocolError`` is the root and is never raised itself. It splits by who was wrong:

* ``EncodeError``: the caller's change events cannot be encoded (a value that does not fit its
  column type, an option combination TiCDC rejects, a row too large for ``max-message-bytes``).
* ``DecodeError``: the bytes are not a valid message of the protocol. Every ``DecodeError``
  names the protocol, the message index, the part (``key`` or ``value``) and a location: a byte
  ``offset`` inside that part, a JSON ``path``, or both when JSON sits inside a binary frame
  (Open Protocol).
* ``FormError``: a JSON document of the kit's own forms (change events, decoded events, message
  lines) is malformed; it carries the JSON path and the line number when known.
* ``UsageError``: a command or tool was given options, arguments or files it cannot run with.
* ``RunBrokenError``: the run itself cannot go on, because a program or service it drives
  failed (a testee that cannot start, a broker that went away).

A JSON ``path`` is a tuple of reference tokens (member names and array indexes); it is shown
as a JSON Pointer (``pointer``, and in the error's text), ``/`` for the whole document.

Every class also derives from ``ValueError`` so that generic callers keep working.

``ExitCode`` is the one set of exit statuses every command of the kit uses; each error class
names the status it ends a command with (``exit_code``).
"""

from __future__ import annotations

from enum import IntEnum
from typing import ClassVar, Literal

from ticdc_conformance.reference.jsondoc import Path, pointer

__all__ = [
    "DecodeError",
    "EncodeError",
    "ExitCode",
    "FormError",
    "Part",
    "ProtocolError",
    "RunBrokenError",
    "UsageError",
]

Part = Literal["key", "value"]


class ExitCode(IntEnum):
    """The exit statuses of every command (README, docs/errors.md)."""

    OK = 0
    """Success: every check passed, or the command did what it was asked."""
    FAILURE = 1
    """A conformance failure: invalid input, events that cannot be encoded, findings."""
    USAGE = 2
    """Options, arguments or files the command cannot run with."""
    BROKEN = 3
    """The run itself broke: a bug in the kit, or a component (Spark, a broker) failing."""
    INTERRUPTED = 130
    """Stopped by the user (Ctrl-C), as shells report SIGINT."""


class ProtocolError(ValueError):
    """Root of the kit's errors; catch this to catch them all."""

    exit_code: ClassVar[ExitCode] = ExitCode.FAILURE
    """The status a command ends with when this error stops it."""

    def __init__(self, reason: str) -> None:
        if type(self) is ProtocolError:
            msg = "ProtocolError is abstract: raise one of its subclasses"
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
        path: Path | None = None,
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
        if self.pointer is not None:
            where.append(f"at {self.pointer or '/'}")
        return f"{self.protocol}: {', '.join(where)}: {self.reason}"

    @property
    def pointer(self) -> str | None:
        """``path`` as a JSON Pointer (``""`` for the whole document), ``None`` without one."""
        return None if self.path is None else pointer(self.path)


class FormError(ProtocolError):
    """A document of the kit's JSON forms is malformed."""

    def __init__(self, reason: str, *, path: Path = (), line: int | None = None) -> None:
        super().__init__(reason)
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = "" if self.line is None else f"line {self.line}, "
        return f"{where}at {self.pointer or '/'}: {self.reason}"

    @property
    def pointer(self) -> str:
        """``path`` as a JSON Pointer (``""`` for the whole document)."""
        return pointer(self.path)


class UsageError(ProtocolError):
    """A command was given options, arguments or files it cannot run with."""

    exit_code = ExitCode.USAGE


class RunBrokenError(ProtocolError):
    """The run cannot go on: a program or service it drives failed."""

    exit_code = ExitCode.BROKEN

    def __str__(self) -> str:
        return f"the run broke: {self.reason}"
