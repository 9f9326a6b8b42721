"""The shipped JSON Schemas of the consumer check's report and of ``run``'s JSON Lines records.

Real outputs meet them: ``check-consumer`` on a snapshot and an applied log perturbed so that
every kind of sample appears, and ``run`` of adapters failing some cases, with a known-failure
file. A document broken in one place fails validation.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ticdc_conformance.cli.main import main
from ticdc_conformance.reference.consumer import AppliedChange
from ticdc_conformance.suites.consumer.actual import write_applied_log
from ticdc_conformance.suites.consumer.expected import KEY_COLUMN, read_expected_state
from ticdc_conformance.suites.consumer.job import consume_dump
from ticdc_conformance.suites.report import SCHEMAS, report_schema, write_atomically

STREAM = "stream.open.tiflow.replay"


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_each_schema_is_a_valid_draft_2020_12_schema(kind: str) -> None:
    jsonschema.Draft202012Validator.check_schema(report_schema(kind))


@pytest.fixture(scope="module")
def consumer_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``check-consumer`` where every rule family finds something (every sample shape)."""
    tmp = tmp_path_factory.mktemp("consumer")
    _, consumed = consume_dump(STREAM, None, {})
    assert main(["expected-state", "--input", STREAM, "--out", str(tmp / "expected")]) == 0
    expected = read_expected_state(tmp / "expected")
    actual = tmp / "actual"
    actual.mkdir()
    for table in expected.tables:
        rows = [{k: v for k, v in r.items() if k != KEY_COLUMN} for r in expected.rows(table)]
        if table.table == "customers":
            rows[0] = {**rows[0], "name": "changed"}  # row-differs
            rows.append(dict(rows[1]))  # row-unexpected: a key held twice
            del rows[2]  # row-missing
        if rows:
            pq.write_table(
                pa.Table.from_pylist(rows), actual / f"{table.schema}.{table.table}.parquet"
            )
    log = [
        (item.row if isinstance(item, AppliedChange) else item.ddl, item.source)
        for item in consumed.log
    ]
    changes = [i for i, item in enumerate(consumed.log) if isinstance(item, AppliedChange)]
    log.append(log[changes[0]])  # change-applied-twice, and a key applied out of order
    del log[changes[1]]  # change-lost
    write_applied_log(log, tmp / "applied.jsonl")
    report = tmp / "report.json"
    code = main(
        [
            "check-consumer",
            "--input",
            str(tmp / "expected"),
            "--actual",
            str(actual),
            "--applied-log",
            str(tmp / "applied.jsonl"),
            "--transactional",
            "--report",
            str(report),
        ]
    )
    assert code == 1
    document: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    return document


def test_a_consumer_report_meets_its_schema(consumer_report: dict[str, Any]) -> None:
    found = {rule["id"] for rule in consumer_report["rules"] if rule["samples"]}
    assert {"row-missing", "row-unexpected", "row-differs", "change-lost"} <= found
    assert "change-applied-twice" in found
    jsonschema.validate(consumer_report, report_schema("consumer"))


def _sample(report: dict[str, Any]) -> dict[str, Any]:
    sample: dict[str, Any] = next(r for r in report["rules"] if r["samples"])["samples"][0]
    return sample


BREAKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "an unknown engine": lambda r: r.update(engine="duckdb"),
    "a rule without its anchor": lambda r: r["rules"][0].update(doc="ticdc-ground-truth.md"),
    "an unknown rule": lambda r: r["rules"][0].update(id="row-late"),
    "a sample without its table": lambda r: _sample(r).pop("table"),
    "a field not in the contract": lambda r: r.update(verdict="FAIL"),
    "a negative count": lambda r: r["checked"].update(rows=-1),
}


@pytest.mark.parametrize("name", sorted(BREAKS))
def test_a_broken_consumer_report_fails_validation(
    consumer_report: dict[str, Any], name: str
) -> None:
    broken = copy.deepcopy(consumer_report)
    BREAKS[name](broken)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, report_schema("consumer"))


@pytest.fixture(scope="module")
def run_records(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """``run --report`` with passes, failures and a listed known failure."""
    tmp = tmp_path_factory.mktemp("run")
    xfail = tmp / "xfail.txt"
    write_atomically(xfail, "open.tiflow.decode.types.bigint-unsigned*: int64 decoder\n")
    report = tmp / "run.jsonl"
    code = main(
        [
            "run",
            "--quiet",
            "--decoder",
            "conformance_doubles:signed_bigint_decoder",
            "--encoder",
            "conformance_doubles:one_byte_off_encoder",
            "--protocol",
            "open",
            "--profile",
            "tiflow",
            "--case",
            "open.tiflow.*.types.bigint*",
            "--xfail",
            str(xfail),
            "--report",
            str(report),
        ]
    )
    assert code == 1
    lines = report.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_every_run_record_meets_its_schema(run_records: list[dict[str, Any]]) -> None:
    assert {r["status"] for r in run_records} == {"pass", "fail"}
    assert any(r["known_failure"] for r in run_records)
    assert any(r["replay"] for r in run_records)
    validator = jsonschema.Draft202012Validator(report_schema("run"))
    for record in run_records:
        validator.validate(record)


@pytest.mark.parametrize(
    "change",
    [
        {"status": "xfail"},
        {"direction": "both"},
        {"known_failure": 3},
        {"spec": ""},
        {"extra": 1},
    ],
    ids=str,
)
def test_a_broken_run_record_fails_validation(
    run_records: list[dict[str, Any]], change: dict[str, Any]
) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**run_records[0], **change}, report_schema("run"))
    missing = {k: v for k, v in run_records[0].items() if k != "replay"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(missing, report_schema("run"))
