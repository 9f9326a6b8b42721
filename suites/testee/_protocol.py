"""The testee protocol's messages: requests the runner writes, responses it accepts.

Version 1, one JSON object per line each way (docs/testee-protocol.md, JSON Schema in
``protocol.schema.json``). Requests carry the kit's JSON forms: messages as message
lines (base64 key and value), change events in the change-event form; responses carry decoded
events in the decoded-event form, or message lines, or an error, or a skip. Parsing a response
raises ``ResponseError`` naming the member at fault by JSON Pointer; it never checks the
events themselves (the case check compares them with the expected ones).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ticdc_conformance.reference import CODECS, Message
from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.forms import read_message, write_change_event, write_message
from ticdc_conformance.suites.gate._cases import Case

__all__ = [
    "PROTOCOL_VERSION",
    "Answer",
    "Capabilities",
    "ResponseError",
    "case_request",
    "hello_request",
    "parse_answer",
    "parse_hello",
]

PROTOCOL_VERSION = 1
"""Changed only for an incompatible change; additions (new optional members) keep it."""

_ANSWERS = ("events", "messages", "error", "skipped")


class ResponseError(ValueError):
    """A response line that breaks the protocol.

    ``in_step`` is false when the line did not even answer the request (not JSON, another
    id): the process's output is then out of step with the requests.
    """

    def __init__(self, reason: str, *, in_step: bool = True) -> None:
        super().__init__(reason)
        self.in_step = in_step


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What a testee declared in its hello: its name and, per direction, protocol → profiles."""

    name: str
    version: str
    decode: dict[str, tuple[str, ...]]
    encode: dict[str, tuple[str, ...]]
    ignored: tuple[str, ...] = ()
    """Declared directions, protocols or profiles this kit does not know (a newer testee),
    as JSON Pointers."""

    def directions(self) -> list[str]:
        """The case directions the testee takes (``reject`` cases go to a decoder)."""
        return [
            *(["decode", "reject"] if self.decode else []),
            *(["encode"] if self.encode else []),
        ]

    def covers(self, case: Case) -> bool:
        """Whether the testee declared the case's direction, protocol and profile."""
        table = self.encode if case.direction == "encode" else self.decode
        return case.profile in table.get(case.protocol, ())

    def describe(self) -> str:
        """One line: the testee and what it takes."""
        parts = [
            f"{direction} {protocol} ({', '.join(profiles)})"
            for direction, table in (("decode", self.decode), ("encode", self.encode))
            for protocol, profiles in table.items()
        ]
        version = f" {self.version}" if self.version else ""
        return f"testee {self.name}{version}: {'; '.join(parts) or 'nothing'}"


def hello_request(kit_version: str) -> dict[str, Any]:
    """The first request: the runner's protocol version."""
    return {"type": "hello", "protocol_version": PROTOCOL_VERSION, "kit_version": kit_version}


def case_request(
    case: Case, *, messages: list[Message] | None = None, events: list[Any] | None = None
) -> dict[str, Any]:
    """A ``decode`` request (``messages``) or an ``encode`` request (change ``events``).

    A must-reject case is an ordinary ``decode`` request: the testee never learns the
    expected outcome.
    """
    request: dict[str, Any] = {
        "type": "decode" if events is None else "encode",
        "id": case.id,
        "protocol": case.protocol,
        "profile": case.profile,
        "options": dict(case.options),
    }
    if events is None:
        request["messages"] = [write_message(m) for m in messages or []]
    else:
        request["events"] = [write_change_event(e) for e in events]
    return request


def _object(line: str) -> dict[str, Any]:
    try:
        document = json.loads(line)
    except json.JSONDecodeError as error:
        raise ResponseError(
            f"not JSON ({error.msg} at column {error.colno})", in_step=False
        ) from None
    if not isinstance(document, dict):
        raise ResponseError(f"expected a JSON object, got {type(document).__name__}", in_step=False)
    return document


def parse_hello(line: str) -> Capabilities:
    """The testee's capabilities from its hello response."""
    document = _object(line)
    version = document.get("protocol_version")
    if type(version) is not int or version != PROTOCOL_VERSION:  # not true, not 1.0
        raise ResponseError(
            f"/protocol_version: the testee speaks {json.dumps(version)}, "
            f"this runner speaks {PROTOCOL_VERSION}"
        )
    name, release = document.get("name"), document.get("version", "")
    if not isinstance(name, str) or not name:
        raise ResponseError("/name: expected the testee's name (a non-empty string)")
    if not isinstance(release, str):
        raise ResponseError("/version: expected a string")
    declared = document.get("capabilities")
    if not isinstance(declared, dict):
        raise ResponseError('/capabilities: expected an object with "decode" and/or "encode"')
    tables: dict[str, dict[str, tuple[str, ...]]] = {}
    ignored = [f"/capabilities/{name}" for name in declared if name not in {"decode", "encode"}]
    for direction in ("decode", "encode"):
        table = declared.get(direction, {})
        if not isinstance(table, dict):
            raise ResponseError(f"/capabilities/{direction}: expected an object")
        tables[direction] = {}
        for protocol, profiles in table.items():
            where = f"/capabilities/{direction}/{protocol}"
            if not isinstance(profiles, list) or not all(isinstance(p, str) for p in profiles):
                raise ResponseError(f"{where}: expected a list of profile names")
            if protocol not in CODECS:
                ignored.append(where)
                continue
            known = CODECS[protocol].PROFILES
            ignored += [f"{where}/{p}" for p in profiles if p not in known]
            kept = tuple(p for p in profiles if p in known)
            if kept:
                tables[direction][protocol] = kept
    return Capabilities(
        name=name,
        version=release,
        decode=tables["decode"],
        encode=tables["encode"],
        ignored=tuple(ignored),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """One case response: exactly one of its members is set."""

    events: list[dict[str, Any]] | None = None
    messages: list[Message] | None = None
    error: str | None = None
    error_category: str | None = None
    """The ``error.category`` the testee stated, if any."""
    skipped: str | None = None


def _text_member(document: dict[str, Any], name: str, member: str) -> str:
    value = document[name]
    if not isinstance(value, dict) or not isinstance(value.get(member), str):
        raise ResponseError(f'/{name}: expected an object with a "{member}" string')
    text: str = value[member]
    category = value.get("category")
    if name == "error" and isinstance(category, str) and category:
        return f"[{category}] {text}"
    return text


def _error_category(error: dict[str, Any]) -> str | None:
    """The optional ``category`` of an ``error`` answer (``_text_member`` checked the object)."""
    category = error.get("category")
    if category is not None and not isinstance(category, str):
        raise ResponseError("/error/category: expected a string")
    return category


def parse_answer(line: str, *, case_id: str, kind: str) -> Answer:
    """The answer to the ``kind`` (``decode`` or ``encode``) request for ``case_id``.

    Raises ``ResponseError``.
    """
    document = _object(line)
    if document.get("id") != case_id:
        raise ResponseError(
            f"/id: expected {json.dumps(case_id)}, got {json.dumps(document.get('id'))}",
            in_step=False,
        )
    present = [name for name in _ANSWERS if name in document]
    if len(present) != 1:
        raise ResponseError(
            f"expected exactly one of {', '.join(_ANSWERS)}, got {', '.join(present) or 'none'}"
        )
    [name] = present
    if name == "error":
        text = _text_member(document, "error", "message")
        return Answer(error=text, error_category=_error_category(document["error"]))
    if name == "skipped":
        return Answer(skipped=_text_member(document, "skipped", "reason"))
    wanted = "events" if kind == "decode" else "messages"
    if name != wanted:
        raise ResponseError(f'/{name}: a {kind} request is answered with "{wanted}"')
    items = document[name]
    if not isinstance(items, list):
        raise ResponseError(f"/{name}: expected a list")
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise ResponseError(f"/{name}/{index}: expected an object")
    if name == "events":
        return Answer(events=items)
    messages = []
    for index, item in enumerate(items):
        try:
            messages.append(read_message(item))
        except FormError as error:
            raise ResponseError(f"/messages/{index}{error.pointer}: {error.reason}") from None
    return Answer(messages=messages)
