"""Reports from a check's JSON report: JSON Schema, JUnit XML, Markdown, the HTML page.

The reports are made from a real check of a shipped, labelled stream fixture (the in-process
path) and from a real ``run`` of a decoder that fails some cases; the HTML page is opened in
headless Chromium where a Chromium binary is installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.suites.report import (
    html_page,
    junit_cases,
    junit_rules,
    labelled_faults,
    markdown,
    stream_report_schema,
    write_atomically,
)
from ticdc_conformance.suites.stream.catalog import RULES

STREAMS = {s["id"]: s for s in fixtures.load_manifest()["streams"]}


def checked(tmp_path: Path, stream_id: str, *extra: str) -> tuple[int, dict[str, Path]]:
    """``check-stream`` on a copy of a shipped stream fixture, writing every report."""
    stream = STREAMS[stream_id]
    root = fixtures.default_root()
    folder = tmp_path / "dump"
    folder.mkdir()
    shutil.copy(root / stream["records"], folder / "part-00000.parquet")
    shutil.copy(root / stream["labels"], folder / "_labels.json")
    out = {kind: tmp_path / f"report.{kind}" for kind in ("json", "md", "xml", "html")}
    code = main(
        [
            "check-stream",
            "--input",
            str(folder),
            "--quiet",
            "--report",
            str(out["json"]),
            "--markdown",
            str(out["md"]),
            "--junit",
            str(out["xml"]),
            "--html",
            str(out["html"]),
            *extra,
        ]
    )
    return code, out


@pytest.fixture(scope="module")
def missing_ddl(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    code, out = checked(tmp_path_factory.mktemp("missing-ddl"), "stream.open.tiflow.missing-ddl")
    assert code == 1
    return out


def test_the_json_report_meets_its_schema(missing_ddl: dict[str, Path]) -> None:
    report = json.loads(missing_ddl["json"].read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(stream_report_schema())
    jsonschema.validate(report, stream_report_schema())
    broken = {**report, "engine": "duckdb"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, stream_report_schema())


def test_junit_has_a_testcase_per_rule_and_fails_the_broken_one(
    missing_ddl: dict[str, Path],
) -> None:
    suite = ET.parse(missing_ddl["xml"]).getroot().find("testsuite")  # noqa: S314 - our own file
    assert suite is not None
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert list(cases) == list(RULES)
    failed = {name for name, case in cases.items() if case.find("failure") is not None}
    assert failed == {"ddl-broadcast"}
    assert suite.get("failures") == "1"
    failure = cases["ddl-broadcast"].find("failure")
    assert failure is not None
    assert "docs/rules/stream.md#ddl-broadcast" in (failure.get("message") or "")
    assert "/1 a missing record (commit ts 463267588685168640)" in (failure.text or "")


def test_markdown_says_the_verdict_counts_and_faults(missing_ddl: dict[str, Path]) -> None:
    text = missing_ddl["md"].read_text(encoding="utf-8")
    assert "**FAIL**: 1 error(s), 0 warning(s)" in text
    assert "| [`ddl-broadcast`](docs/rules/stream.md#ddl-broadcast) | error | 1 |" in text
    assert "## Labelled faults: 1 of 1 found" in text
    assert "offset None" not in text


def test_the_html_page_is_self_contained(missing_ddl: dict[str, Path]) -> None:
    page = missing_ddl["html"].read_text(encoding="utf-8")
    for section in ("verdict", "rules", "samples", "faults"):
        assert f'<section id="{section}">' in page
    assert '<span class="verdict FAIL">FAIL</span>' in page
    assert "1 of 1 labelled fault finding(s) found." in page
    assert "<script" not in page
    assert "src=" not in page
    assert "http://" not in page
    assert "https://" not in page


def test_the_page_escapes_what_a_sample_says() -> None:
    report = {
        "errors": 1,
        "rules": [
            {
                "id": "undecodable",
                "severity": "error",
                "count": 1,
                "description": "d",
                "doc": "docs/rules/stream.md#undecodable",
                "samples": [
                    {
                        "topic": "t",
                        "partition": 0,
                        "offset": 3,
                        "commit_ts": None,
                        "key": None,
                        "detail": "<script>alert(1)</script>",
                    }
                ],
            }
        ],
    }
    page = html_page(report, title="<b>t</b>")
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "t/0 offset 3" in page


RULE = {"id": "row-after-watermark", "severity": "error", "description": "", "doc": ""}


@pytest.mark.parametrize(
    ("count", "samples", "found"),
    [
        (1, [{"partition": 2, "offset": 19, "commit_ts": 7}], "yes"),
        (1, [{"partition": 2, "offset": 19, "commit_ts": 8}], "no"),
        (0, [], "no"),
        (5, [{"partition": 1, "offset": 1, "commit_ts": 7}], "unknown"),
    ],
)
def test_labelled_faults_found_missed_or_not_sampled(
    count: int, samples: list[dict[str, Any]], found: str
) -> None:
    report = {"rules": [{**RULE, "count": count, "samples": samples}]}
    labels = {
        "faults": [
            {
                "kind": "row-below-watermark",
                "findings": [
                    {"rule": "row-after-watermark", "partition": 2, "offset": 19, "commit_ts": 7}
                ],
            }
        ]
    }
    [fault] = labelled_faults(report, labels)
    assert (fault["kind"], fault["found"]) == ("row-below-watermark", found)


def row(status: str, known: str | None = None, detail: str = "") -> dict[str, Any]:
    return {
        "id": f"open.tiflow.decode.types.{status}",
        "protocol": "open",
        "profile": "tiflow",
        "direction": "decode",
        "tier": "required",
        "status": status,
        "known_failure": known,
        "detail": detail,
        "replay": "ticdc-conformance run …",
    }


@pytest.mark.parametrize(
    ("given", "element", "message"),
    [
        (row("pass"), None, None),
        (
            row("fail", detail="decoded[0].after.c: expected 1, got 2\nmore"),
            "failure",
            "decoded[0].after.c: expected 1, got 2",
        ),
        (row("fail", known="open.*: not yet"), "skipped", "known failure: open.*: not yet"),
        (row("skip", detail="no encoder given"), "skipped", "no encoder given"),
        (
            row("pass", known="open.*: not yet"),
            "failure",
            "listed as a known failure but passes: open.*: not yet",
        ),
    ],
)
def test_junit_cases(given: dict[str, Any], element: str | None, message: str | None) -> None:
    root = ET.fromstring(junit_cases([given]))  # noqa: S314 - our own text
    [case] = root.iter("testcase")
    assert case.get("name") == given["id"]
    assert case.get("classname") == "open.tiflow.decode"
    children = list(case)
    if element is None:
        assert children == []
    else:
        assert [c.tag for c in children] == [element]
        assert children[0].get("message") == message


def test_run_writes_junit_with_the_located_diff(tmp_path: Path) -> None:
    junit = tmp_path / "run.xml"
    code = main(
        [
            "run",
            "--decoder",
            "conformance_doubles:signed_bigint_decoder",
            "--protocol",
            "open",
            "--profile",
            "tiflow",
            "--case",
            "open.tiflow.decode.types.bigint*",
            "--junit",
            str(junit),
        ]
    )
    assert code == 1
    suite = ET.parse(junit).getroot().find("testsuite")  # noqa: S314 - our own file
    assert suite is not None
    failures = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert failures
    assert suite.get("failures") == str(len(failures))
    failure = failures[0].find("failure")
    assert failure is not None
    assert "replay: ticdc-conformance run" in (failure.text or "")


def test_a_write_that_breaks_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    with pytest.raises(TypeError):
        write_atomically(target, 42)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
    write_atomically(target, "{}\n")
    assert target.read_text(encoding="utf-8") == "{}\n"
    assert list(tmp_path.iterdir()) == [target]


def test_markdown_of_a_clean_check() -> None:
    report = {"errors": 0, "warnings": 0, "rules": [{**RULE, "count": 0, "samples": []}]}
    text = markdown(report, title="clean")
    assert text.startswith("# clean\n\n**PASS**: 0 error(s), 0 warning(s)\n")
    assert "Labelled faults" not in text
    root = ET.fromstring(junit_rules(report, suite="s"))  # noqa: S314 - our own text
    assert [c.tag for c in root.iter("testcase")] == ["testcase"]
    assert root.find("testsuite/testcase/failure") is None


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "chromium-headless-shell", "google-chrome"):
        if found := shutil.which(name):
            return found
    return None


@pytest.mark.slow
def test_the_page_renders_in_headless_chromium(missing_ddl: dict[str, Path]) -> None:
    """Chromium from Debian's packages dumps the rendered page (the DOM after layout)."""
    browser = _chromium()
    if browser is None:
        pytest.skip("no Chromium binary installed (Debian package chromium)")
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--dump-dom",
            missing_ddl["html"].as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for section in ("verdict", "rules", "samples", "faults"):
        assert f'<section id="{section}">' in done.stdout
    assert "FAIL" in done.stdout
