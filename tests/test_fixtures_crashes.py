"""The crash reproducers and non-finite cases: every one a plain ``DecodeError``, in the tree."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from ticdc_conformance.fixtures import default_root, load_manifest
from ticdc_conformance.fixtures.builder._crashes import CRASHES
from ticdc_conformance.reference import DecodeError, Message
from ticdc_conformance.reference.canal_json.claim_check import (
    read_claim_check as canal_claim_check,
)
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.open_protocol.claim_check import (
    read_claim_check as open_claim_check,
)
from ticdc_conformance.reference.simple import read_claim_check as simple_claim_check
from ticdc_conformance.reference.validation import InvalidValueError

BY_NAME = {(n.protocol, n.name): n for n in CRASHES}
FOUND = sorted(key for key, n in BY_NAME.items() if "fuzz harness" in n.description)
"""The inputs that once raised something other than ``DecodeError``."""


def test_the_found_crashes_cover_every_protocol_they_came_from() -> None:
    assert {p for p, _ in FOUND} == {"open", "debezium", "simple-json", "simple-avro"}
    assert len(FOUND) == 7


@pytest.mark.parametrize("key", sorted(BY_NAME), ids=[f"{p}.{n}" for p, n in sorted(BY_NAME)])
def test_the_reference_decoder_rejects_it_with_a_decode_error_only(key: tuple[str, str]) -> None:
    negative = BY_NAME[key]
    messages = negative.mutate([])
    with pytest.raises(DecodeError) as raised:
        decode_messages(negative.protocol, messages)
    error = raised.value
    assert error.message_index == len(messages) - 1
    # a value check is tier recommended; a crash reproducer is refused before any value check
    assert isinstance(error, InvalidValueError) == (
        negative.category == "invalid-value" and negative.protocol != "craft"
    )


@pytest.mark.parametrize(
    "read",
    [open_claim_check, simple_claim_check, canal_claim_check],
    ids=["open", "simple", "canal-json"],
)
@pytest.mark.parametrize(
    "content",
    ['{"key":null,"value":"\u00e9"}', '{"key":"\u00e9","value":null}', '{"key":null,"value":"!"}'],
    ids=["value-not-ascii", "key-not-ascii", "not-base64"],
)
def test_a_claim_check_file_with_text_that_is_not_base64_is_a_decode_error(
    read: Callable[[bytes], Message], content: str
) -> None:
    # found by the fuzz harness: base64 of text that is not ASCII raised ValueError
    with pytest.raises(DecodeError) as raised:
        read(content.encode())
    assert raised.value.pointer in ("/key", "/value")


def test_the_tree_holds_every_case_with_its_category() -> None:
    manifest = load_manifest(default_root())
    cases = {c["id"]: c for c in manifest["cases"]}
    for negative in CRASHES:
        case = cases[f"{negative.protocol}.tiflow.reject.{negative.category}.{negative.name}"]
        assert case["comparison"] == "error"
        assert case["spec"].startswith("docs/rules/"), case["spec"]
        fixture = manifest["fixtures"][case["fixture"]]
        assert fixture["error"]["category"] == negative.category
        assert json.dumps(fixture["error"]["reference_error"])
