"""Test doubles for the suites: adapters that get one thing wrong on purpose."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ticdc_conformance.reference import ChangeEvent, Message, RowChangedEvent
from ticdc_conformance.reference.forms import write_decoded_event
from ticdc_conformance.suites.gate.adapters import reference_decoder, reference_encoder

UINT64_WRAP = 2**64


def _columns(event: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for image in ("before", "after") for c in (event.get(image) or [])]


def signed_bigint_decoder(protocol: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The reference decoder, but reading 64-bit unsigned values as signed, as a consumer
    using int64 would: BIGINT UNSIGNED (and BIT(64)) above 2^63 - 1 come out negative."""
    events = [write_decoded_event(e) for e in reference_decoder(protocol, messages)]
    for event in events:
        for column in _columns(event):
            value = column["value"]
            if isinstance(value, int) and not isinstance(value, bool) and value >= 2**63:
                column["value"] = value - UINT64_WRAP
    return events


def one_byte_off_encoder(
    protocol: str, profile: str, options: Mapping[str, str], events: Sequence[ChangeEvent]
) -> list[Message]:
    """The reference encoder, with the last byte of the first message value flipped."""
    messages = reference_encoder(protocol, profile, options, events)
    first = messages[0]
    value = first.value or b"\x00"
    messages[0] = dataclasses.replace(first, value=value[:-1] + bytes([value[-1] ^ 0xFF]))
    return messages


def raising_decoder(protocol: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    raise RuntimeError(f"no {protocol} decoder here ({len(messages)} messages)")


def cases_with_big_unsigned(root: Path) -> set[str]:
    """Decode case ids whose expected events hold an integer value at or above 2^63.

    Read straight from the fixture files, independently of the suite library.
    """
    manifest = json.loads((root / "manifest.json").read_text("utf-8"))
    found = set()
    for case in manifest["cases"]:
        if case["direction"] != "decode":
            continue
        decoded = manifest["fixtures"][case["fixture"]]["decoded"]
        text = (root / decoded).read_text("utf-8")
        for line in filter(None, text.split("\n")):
            values = [c["value"] for c in _columns(json.loads(line))]
            if any(type(v) is int and v >= 2**63 for v in values):
                found.add(case["id"])
    return found


def lenient_decoder(protocol: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The reference decoder, but swallowing every error: it never rejects anything."""
    try:
        return [write_decoded_event(e) for e in reference_decoder(protocol, messages)]
    except ValueError:
        return []


def late_commit_ts_decoder(protocol: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The reference decoder, but every row's commit ts comes out one too high."""
    events = [write_decoded_event(e) for e in reference_decoder(protocol, messages)]
    for event in events:
        ts = event["commit_ts"]
        if event["kind"] == "row" and isinstance(ts, int):
            event["commit_ts"] = ts + 1
    return events


def late_commit_ts_encoder(
    protocol: str, profile: str, options: Mapping[str, str], events: Sequence[ChangeEvent]
) -> list[Message]:
    """The reference encoder, but every row goes out with its commit ts one too high
    (wrapping around at 2^64)."""
    shifted = [
        dataclasses.replace(e, commit_ts=(e.commit_ts + 1) % UINT64_WRAP)
        if isinstance(e, RowChangedEvent)
        else e
        for e in events
    ]
    return reference_encoder(protocol, profile, options, shifted)


def surrogate_text_decoder(protocol: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The reference decoder, but every text value comes out with a raw byte that is not
    UTF-8 carried as a surrogate escape, as a decoder reading bytes leniently might give it."""
    events = [write_decoded_event(e) for e in reference_decoder(protocol, messages)]
    for event in events:
        for column in _columns(event):
            if isinstance(column["value"], str):
                column["value"] += "\udc97"
    return events
