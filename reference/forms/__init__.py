"""The kit's two JSON forms and the message-line form (the public contract).

* Change events (encoder input), documented in docs/change-events.md and described by
  ``schemas/change-event.schema.json``;
* decoded events (decoder output), docs/decoded-events.md and
  ``schemas/decoded-event.schema.json``;
* message lines: ``{"key": base64 | null, "value": base64 | null}`` plus ``claim_checks`` when
  TiCDC stored files next to the message.

Values use JSON where JSON is exact (null, integers of any size, floats, text) and three tagged
objects where it is not: ``{"bytes": base64}``, ``{"decimal": digits}`` and
``{"timestamp": text, "zone": name | null}``. Each ``read_*`` raises ``FormError`` with the
JSON Pointer of the offending member; each ``write_*`` returns plain JSON-ready objects.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Literal

from ticdc_conformance.reference.forms._change import read_change_event, write_change_event
from ticdc_conformance.reference.forms._common import Json, read_value, write_value
from ticdc_conformance.reference.forms._decoded import (
    read_decoded_event,
    read_message,
    write_decoded_event,
    write_message,
)
from ticdc_conformance.reference.forms._lines import (
    DEFAULT_MAX_MESSAGE_BYTES,
    change_line_limit,
    message_line_limit,
    read_change_events,
    read_json_lines,
    read_messages,
    read_numbered_change_events,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "change_line_limit",
    "json_schema",
    "message_line_limit",
    "read_change_event",
    "read_change_events",
    "read_decoded_event",
    "read_json_lines",
    "read_message",
    "read_messages",
    "read_numbered_change_events",
    "read_value",
    "write_change_event",
    "write_decoded_event",
    "write_message",
    "write_value",
]


def json_schema(form: Literal["change-event", "decoded-event"]) -> dict[str, Json]:
    """The JSON Schema (draft 2020-12) shipped for ``form``.

    The decoded-event schema refers to the change-event schema by its ``$id``.
    """
    # anchored on a regular package: the data folder is no package zipimport can find
    folder = resources.files("ticdc_conformance.reference").joinpath("schemas")
    text = folder.joinpath(f"{form}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Json] = json.loads(text)
    return schema
