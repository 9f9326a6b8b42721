"""The pytest plugin, driven through pytester: items per case, failures, known failures."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from conformance_doubles import cases_with_big_unsigned

from ticdc_conformance.fixtures import default_root, load_manifest
from ticdc_conformance.reference.compression import COMPRESSION_OPTION

pytest_plugins = ["pytester"]

DOUBLES = Path(__file__).with_name("conformance_doubles.py")
MANIFEST = load_manifest()


def ids(**wanted: str) -> list[str]:
    return [
        case["id"]
        for case in MANIFEST["cases"]
        if all(case[key] == value for key, value in wanted.items())
    ]


def compressed_decode_cases() -> list[str]:
    """The decode and reject cases whose messages are compressed."""
    return [
        case["id"]
        for case in MANIFEST["cases"]
        if case["direction"] in ("decode", "reject")
        and MANIFEST["fixtures"][case["fixture"]]["options"].get(COMPRESSION_OPTION, "none")
        != "none"
    ]


@pytest.fixture
def tester(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester folder where the test doubles import."""
    shutil.copy(DOUBLES, pytester.path / DOUBLES.name)
    pytester.syspathinsert()
    return pytester


def test_inert_without_an_adapter(tester: pytest.Pytester) -> None:
    tester.makepyfile("def test_plain():\n    pass\n")
    result = tester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_reference_passes_every_selected_case(tester: pytest.Pytester) -> None:
    result = tester.runpytest(
        "-p",
        "no:cacheprovider",
        "--ticdc-decoder=reference",
        "--ticdc-encoder=reference",
        "--ticdc-protocol=open",
        "--ticdc-protocol=craft",
        "--ticdc-tier=required",
    )
    want = ids(protocol="open", tier="required") + ids(protocol="craft", tier="required")
    result.assert_outcomes(passed=len(want))


def test_items_are_named_by_case_id_and_marked(tester: pytest.Pytester) -> None:
    result = tester.runpytest(
        "-p",
        "no:cacheprovider",
        "--collect-only",
        "-q",
        "--ticdc-decoder=reference",
        "--ticdc-profile=ticdc",
        "-m",
        "ticdc_simple_avro and ticdc_recommended",
    )
    collected = [line for line in result.outlines if line.startswith("ticdc::")]
    want = ids(protocol="simple-avro", profile="ticdc", tier="recommended", direction="decode")
    assert collected == [f"ticdc::{i}" for i in want]


def test_broken_decoder_fails_exactly_the_expected_cases(tester: pytest.Pytester) -> None:
    result = tester.runpytest(
        "-p",
        "no:cacheprovider",
        "-rf",
        "--ticdc-decoder=conformance_doubles:signed_bigint_decoder",
    )
    failed = {
        line.split(" ")[1].removeprefix("ticdc::")
        for line in result.outlines
        if line.startswith("FAILED ticdc::")
    }
    expected = cases_with_big_unsigned(default_root())
    assert failed == expected
    decoding = len(ids(direction="decode")) + len(ids(direction="reject"))
    # the double takes no options, so it cannot be told a fixture's messages are compressed
    skipped = len(compressed_decode_cases())
    assert skipped > 0
    result.assert_outcomes(
        passed=decoding - len(expected) - skipped, failed=len(expected), skipped=skipped
    )
    result.stdout.fnmatch_lines(
        [
            "*FAIL open.tiflow.decode.types.bigint-unsigned",
            "*fixture: *data/open/tiflow.types.bigint-unsigned.*",
            "*decoded events differ (expected vs actual, by JSON Pointer):",
            '*/after/*/value: expected 18446744073709551615, got -1 (column "c")',
            "*replay: ticdc-conformance run --case open.tiflow.decode.types.bigint-unsigned "
            "--decoder conformance_doubles:signed_bigint_decoder",
            "*replay (pytest): pytest --ticdc-case=open.tiflow.decode.types.bigint-unsigned "
            "--ticdc-decoder=conformance_doubles:signed_bigint_decoder",
        ]
    )


def test_known_failures(tester: pytest.Pytester) -> None:
    known = tester.path / "known.txt"
    known.write_text(
        "open.*.decode.types.bigint-unsigned: reads BIGINT UNSIGNED as signed\n"
        "open.tiflow.decode.types.int: listed by mistake\n"
        "craft.*: nothing selected matches\n"
    )
    result = tester.runpytest(
        "-p",
        "no:cacheprovider",
        "-rfX",
        "--ticdc-protocol=open",
        "--ticdc-case=open.*.decode.types.*int*",
        "--ticdc-decoder=conformance_doubles:signed_bigint_decoder",
        f"--ticdc-xfail={known}",
    )
    selected = [
        i
        for i in ids(protocol="open", direction="decode")
        if ".types." in i and "int" in i.split(".")[-1]
    ]
    # two expected failures, one unexpected pass (fails the run), the rest pass
    result.assert_outcomes(xfailed=2, failed=1, passed=len(selected) - 3)
    result.stdout.fnmatch_lines(
        [
            f"*XPASS(strict)*listed by mistake (known failure {known}:2; if it passes, delete "
            "that line: open.tiflow.decode.types.int: listed by mistake)*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*ticdc: stale known-failure entries*",
            f"{known}:3: matches no selected case: craft.*: nothing selected matches",
        ]
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_bad_options_are_usage_errors(tester: pytest.Pytester) -> None:
    result = tester.runpytest("-p", "no:cacheprovider", "--ticdc-decoder=nocolon")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result = tester.runpytest(
        "-p", "no:cacheprovider", "--ticdc-decoder=reference", "--ticdc-fixtures=9.9.9"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*fixtures 9.9.9 are not in the cache*"])


def test_fixtures_from_a_path(tester: pytest.Pytester, tmp_path: Path) -> None:
    copy = tmp_path / "tree"
    manifest = json.loads((default_root() / "manifest.json").read_text())
    manifest["cases"] = manifest["cases"][:3]
    for case in manifest["cases"]:
        for name in manifest["fixtures"][case["fixture"]]["sha256"]:
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(default_root() / name, copy / name)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    result = tester.runpytest(
        "-p",
        "no:cacheprovider",
        "--ticdc-decoder=reference",
        "--ticdc-encoder=reference",
        f"--ticdc-fixtures={copy}",
    )
    result.assert_outcomes(passed=3)


def test_property_round_trip_items(tester: pytest.Pytester) -> None:
    common = [
        "-p",
        "no:cacheprovider",
        "--ticdc-protocol=craft",
        "--ticdc-protocol=open",
        "--ticdc-profile=tiflow",
        "--ticdc-property-examples=5",
        "-m",
        "ticdc_property",
    ]
    result = tester.runpytest(*common, "--ticdc-decoder=reference")
    result.assert_outcomes(passed=2)
    result = tester.runpytest(*common, "--ticdc-decoder=conformance_doubles:late_commit_ts_decoder")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*craft (tiflow): the decoder disagrees with the reference on the change event *",
            "*/0/commit_ts: expected *, got *",
            "*check(",
            "*event=RowChangedEvent(*",
        ]
    )


def test_loading_the_plugin_imports_no_codec() -> None:
    import subprocess
    import sys

    code = (
        "import sys, ticdc_conformance.suites.plugin as p; "
        "print(sorted(m for m in sys.modules if m.startswith('ticdc_conformance')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == str(
        ["ticdc_conformance", "ticdc_conformance.suites", "ticdc_conformance.suites.plugin"]
    )


def test_encoder_property_round_trip_items(tester: pytest.Pytester) -> None:
    common = [
        "-p",
        "no:cacheprovider",
        "--ticdc-protocol=craft",
        "--ticdc-protocol=simple-json",
        "--ticdc-profile=tiflow",
        "--ticdc-property-examples=5",
        "-m",
        "ticdc_property",
    ]
    result = tester.runpytest(*common, "--ticdc-encoder=reference", "--collect-only", "-q")
    assert [line for line in result.outlines if line.startswith("ticdc::")] == [
        "ticdc::property.craft.tiflow.encoder-round-trip",
        "ticdc::property.simple-json.tiflow.encoder-round-trip",
    ]
    result = tester.runpytest(*common, "--ticdc-encoder=reference")
    result.assert_outcomes(passed=2)
    result = tester.runpytest(
        *common, "--ticdc-encoder=conformance_doubles:late_commit_ts_encoder", "-k", "craft"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*craft (tiflow): the reference decodes the encoder's output differently from its own "
            "on the change event {*",
            "*(reference encoder vs encoder under test, by JSON Pointer)",
            "*/0/commit_ts: expected *, got *",
            "*event=RowChangedEvent(*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_both_property_round_trips_at_once(tester: pytest.Pytester) -> None:
    result = tester.runpytest(
        "-p",
        "no:cacheprovider",
        "--ticdc-protocol=open",
        "--ticdc-profile=ticdc",
        "--ticdc-property-examples=3",
        "-m",
        "ticdc_property",
        "-v",
        "--ticdc-decoder=reference",
        "--ticdc-encoder=reference",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*property.open.ticdc.round-trip PASSED*",
            "*property.open.ticdc.encoder-round-trip PASSED*",
        ]
    )


def test_a_testee_in_any_language_runs_as_pytest_items(tester: pytest.Pytester) -> None:
    """The reference testee (a separate process speaking the testee protocol) passes; pytest's
    own JUnit XML covers it."""
    command = shlex.join([sys.executable, "-m", "ticdc_conformance.suites.testee.reference"])
    result = tester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--ticdc-testee={command}",
        "--ticdc-protocol=craft",
        "--ticdc-tier=required",
        "--junitxml=conformance.xml",
    )
    want = ids(protocol="craft", tier="required")
    result.assert_outcomes(passed=len(want))
    junit = (tester.path / "conformance.xml").read_text(encoding="utf-8")
    assert junit.count("<testcase ") == len(want)


def test_a_testee_replaces_decoder_and_encoder(tester: pytest.Pytester) -> None:
    command = shlex.join([sys.executable, "-m", "ticdc_conformance.suites.testee.reference"])
    result = tester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--ticdc-testee={command}",
        "--ticdc-decoder=reference",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ticdc-testee replaces --ticdc-decoder and --ticdc-encoder*"])


def test_adapters_import_from_the_rootdir(pytester: pytest.Pytester) -> None:
    """As ``run`` finds ``mypkg.adapter`` in the folder it runs in, the plugin finds it in
    pytest's rootdir, here a folder other than the one pytest runs in."""
    project = pytester.path / "project"
    (project / "mypkg").mkdir(parents=True)
    (project / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    (project / "mypkg" / "adapter.py").write_text(
        "from ticdc_conformance.suites.gate.adapters import reference_decoder as decode\n",
        encoding="utf-8",
    )
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--ticdc-decoder=mypkg.adapter:decode",
        "--ticdc-case=open.tiflow.decode.events.*",
        str(project),
    )
    want = [
        i
        for i in ids(protocol="open", profile="tiflow", direction="decode")
        if i.startswith("open.tiflow.decode.events.")
    ]
    result.assert_outcomes(passed=len(want))


def test_property_examples_without_hypothesis_name_the_extra(tester: pytest.Pytester) -> None:
    # as if Hypothesis were not installed (its own pytest plugin has loaded by then)
    tester.makeconftest("import sys\nsys.modules['hypothesis'] = None\n")
    result = tester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-p",
        "no:hypothesispytest",
        "--ticdc-decoder=reference",
        "--ticdc-property-examples=5",
        "--ticdc-case=open.tiflow.decode.events.resolved",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--ticdc-property-examples needs the generators extra*"])
    assert "Traceback" not in result.stderr.str()
