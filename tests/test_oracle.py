"""The cross-protocol oracle: every codec delivers a change as its documented losses allow.

Bounded here; explore longer with ``TICDC_HYPOTHESIS_PROFILE=thorough`` (or pytest's
``--hypothesis-profile=thorough``).
"""

from __future__ import annotations

from hypothesis import given

from ticdc_conformance.generators.oracle import ORACLE_CONFIGS, disagreements
from ticdc_conformance.generators.strategies import row_changed_events
from ticdc_conformance.reference import CODECS, RowChangedEvent

PAIRS = [
    (protocol, profile) for protocol in sorted(CODECS) for profile in CODECS[protocol].PROFILES
]


def test_the_oracle_knows_every_protocol() -> None:
    assert set(ORACLE_CONFIGS) == set(CODECS)


@given(row_changed_events())
def test_every_protocol_agrees_with_the_projection(event: RowChangedEvent) -> None:
    problems = [p for protocol, profile in PAIRS for p in disagreements(event, protocol, profile)]
    assert problems == []
