"""JSON Lines input: each line's document with its number, or why the line is not JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.events import ChangeEvent
from ticdc_conformance.reference.forms._change import read_change_event
from ticdc_conformance.reference.forms._decoded import read_message
from ticdc_conformance.reference.message import Message

__all__ = ["read_change_events", "read_json_lines", "read_messages"]


def read_json_lines(lines: Iterable[bytes]) -> Iterator[tuple[int, object]]:
    """Each non-blank line's JSON document with its 1-based number.

    A line that is not UTF-8 or not JSON yields a ``FormError`` naming the line in place of
    the document, so that a reader can report it and go on.
    """
    for number, line in enumerate(lines, start=1):
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


def read_change_events(lines: Iterable[bytes]) -> list[ChangeEvent]:
    """The change events of a JSON Lines input; the first bad line raises its ``FormError``."""
    events = []
    for number, document in read_json_lines(lines):
        if isinstance(document, FormError):
            raise document
        events.append(read_change_event(document, line=number))
    return events


def read_messages(lines: Iterable[bytes]) -> Iterator[tuple[int, Message | FormError]]:
    """Each message line's ``Message`` with its line number, or the ``FormError`` of the line."""
    for number, document in read_json_lines(lines):
        if isinstance(document, FormError):
            yield number, document
            continue
        try:
            yield number, read_message(document, line=number)
        except FormError as error:
            yield number, error
