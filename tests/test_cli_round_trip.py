"""``encode | decode`` on the command line for every protocol, profile and option it accepts.

Each option of every codec (``Codec.OPTIONS``, what ``encode --option`` takes) is tried with
each of its values, together with the options it needs (claim-check wants a storage URI, and
a small ``max-message-bytes`` so that a row is large); then every pair of two options' values,
per protocol and profile. A combination the encoder refuses is not one the CLI accepts and is
skipped; every other one must encode, decode without a single error line, and give back the
input's rows in order. Claim-check files are written where ``decode --claim-check-storage``
reads them, so every reference resolves to its stored row. The input starts with the table's
CREATE TABLE, which carries its schema, so Simple rows decode even with BOOTSTRAPs off.
The commands run in process through ``cli.main.main``: ``test_cli`` runs them as real
subprocesses.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from ticdc_conformance.cli.main import main
from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.errors import EncodeError

_CHANGES = resources.files("ticdc_conformance.fixtures").joinpath("data/changes")


def _input() -> str:
    create = _CHANGES.joinpath("events.ddl-create-table.change.jsonl").read_text()
    rows = [
        {**row, "start_ts": row["commit_ts"] - 7}  # debezium-include-start-ts needs it
        for row in map(
            json.loads,
            _CHANGES.joinpath("options.large-rows.change.jsonl").read_text().splitlines(),
        )
    ]
    created = json.loads(create)
    # every other table the rows touch gets its CREATE TABLE too: without BOOTSTRAPs a Simple
    # consumer learns a schema from its DDL only
    tables = {(r["table"]["schema"], r["table"]["name"]): r["table"] for r in rows}
    ddls = [
        {
            **created,
            "schema": schema,
            "table": name,
            "query": f"CREATE TABLE `{name}` (`id` BIGINT PRIMARY KEY)",
            "table_info": info,
        }
        for (schema, name), info in tables.items()
        if (schema, name) != (created["schema"], created["table"])
    ]
    resolved = {"kind": "resolved", "commit_ts": rows[-1]["commit_ts"] + (1 << 18)}
    return create + "".join(json.dumps(line) + "\n" for line in [*ddls, *rows, resolved])


INPUT = _input()

_FLAG = ("true", "false")
VALUES: dict[str, tuple[str, ...]] = {
    "enable-tidb-extension": _FLAG,
    "content-compatible": _FLAG,
    "only-output-updated-columns": _FLAG,
    "delete-only-output-handle-key-columns": _FLAG,
    "output-old-value": _FLAG,
    "debezium-disable-schema": _FLAG,
    "debezium-include-start-ts": _FLAG,
    "claim-check-raw-value": _FLAG,
    "send-bootstrap-to-all-partition": _FLAG,
    "send-all-bootstrap-at-start": _FLAG,
    "max-message-bytes": ("1048576", "10485760"),
    "max-batch-size": ("1", "16"),
    "max-batched-bytes": ("1000", "1048576"),
    "large-message-handle-option": ("none", "handle-key-only", "claim-check"),
    "claim-check-storage-uri": ("s3://bucket/claim-check",),
    "large-message-handle-compression": ("none", "snappy", "lz4"),
    "integrity-check-level": ("none", "correctness"),
    "tz": ("UTC", "Asia/Kolkata"),
    "cluster-id": ("east-1",),
    "send-bootstrap-interval-in-sec": ("0", "1", "120"),
    "send-bootstrap-in-msg-count": ("0", "1", "10000"),
}
"""Values tried per option; every option a codec lists must be here."""

_LARGE = (("max-message-bytes", "1000"),)
_CLAIM_CHECK = (
    ("large-message-handle-option", "claim-check"),
    ("claim-check-storage-uri", "s3://bucket/claim-check"),
)


def _companions(protocol: str, name: str, value: str) -> tuple[tuple[str, str], ...]:
    """The options ``name=value`` needs beside it to be accepted and to take effect."""
    extension = (("enable-tidb-extension", "true"),) if protocol == "canal-json" else ()
    if name == "large-message-handle-option" and value != "none":
        uri = _CLAIM_CHECK[1:] if value == "claim-check" else ()
        return (*extension, *_LARGE, *uri)
    if name in {"claim-check-storage-uri", "claim-check-raw-value"}:
        return (*extension, *_LARGE, *_CLAIM_CHECK)
    return ()


def combinations() -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
    """(protocol, profile, options) for every option value, plus no options at all."""
    found: list[tuple[str, str, tuple[tuple[str, str], ...]]] = []
    for protocol, codec in sorted(CODECS.items()):
        for profile in codec.PROFILES:
            found.append((protocol, profile, ()))
            for name in codec.OPTIONS:
                for value in VALUES[name]:
                    options = dict(_companions(protocol, name, value))
                    options[name] = value
                    found.append((protocol, profile, tuple(options.items())))
    return found


COMBINATIONS = combinations()


def _run(argv: list[str], stdin: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        status = main(argv)
    finally:
        sys.stdin = saved
    captured = capsys.readouterr()
    assert captured.err == "", captured.err
    return status, captured.out


def _rows(documents: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    """Each row's operation, table and primary key (``id``), in order."""
    found: list[tuple[object, ...]] = []
    for document in documents:
        if document.get("kind") != "row":
            continue
        image = document.get("after") or document.get("before") or []
        key = next((c.get("value") for c in image if c.get("name") == "id"), None)
        found.append((document["op"], document["schema"], document["table"], key))
    return found


def _input_rows(protocol: str, options: dict[str, str]) -> list[tuple[object, ...]]:
    """The input's rows as ``_rows`` gives them, after the losses the options document.

    Open without ``output-old-value`` writes an update as ``u`` alone, which reads as an
    insert (docs/open-protocol.md, value JSON).
    """
    no_old = protocol == "open" and options.get("output-old-value") == "false"
    found: list[tuple[object, ...]] = []
    for line in INPUT.splitlines():
        event = json.loads(line)
        if event["kind"] == "row":
            image = event.get("after") or event.get("before")
            op = "insert" if no_old and event["op"] == "update" else event["op"]
            found.append((op, event["table"]["schema"], event["table"]["name"], image["id"]))
    return found


def test_every_option_is_tried() -> None:
    listed = {name for codec in CODECS.values() for name in codec.OPTIONS}
    assert listed <= VALUES.keys(), sorted(listed - VALUES.keys())


def _stored(encoded: str, storage: Path) -> None:
    """Write the claim-check files ``encode`` reports where the decoder's storage reads them."""
    storage.mkdir(exist_ok=True)
    for line in encoded.splitlines():
        for stored in json.loads(line).get("claim_checks", ()):
            name = stored["location"].rsplit("/", 1)[-1]  # TiCDC reads by file name
            (storage / name).write_bytes(base64.b64decode(stored["content"]))


def _round_trip(
    protocol: str,
    profile: str,
    options: tuple[tuple[str, str], ...],
    storage: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    flags = [f"--option={name}={value}" for name, value in options]
    status, encoded = _run(
        ["encode", "--protocol", protocol, "--profile", profile, *flags], INPUT, capsys
    )
    assert status == 0
    chosen = dict(options)
    consumer = [
        f"--option={name}={chosen[name]}"
        for name in ("large-message-handle-compression", "claim-check-raw-value")
        if name in chosen
    ]
    claim_check = chosen.get("large-message-handle-option") == "claim-check"
    if claim_check:
        _stored(encoded, storage)
        consumer.append(f"--claim-check-storage={storage.as_uri()}/")
    status, decoded = _run(["decode", "--protocol", protocol, *consumer], encoded, capsys)
    assert status == 0
    documents = [json.loads(line) for line in decoded.splitlines()]
    assert _rows(documents) == _input_rows(protocol, chosen)
    rows = [d for d in documents if d["kind"] == "row"]
    assert all(d.get("claim_check_location") is None for d in rows)  # every one resolved
    if chosen.get("debezium-include-start-ts") == "true":
        assert all(d["start_ts"] == d["commit_ts"] - 7 for d in rows)
    else:
        assert all("start_ts" not in d for d in rows)


def _accepted(protocol: str, profile: str, options: dict[str, str]) -> bool:
    try:
        CODECS[protocol].config_from_options(options, profile=profile)
    except EncodeError:
        return False
    return True


@pytest.mark.parametrize(
    ("protocol", "profile", "options"),
    COMBINATIONS,
    ids=[f"{p}-{r}-{'-'.join(f'{k}={v}' for k, v in o) or 'defaults'}" for p, r, o in COMBINATIONS],
)
def test_encode_then_decode_round_trips(
    protocol: str,
    profile: str,
    options: tuple[tuple[str, str], ...],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    if not _accepted(protocol, profile, dict(options)):
        pytest.skip("not accepted by the encoder")
    _round_trip(protocol, profile, options, tmp_path / "claim-check", capsys)


def pairs(protocol: str, profile: str, first: str) -> list[tuple[tuple[str, str], ...]]:
    """Every accepted pair of a value of ``first`` and a value of an option after it."""
    names = sorted(CODECS[protocol].OPTIONS)
    found: list[tuple[tuple[str, str], ...]] = []
    for second in names[names.index(first) + 1 :]:
        for one, other in itertools.product(VALUES[first], VALUES[second]):
            options = dict(_companions(protocol, first, one))
            options.update(_companions(protocol, second, other))
            options[first], options[second] = one, other
            if _accepted(protocol, profile, options):
                found.append(tuple(options.items()))
    return found


PAIRED = [
    (protocol, profile, first)
    for protocol, codec in sorted(CODECS.items())
    for profile in codec.PROFILES
    for first in sorted(codec.OPTIONS)[:-1]
    if pairs(protocol, profile, first)
]
"""Each protocol, profile and option that forms an accepted pair with an option after it."""


@pytest.mark.parametrize(("protocol", "profile", "first"), PAIRED)
def test_every_pair_of_option_values_round_trips(
    protocol: str, profile: str, first: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    failed = []
    for number, options in enumerate(pairs(protocol, profile, first)):
        try:
            _round_trip(protocol, profile, options, tmp_path / str(number), capsys)
        except AssertionError as error:
            failed.append(f"{dict(options)}: {str(error).splitlines()[0]}")
    assert failed == []


@pytest.mark.parametrize("compression", ["snappy", "lz4"])
def test_compressed_messages_need_the_consumer_option(
    compression: str, capsys: pytest.CaptureFixture[str]
) -> None:
    option = f"--option=large-message-handle-compression={compression}"
    status, encoded = _run(["encode", "--protocol", "simple-json", option], INPUT, capsys)
    assert status == 0
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(encoded.encode()), encoding="utf-8")
    try:
        status = main(["decode", "--protocol", "simple-json"])
    finally:
        sys.stdin = saved
    captured = capsys.readouterr()
    assert status == 1
    assert captured.out == ""
    assert "line 1: simple-json: message 0, value byte 0: not JSON" in captured.err


def test_decode_takes_only_the_consumer_option(capsys: pytest.CaptureFixture[str]) -> None:
    only = "decode takes --option large-message-handle-compression or claim-check-raw-value only"
    for option, reason in (
        ("max-batch-size=1", only),
        ("large-message-handle-compression=zstd", "must be none, snappy or lz4"),
        ("claim-check-raw-value=yes", "claim-check-raw-value takes true or false"),
    ):
        assert main(["decode", "--protocol", "open", f"--option={option}"]) == 2
        assert reason in capsys.readouterr().err
