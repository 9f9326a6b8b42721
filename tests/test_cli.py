"""The ``ticdc-conformance`` command, run as a real subprocess."""

from __future__ import annotations

import argparse
import base64
import importlib
import json
import shutil
import subprocess
import sys
import sysconfig
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from ticdc_conformance.generators.dump import read_dump
from ticdc_conformance.generators.faults import FAULT_KINDS
from ticdc_conformance.reference import CODECS, DecodedColumn, DecodedRow, Message
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.forms import change_line_limit, message_line_limit

EXAMPLES = resources.files("ticdc_conformance.fixtures").joinpath("examples")


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


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
    result = run(
        "encode",
        "--protocol",
        "open",
        "--profile",
        "ticdc",
        "--option",
        "max-batch-size=3",
        stdin=case1,
    )
    assert result.returncode == 0, result.stderr
    assert len(lines(result.stdout)) == 2


def test_craft_encode_then_decode() -> None:
    case0 = EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text()
    encoded = run("encode", "--protocol", "craft", stdin=case0)
    assert encoded.returncode == 0, encoded.stderr
    [message] = lines(encoded.stdout)
    assert message["key"] is None  # §3.2: the Kafka key is nil
    assert len(base64.b64decode(str(message["value"]))) == 301  # §8
    decoded = run("decode", "--protocol", "craft", stdin=encoded.stdout)
    assert decoded.returncode == 0, decoded.stderr
    [event] = lines(decoded.stdout)
    assert [event[m] for m in ("kind", "op", "schema", "table")] == ["row", "update", "a", "b"]
    assert json.dumps(event["after"]).startswith('[{"name": "varchar"')  # table order, §3.2


def test_craft_options_and_raw_value_file(tmp_path: Path) -> None:
    case1 = EXAMPLES.joinpath("craft-benchmark-case1.change.jsonl").read_text()
    result = run("encode", "--protocol", "craft", "--option", "max-batch-size=3", stdin=case1)
    assert result.returncode == 0, result.stderr
    messages = lines(result.stdout)
    assert len(messages) == 2
    value = tmp_path / "value"
    value.write_bytes(base64.b64decode(str(messages[1]["value"])))
    decoded = run("decode", "--protocol", "craft", "--value-file", str(value))
    assert decoded.returncode == 0, decoded.stderr
    [event] = lines(decoded.stdout)
    assert (event["table"], event["partition_id"]) == ("f", 6)


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
        (
            ["encode", "--protocol", "open", "--option", "max-message-bytes=100"],
            EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text(),
            1,
            "error: line 1: open: row needs 744 bytes",
        ),
        (["decode", "--protocol", "open", "--key-file", "/nonexistent/key"], "", 2, "No such file"),
        (["encode", "--protocol", "avro"], "", 2, "invalid choice"),
        (
            ["encode", "--protocol", "craft", "--profile", "ticdc"],
            "",
            2,
            "craft: profile 'ticdc' has no Craft: only classic TiCDC (tiflow) writes it",
        ),
        (
            ["encode", "--protocol", "craft", "--option", "output-old-value=false"],
            "",
            2,
            "option output-old-value does not apply",
        ),
        (
            ["decode", "--protocol", "craft"],
            '{"key":null,"value":"AQ=="}\n',
            1,
            "error: line 1: craft: message 0, value byte 1: the reversed-uvarint trailer runs past",
        ),
    ],
)
def test_errors_have_graded_exit_codes(
    args: list[str], stdin: str, status: int, message: str
) -> None:
    result = run(*args, stdin=stdin)
    assert result.returncode == status
    assert message in result.stderr
    assert result.stdout == ""


def _row_line(value: str) -> str:
    table = {
        "schema": "s",
        "name": "t",
        "columns": [
            {"name": "id", "type": "int", "key": "primary"},
            {"name": "c", "type": "tinyint"},
        ],
    }
    row = {"kind": "row", "commit_ts": 1 << 18, "table": table, "op": "insert", "after": {"id": 1}}
    return json.dumps(row).replace('"id": 1}', f'"id": 1, "c": {value}}}') + "\n"


ENCODE_INPUT_ERRORS = [
    (protocol, _row_line("1") + "\n" + _row_line("300"), f"line 3: {protocol}: column 'c'")
    for protocol in sorted(CODECS)
] + [
    ("open", _row_line("1") + "[" * 100_000 + "]" * 100_000 + "\n", "line 2, at /: not JSON"),
    ("open", _row_line("1" + "0" * 4999), "line 1, at /: a number of more than 4300 digits"),
    ("open", _row_line("1").replace('"s"', '"s\udcff"'), "line 1, at /: not UTF-8 at byte"),
]
"""(protocol, stdin, the error): an invalid value on the third line (the second is blank),
JSON nested 100,000 deep, a 5000-digit number, a 0xff byte."""


@pytest.mark.parametrize(
    ("protocol", "stdin", "message"),
    ENCODE_INPUT_ERRORS,
    ids=[*sorted(CODECS), "deep-nesting", "5000-digits", "not-utf8"],
)
def test_encode_names_the_input_line_and_exits_1(protocol: str, stdin: str, message: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", "encode", "--protocol", protocol],
        input=stdin.encode("utf-8", "surrogateescape"),
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert result.stdout == b""  # nothing of the lines before it either
    assert f"error: {message}" in result.stderr.decode(), result.stderr


def test_demo_encodes_and_decodes_every_example() -> None:
    result = run("demo")
    assert result.returncode == 0, result.stderr
    records = lines(result.stdout)
    assert {(r["protocol"], r["profile"]) for r in records} == {
        ("open", "tiflow"),
        ("open", "ticdc"),
        ("craft", "tiflow"),
        ("debezium", "tiflow"),
        ("debezium", "ticdc"),
        ("canal-json", "tiflow"),
        ("canal-json", "ticdc"),
        *(
            (protocol, profile)
            for protocol in ("simple-json", "simple-avro")
            for profile in ("tiflow", "ticdc")
        ),
    }
    assert all(r["decoded"] for r in records)
    summary = "open (tiflow) craft-benchmark-case0.change.jsonl: 1 event(s) -> 1 message(s), "
    assert summary + "708 bytes of key plus value" in result.stderr
    summary = "craft (tiflow) craft-benchmark-case1.change.jsonl: 4 event(s) -> 1 message(s), "
    assert summary + "997 bytes of key plus value" in result.stderr


@pytest.mark.parametrize("command", ["encode", "decode", "demo", "generate"])
def test_help_is_complete(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0
    if command == "encode":
        for option in (
            "max-message-bytes",
            "output-old-value",
            "large-message-handle-option",
            "--profile",
            "claim-check-storage-uri",
        ):
            assert option in result.stdout
    if command == "generate":
        for kind in FAULT_KINDS:
            assert kind in result.stdout


def _undescribed(parser: argparse.ArgumentParser, name: str) -> Iterator[str]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from _undescribed(sub, f"{name} {command}")
        elif action.dest != "help" and not action.help:
            yield f"{name} {'/'.join(action.option_strings) or action.dest}"


def test_every_option_of_every_command_has_help_text() -> None:
    from ticdc_conformance.cli.main import _parser

    assert list(_undescribed(_parser(), "ticdc-conformance")) == []


def test_the_parser_is_built_without_pyarrow_or_spark() -> None:
    """Every command's parser is built before one runs: only the running one imports its work."""
    script = (
        "import sys\n"
        "from ticdc_conformance.cli.main import _parser\n"
        "_parser()\n"
        "print(sorted(m for m in ('pyarrow', 'pandas', 'pyspark') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout == "[]\n"


def test_generate_writes_a_labelled_dump(tmp_path: Path) -> None:
    out = tmp_path / "dump"
    args = [
        "generate",
        "--protocol",
        "open",
        "--messages",
        "900",
        "--partitions",
        "2",
        "--dispatcher",
        "index-value",
        "--fault",
        "wrong-partition",
        "--seed",
        "4",
        "--option",
        "max-batch-size=4",
        "--out",
        str(out),
    ]
    result = run(*args)
    assert result.returncode == 0, result.stderr
    assert "labelled fault(s)" in result.stderr
    labels = json.loads((out / "_labels.json").read_text())
    assert labels["settings"]["dispatcher"]["partition"] == "index-value"
    assert labels["settings"]["options"] == {"max-batch-size": "4"}
    assert labels["faults"][0]["findings"][0]["rule"] == "partition-affinity"
    assert (out / "part-00000.parquet").stat().st_size > 0


@pytest.mark.parametrize("protocol", sorted(CODECS))
def test_generate_sends_key_changing_updates_whole_with_output_raw_change_event(
    tmp_path: Path, protocol: str
) -> None:
    out = tmp_path / "dump"
    args = f"--protocol {protocol} --messages 200 --partitions 1 --out {out}".split()
    result = run("generate", *args, "--option", "output-raw-change-event=true")
    assert result.returncode == 0, result.stderr
    settings = json.loads((out / "_labels.json").read_text())["settings"]
    assert settings["output-raw-change-event"] is True
    assert settings["options"] == {}  # a sink option, not the encoder's
    events = decode_messages(protocol, [Message(key=r.key, value=r.value) for r in read_dump(out)])
    rows = [e for e in events if isinstance(e, DecodedRow) and e.op == "update"]
    moved = [r for r in rows if r.before and r.after and first(r.before) != first(r.after)]
    assert moved  # an UPDATE that gives the row a new handle, unsplit


def first(image: tuple[DecodedColumn, ...]) -> object:
    return image[0].value


def test_generate_large_blobs_give_simple_claim_check_references(tmp_path: Path) -> None:
    out = tmp_path / "dump"
    args = f"--protocol simple-json --messages 60 --large-blobs --out {out}".split()
    options = (
        "max-message-bytes=4096",
        "large-message-handle-option=claim-check",
        "claim-check-storage-uri=file:///var/claim-check/",
    )
    result = run("generate", *args, *(a for o in options for a in ("--option", o)))
    assert result.returncode == 0, result.stderr
    labels = json.loads((out / "_labels.json").read_text())
    assert labels["workload"]["large_blobs"] is True
    assert labels["claim_check"]["files"] == len(list((out / "_claim_check").iterdir())) > 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--fault", "missing-schema"], "Simple protocol only"),
        (["--protocol", "debezium", "--fault", "replay"], "needs watermarks"),
        (["--option", "max-batch-size=x"], "whole number"),
        (["--dispatcher", "columns"], "at least one column"),
        (["--option", "output-raw-change-event=yes"], "takes true or false"),
        (["--partitions", "0"], "at least one partition"),
    ],
)
def test_generate_usage_errors(tmp_path: Path, extra: list[str], message: str) -> None:
    result = run(
        "generate", "--protocol", "open", "--messages", "300", "--out", str(tmp_path), *extra
    )
    assert result.returncode == 2
    assert message in result.stderr


SINK_CONFIG = """
[sink]
dispatchers = [
  {matcher = ["shop.orders"], topic = "cdc.{schema}_{table}", partition = "ts"},
  {matcher = ["shop.cust*"], topic = "people"},
]
"""


def test_generate_routes_tables_to_topics_from_a_changefeed_config(tmp_path: Path) -> None:
    config = tmp_path / "changefeed.toml"
    config.write_text(SINK_CONFIG)
    out = tmp_path / "dump"
    args = "--protocol open --messages 300 --partitions 2 --topic cdc --fault wrong-topic"
    result = run("generate", *args.split(), "--sink-config", str(config), "--out", str(out))
    assert result.returncode == 0, result.stderr
    settings = json.loads((out / "_labels.json").read_text())["settings"]
    assert settings["topics"] == {"cdc": 2, "cdc.shop_orders": 2, "people": 2}
    assert [r["topic"] for r in settings["dispatchers"]] == ["cdc.{schema}_{table}", "people"]
    assert {r.topic for r in read_dump(out)} == set(settings["topics"])


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('[sink]\ndispatchers = [{matcher = ["a.b"], target-table = "x"}]', "profile tiflow"),
        ('[sink]\ndispatchers = [{matcher = ["a.b"], topics = "x"}]', "unknown dispatcher key"),
        ('[sink]\ndispatchers = [{matcher = ["a.b"], topic = "{db}"}]', "neither a topic name"),
        ("[sink\n", "changefeed.toml"),
    ],
)
def test_generate_refuses_bad_dispatchers(tmp_path: Path, config: str, message: str) -> None:
    path = tmp_path / "changefeed.toml"
    path.write_text(config)
    out = str(tmp_path / "dump")
    args = ["--protocol", "open", "--messages", "300", "--sink-config", str(path), "--out", out]
    result = run("generate", *args)
    assert result.returncode == 2
    assert message in result.stderr


def test_a_broken_run_exits_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ticdc_conformance.cli.main import main

    # the module the command imports: after a pytester run restores sys.modules, the package's
    # attribute may still name an older copy of it
    gate = importlib.import_module("ticdc_conformance.suites.gate")

    def broken(*_: object) -> int:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(gate, "example_round_trips", broken)
    assert main(["demo"]) == 3
    assert capsys.readouterr().err == "error: the run broke: RuntimeError: disk on fire\n"


@pytest.mark.parametrize("protocol", ["simple-json", "simple-avro"])
def test_simple_stream_decodes_with_schema_state(protocol: str) -> None:
    """A DDL carrying the table's schema lets the decoder type the rows after it (§6.6)."""
    row = json.loads(EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text())
    ddl = {
        "kind": "ddl",
        "commit_ts": 1,
        "schema": "a",
        "table": "b",
        "query": "CREATE TABLE b",
        "ddl_type": 3,
        "table_info": row["table"],
    }
    stdin = f"{json.dumps(ddl)}\n{json.dumps(row)}\n"
    no_bootstrap = "--option=send-bootstrap-in-msg-count=0"  # the DDL alone carries the schema
    encoded = run("encode", "--protocol", protocol, "--profile", "ticdc", no_bootstrap, stdin=stdin)
    assert encoded.returncode == 0, encoded.stderr
    messages = lines(encoded.stdout)
    assert [m["key"] for m in messages] == [None, None]
    decoded = run("decode", "--protocol", protocol, stdin=encoded.stdout)
    assert decoded.returncode == 0, decoded.stderr
    events = lines(decoded.stdout)
    assert [e["kind"] for e in events] == ["ddl", "row"]
    columns = events[1]["after"]
    assert isinstance(columns, list)
    assert {c["name"]: c["mysql_type"] for c in columns}["long"] == "int"


@pytest.mark.parametrize("protocol", ["simple-json", "simple-avro"])
def test_simple_encode_writes_bootstraps_so_its_output_decodes(protocol: str) -> None:
    """A table's BOOTSTRAP goes before its first row (§6.6): ``encode | decode`` works."""
    rows = "".join(
        EXAMPLES.joinpath(f"craft-benchmark-case{n}.change.jsonl").read_text() for n in (0, 1)
    )
    encoded = run("encode", "--protocol", protocol, stdin=rows)
    assert encoded.returncode == 0, encoded.stderr
    decoded = run("decode", "--protocol", protocol, stdin=encoded.stdout)
    assert decoded.returncode == 0, decoded.stderr
    events = [(e["kind"], e["table"]) for e in lines(decoded.stdout)]
    tables = [json.loads(line)["table"]["name"] for line in rows.splitlines()]
    expected = []
    for table in tables:
        if ("bootstrap", table) not in expected:
            expected.append(("bootstrap", table))
        expected.append(("row", table))
    assert events == expected


def test_simple_rows_whose_schema_never_arrives_are_reported() -> None:
    case0 = EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text()
    no_bootstrap = "--option=send-bootstrap-interval-in-sec=0"
    encoded = run("encode", "--protocol", "simple-json", no_bootstrap, stdin=case0)
    result = run("decode", "--protocol", "simple-json", stdin=encoded.stdout)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        "error: line 1: simple-json: message 0: row not decoded: no BOOTSTRAP or DDL has "
        "given schema version 0 of a.b\n"
    )


def test_debezium_encode_then_decode() -> None:
    case0 = EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text()
    encoded = run(
        "encode",
        "--protocol",
        "debezium",
        "--profile",
        "ticdc",
        "--option",
        "cluster-id=c1",
        stdin=case0,
    )
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
    extended = run(
        "encode", "--protocol", "debezium", "--option", "enable-tidb-extension=true", stdin=resolved
    )
    decoded = run("decode", "--protocol", "debezium", stdin=extended.stdout)
    [event] = lines(decoded.stdout)
    assert event["kind"] == "resolved"
    assert event["cluster_id"] == "default"


def test_debezium_decodes_a_real_debezium_message(shared: Path) -> None:
    directory = shared / "upstream/pingcap+tiflow/pkg/sink/codec/debezium/testdata"
    result = run(
        "decode",
        "--protocol",
        "debezium",
        "--key-file",
        str(directory / "datatype.dbz.key.json"),
        "--value-file",
        str(directory / "datatype.dbz.json"),
    )
    assert result.returncode == 0, result.stderr
    [event] = lines(result.stdout)
    assert (event["commit_ts"], event["table"], "cluster_id" in event) == (None, "foo", False)


def test_a_line_longer_than_the_message_limit_is_skipped_and_reported() -> None:
    resolved = EXAMPLES.joinpath("resolved.change.jsonl").read_text()
    encoded = run("encode", "--protocol", "open", stdin=resolved).stdout
    stdin = '{"key": "' + "A" * 80_000 + '"\n' + encoded
    result = run("decode", "--protocol", "open", "--max-message-bytes", "1000", stdin=stdin)
    assert result.returncode == 1
    assert result.stderr == "error: line 1, at /: 80011 bytes: longer than the limit of 66872\n"
    [event] = lines(result.stdout)  # the line after it is still decoded
    assert event["kind"] == "resolved"


def test_encode_bounds_a_change_event_line_by_max_message_bytes() -> None:
    row = EXAMPLES.joinpath("craft-benchmark-case0.change.jsonl").read_text()
    padded = row.replace('"varchar1"', '"' + "v" * 70_000 + '"')
    result = run("encode", "--protocol", "open", "--option", "max-message-bytes=100", stdin=padded)
    assert result.returncode == 1
    assert result.stderr == "error: line 1, at /: 70961 bytes: longer than the limit of 65936\n"


@pytest.mark.parametrize("command", ["encode", "decode"])
def test_input_that_is_not_utf8_names_its_line(command: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", command, "--protocol", "open"],
        input=b"\n\xff\xfe{}\n",
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.decode() == "error: line 2, at /: not UTF-8 at byte 0\n"


def test_a_reader_that_goes_away_ends_decode_quietly(tmp_path: Path) -> None:
    resolved = EXAMPLES.joinpath("resolved.change.jsonl").read_text()
    encoded = run("encode", "--protocol", "open", stdin=resolved).stdout
    messages = tmp_path / "messages.jsonl"
    messages.write_text(encoded * 20_000)  # far more output than a pipe holds
    with (
        messages.open("rb") as stdin,
        subprocess.Popen(
            [sys.executable, "-m", "ticdc_conformance.cli", "decode", "--protocol", "open"],
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        ) as decode,
    ):
        assert decode.stdout is not None
        assert decode.stderr is not None
        first = decode.stdout.readline()  # like `| head -1`
        decode.stdout.close()
        status = decode.wait(timeout=60)
        err = decode.stderr.read()
    assert json.loads(first)["kind"] == "resolved"
    assert (status, err) == (0, b"")


_PEAK = (
    "import resource, subprocess, sys\n"
    "with open(sys.argv[1], 'rb') as stdin:\n"
    "    run = subprocess.run(sys.argv[2:], stdin=stdin, capture_output=True, check=False)\n"
    "print(run.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
)
"""Run a command on a file as stdin; print its status and its peak resident bytes."""


def _peak(stdin: Path, *args: str) -> tuple[int, int]:
    command = [sys.executable, "-m", "ticdc_conformance.cli", *args]
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(stdin), *command],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    status, peak = done.stdout.split()
    return int(status), int(peak)


@pytest.mark.parametrize(
    ("args", "limit"),
    [
        (
            ["decode", "--protocol", "open", "--max-message-bytes", "1000000"],
            message_line_limit(1_000_000),
        ),
        (
            ["encode", "--protocol", "open", "--option", "max-message-bytes=1000000"],
            change_line_limit(1_000_000),
        ),
    ],
    ids=["decode", "encode"],
)
def test_a_huge_line_costs_memory_bounded_by_the_limit_not_by_the_line(
    tmp_path: Path, args: list[str], limit: int
) -> None:
    huge = tmp_path / "huge.jsonl"
    with huge.open("w") as out:  # one 64 MiB line: 16 times the longest line accepted
        out.write('{"key": "')
        for _ in range(64):
            out.write("A" * 2**20)
        out.write('"}\n')
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    status, peak = _peak(huge, *args)
    _, baseline = _peak(empty, *args)  # the interpreter and the kit's modules
    assert status == 1
    assert peak - baseline < 3 * limit  # the line is read a limit at a time, then skipped


def test_run_reports_text_that_is_not_unicode(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A decoder's text holding a surrogate escape (a raw byte) still makes both reports."""
    from ticdc_conformance.cli.main import main

    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    report, junit = tmp_path / "run.jsonl", tmp_path / "run.xml"
    code = main(
        [
            "run",
            "--decoder",
            "conformance_doubles:surrogate_text_decoder",
            "--case",
            "open.tiflow.decode.events.transaction",
            "--report",
            str(report),
            "--junit",
            str(junit),
            "--quiet",
        ]
    )
    assert code == 1, capfd.readouterr().err  # stderr writes the byte as \\udc97 itself
    [row] = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
    assert row["status"] == "fail"
    assert "\udc97" in json.dumps(row, ensure_ascii=False)
    xml = ET.parse(junit).getroot()  # noqa: S314 - our own file; well-formed: \\udc97 in text
    [failure] = xml.iter("failure")
    assert "\\udc97" in (failure.text or "")
