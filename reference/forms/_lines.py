"""JSON Lines input: each line's document with its number, or why the line is not JSON.

A line is read at most ``max_line_bytes`` at a time: a longer one is skipped in chunks and
reported (``FormError`` naming the line and the limit), so one huge line never holds more
than the limit in memory, and the lines after it are still read. ``message_line_limit`` and
``change_line_limit`` turn TiCDC's ``max-message-bytes`` (default 10 MiB) into the longest
message line and change-event line that can hold a message of that size.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import IO

from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.events import ChangeEvent
from ticdc_conformance.reference.forms._change import read_change_event
from ticdc_conformance.reference.forms._decoded import read_message
from ticdc_conformance.reference.message import Message

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "change_line_limit",
    "message_line_limit",
    "read_change_events",
    "read_json_lines",
    "read_messages",
    "read_numbered_change_events",
]

DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024
"""TiCDC's default ``max-message-bytes`` (10 MiB)."""
_SLACK = 64 * 1024
"""Room on a line for what is not the message: member names, claim-check locations, metadata."""
_CHUNK = 1024 * 1024


def message_line_limit(max_message_bytes: int) -> int:
    """The longest message line a message of ``max_message_bytes`` needs (base64: 4 / 3)."""
    return (max_message_bytes + 2) // 3 * 4 + _SLACK


def change_line_limit(max_message_bytes: int) -> int:
    """The longest change-event line accepted: its values as text, base64 or digits (× 4)."""
    return 4 * max_message_bytes + _SLACK


def _lines(stream: IO[bytes], limit: int | None) -> Iterator[tuple[int, bytes | FormError]]:
    for number in itertools.count(1):
        line = stream.readline() if limit is None else stream.readline(limit + 1)
        if not line:
            return
        if limit is None or len(line) <= limit or line.endswith(b"\n"):
            yield number, line
            continue
        length = len(line)
        while line and not line.endswith(b"\n"):  # skip the rest, a chunk at a time
            line = stream.readline(_CHUNK)
            length += len(line)
        yield number, FormError(f"{length} bytes: longer than the limit of {limit}", line=number)


def read_json_lines(
    stream: IO[bytes], *, max_line_bytes: int | None = None
) -> Iterator[tuple[int, object]]:
    """Each non-blank line's JSON document with its 1-based number.

    A line that is too long, not UTF-8 or not JSON yields a ``FormError`` naming the line in
    place of the document, so that a reader can report it and go on.
    """
    for number, line in _lines(stream, max_line_bytes):
        if isinstance(line, FormError):
            yield number, line
            continue
        if not line.strip():
            continue
        try:
            yield number, json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as error:
            yield number, FormError(f"not UTF-8 at byte {error.start}", line=number)
        except json.JSONDecodeError as error:
            yield number, FormError(f"not JSON: {error.msg}", line=number)
        except RecursionError:
            yield number, FormError("not JSON: nested too deeply", line=number)
        except ValueError:  # Python reads at most 4,300 digits of an integer
            yield number, FormError("a number of more than 4300 digits", line=number)


def read_change_events(
    stream: IO[bytes], *, max_line_bytes: int | None = None
) -> list[ChangeEvent]:
    """The change events of a JSON Lines input; the first bad line raises its ``FormError``."""
    return [
        event for _, event in read_numbered_change_events(stream, max_line_bytes=max_line_bytes)
    ]


def read_numbered_change_events(
    stream: IO[bytes], *, max_line_bytes: int | None = None
) -> list[tuple[int, ChangeEvent]]:
    """Each change event with its 1-based line number; a bad line raises its ``FormError``."""
    events = []
    for number, document in read_json_lines(stream, max_line_bytes=max_line_bytes):
        if isinstance(document, FormError):
            raise document
        events.append((number, read_change_event(document, line=number)))
    return events


def read_messages(
    stream: IO[bytes], *, max_line_bytes: int | None = None
) -> Iterator[tuple[int, Message | FormError]]:
    """Each message line's ``Message`` with its line number, or the ``FormError`` of the line."""
    for number, document in read_json_lines(stream, max_line_bytes=max_line_bytes):
        if isinstance(document, FormError):
            yield number, document
            continue
        try:
            yield number, read_message(document, line=number)
        except FormError as error:
            yield number, error
