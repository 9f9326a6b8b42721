"""Revised cases (fixtures/builder/_revisions.py) are published under their new ids only."""

from __future__ import annotations

import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.fixtures.builder import _revisions


@pytest.mark.parametrize(("key", "revision"), sorted(_revisions._REVISIONS.items()))
def test_a_revised_case_has_its_new_id_and_never_its_old_one(
    key: tuple[str, str, str, str], revision: int
) -> None:
    protocol, profile, group, name = key
    ids = {case["id"] for case in fixtures.load_manifest()["cases"]}
    published = {i for i in ids if i.startswith(f"{protocol}.{profile}.") and f".{group}." in i}
    assert any(i.endswith(f".{group}.{name}-r{revision}") for i in published)
    assert not any(i.endswith(f".{group}.{name}") for i in published)


def test_an_unrevised_case_keeps_its_name() -> None:
    assert _revisions.revised_name("open", "tiflow", "types", "timestamp") == "timestamp"
    assert _revisions.revised_name("simple-avro", "ticdc", "types", "timestamp") == "timestamp-r2"
