"""Reports from a check's JSON report: JSON Schema, JUnit XML, Markdown, the HTML page.

The reports are made from a real check of a shipped, labelled stream fixture (the in-process
path) and from a real ``run`` of a decoder that fails some cases; the HTML page is opened in
headless Chromium where a Chromium binary is installed.
"""

from __future__ import annotations

import json
import shutil
import struct
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
from ticdc_conformance.suites.stream.catalog import RULES, watermark_series

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


SECTIONS = ("verdict", "rules", "pictures", "samples", "faults")


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    code, out = checked(tmp_path_factory.mktemp("clean"), "stream.open.tiflow.clean")
    assert code == 0
    return out


def test_the_report_keeps_a_bounded_watermark_series_per_partition(
    missing_ddl: dict[str, Path],
) -> None:
    report = json.loads(missing_ddl["json"].read_text(encoding="utf-8"))
    series = report["watermarks"]
    assert [(w["topic"], w["partition"]) for w in series] == [
        ("ticdc-conformance", p) for p in range(3)
    ]
    for w in series:
        assert w["commit_ts"] == sorted(w["commit_ts"])
        assert 1 <= len(w["commit_ts"]) <= min(w["seen"], 64)


@pytest.mark.parametrize(
    ("seen", "kept"),
    [(1, [5]), (3, [0, 1, 2]), (64, list(range(64))), (127, list(range(0, 127, 2)))],
)
def test_watermark_series_thins_evenly_keeping_first_and_last(seen: int, kept: list[int]) -> None:
    stamps = list(range(seen)) if seen > 1 else [5]
    [series] = watermark_series({("t", 0): stamps[::-1]})
    assert series == {"topic": "t", "partition": 0, "seen": seen, "commit_ts": kept}


def test_the_page_draws_findings_and_watermarks_as_inline_svg(
    missing_ddl: dict[str, Path],
) -> None:
    page = missing_ddl["html"].read_text(encoding="utf-8")
    findings = page[page.index('<figure id="findings-picture">') :]
    findings = findings[: findings.index("</figure>")]
    assert findings.count("<svg") == 1
    assert "Findings over partitions and offsets: 1 of 1 shown" in findings
    assert "ddl-broadcast (1 of 1)" in findings
    watermarks = page[page.index('<figure id="watermarks-picture">') :]
    watermarks = watermarks[: watermarks.index("</figure>")]
    assert "Commit-ts progress per partition: watermarks" in watermarks
    for partition in range(3):
        assert f"ticdc-conformance/{partition} (" in watermarks


def test_a_clean_page_has_no_findings_picture_and_still_its_watermarks(
    clean: dict[str, Path],
) -> None:
    report = json.loads(clean["json"].read_text(encoding="utf-8"))
    jsonschema.validate(report, stream_report_schema())
    page = clean["html"].read_text(encoding="utf-8")
    assert '<span class="verdict PASS">PASS</span>' in page
    assert "No finding to draw." in page
    assert 'id="findings-picture"' not in page
    assert page.count("<svg") == 1
    for section in SECTIONS:
        assert f'<section id="{section}">' in page


@pytest.mark.parametrize(
    "samples",
    [[], [{"table": "`shop`.`orders`", "key": "[1]", "detail": "missing row"}]],
    ids=["no finding", "findings without Kafka coordinates"],
)
def test_a_page_without_watermarks_or_findings_to_draw_says_so(
    samples: list[dict[str, Any]],
) -> None:
    rules = [{**RULE, "count": len(samples), "samples": samples}]
    page = html_page({"errors": len(samples), "rules": rules}, title="t")
    assert "<svg" not in page
    assert "No finding to draw." in page
    assert "The report carries no watermarks to draw." in page


def test_the_html_page_is_self_contained(missing_ddl: dict[str, Path]) -> None:
    page = missing_ddl["html"].read_text(encoding="utf-8")
    for section in SECTIONS:
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


def _headless(browser: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_the_page_renders_in_headless_chromium(
    missing_ddl: dict[str, Path], tmp_path: Path
) -> None:
    """Chromium from Debian's packages renders the page: its DOM after load, and a screenshot."""
    browser = _chromium()
    if browser is None:
        pytest.skip(
            "no Chromium binary on PATH (chromium, chromium-browser, chromium-headless-shell "
            "or google-chrome); on Debian: apt-get install chromium"
        )
    page = missing_ddl["html"].as_uri()
    dom = _headless(browser, "--dump-dom", page)
    assert dom.returncode == 0, dom.stderr[-2000:]
    for section in SECTIONS:
        assert f'<section id="{section}">' in dom.stdout
    assert '<span class="verdict FAIL">FAIL</span>' in dom.stdout
    # the browser parsed the pictures as SVG: their text is there as text elements
    assert dom.stdout.count("<svg") == 2
    assert "Findings over partitions and offsets" in dom.stdout
    shot = tmp_path / "page.png"
    taken = _headless(
        browser, "--hide-scrollbars", "--window-size=1200,1600", f"--screenshot={shot}", page
    )
    assert taken.returncode == 0, taken.stderr[-2000:]
    image = shot.read_bytes()
    assert image.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", image[16:24])
    assert (width, height) == (1200, 1600)
    assert len(image) > 20_000  # a blank page of that size compresses to a few kilobytes
