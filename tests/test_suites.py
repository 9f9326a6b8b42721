"""The suite library and the ``run`` command: cases in order, readable failures, exit codes."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from conformance_doubles import cases_with_big_unsigned

from ticdc_conformance.cli.main import main
from ticdc_conformance.fixtures import default_root, load_manifest
from ticdc_conformance.reference.compression import COMPRESSION_OPTION
from ticdc_conformance.suites import (
    XfailFileError,
    check_case,
    hex_diff,
    json_diff,
    load_cases,
    read_xfail_file,
    run_cases,
    stale_entries,
)
from ticdc_conformance.suites.gate._check import adapter_raised
from ticdc_conformance.suites.gate.adapters import (
    load_adapter,
    reference_decoder,
    reference_encoder,
)

DOUBLES = "conformance_doubles"


def test_cases_load_in_id_order_and_filter() -> None:
    cases = load_cases()
    assert [c.id for c in cases] == sorted(c["id"] for c in load_manifest()["cases"])
    craft = load_cases(protocols=["craft"], directions=["encode"], tiers=["required"])
    assert craft
    assert {(c.protocol, c.direction, c.tier) for c in craft} == {("craft", "encode", "required")}
    assert [c.id for c in load_cases(ids=["open.*.decode.types.bigint-unsigned"])] == [
        "open.ticdc.decode.types.bigint-unsigned",
        "open.tiflow.decode.types.bigint-unsigned",
    ]


def test_reference_passes_every_case() -> None:
    outcomes = run_cases(load_cases(), decoder=reference_decoder, encoder=reference_encoder)
    assert {o.status for o in outcomes} == {"pass"}
    assert len(outcomes) == len(load_manifest()["cases"])


def test_signed_bigint_decoder_fails_exactly_the_big_unsigned_cases() -> None:
    decoder = load_adapter(f"{DOUBLES}:signed_bigint_decoder", "decoder")
    outcomes = run_cases(
        load_cases(directions=["decode"]),
        decoder=decoder,
        adapters={"decoder": f"{DOUBLES}:signed_bigint_decoder"},
    )
    failed = {o.case.id for o in outcomes if o.status == "fail"}
    expected = cases_with_big_unsigned(default_root())
    assert "open.tiflow.decode.types.bigint-unsigned" in expected
    assert failed == expected
    [outcome] = [o for o in outcomes if o.case.id == "craft.tiflow.decode.types.bigint-unsigned"]
    report = outcome.report()
    assert report.startswith("FAIL craft.tiflow.decode.types.bigint-unsigned\n")
    assert "data/craft/tiflow.types.bigint-unsigned.*" in report
    assert '/0/after/1/value: expected 18446744073709551615, got -1 (column "c")\n' in report
    assert (
        "replay: ticdc-conformance run --case craft.tiflow.decode.types.bigint-unsigned "
        "--decoder conformance_doubles:signed_bigint_decoder"
    ) in report


def test_broken_encoder_gets_a_hex_diff_with_the_offset() -> None:
    [case] = load_cases(ids=["open.tiflow.encode.events.resolved"])
    encoder = load_adapter(f"{DOUBLES}:one_byte_off_encoder", "encoder")
    outcome = check_case(case, encoder=encoder)
    assert outcome.status == "fail"
    size = len(case.event_messages()[0].value or b"")
    assert f"message 0 value: first difference at byte offset {size - 1}" in outcome.detail


def test_encode_by_decoded_comparison_ignores_nothing_else() -> None:
    [case] = load_cases(ids=["debezium.tiflow.encode.types.bigint-unsigned"])
    assert case.comparison == "decoded"
    assert check_case(case, encoder=reference_encoder).status == "pass"
    encoder = load_adapter(f"{DOUBLES}:one_byte_off_encoder", "encoder")
    assert check_case(case, encoder=encoder).status == "fail"


def test_a_raising_adapter_fails_its_case_and_a_missing_one_skips() -> None:
    [case] = load_cases(ids=["open.tiflow.decode.events.resolved"])
    raising = load_adapter(f"{DOUBLES}:raising_decoder", "decoder")
    outcome = check_case(case, decoder=raising)
    assert outcome.status == "fail"
    assert "the adapter raised RuntimeError: no open decoder here (1 messages)" in outcome.detail
    # the user's own file and line, never the kit's call site
    line = inspect.getsourcelines(raising)[1] + 1
    assert outcome.detail.endswith(f"conformance_doubles.py:{line} (raising_decoder)")
    assert check_case(case, encoder=reference_encoder).status == "skip"


def test_where_an_adapter_raised_is_the_innermost_frame_outside_the_kit() -> None:
    def inner() -> None:
        raise KeyError("oops")

    try:
        inner()
    except KeyError as error:
        said = adapter_raised(error)
    line = inspect.getsourcelines(inner)[1] + 1
    assert said == f"the adapter raised KeyError: 'oops' at {_here()}:{line} (inner)"
    assert (
        adapter_raised(ValueError("no traceback")) == "the adapter raised ValueError: no traceback"
    )


def _here() -> str:
    path = Path(__file__).resolve()
    try:
        return path.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return __file__


def test_json_diff_and_hex_diff() -> None:
    assert json_diff({"a": [1, 2]}, {"a": [1, 2]}) == []
    assert json_diff({"a": [1, 2], "b": 1}, {"a": [1, 3, 4], "c": True}) == [
        "/a/1: expected 2, got 3",
        "/a/2: unexpected 4",
        "/b: missing (expected 1)",
        "/c: unexpected member true",
    ]
    assert json_diff([1], [True]) == ["/0: expected 1, got true"]
    assert json_diff([-0.0], [0.0]) == ["/0: expected -0.0, got 0.0"]
    assert json_diff([0.1], [0.1]) == []
    text = hex_diff(bytes(range(20)), bytes(range(12)) + b"\xff" + bytes(range(13, 20)))
    assert text.splitlines() == [
        "first difference at byte offset 12 (expected 20 bytes, got 20)",
        "  expected [4:20]: 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 11 12 13",
        "  actual   [4:20]: 04 05 06 07 08 09 0a 0b ff 0d 0e 0f 10 11 12 13",
    ]
    assert "offset 3 (expected 3 bytes, got 4)" in hex_diff(b"abc", b"abcd")


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("nocolon", "expected module:callable"),
        ("no_such_module_x:f", "cannot import"),
        (f"{DOUBLES}:nothing", "has no nothing"),
        (f"{DOUBLES}:UINT64_WRAP", "not callable"),
    ],
)
def test_load_adapter_says_why_not(spec: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        load_adapter(spec, "decoder")


def test_xfail_files(tmp_path: Path) -> None:
    path = tmp_path / "known.txt"
    path.write_text("# known failures\n\nopen.*.types.bigint-unsigned: signed ints  # see #1\n")
    [entry] = read_xfail_file(path)
    assert (entry.pattern, entry.reason, entry.line) == (
        "open.*.types.bigint-unsigned",
        "signed ints",
        3,
    )
    assert stale_entries(["open.tiflow.decode.types.bigint-unsigned"], [entry]) == []
    assert stale_entries(["craft.tiflow.decode.types.int"], [entry]) == [entry]
    path.write_text("open.tiflow.decode.types.int\n")
    with pytest.raises(XfailFileError, match=r"known.txt:1: expected"):
        read_xfail_file(path)


def test_run_command_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["run", "--protocol", "craft", "--decoder", "reference", "--encoder", "reference"])
        == 0
    )
    summary = capsys.readouterr().err
    manifest = load_manifest(default_root())
    required = sum(c["protocol"] == "craft" and c["tier"] == "required" for c in manifest["cases"])
    assert f"craft        required     passed {required:4d}" in summary
    assert main(["run", "--protocol", "open", "--decoder", f"{DOUBLES}:signed_bigint_decoder"]) == 1
    err = capsys.readouterr().err
    assert "FAIL open.tiflow.decode.types.bigint-unsigned" in err
    assert main(["run", "--protocol", "open"]) == 2
    assert main(["run", "--decoder", "nocolon"]) == 2
    assert main(["run", "--decoder", "reference", "--case", "no.such.*"]) == 2
    capsys.readouterr()

    known = tmp_path / "known.txt"
    known.write_text(
        "open.*.decode.types.bigint-unsigned: reads BIGINT UNSIGNED as signed\n"
        "open.*.decode.types.bit: BIT(64) as well\n"
        "open.*.decode.workload.*: the same\n"
    )
    args = [
        "run",
        "--protocol",
        "open",
        "--decoder",
        f"{DOUBLES}:signed_bigint_decoder",
        "--xfail",
        str(known),
    ]
    assert main(args) == 0, capsys.readouterr().err
    capsys.readouterr()
    known.write_text(
        known.read_text() + "open.tiflow.decode.types.int: wrongly listed\n"
        "craft.*: never selected\n"
    )
    assert main(args) == 1
    err = capsys.readouterr().err
    assert (
        f"XPASS open.tiflow.decode.types.int: listed as a known failure but passes; delete "
        f"line {known}:4: open.tiflow.decode.types.int: wrongly listed"
    ) in err
    assert f"warning: stale known-failure entry {known}:5" in err


def test_run_command_reports_a_broken_fixture_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--decoder", "reference", "--fixtures", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: --fixtures {tmp_path}: {tmp_path / 'manifest.json'}: cannot read it "
        "(No such file or directory)\n"
    )


def test_demo_ends_with_the_reference_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    err = capsys.readouterr().err
    assert "golden suite against the reference codecs:" in err
    assert f"  {len(load_manifest()['cases'])} cases, 0 not passed" in err
    for protocol in ("open", "craft", "simple-json", "simple-avro", "debezium", "canal-json"):
        assert f"  {protocol:<12} required     passed" in err


def test_must_reject_cases() -> None:
    rejects = load_cases(directions=["reject"])
    assert {c.protocol for c in rejects} == {
        "open",
        "craft",
        "simple-json",
        "simple-avro",
        "debezium",
        "canal-json",
    }
    assert all(c.id.split(".")[3] == (c.error or {})["category"] for c in rejects)
    assert {o.status for o in run_cases(rejects, decoder=reference_decoder)} == {"pass"}
    lenient = load_adapter(f"{DOUBLES}:lenient_decoder", "decoder")
    outcomes = run_cases(rejects, decoder=lenient, adapters={"decoder": "x:y"})
    # it takes no options, so it cannot be told the messages are compressed: those are skipped
    compressed = {o.status for o in outcomes if o.case.options.get(COMPRESSION_OPTION)}
    assert compressed == {"skip"}
    assert {o.status for o in outcomes if not o.case.options.get(COMPRESSION_OPTION)} == {"fail"}
    [outcome] = [o for o in outcomes if o.case.id == "craft.tiflow.reject.framing.bad-version"]
    assert outcome.detail == (
        "accepted a message it must reject (0 event(s) decoded); expected a framing error, the "
        "reference says: craft: message 0, value byte 0: version 2, only version 1 exists"
    )
    assert "--case craft.tiflow.reject.framing.bad-version --decoder x:y" in outcome.replay


def test_run_imports_adapters_from_the_current_folder() -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ticdc_conformance.cli",
            "run",
            "--case",
            "open.tiflow.encode.types.bigint-unsigned",
            "--encoder",
            f"{DOUBLES}:one_byte_off_encoder",
        ],
        cwd=Path(__file__).parent,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PATH": "", "PYTHONSAFEPATH": "1"},
    )
    assert result.returncode == 1, result.stderr
    assert "message 0 value: first difference at byte offset" in result.stderr
    assert "1 case(s), 1 unexpected result(s)" in result.stderr


@pytest.mark.parametrize("command", [["run"], ["fixtures", "verify"], ["fixtures", "fetch"]])
def test_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert {"run": "--xfail", "verify": "--no-regenerate", "fetch": "--url"}[command[-1]] in out


def test_run_writes_a_json_lines_report(tmp_path: Path) -> None:
    report = tmp_path / "report.jsonl"
    assert (
        main(
            [
                "run",
                "--protocol",
                "craft",
                "--decoder",
                f"{DOUBLES}:signed_bigint_decoder",
                "--report",
                str(report),
            ]
        )
        == 1
    )
    import json

    lines = [json.loads(line) for line in report.read_text().splitlines()]
    assert [r["id"] for r in lines] == [
        c.id for c in load_cases(protocols=["craft"], directions=["decode", "reject"])
    ]
    failed = {r["id"] for r in lines if r["status"] == "fail"}
    assert failed == {i for i in cases_with_big_unsigned(default_root()) if i.startswith("craft.")}
    assert all(r["replay"] for r in lines if r["status"] == "fail")


class _RefusalError(Exception):
    """A decoder's error stating why it refuses."""

    def __init__(self, category: object) -> None:
        super().__init__("refused")
        self.category = category


@pytest.mark.parametrize(
    ("category", "warning"),
    [
        (None, ""),
        ("", ""),
        (7, ""),
        ("bad-varint", ""),
        ("FRAMING", ""),
        ("length", "rejected as 'length'; the case's category is 'bad-varint' (class 'framing')"),
    ],
)
def test_a_refusal_stating_another_category_passes_with_a_warning(
    category: object, warning: str
) -> None:
    def refuse(protocol: str, messages: object) -> list[object]:
        del protocol, messages
        raise _RefusalError(category)

    [case] = load_cases(ids=["craft.tiflow.reject.bad-varint.version-varint-overflows"])
    outcome = check_case(case, decoder=refuse)
    assert (outcome.status, outcome.warning) == ("pass", warning)
    assert ("  warning: " + warning in outcome.report()) is bool(warning)
