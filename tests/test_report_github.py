"""GitHub Actions annotations (suites/report/_github.py): escaping, content, bounds, the option.

The escaping is checked against GitHub's workflow-command rules, the content on real outputs
of ``check-stream`` (a shipped labelled fixture), ``check-consumer`` (a snapshot missing a row)
and ``run`` (a decoder failing cases).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.suites.consumer.expected import KEY_COLUMN, read_expected_state
from ticdc_conformance.suites.report._github import (
    ANNOTATE_AT_MOST,
    annotations_wanted,
    escape_data,
    escape_property,
    github_cases,
    github_rules,
)

COMMAND = re.compile(r"::(error|warning|notice) title=([^:\r\n]*)::([^\r\n]*)")


def unescape(text: str) -> str:
    for code, char in (("%3A", ":"), ("%2C", ","), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        text = text.replace(code, char)
    return text


@pytest.mark.parametrize(
    ("text", "data", "prop"),
    [
        ("plain", "plain", "plain"),
        ("100%", "100%25", "100%25"),
        ("a\nb\r\nc", "a%0Ab%0D%0Ac", "a%0Ab%0D%0Ac"),
        ("t/0 offset 3: x, y", "t/0 offset 3: x, y", "t/0 offset 3%3A x%2C y"),
        ("%0A", "%250A", "%250A"),
        ("::error::", "::error::", "%3A%3Aerror%3A%3A"),
    ],
)
def test_escaping_as_the_workflow_command_syntax_asks(text: str, data: str, prop: str) -> None:
    assert escape_data(text) == data
    assert escape_property(text) == prop


@given(st.text())
def test_escaping_is_undone_exactly_and_leaves_no_separator(text: str) -> None:
    prop = escape_property(text)
    assert unescape(prop) == text
    assert not set(prop) & {":", ",", "\r", "\n"}
    data = escape_data(text)
    assert unescape(data) == text
    assert not set(data) & {"\r", "\n"}


def rule(rule_id: str, severity: str, count: int, samples: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": rule_id,
        "severity": severity,
        "description": "what it asks",
        "doc": f"docs/rules/stream.md#{rule_id}",
        "count": count,
        "samples": samples,
    }


def sample(offset: int, detail: str = "x") -> dict[str, Any]:
    return {
        "topic": "t",
        "partition": 1,
        "offset": offset,
        "key": None,
        "commit_ts": 7,
        "detail": detail,
    }


def parsed(lines: list[str]) -> list[tuple[str, str, str]]:
    out = []
    for line in lines:
        match = COMMAND.fullmatch(line)
        assert match, line
        level, title, message = match.groups()
        out.append((level, unescape(title), unescape(message)))
    return out


def test_each_finding_is_one_annotation_with_rule_coordinates_and_anchor() -> None:
    report = {
        "rules": [
            rule("ok-rule", "error", 0, []),
            rule("row-after-watermark", "error", 2, [sample(3, "a, b: c\nd"), sample(4)]),
            rule("duplicate", "warning", 1, [sample(9)]),
        ]
    }
    got = parsed(github_rules(report, command_name="check-stream"))
    assert got == [
        (
            "error",
            "check-stream: row-after-watermark",
            "t/1 offset 3 (commit ts 7): a, b: c\nd. what it asks "
            "(docs/rules/stream.md#row-after-watermark)",
        ),
        (
            "error",
            "check-stream: row-after-watermark",
            "t/1 offset 4 (commit ts 7): x. what it asks (docs/rules/stream.md#row-after-watermark)",
        ),
        (
            "warning",
            "check-stream: duplicate",
            "t/1 offset 9 (commit ts 7): x. what it asks (docs/rules/stream.md#duplicate)",
        ),
    ]


def test_annotations_are_bounded_per_level_and_the_rest_counted() -> None:
    many = [sample(n) for n in range(15)]
    report = {
        "rules": [
            rule("a", "error", 40, many),
            rule("b", "warning", 3, many[:3]),
            rule("c", "error", 5, []),
        ]
    }
    got = parsed(github_rules(report, command_name="check-stream", limit=4))
    levels = [level for level, _, _ in got]
    assert levels == ["error"] * 4 + ["warning"] * 3 + ["notice"]
    # 40 - 15 never sampled, 15 - 4 over the bound, and c's one annotation over the bound
    assert got[-1][2].startswith(f"{40 - 15 + 15 - 4 + 1} more finding(s) not annotated")


def test_a_rule_without_samples_says_its_count() -> None:
    got = parsed(github_rules({"rules": [rule("c", "error", 5, [])]}, command_name="x"))
    assert got == [("error", "x: c", "5 finding(s). what it asks (docs/rules/stream.md#c)")]


def test_a_clean_report_has_no_annotation() -> None:
    assert github_rules({"rules": [rule("a", "error", 0, [])]}, command_name="x") == []


def row(status: str, known: str | None = None) -> dict[str, Any]:
    return {
        "id": f"open.tiflow.decode.types.{status}",
        "status": status,
        "known_failure": known,
        "detail": "decoded[0].after.c: expected 1, got 2",
        "spec": "docs/rules/open.md#open-column-values",
        "replay": "ticdc-conformance run --case x",
    }


@pytest.mark.parametrize(
    ("given_row", "annotated"),
    [
        (row("pass"), False),
        (row("skip"), False),
        (row("fail", known="open.*: not yet"), False),
        (row("fail"), True),
        (row("pass", known="open.*: not yet"), True),
    ],
    ids=["pass", "skip", "known failure", "failure", "unexpected pass"],
)
def test_run_annotates_unexpected_results_only(given_row: dict[str, Any], annotated: bool) -> None:
    got = parsed(github_cases([given_row]))
    assert bool(got) is annotated
    if annotated:
        [(level, title, message)] = got
        assert level == "error"
        assert title == f"ticdc-conformance run: {given_row['id']}"
        assert "docs/rules/open.md#open-column-values" in message


@pytest.mark.parametrize(
    ("choice", "env", "wanted"),
    [
        (None, {"GITHUB_ACTIONS": "true"}, False),
        ("github", {}, True),
        ("auto", {"GITHUB_ACTIONS": "true"}, True),
        ("auto", {"GITHUB_ACTIONS": "false"}, False),
        ("auto", {}, False),
    ],
)
def test_the_option(choice: str | None, env: dict[str, str], wanted: bool) -> None:
    assert annotations_wanted(choice, env) is wanted


def test_check_stream_annotates_a_labelled_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [stream] = [
        s
        for s in fixtures.load_manifest()["streams"]
        if s["id"] == "stream.open.tiflow.missing-ddl"
    ]
    root = fixtures.default_root()
    folder = tmp_path / "dump"
    folder.mkdir()
    shutil.copy(root / stream["records"], folder / "part-00000.parquet")
    shutil.copy(root / stream["labels"], folder / "_labels.json")
    labels = json.loads((folder / "_labels.json").read_text(encoding="utf-8"))
    [finding] = [f for fault in labels["faults"] for f in fault["findings"]]
    args = ["check-stream", "--input", str(folder), "--quiet", "--engine", "plain"]
    assert main(args) == 1
    assert "::" not in capsys.readouterr().out  # opt-in
    assert main([*args, "--annotations", "github"]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::")]
    [(level, title, message)] = parsed(lines)
    assert (level, title) == ("error", f"check-stream: {finding['rule']}")
    assert f"ticdc-conformance/{finding['partition']} a missing record" in message
    assert f"commit ts {finding['commit_ts']}" in message
    assert message.endswith(f"(docs/rules/stream.md#{finding['rule']})")


def test_run_annotates_its_failures(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "run",
            "--quiet",
            "--decoder",
            "conformance_doubles:signed_bigint_decoder",
            "--protocol",
            "open",
            "--profile",
            "tiflow",
            "--case",
            "open.tiflow.decode.types.bigint*",
            "--annotations",
            "github",
        ]
    )
    assert code == 1
    got = parsed(capsys.readouterr().out.splitlines())
    assert got
    assert len(got) <= ANNOTATE_AT_MOST
    for level, title, message in got:
        assert level == "error"
        assert title.startswith("ticdc-conformance run: open.tiflow.decode.types.bigint")
        assert "replay: ticdc-conformance run --case" in message
        assert "docs/rules/" in message


def test_check_consumer_annotates_a_missing_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected_folder = tmp_path / "expected"
    stream = "stream.open.tiflow.replay"
    assert main(["expected-state", "--input", stream, "--out", str(expected_folder)]) == 0
    expected = read_expected_state(expected_folder)
    actual = tmp_path / "actual"
    actual.mkdir()
    dropped = None
    for table in expected.tables:
        rows = list(expected.rows(table))
        if rows and dropped is None:
            dropped = (f"{table.schema}.{table.table}", rows.pop()[KEY_COLUMN])
        if rows:
            plain = [{k: v for k, v in r.items() if k != KEY_COLUMN} for r in rows]
            pq.write_table(
                pa.Table.from_pylist(plain), actual / f"{table.schema}.{table.table}.parquet"
            )
    assert dropped is not None
    capsys.readouterr()
    args = ["check-consumer", "--input", str(expected_folder), "--actual", str(actual)]
    assert main([*args, "--annotations", "github"]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("::")]
    [(level, title, message)] = parsed(lines)
    assert (level, title) == ("error", "check-consumer: row-missing")
    assert message.startswith(f"{dropped[0]} key {dropped[1]}: no row at this key.")
    assert message.endswith("(docs/rules/consumer.md#row-missing)")
