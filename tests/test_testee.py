"""The testee runner: ``run --testee`` against testee scripts, good and broken on purpose."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from conformance_doubles import cases_with_big_unsigned
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from ticdc_conformance.cli.main import main
from ticdc_conformance.fixtures import default_root, kit_version, load_manifest
from ticdc_conformance.reference.forms import json_schema
from ticdc_conformance.suites import load_cases
from ticdc_conformance.suites import testee as runner
from ticdc_conformance.suites.report import report_schema
from ticdc_conformance.suites.testee._protocol import (
    ResponseError,
    case_request,
    parse_answer,
    parse_hello,
)

DOUBLES = Path(__file__).with_name("testee_doubles.py")
MANIFEST = load_manifest()
BIGINT = "open.tiflow.decode.types.bigint-unsigned"
OPEN_TIFLOW_TYPES = "open.tiflow.*.types.*"


def double(mode: str, pattern: str | None = None) -> str:
    """The command line of a testee double."""
    return shlex.join([sys.executable, str(DOUBLES), mode, *([pattern] if pattern else [])])


def reference_testee() -> str:
    return shlex.join([sys.executable, "-m", "ticdc_conformance.suites.testee.reference"])


def ids(pattern: str = "*", **wanted: str) -> list[str]:
    import fnmatch

    return [
        case["id"]
        for case in MANIFEST["cases"]
        if fnmatch.fnmatchcase(case["id"], pattern)
        and all(case[key] == value for key, value in wanted.items())
    ]


def run(tmp_path: Path, command: str, *args: str) -> tuple[int, dict[str, dict[str, Any]]]:
    """``run --testee`` with a report; the exit status and the report lines by case id."""
    report = tmp_path / "report.jsonl"
    report.unlink(missing_ok=True)
    status = main(["run", "--testee", command, "--report", str(report), *args])
    lines = [json.loads(x) for x in report.read_text().splitlines()] if report.exists() else []
    record = Draft202012Validator(report_schema("run"))
    for line in lines:  # every record meets the published schema (docs/reports.md)
        record.validate(line)
    return status, {line["id"]: line for line in lines}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # crash-once keeps its marker file here


def validators() -> tuple[Draft202012Validator, Draft202012Validator]:
    """Validators of a request and of a response, from the published JSON Schema."""
    text = resources.files("ticdc_conformance.suites.testee").joinpath("protocol.schema.json")
    schema = json.loads(text.read_text("utf-8"))
    Draft202012Validator.check_schema(schema)
    registry = Registry().with_resources(
        (str(s["$id"]), Resource.from_contents(s))
        for s in (schema, json_schema("change-event"), json_schema("decoded-event"))
    )
    return (
        Draft202012Validator({"$ref": f"{schema['$id']}#/$defs/request"}, registry=registry),
        Draft202012Validator({"$ref": f"{schema['$id']}#/$defs/response"}, registry=registry),
    )


def test_the_reference_testee_passes_every_case_and_speaks_the_schema(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "transcript.txt"
    status, report = run(tmp_path, reference_testee(), "--testee-log", str(log))
    err = capsys.readouterr().err
    assert status == 0, err
    assert sorted(report) == sorted(c["id"] for c in MANIFEST["cases"])
    assert {r["status"] for r in report.values()} == {"pass"}
    hello = f"testee ticdc-conformance reference {kit_version()}: decode open (tiflow, ticdc);"
    assert err.startswith(hello)
    assert f"{len(MANIFEST['cases'])} case(s), 0 unexpected result(s)" in err
    # every line both ways follows the published JSON Schema
    request_schema, response_schema = validators()
    lines = log.read_text("utf-8").splitlines()
    sent = [json.loads(line[2:]) for line in lines if line.startswith("> ")]
    received = [json.loads(line[2:]) for line in lines if line.startswith("< ")]
    assert sent[0]["type"] == "hello"
    assert sent[-1] == {"type": "shutdown"}
    assert len(sent) == len(received) + 1 == len(MANIFEST["cases"]) + 2
    kinds = {"decode": 0, "encode": 0}
    for number, request in enumerate(sent):
        request_schema.validate(request)
        kinds[request["type"]] = kinds.get(request["type"], 0) + 1
        if number < len(received):
            response_schema.validate(received[number])
    assert kinds["encode"] == len(ids(direction="encode"))
    # a must-reject case is an ordinary decode request: the testee never learns the verdict
    assert kinds["decode"] == len(ids(direction="decode")) + len(ids(direction="reject"))
    assert all(
        set(r) == {"type", "id", "protocol", "profile", "options", "messages"}
        for r in sent
        if r["type"] == "decode"
    )
    assert any("error" in r for r in received)


def test_a_broken_decoder_fails_exactly_the_expected_cases(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    command = double("signed-bigint")
    status, report = run(tmp_path, command, "--protocol", "open", "--protocol", "craft")
    err = capsys.readouterr().err
    assert status == 1
    failed = {i for i, r in report.items() if r["status"] == "fail"}
    expected = {
        i for i in cases_with_big_unsigned(default_root()) if i.split(".")[0] in {"open", "craft"}
    }
    assert BIGINT in expected
    assert failed == expected
    assert len(report) == len(ids(protocol="open")) + len(ids(protocol="craft"))
    assert f"FAIL {BIGINT}\n" in err
    assert '/0/after/1/value: expected 18446744073709551615, got -1 (column "c")' in err
    assert report[BIGINT]["replay"] == shlex.join(
        ["ticdc-conformance", "run", "--case", BIGINT, "--testee", command]
    )
    # the same known-failure files as for a Python adapter
    known = tmp_path / "known.txt"
    known.write_text("".join(f"{i}: int64 in our consumer\n" for i in sorted(expected)))
    status, _ = run(
        tmp_path, command, "--protocol", "open", "--protocol", "craft", "--xfail", str(known)
    )
    assert status == 0, capsys.readouterr().err


def test_a_crash_fails_its_case_passes_stderr_through_and_the_testee_restarts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run(tmp_path, double("crash", BIGINT), "--case", OPEN_TIFLOW_TYPES)
    err = capsys.readouterr().err
    assert status == 1
    assert {i for i, r in report.items() if r["status"] == "fail"} == {BIGINT}
    assert len(report) == len(ids(OPEN_TIFLOW_TYPES))
    detail = report[BIGINT]["detail"]
    assert detail.startswith(
        "the testee crashed on this case (exit status 2); it is started "
        "again for the next case; its last stderr lines:\n"
    )
    assert f"  panic: runtime error on {BIGINT}" in detail
    assert f"testee: panic: runtime error on {BIGINT}\n" in err  # passed through as it came
    assert "the testee was started again 1 time(s)" in err


def test_a_broken_encoder_gets_the_same_diffs(tmp_path: Path) -> None:
    pattern = "open.tiflow.encode.types.*"
    status, report = run(tmp_path, double("flip-byte"), "--case", pattern)
    assert status == 1
    assert sorted(report) == sorted(ids(pattern))
    assert {r["status"] for r in report.values()} == {"fail"}
    assert all(
        "message 0 value: first difference at byte offset" in r["detail"] for r in report.values()
    )


def test_a_testee_that_changes_its_capabilities_breaks_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run(tmp_path, double("fickle", BIGINT), "--case", OPEN_TIFLOW_TYPES)
    assert status == 3
    assert report[BIGINT]["status"] == "fail"
    assert "error: the run broke: the restarted testee declares other capabilities; " in (
        capsys.readouterr().err
    )


def test_a_crash_on_a_must_reject_case_is_no_rejection(tmp_path: Path) -> None:
    [reject] = ids("open.tiflow.reject.*")[:1]
    status, report = run(tmp_path, double("crash-once", reject), "--case", reject)
    assert status == 1
    assert report[reject]["status"] == "fail"
    assert "the testee crashed on this case" in report[reject]["detail"]


def test_a_lenient_decoder_fails_the_must_reject_cases(tmp_path: Path) -> None:
    status, report = run(tmp_path, double("lenient"), "--case", "*.tiflow.reject.*")
    assert status == 1
    assert report
    assert {r["status"] for r in report.values()} == {"fail"}
    assert all(
        r["detail"].startswith("accepted a message it must reject (0 event(s) decoded)")
        for r in report.values()
    )


def test_a_hung_testee_times_out_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run(
        tmp_path, double("hang", BIGINT), "--case", OPEN_TIFLOW_TYPES, "--testee-timeout", "0.5"
    )
    assert status == 1, capsys.readouterr().err
    assert {i for i, r in report.items() if r["status"] == "fail"} == {BIGINT}
    assert report[BIGINT]["detail"].startswith(
        "the testee did not answer within 0.5 s (--testee-timeout); it was killed and is "
        "started again for the next case"
    )
    assert len(report) == len(ids(OPEN_TIFLOW_TYPES))


def test_garbage_is_a_failure_of_its_case_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run(tmp_path, double("garbage", BIGINT), "--case", OPEN_TIFLOW_TYPES)
    err = capsys.readouterr().err
    assert status == 1
    assert "Traceback" not in err
    assert {i for i, r in report.items() if r["status"] == "fail"} == {BIGINT}
    assert report[BIGINT]["detail"] == (
        'malformed response from the testee: not JSON (Expecting value at column 1): "this is '
        'not JSON"; it is started again for the next case'
    )
    # a response in step that breaks the protocol fails its case; no restart is needed
    status, report = run(tmp_path, double("bad-events", BIGINT), "--case", OPEN_TIFLOW_TYPES)
    assert status == 1
    assert report[BIGINT]["detail"].startswith(
        "malformed response from the testee: /events/0: expected an object: "
    )
    assert "started again" not in capsys.readouterr().err


def test_an_answer_without_end_is_cut_at_the_limit_and_fails_its_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run(
        tmp_path,
        double("flood", BIGINT),
        "--case",
        OPEN_TIFLOW_TYPES,
        "--testee-max-line-bytes",
        "1048576",
    )
    assert status == 1, capsys.readouterr().err
    assert {i for i, r in report.items() if r["status"] == "fail"} == {BIGINT}
    assert report[BIGINT]["detail"].startswith(
        "the testee answered more than 1048576 bytes without a newline "
        "(--testee-max-line-bytes); it was stopped and is started again for the next case"
    )
    assert len(report) == len(ids(OPEN_TIFLOW_TYPES))


def test_a_descendant_in_a_session_of_its_own_ends_with_the_testee(tmp_path: Path) -> None:
    status, report = run(tmp_path, double("grandchild"), "--case", BIGINT)
    assert (status, len(report)) == (0, 1)
    pid = int((tmp_path / "grandchild.pid").read_text())
    for _ in range(50):  # killed with the testee; reaped by init a moment later
        state = Path(f"/proc/{pid}/stat")
        if not state.exists() or state.read_text().split(") ")[1].startswith("Z"):
            break
        time.sleep(0.1)
    else:
        os.kill(pid, signal.SIGKILL)
        pytest.fail(f"the testee's descendant {pid} outlived the run")


def test_a_stray_line_is_a_warning_not_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run(tmp_path, double("chatty", BIGINT), "--case", OPEN_TIFLOW_TYPES)
    err = capsys.readouterr().err
    assert status == 0, err
    assert len(report) == len(ids(OPEN_TIFLOW_TYPES))
    assert (
        'warning: the testee wrote a line that answers no request: "debug: that went well"\n'
    ) in err


def test_past_the_restart_budget_the_run_stops_with_status_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run(
        tmp_path, double("crash"), "--case", OPEN_TIFLOW_TYPES, "--testee-restarts", "2"
    )
    err = capsys.readouterr().err
    assert status == 3
    selected = sorted(ids(OPEN_TIFLOW_TYPES))
    assert list(report) == selected[:3]
    assert {r["status"] for r in report.values()} == {"fail"}
    assert (
        f"error: the run broke: the testee broke 3 times; stopped (--testee-restarts 2); "
        f"{selected[3]} and the cases after it were not run"
    ) in err


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        (
            "hello-crash",
            "the run broke: the testee exited (exit status 1) before its hello; its "
            "last stderr lines:\n  boom: no config",
        ),
        (
            "hello-old",
            "the run broke: the testee's hello breaks the protocol: /protocol_version: "
            "the testee speaks 0, this runner speaks 1: ",
        ),
    ],
)
def test_a_testee_that_cannot_say_hello_breaks_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, message: str
) -> None:
    status, report = run(tmp_path, double(mode))
    assert status == 3
    assert report == {}
    assert message in capsys.readouterr().err


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "no-such-testee-program --flag")[0] == 2
    assert "--testee no-such-testee-program --flag: cannot run it:" in capsys.readouterr().err
    assert main(["run", "--testee", double("reference"), "--decoder", "reference"]) == 2
    assert main(["run", "--testee", "  "]) == 2
    assert main(["run", "--testee", double("reference"), "--testee-timeout", "0"]) == 2
    assert main(["run", "--testee", double("reference"), "--case", "no.such.*"]) == 2
    assert "no case matches the selection and the testee's capabilities" in (
        capsys.readouterr().err
    )


def test_only_what_the_testee_declares_is_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, report = run(tmp_path, double("decode-open"), "--protocol", "open")
    err = capsys.readouterr().err
    assert status == 0, err
    want = ids(protocol="open", profile="tiflow", direction="decode") + ids(
        protocol="open", profile="tiflow", direction="reject"
    )
    assert sorted(report) == sorted(want)
    assert f"testee ticdc-conformance reference {kit_version()}: decode open (tiflow)\n" in err
    assert (
        "warning: the testee declares /capabilities/decode/maxwell, which this kit "
        "does not know; ignored\n"
    ) in err
    skipped = len(ids(protocol="open", profile="ticdc", direction="decode")) + len(
        ids(protocol="open", profile="ticdc", direction="reject")
    )
    assert f"{skipped} selected case(s) outside what the testee declares are not run" in err


def test_a_skip_response_skips_the_case(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, report = run(tmp_path, double("skip-encode"), "--case", OPEN_TIFLOW_TYPES)
    assert status == 0, capsys.readouterr().err
    skipped = {i for i, r in report.items() if r["status"] == "skip"}
    assert skipped == set(ids(OPEN_TIFLOW_TYPES, direction="encode"))
    assert {r["detail"] for i, r in report.items() if i in skipped} == {
        "the testee skips this case: no encoder yet"
    }


def test_parse_hello() -> None:
    hello = parse_hello(
        json.dumps(
            {
                "protocol_version": 1,
                "name": "go-consumer",
                "version": "1.2",
                "capabilities": {
                    "decode": {"open": ["tiflow", "ticdc", "v10"], "maxwell": ["x"]},
                    "encode": {"craft": ["tiflow"]},
                    "check-stream": {},
                },
            }
        )
    )
    assert hello.decode == {"open": ("tiflow", "ticdc")}
    assert hello.encode == {"craft": ("tiflow",)}
    assert hello.ignored == (
        "/capabilities/check-stream",
        "/capabilities/decode/open/v10",
        "/capabilities/decode/maxwell",
    )
    assert hello.directions() == ["decode", "reject", "encode"]
    assert (
        hello.describe()
        == "testee go-consumer 1.2: decode open (tiflow, ticdc); encode craft (tiflow)"
    )
    for bad, reason in [
        ("[]", "expected a JSON object, got list"),
        ('{"protocol_version": true}', "/protocol_version: the testee speaks true"),
        ('{"protocol_version": 1}', "/name: expected"),
        ('{"protocol_version": 1, "name": "x", "capabilities": []}', "/capabilities: "),
        (
            '{"protocol_version": 1, "name": "x", "capabilities": {"decode": {"open": "tiflow"}}}',
            "/capabilities/decode/open: expected a list of profile names",
        ),
    ]:
        with pytest.raises(ResponseError, match="^" + reason.replace("(", r"\(")):
            parse_hello(bad)


def test_parse_answer() -> None:
    def parse(document: object, kind: str = "decode") -> object:
        return parse_answer(json.dumps(document), case_id="c", kind=kind)

    assert parse({"id": "c", "events": [{"kind": "resolved"}]}) == parse_answer(
        '{"id":"c","events":[{"kind":"resolved"}]}', case_id="c", kind="decode"
    )
    answer = parse({"id": "c", "error": {"message": "bad", "category": "truncated"}})
    assert getattr(answer, "error", None) == "[truncated] bad"
    answer = parse({"id": "c", "messages": [{"key": None, "value": "AAE="}]}, "encode")
    assert [m.value for m in getattr(answer, "messages", [])] == [b"\x00\x01"]
    for document, kind, reason, in_step in [
        ({"id": "d", "events": []}, "decode", '/id: expected "c", got "d"', False),
        (
            {"id": "c"},
            "decode",
            "expected exactly one of events, messages, error, skipped, got none",
            True,
        ),
        ({"id": "c", "events": [], "error": {}}, "decode", "expected exactly one of", True),
        (
            {"id": "c", "messages": []},
            "decode",
            '/messages: a decode request is answered with "events"',
            True,
        ),
        ({"id": "c", "events": {}}, "decode", "/events: expected a list", True),
        (
            {"id": "c", "error": "bad"},
            "decode",
            '/error: expected an object with a "message" string',
            True,
        ),
        (
            {"id": "c", "skipped": {}},
            "decode",
            '/skipped: expected an object with a "reason" string',
            True,
        ),
        (
            {"id": "c", "messages": [{"key": "!!"}]},
            "encode",
            "/messages/0: missing member 'value'",
            True,
        ),
        (
            {"id": "c", "messages": [{"key": "!!", "value": None}]},
            "encode",
            "/messages/0/key: invalid base64",
            True,
        ),
    ]:
        with pytest.raises(ResponseError) as raised:
            parse(document, kind)
        assert str(raised.value).startswith(reason)
        assert raised.value.in_step is in_step


def test_requests_carry_the_json_forms() -> None:
    [case] = load_cases(ids=["open.tiflow.encode.events.resolved"])
    request = case_request(case, events=case.change_events())
    assert request == {
        "type": "encode",
        "id": case.id,
        "protocol": "open",
        "profile": "tiflow",
        "options": {},
        "events": [
            json.loads(line) for line in (case.root / (case.change or "")).read_text().splitlines()
        ],
    }


def test_shutdown_is_clean() -> None:
    from ticdc_conformance.suites.testee import Testee

    testee = Testee(reference_testee(), timeout=10)
    assert testee.start().encode
    process = testee._process
    assert process is not None
    testee.close()
    assert process.popen.returncode == 0  # it exited on its own, after the shutdown request
    assert all(not thread.is_alive() for thread in process.threads)


def test_a_testee_without_hello_breaks_the_run() -> None:
    testee = runner.Testee(double("hello-hang"), timeout=0.5, startup_timeout=0.5)
    with pytest.raises(
        runner.TesteeBrokenError, match=r"^the testee did not answer within 0.5 s to its"
    ):
        testee.start()


@pytest.mark.parametrize("mode", ["crash", "skip-encode", "hang"])
def test_only_an_error_answer_refuses_an_encode(tmp_path: Path, mode: str) -> None:
    [refusal] = ids("open.tiflow.encode.facts.max-message-bytes-187")
    status, report = run(
        tmp_path, double(mode, refusal), "--case", refusal, "--testee-timeout", "0.5"
    )
    assert report[refusal]["status"] == ("skip" if mode == "skip-encode" else "fail")
    assert status == (0 if mode == "skip-encode" else 1)


def test_a_stated_category_is_compared_and_another_one_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    framing = "craft.tiflow.reject.framing.bad-version"
    checksum = "simple-json.tiflow.reject.checksum.checksum-value-changed"
    truncated = "open.tiflow.reject.truncated.key-truncated"
    chosen = [arg for case in (framing, checksum, truncated) for arg in ("--case", case)]
    status, report = run(tmp_path, double("classed"), *chosen)
    assert status == 0
    assert {(r["status"], r["warning"]) for r in report.values()} == {("pass", "")}
    assert report[truncated]["detail"].startswith("rejected: TesteeError: [LENGTH] ")
    capsys.readouterr()
    status, report = run(tmp_path, double("miscategorized"), *chosen)
    assert status == 0  # a warning, not a failure
    assert {r["status"] for r in report.values()} == {"pass"}
    assert report[checksum]["warning"] == ""
    assert report[framing]["warning"] == (
        "rejected as 'checksum'; the case's category is 'framing' (class 'framing')"
    )
    assert report[truncated]["warning"] == (
        "rejected as 'checksum'; the case's category is 'truncated' (class 'length')"
    )
    err = capsys.readouterr().err
    assert f"warning: {framing}: rejected as 'checksum'" in err
    assert f"warning: {checksum}" not in err


def test_an_error_category_that_is_not_text_breaks_the_protocol() -> None:
    line = json.dumps({"id": "c", "error": {"message": "bad", "category": 3}})
    with pytest.raises(ResponseError, match="/error/category: expected a string"):
        parse_answer(line, case_id="c", kind="decode")
    answer = parse_answer(
        json.dumps({"id": "c", "error": {"message": "bad", "category": "state"}}),
        case_id="c",
        kind="decode",
    )
    assert (answer.error, answer.error_category) == ("[state] bad", "state")
