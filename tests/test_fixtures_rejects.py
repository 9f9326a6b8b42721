"""The must-reject corpus: its size per protocol, its categories, and the cases of ``_rejects``."""

from __future__ import annotations

from collections import Counter

import pytest

from ticdc_conformance.fixtures import default_root, load_manifest
from ticdc_conformance.fixtures.builder._built import build_negative
from ticdc_conformance.fixtures.builder._craft_edits import CRAFT_REJECTS
from ticdc_conformance.fixtures.builder._negative import CATEGORIES
from ticdc_conformance.fixtures.builder._rejects import REJECTS
from ticdc_conformance.fixtures.categories import (
    CLASSES,
    REJECT_CATEGORIES,
    category_class,
    same_category,
)
from ticdc_conformance.reference import CODECS

BY_NAME = {(n.protocol, n.name): n for n in REJECTS}


def _reject_cases() -> list[dict[str, object]]:
    return [c for c in load_manifest(default_root())["cases"] if c["direction"] == "reject"]


def test_the_corpus_holds_160_cases_and_22_per_protocol_at_least() -> None:
    per_protocol = Counter(str(case["protocol"]) for case in _reject_cases())
    assert set(per_protocol) == set(CODECS)
    assert min(per_protocol.values()) >= 22, per_protocol
    assert sum(per_protocol.values()) >= 160


def test_every_category_of_the_tree_is_known_and_falls_in_a_class() -> None:
    used = {str(case["id"]).split(".")[3] for case in _reject_cases()}
    assert used <= set(CATEGORIES) | set(CLASSES)
    assert {category_class(c) for c in used} >= set(CLASSES) - {"compression"}
    assert set(REJECT_CATEGORIES.values()) <= set(CLASSES)


def test_the_new_categories_have_cases_in_the_protocols_that_can_express_them() -> None:
    protocols: dict[str, set[str]] = {}
    for negative in REJECTS:
        protocols.setdefault(negative.category, set()).add(negative.protocol)
    assert protocols == {
        "checksum": {"simple-json", "simple-avro"},
        "encoding": {"simple-json", "open", "debezium", "canal-json", "craft"},
        "state": {"simple-json", "simple-avro"},
        "length": {"open", "simple-avro", "craft"},
        "unknown-value": {"craft"},
        "framing": {"craft"},
    }
    assert set(CRAFT_REJECTS) <= set(REJECTS)


@pytest.mark.parametrize("key", sorted(BY_NAME), ids=[f"{p}.{n}" for p, n in sorted(BY_NAME)])
def test_the_reference_rejects_it_for_the_stated_reason(key: tuple[str, str]) -> None:
    negative = BY_NAME[key]
    assert negative.reason, "every case of _rejects names its reason"
    case, error = build_negative(negative)
    assert negative.reason in error["reference_error"]
    assert error["category"] == negative.category
    assert case.messages, "the case has messages to decode"


def test_the_tree_holds_every_case_under_its_category() -> None:
    manifest = load_manifest(default_root())
    cases = {c["id"]: c for c in manifest["cases"]}
    for negative in REJECTS:
        case = cases[f"{negative.protocol}.tiflow.reject.{negative.category}.{negative.name}"]
        assert case["tier"] == "required"
        assert case["spec"].startswith("docs/rules/"), case["spec"]
        error = manifest["fixtures"][case["fixture"]]["error"]
        assert error["category"] == negative.category
        assert negative.reason in error["reference_error"]


@pytest.mark.parametrize(
    ("reported", "expected", "same"),
    [
        ("bad-varint", "bad-varint", True),
        ("framing", "bad-varint", True),
        (" Framing ", "trailing-bytes", True),
        ("length", "truncated", True),
        ("range", "unknown-value", True),
        ("schema", "missing-member", True),
        ("type", "wrong-type", True),
        ("checksum", "checksum", True),
        ("compression", "compression", True),
        ("framing", "truncated", False),
        ("truncated", "length", False),
        ("type", "out-of-range", False),
        ("", "state", False),
    ],
)
def test_a_reported_category_matches_the_category_or_its_class(
    reported: str, expected: str, same: bool
) -> None:
    assert same_category(reported, expected) is same
