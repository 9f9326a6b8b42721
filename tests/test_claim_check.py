"""Claim-check references resolved through the storage a caller passes (reference.claim_check),
the file:// reader of the tools (generators.claim_check), and ``decode --claim-check-storage``."""

from __future__ import annotations

import base64
import dataclasses
import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from simple_helpers import table

from ticdc_conformance.generators.claim_check import file_storage, storage_folder
from ticdc_conformance.reference import CODECS, ColumnInfo, DecodedRow, DecodeError, Message
from ticdc_conformance.reference.claim_check import (
    CLAIM_CHECK_PROTOCOLS,
    ClaimCheck,
    mismatch,
    stored_message,
)
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.forms import write_message
from ticdc_conformance.reference.message import SchemaCodec

URI = "file:///var/claim-check/"
LARGE = table(ColumnInfo(name="v", type="varchar"))
CASES = [
    (protocol, raw)
    for protocol in sorted(CLAIM_CHECK_PROTOCOLS)
    for raw in (False, True)
    if not (raw and protocol == "open")  # TiCDC refuses raw values for Open
]


def _row(text: str, ts: int = 447984084414103554, key: int = 1) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=ts, table=LARGE, op="insert", after=(key, text))


def _options(protocol: str, raw: bool, limit: int = 700) -> dict[str, str]:
    options = {
        "max-message-bytes": str(limit),
        "large-message-handle-option": "claim-check",
        "claim-check-storage-uri": URI,
    }
    if raw:
        options["claim-check-raw-value"] = "true"
    if protocol == "canal-json":
        options["enable-tidb-extension"] = "true"
    return options


def _stream(protocol: str, options: Mapping[str, str], rows: list[RowChangedEvent]) -> list[Any]:
    """The partition's messages: a Simple BOOTSTRAP first, then the rows' messages."""
    codec = CODECS[protocol]
    config = codec.config_from_options(dict(options))
    head = [codec.encode_bootstrap(LARGE, config)] if isinstance(codec, SchemaCodec) else []
    return [*head, *codec.encode(rows, config)]


def _storage(messages: list[Message]) -> dict[str, bytes]:
    return {s.location: s.content for m in messages for s in m.claim_checks}


def _rows(events: list[Any]) -> list[DecodedRow]:
    return [e for e in events if isinstance(e, DecodedRow)]


@pytest.mark.parametrize(("protocol", "raw"), CASES)
def test_a_reference_resolves_to_the_row_without_claim_check(protocol: str, raw: bool) -> None:
    big = _row("x" * 1000)
    messages = _stream(protocol, _options(protocol, raw), [big])
    files = _storage(messages)
    (location,) = files
    assert location.startswith(URI)
    assert location.endswith(".json")
    (reference,) = _rows(decode_messages(protocol, messages))
    assert reference.claim_check_location == location
    claim_check = ClaimCheck(storage=files.__getitem__, raw_value=raw)
    (full,) = _rows(decode_messages(protocol, messages, claim_check=claim_check))
    roomy = {"enable-tidb-extension": "true"} if protocol == "canal-json" else {}
    (plain,) = _rows(decode_messages(protocol, _stream(protocol, roomy, [big])))
    assert full == plain
    assert mismatch(reference, full) is None


@pytest.mark.parametrize("protocol", ["simple-json", "simple-avro"])
def test_simple_raw_value_stores_the_value_bytes(protocol: str) -> None:
    """pingcap/tiflow pkg/sink/kafka/claimcheck/claim_check.go: raw, the file is the value."""
    messages = _stream(protocol, _options(protocol, raw=True), [_row("x" * 1000)])
    wrapped = _stream(protocol, _options(protocol, raw=False), [_row("x" * 1000)])
    (raw_file,) = _storage(messages).values()
    (json_file,) = _storage(wrapped).values()
    assert json.loads(json_file) == {"key": None, "value": _b64(raw_file)}
    assert messages[-1].value != wrapped[-1].value  # the location names another file


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_open_refuses_raw_value_and_craft_and_debezium_claim_check() -> None:
    with pytest.raises(EncodeError, match="claim-check-raw-value"):
        CODECS["open"].config_from_options(_options("open", raw=True))
    reader = ClaimCheck(storage=lambda _: b"", raw_value=True)
    with pytest.raises(DecodeError, match="Open refuses claim-check-raw-value"):
        stored_message("open", "file:///x/a.json", reader)
    for protocol in ("craft", "debezium"):
        with pytest.raises(DecodeError, match="no claim-check files"):
            stored_message(protocol, "file:///x/a.json", reader)


def _broken_stores(files: dict[str, bytes]) -> list[tuple[str, dict[str, bytes]]]:
    (location,) = files
    return [
        ("not readable", {}),
        ("not a claim-check file", {location: b"\xff not json"}),
        ("not a claim-check file", {location: b'{"key":null}'}),
        ("not a claim-check file", {location: b'{"key":null,"value":"!!"}'}),
        ("does not decode", {location: b'{"key":null,"value":"e30="}'}),
    ]


@pytest.mark.parametrize("protocol", ["simple-json", "canal-json"])
def test_a_file_missing_or_broken_is_a_decode_error_at_the_reference(protocol: str) -> None:
    messages = _stream(protocol, _options(protocol, raw=False), [_row("x" * 1000)])
    for reason, files in _broken_stores(_storage(messages)):
        reader = ClaimCheck(storage=files.__getitem__)
        with pytest.raises(DecodeError, match=reason) as caught:
            decode_messages(protocol, messages, claim_check=reader)
        assert caught.value.message_index == len(messages) - 1
        assert caught.value.protocol == protocol
        assert "claim-check file file:///var/claim-check/" in str(caught.value)


def test_a_stored_row_of_another_event_is_a_mismatch() -> None:
    protocol = "canal-json"
    options = _options(protocol, raw=True)
    one = _stream(protocol, options, [_row("x" * 1000)])
    other = _stream(protocol, options, [_row("y" * 1000, ts=447984084414103555, key=2)])
    (reference,) = _rows(decode_messages(protocol, one))
    swapped = {reference.claim_check_location or "": next(iter(_storage(other).values()))}
    (full,) = _rows(
        decode_messages(
            protocol, one, claim_check=ClaimCheck(storage=swapped.__getitem__, raw_value=True)
        )
    )
    assert mismatch(reference, full) == (
        "stored commit ts 447984084414103555, reference 447984084414103554"
    )
    later = dataclasses.replace(full, commit_ts=reference.commit_ts)
    assert mismatch(reference, later) == "after column id: stored 2, reference 1"


@settings(max_examples=25, deadline=None)
@given(
    text=st.text(min_size=300, max_size=900),
    case=st.sampled_from(CASES),
)
def test_round_trip_through_storage(text: str, case: tuple[str, bool]) -> None:
    """Any row, large or not: decoded with its storage it is the row decoded without limit."""
    protocol, raw = case
    row = _row(text)
    messages = _stream(protocol, _options(protocol, raw, limit=1000), [row])
    reader = ClaimCheck(storage=_storage(messages).__getitem__, raw_value=raw)
    roomy = {"enable-tidb-extension": "true"} if protocol == "canal-json" else {}
    expected = _rows(decode_messages(protocol, _stream(protocol, roomy, [row])))
    assert _rows(decode_messages(protocol, messages, claim_check=reader)) == expected


def test_file_storage_reads_a_location_by_its_file_name(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_bytes(b"content")
    for uri in (tmp_path.as_uri(), str(tmp_path), f"file://localhost{tmp_path}"):
        read = file_storage(uri)
        assert read("s3://elsewhere/prefix/a.json") == b"content"
        with pytest.raises(FileNotFoundError):
            read("file:///x/b.json")
        for bad in ("file:///x/", "file:///x/..", "a\\b"):
            with pytest.raises(LookupError):
                read(bad)
    for remote in ("s3://b/p", "gcs://b/p", "gs://b/p", "azblob://c/p", "azure://c/p"):
        with pytest.raises(ValueError, match="external storage the kit does not read"):
            storage_folder(remote)
    with pytest.raises(ValueError, match="unknown scheme"):
        storage_folder("ftp://h/p")
    with pytest.raises(ValueError, match="not a host"):
        storage_folder("file://host/p")


def _decode(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", "decode", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_decode_cli_resolves_with_the_storage_option(tmp_path: Path) -> None:
    protocol = "simple-json"
    messages = _stream(protocol, _options(protocol, raw=True), [_row("x" * 1000)])
    folder = tmp_path / "claim-check"
    folder.mkdir()
    for location, content in _storage(messages).items():
        (folder / location.rpartition("/")[2]).write_bytes(content)
    # what a consumer reads: the records alone, the files are in storage
    stdin = "".join(
        json.dumps(write_message(dataclasses.replace(m, claim_checks=()))) + "\n" for m in messages
    )
    base = ("--protocol", protocol)
    as_is = _decode(*base, stdin=stdin)
    assert as_is.returncode == 0, as_is.stderr
    reference = json.loads(as_is.stdout.splitlines()[-1])
    assert reference["claim_check_location"].startswith(URI)
    storage = ("--claim-check-storage", folder.as_uri(), "--option", "claim-check-raw-value=true")
    resolved = _decode(*base, *storage, stdin=stdin)
    assert resolved.returncode == 0, resolved.stderr
    full = json.loads(resolved.stdout.splitlines()[-1])
    assert full.get("claim_check_location") is None
    assert len(full["after"]) == 2
    missing = _decode(*base, "--claim-check-storage", (tmp_path / "none").as_uri(), stdin=stdin)
    assert missing.returncode == 1
    assert "not readable" in missing.stderr
    assert missing.stderr.count("error:") == 1
    remote = _decode(*base, "--claim-check-storage", "s3://bucket/claim-check", stdin=stdin)
    assert remote.returncode == 2
    assert "does not read" in remote.stderr
