"""check-stream's ``invalid-value`` rule, plain and on Spark, over a stream holding one invalid
value per type family (the invalid-value golden cases, one after another in one partition),
and over generated streams with the ``invalid-value`` fault in; ``decode --lenient`` on one
message of such a stream."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ticdc_conformance.fixtures.builder._invalid import INVALID_VALUES
from ticdc_conformance.generators.dump import write_dump
from ticdc_conformance.generators.faults import InjectedFault, inject_faults
from ticdc_conformance.generators.simulator import Record, StreamSettings, TopicLog, simulate
from ticdc_conformance.generators.workload import shop_workload
from ticdc_conformance.reference import CODECS, DecodedRow, DecodeError, Message
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.validation import InvalidValueError
from ticdc_conformance.suites.stream.plain import check_records
from ticdc_conformance.suites.stream.rules import RULES, CheckSettings

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


# --- the invalid-value fault of the stream generator ------------------------------------------

_EXTENSION = (("enable-tidb-extension", "true"),)
_FAULTED = {  # protocol → the shop columns the fault breaks: one per type family it carries
    "open": {"customer_id", "amount", "status", "flags", "value", "balance", "created", "updated"},
    "craft": {"customer_id", "amount", "status", "value", "created", "updated"},
    "simple-json": {"amount", "status", "flags", "value", "created", "updated", "note"},
    "simple-avro": {"amount", "status", "flags", "value", "balance", "created", "updated"},
    "debezium": {"value", "balance", "updated"},
}
"""Per family, the one column of ``shop`` that has it (``name`` and ``note`` are both text:
the fault takes the first it meets, so text is matched by family below, not by name)."""
_TEXT = {"name", "note", "email", "host"}


def _settings(protocol: str) -> StreamSettings:
    return StreamSettings(
        protocol=protocol, partitions=3, options=_EXTENSION if protocol == "debezium" else ()
    )


def _as_records(log: TopicLog) -> Stream:
    return [(r.topic, r.partition, r.offset, r.key, r.value) for r in log.records()]


def _faulted(protocol: str, messages: int = 800) -> tuple[TopicLog, Stream, InjectedFault]:
    """The clean log's records, and the log with the fault in (and its label)."""
    log = simulate(shop_workload(5, ddl_every=40), _settings(protocol), messages=messages)
    clean = _as_records(log)
    (fault,) = inject_faults(log, ["invalid-value"], seed=5)
    return log, clean, fault


def _columns(detail: str) -> set[str]:
    named = detail.split(":", 1)[0].removeprefix("columns ")
    return {"text" if c in _TEXT else c for c in named.split(", ")}


@pytest.mark.parametrize("protocol", sorted(_FAULTED))
def test_the_fault_is_reported_at_its_labelled_coordinates_and_nothing_else(
    protocol: str,
) -> None:
    log, clean, fault = _faulted(protocol)
    settings = CheckSettings(protocol=protocol, partitions=3)
    before = {(f.rule, f.partition, f.offset) for f in check_records(clean, settings).findings}
    outcome = check_records(_as_records(log), settings)
    labelled = {(f.rule, f.partition, f.offset) for f in fault.findings}
    assert {f.rule for f in fault.findings} == {"invalid-value"}
    assert {(f.rule, f.partition, f.offset) for f in outcome.findings} == before | labelled
    assert not before & labelled
    invalid = [f for f in outcome.findings if f.rule == "invalid-value"]
    stamps = {(f.partition, f.offset): f.commit_ts for f in fault.findings}
    assert all(stamps[f.partition, f.offset] == f.commit_ts for f in invalid)
    named = [_columns(f.detail) for f in invalid]
    assert all(len(columns) == 1 for columns in named)  # one value broken per message
    expected = {"text" if c in _TEXT else c for c in _FAULTED[protocol]}
    assert set().union(*named) == expected  # one message per family, each family once
    assert len(invalid) == len(expected)
    assert outcome.undecodable == 0


def _decode_cli(protocol: str, messages: list[Message], *lenient: str) -> Any:
    stdin = "".join(
        json.dumps(
            {
                "key": None if m.key is None else base64.b64encode(m.key).decode(),
                "value": None if m.value is None else base64.b64encode(m.value).decode(),
            }
        )
        + "\n"
        for m in messages
    )
    return subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", "decode", "--protocol", protocol, *lenient],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.mark.parametrize("protocol", sorted(_FAULTED))
def test_lenient_decode_prints_the_rows_of_a_faulted_message_with_a_warning(
    protocol: str,
) -> None:
    log, _, fault = _faulted(protocol)
    finding = fault.findings[0]
    assert finding.offset is not None
    deliveries = log.partitions[finding.partition]
    schemas = [d.message for d in deliveries[: finding.offset] if d.kind == "bootstrap"]
    messages = [*schemas, deliveries[finding.offset].message]
    with pytest.raises(InvalidValueError) as caught:
        decode_messages(protocol, messages)
    rows = [e for e in caught.value.events if isinstance(e, DecodedRow)]
    strict = _decode_cli(protocol, messages)
    assert strict.returncode == 1
    assert "invalid value: column" in strict.stderr
    lenient = _decode_cli(protocol, messages, "--lenient")
    assert lenient.returncode == 0, lenient.stderr
    printed = [json.loads(line) for line in lenient.stdout.splitlines()]
    assert [e for e in printed if e["kind"] == "row"]
    assert len([e for e in printed if e["kind"] == "row"]) == len(rows)
    warnings = [w for w in lenient.stderr.splitlines() if w.startswith("warning:")]
    assert len(warnings) == 1
    assert "invalid value: column" in warnings[0]


@pytest.mark.spark
def test_spark_reports_the_fault_where_labelled(spark: Any, tmp_path: Path) -> None:
    from ticdc_conformance.suites.stream.spark import check_dump

    log, _, fault = _faulted("open", messages=400)
    write_dump(log.records(), tmp_path)
    settings = CheckSettings(protocol="open", partitions=3)
    result = check_dump(spark, [str(tmp_path)], settings, samples=100)
    plain = check_records(_as_records(log), settings)
    assert result.counts == {
        rule: sum(f.rule == rule for f in plain.findings) for rule in result.counts
    }
    samples = {(s["partition"], s["offset"]) for s in result.samples["invalid-value"]}
    assert samples == {(f.partition, f.offset) for f in fault.findings}
