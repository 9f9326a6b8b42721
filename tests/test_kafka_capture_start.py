"""Where a capture starts: ``--from-offsets`` and ``--from-timestamp`` as given by a user."""

from __future__ import annotations

import pytest

from ticdc_conformance.kafka.capture_start import parse_offsets, parse_timestamp
from ticdc_conformance.reference.errors import UsageError


@pytest.mark.parametrize(
    ("specs", "expected"),
    [
        (["0=5"], {(None, 0): 5}),
        (["t:1=0,2=7", "u:0=3"], {("t", 1): 0, (None, 2): 7, ("u", 0): 3}),
        (["a:b:3=9"], {("a:b", 3): 9}),
    ],
)
def test_parse_offsets(specs: list[str], expected: dict[tuple[str | None, int], int]) -> None:
    assert parse_offsets(specs) == expected


@pytest.mark.parametrize("spec", ["0", "x=1", "0=-1", "-1=0", "t:=1", ""])
def test_bad_offsets(spec: str) -> None:
    with pytest.raises(UsageError, match="PARTITION=OFFSET"):
        parse_offsets([spec])


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1700000000123", 1_700_000_000_123), ("2023-11-14T22:13:20.123+00:00", 1_700_000_000_123)],
)
def test_parse_timestamp(text: str, expected: int) -> None:
    assert parse_timestamp(text) == expected


@pytest.mark.parametrize("text", ["2023-11-14T22:13:20", "yesterday", "-5"])
def test_bad_timestamps(text: str) -> None:
    with pytest.raises(UsageError, match="--from-timestamp"):
        parse_timestamp(text)
