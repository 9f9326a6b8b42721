"""Golden cases as objects: load the manifest, select cases, read their files."""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ticdc_conformance.fixtures import default_root, load_manifest, tree_path
from ticdc_conformance.reference import ChangeEvent, ClaimCheckObject, Message
from ticdc_conformance.reference.forms import read_change_event

__all__ = ["Case", "CaseMessage", "load_cases"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseMessage:
    """One message of a case: its role and the files holding its bytes."""

    role: str
    key: str | None
    value: str | None
    claim_checks: tuple[tuple[str, str], ...]
    """(location, file) pairs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One golden case of the manifest, bound to the tree it lives in."""

    id: str
    protocol: str
    profile: str
    direction: str
    comparison: str
    tier: str
    tags: tuple[str, ...]
    spec: str
    description: str
    options: dict[str, str]
    root: Path
    fixture: str
    change: str | None
    """Change events file; ``None`` for must-reject messages."""
    decoded: str | None
    """Expected decoded events file; ``None`` for must-reject messages."""
    messages: tuple[CaseMessage, ...]
    error: dict[str, Any] | None = None
    """Must-reject messages: the category and where the reference rejects them."""
    encode_error: dict[str, Any] | None = None
    """Must-refuse encodes: the category and the reference's error (``comparison: error``)."""

    @property
    def path(self) -> Path:
        """The case's files, as a path prefix (``<prefix>.change.jsonl`` and so on)."""
        return self.root / self.fixture

    def _message(self, entry: CaseMessage) -> Message:
        def read(name: str | None) -> bytes | None:
            return None if name is None else (self.root / name).read_bytes()

        stored = tuple(
            ClaimCheckObject(location=location, content=(self.root / name).read_bytes())
            for location, name in entry.claim_checks
        )
        return Message(key=read(entry.key), value=read(entry.value), claim_checks=stored)

    def all_messages(self) -> list[Message]:
        """Every message in order, bootstraps included: what a consumer reads."""
        return [self._message(m) for m in self.messages]

    def bootstrap_messages(self) -> list[Message]:
        """The Simple BOOTSTRAP messages the consumer needs before the encoded events."""
        return [self._message(m) for m in self.messages if m.role == "bootstrap"]

    def event_messages(self) -> list[Message]:
        """The messages an encoder writes for the change events."""
        return [self._message(m) for m in self.messages if m.role == "event"]

    def change_events(self) -> list[ChangeEvent]:
        """The change events, the encoder's input."""
        return [
            read_change_event(json.loads(line), line=number)
            for number, line in enumerate(self._lines(self.change), start=1)
        ]

    def expected_decoded(self) -> list[Any]:
        """The expected decoded events, in their JSON form."""
        return [json.loads(line) for line in self._lines(self.decoded)]

    def _lines(self, name: str | None) -> list[str]:
        if name is None:
            return []
        return [line for line in (self.root / name).read_text("utf-8").split("\n") if line]

    def describe(self) -> dict[str, Any]:
        """Everything about the case in one JSON document (``fixtures show``).

        Message keys are shown in hex, values as text where they are printable text.
        """
        messages = [
            {
                "role": m.role,
                "key": None if m.key is None else (self.root / m.key).read_bytes().hex(),
                "value": None if m.value is None else _text_or_hex(self.root / m.value),
            }
            for m in self.messages
        ]
        document: dict[str, Any] = {
            "id": self.id,
            "protocol": self.protocol,
            "profile": self.profile,
            "direction": self.direction,
            "comparison": self.comparison,
            "tier": self.tier,
            "tags": list(self.tags),
            "spec": self.spec,
            "description": self.description,
            "options": self.options,
            "fixture": str(self.path) + ".*",
            "change_events": [json.loads(line) for line in self._lines(self.change)],
            "messages": messages,
            "decoded": self.expected_decoded(),
        }
        if self.error:
            document["error"] = self.error
        if self.encode_error:
            document["encode_error"] = self.encode_error
        return document


def _text_or_hex(path: Path) -> str:
    data = path.read_bytes()
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return data.hex(" ")
    return text if text.isprintable() else data.hex(" ")


def _matches(value: str, wanted: Iterable[str] | None) -> bool:
    return wanted is None or value in set(wanted)


def load_cases(
    root: Path | None = None,
    *,
    protocols: Iterable[str] | None = None,
    profiles: Iterable[str] | None = None,
    directions: Iterable[str] | None = None,
    tiers: Iterable[str] | None = None,
    ids: Iterable[str] | None = None,
) -> list[Case]:
    """The cases of the tree at ``root`` (default: the shipped one), sorted by id.

    Each filter keeps the cases whose member is among the given values; ``ids`` takes exact
    ids or shell-style patterns (``open.*.decode.types.*``). ``ManifestError`` when the tree
    has no usable manifest or the manifest names a file outside the tree.
    """
    root = root or default_root()
    manifest = load_manifest(root)
    patterns = None if ids is None else list(ids)
    for fixture in manifest["fixtures"].values():  # every file a case reads stays in the tree
        for name in fixture["sha256"]:
            tree_path(root, name)
    cases = []
    for entry in manifest["cases"]:
        if not (
            _matches(entry["protocol"], protocols)
            and _matches(entry["profile"], profiles)
            and _matches(entry["direction"], directions)
            and _matches(entry["tier"], tiers)
        ):
            continue
        if patterns is not None and not any(fnmatch.fnmatchcase(entry["id"], p) for p in patterns):
            continue
        fixture = manifest["fixtures"][entry["fixture"]]
        messages = tuple(
            CaseMessage(
                role=m["role"],
                key=m["key"],
                value=m["value"],
                claim_checks=tuple((c["location"], c["file"]) for c in m["claim_checks"]),
            )
            for m in fixture["messages"]
        )
        cases.append(
            Case(
                id=entry["id"],
                protocol=entry["protocol"],
                profile=entry["profile"],
                direction=entry["direction"],
                comparison=entry["comparison"],
                tier=entry["tier"],
                tags=tuple(entry["tags"]),
                spec=entry["spec"],
                description=entry["description"],
                options=dict(fixture["options"]),
                root=root,
                fixture=entry["fixture"],
                change=fixture["change"],
                decoded=fixture["decoded"],
                messages=messages,
                error=fixture.get("error"),
                encode_error=fixture.get("encode_error"),
            )
        )
    return sorted(cases, key=lambda case: case.id)
