"""check-stream's ``invalid-value`` rule, plain and on Spark, over a stream holding one invalid
value per type family (the invalid-value golden cases, one after another in one partition)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ticdc_conformance.fixtures.builder._invalid import INVALID_VALUES
from ticdc_conformance.generators.dump import write_dump
from ticdc_conformance.generators.simulator import Record
from ticdc_conformance.reference import CODECS, DecodeError
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.validation import InvalidValueError
from ticdc_conformance.suites.stream.rules import RULES, CheckSettings, check_records

Stream = list[tuple[str, int, int, bytes | None, bytes | None]]


def _stream(protocol: str) -> tuple[Stream, dict[int, str]]:
    """The records, and the rule each faulty offset must be reported under."""
    records: Stream = []
    expected: dict[int, str] = {}
    for negative in INVALID_VALUES:
        if negative.protocol != protocol:
            continue
        messages = negative.mutate([])
        try:
            decode_messages(protocol, messages)
        except InvalidValueError:
            rule = "invalid-value"
        except DecodeError:
            rule = "undecodable"
        for message in messages:
            records.append((protocol, 0, len(records), message.key, message.value))
        expected[len(records) - 1] = rule
    return records, expected


def test_the_rule_is_in_the_catalog() -> None:
    assert RULES["invalid-value"].severity == "error"


@pytest.mark.parametrize("protocol", sorted(CODECS))
def test_each_invalid_value_is_reported_at_its_coordinates(protocol: str) -> None:
    records, expected = _stream(protocol)
    outcome = check_records(records, CheckSettings(protocol=protocol, partitions=1))
    found = {(f.offset, f.rule) for f in outcome.findings}
    assert found == {(offset, rule) for offset, rule in expected.items()}
    invalid = [f for f in outcome.findings if f.rule == "invalid-value"]
    assert all("columns c:" in f.detail and f.commit_ts == 1 for f in invalid)
    assert all(f.partition == 0 and f.topic == protocol for f in invalid)
    undecodable = sum(rule == "undecodable" for rule in expected.values())
    assert (outcome.read, outcome.undecodable) == (len(records), undecodable)
    assert outcome.decoded == len(records) - undecodable  # invalid values still count as decoded


@pytest.mark.spark
@pytest.mark.parametrize("protocol", ["open", "simple-json"])
def test_spark_reports_the_same_findings(spark: Any, tmp_path: Path, protocol: str) -> None:
    from ticdc_conformance.suites.stream.spark import check_dump

    records, expected = _stream(protocol)
    write_dump(
        (
            Record(topic=t, partition=p, offset=o, timestamp=0, key=k, value=v)
            for t, p, o, k, v in records
        ),
        tmp_path,
    )
    settings = CheckSettings(protocol=protocol, partitions=1)
    result = check_dump(spark, [str(tmp_path)], settings, samples=100)
    plain = check_records(records, settings)
    assert result.counts == {
        rule: sum(f.rule == rule for f in plain.findings) for rule in result.counts
    }
    assert result.counts["invalid-value"] == sum(r == "invalid-value" for r in expected.values())
    offsets = sorted(s["offset"] for s in result.samples["invalid-value"])
    assert offsets == sorted(o for o, r in expected.items() if r == "invalid-value")
    assert (result.read, result.decoded, result.undecodable) == (
        plain.read,
        plain.decoded,
        plain.undecodable,
    )
