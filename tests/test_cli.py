"""The ``ticdc-conformance`` command, run as a real subprocess."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
import sysconfig
from importlib import resources
from pathlib import Path

import pytest

from ticdc_conformance.reference import CODECS

EXAMPLES = resources.files("ticdc_conformance.cli").joinpath("examples")


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", *args],
        input=stdin, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def test_console_script_is_installed() -> None:
    script = shutil.which("ticdc-conformance", path=sysconfig.get_path("scripts"))
    assert script is not None
    result = subprocess.run([script, "--help"], capture_output=True, text=True, check=True)
    assert "encode" in result.stdout
    assert "decode" in result.stdout


def test_encode_then_decode() -> None:
    case0 = EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text()
    encoded = run("encode", "--protocol", "open", stdin=case0)
    assert encoded.returncode == 0, encoded.stderr
    [message] = lines(encoded.stdout)
    size = sum(len(base64.b64decode(str(message[part]))) for part in ("key", "value"))
    assert size == 708
    decoded = run("decode", "--protocol", "open", stdin=encoded.stdout)
    assert decoded.returncode == 0, decoded.stderr
    [event] = lines(decoded.stdout)
    assert (event["kind"], event["op"], event["table"]) == ("row", "update", "b")


def test_encode_options_and_profile() -> None:
    case1 = EXAMPLES.joinpath("craft-benchmark-case1.change.jsonl").read_text()
    result = run("encode", "--protocol", "open", "--profile", "ticdc",
                 "--option", "max-batch-size=3", stdin=case1)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert len(lines(result.stdout)) == 2


def test_decode_reports_bad_messages_and_keeps_going() -> None:
    resolved = EXAMPLES.joinpath("resolved.change.jsonl").read_text()
    good = run("encode", "--protocol", "open", stdin=resolved).stdout.strip()
    broken = json.dumps({"key": base64.b64encode(b"\x00" * 8).decode(), "value": None})
    stdin = f"{good}\n{broken}\nnot json\n{good}\n"
    result = run("decode", "--protocol", "open", stdin=stdin)
    assert result.returncode == 1
    assert [e["kind"] for e in lines(result.stdout)] == ["resolved", "resolved"]
    errors = result.stderr.splitlines()
    assert (
        errors[0] == "error: line 2: open: message 1, key byte 0: version 0, only version 1 exists"
    )
    assert errors[1].startswith("error: line 3, at /: not JSON")
    assert len(errors) == 2


def test_decode_raw_files(tmp_path: Path) -> None:
    key, value = tmp_path / "key", tmp_path / "value"
    key.write_bytes((1).to_bytes(8, "big") + (14).to_bytes(8, "big") + b'{"ts":5,"t":3}')
    value.write_bytes(bytes(8))
    result = run("decode", "--protocol", "open", "--key-file", str(key), "--value-file", str(value))
    assert result.returncode == 0, result.stderr
    assert lines(result.stdout) == [{"kind": "resolved", "commit_ts": 5}]


@pytest.mark.parametrize(
    ("args", "stdin", "status", "message"),
    [
        (["encode", "--protocol", "open", "--option", "nope=1"], "", 2, "unknown option 'nope'"),
        (["encode", "--protocol", "open", "--option", "max-batch-size"], "", 2, "NAME=VALUE"),
        (["encode", "--protocol", "open"], '{"kind":"resolved"}\n', 1, "line 1, at /"),
        (["encode", "--protocol", "open", "--option", "max-message-bytes=100"],
         EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text(), 1,
         "open: event 0: row needs 744 bytes"),
        (["decode", "--protocol", "open", "--key-file", "/nonexistent/key"], "", 2, "No such file"),
        (["encode", "--protocol", "craft"], "", 2, "invalid choice"),
    ],
)  # fmt: skip
def test_errors_have_graded_exit_codes(
    args: list[str], stdin: str, status: int, message: str
) -> None:
    result = run(*args, stdin=stdin)
    assert result.returncode == status
    assert message in result.stderr
    assert result.stdout == ""


def test_demo_encodes_and_decodes_every_example() -> None:
    result = run("demo")
    assert result.returncode == 0, result.stderr
    records = lines(result.stdout)
    assert {(r["protocol"], r["profile"]) for r in records} == {
        (protocol, profile) for protocol, codec in CODECS.items() for profile in codec.PROFILES
    }
    assert all(r["decoded"] for r in records)
    summary = "open (tiflow) craft-benchmark-case0.change.jsonl: 1 event(s) -> 1 message(s), "
    assert summary + "708 bytes of key plus value" in result.stderr


@pytest.mark.parametrize("command", ["encode", "decode", "demo"])
def test_help_is_complete(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0
    if command == "encode":
        for option in ("max-message-bytes", "output-old-value", "large-message-handle-option",
                       "--profile", "claim-check-storage-uri"):  # fmt: skip
            assert option in result.stdout


def test_a_broken_run_exits_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ticdc_conformance.cli import main as cli

    def broken(*_: object) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(cli._COMMANDS, "demo", broken)
    assert cli.main(["demo"]) == 3
    assert capsys.readouterr().err == "error: the run broke: RuntimeError: disk on fire\n"


def test_debezium_encode_then_decode() -> None:
    case0 = EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text()
    encoded = run("encode", "--protocol", "debezium", "--profile", "ticdc",
                  "--option", "cluster-id=c1", stdin=case0)  # fmt: skip
    assert encoded.returncode == 0, encoded.stderr
    [message] = lines(encoded.stdout)
    value = json.loads(base64.b64decode(str(message["value"])))
    assert (value["payload"]["op"], value["payload"]["source"]["name"]) == ("u", "c1")
    decoded = run("decode", "--protocol", "debezium", stdin=encoded.stdout)
    assert decoded.returncode == 0, decoded.stderr
    [event] = lines(decoded.stdout)
    assert (event["kind"], event["op"], event["cluster_id"]) == ("row", "update", "c1")


def test_debezium_watermark_only_with_tidb_extension() -> None:
    resolved = EXAMPLES.joinpath("resolved.change.jsonl").read_text()
    plain = run("encode", "--protocol", "debezium", stdin=resolved)
    assert (plain.returncode, plain.stdout) == (0, "")  # TiCDC writes no message either
    extended = run("encode", "--protocol", "debezium", "--option", "enable-tidb-extension=true",
                   stdin=resolved)  # fmt: skip
    decoded = run("decode", "--protocol", "debezium", stdin=extended.stdout)
    [event] = lines(decoded.stdout)
    assert event["kind"] == "resolved"
    assert event["cluster_id"] == "default"


def test_debezium_decodes_a_real_debezium_message(shared: Path) -> None:
    directory = shared / "upstream/pingcap+tiflow/pkg/sink/codec/debezium/testdata"
    result = run("decode", "--protocol", "debezium",
                 "--key-file", str(directory / "datatype.dbz.key.json"),
                 "--value-file", str(directory / "datatype.dbz.json"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    [event] = lines(result.stdout)
    assert (event["commit_ts"], event["table"], "cluster_id" in event) == (None, "foo", False)
