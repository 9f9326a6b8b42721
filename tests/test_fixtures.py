"""The golden tree: schema-valid manifest, checksums, byte-identical regeneration."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.fixtures import bundles
from ticdc_conformance.fixtures.builder import build
from ticdc_conformance.generators.strategies import MYSQL_TYPES
from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.forms import json_schema
from ticdc_conformance.suites.gate import load_cases

ROOT = fixtures.default_root()
MANIFEST = fixtures.load_manifest()


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the shipped tree, to tamper with."""
    copy = tmp_path_factory.mktemp("fixtures") / "fixtures"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    return copy


def test_manifest_matches_its_schema() -> None:
    jsonschema.Draft202012Validator(fixtures.manifest_schema()).validate(MANIFEST)


def test_case_ids_are_unique_and_hierarchical() -> None:
    ids = [case["id"] for case in MANIFEST["cases"]]
    assert len(ids) == len(set(ids))
    assert ids == sorted(ids)
    for case in MANIFEST["cases"]:
        assert case["id"].split(".")[:3] == [case["protocol"], case["profile"], case["direction"]]


def test_every_protocol_and_profile_has_a_case_per_type() -> None:
    covered = Counter(
        (case["protocol"], case["profile"])
        for case in MANIFEST["cases"]
        if case["direction"] == "decode" and case["id"].split(".")[3] == "types"
    )
    # 35 type cases: each MySQL type of the strategies, plus the unsigned integer variants;
    # then zero dates and DECIMAL(65,30) everywhere, and TIMESTAMP by server zone in Simple
    # and Debezium, which tests/test_fixtures_breadth.py checks
    assert len({t for case in MANIFEST["cases"] for t in case["tags"]} & set(MYSQL_TYPES)) == len(
        MYSQL_TYPES
    )
    for protocol, codec in CODECS.items():
        zones = 3 if protocol in ("simple-json", "simple-avro", "debezium") else 0
        for profile in codec.PROFILES:
            assert covered[protocol, profile] == 35 + 3 + zones, (protocol, profile)


def test_comparison_rules() -> None:
    for case in MANIFEST["cases"]:
        refused = "encode_error" in MANIFEST["fixtures"][case["fixture"]]
        if case["direction"] == "decode":
            assert case["comparison"] == "decoded"
            assert not refused
        elif case["direction"] == "reject" or refused:
            assert case["comparison"] == "error"
        else:  # wall-clock fields (Simple buildTs, Debezium ts_ms) rule out byte comparison
            want = "bytes" if case["protocol"] in {"open", "craft"} else "decoded"
            options = MANIFEST["fixtures"][case["fixture"]]["options"]
            if options.get("large-message-handle-compression", "none") != "none":
                want = "decoded"  # compressors need not agree byte for byte
            assert case["comparison"] == want, case["id"]


def test_expected_events_match_the_decoded_event_schema() -> None:
    validator = jsonschema.Draft202012Validator(
        json_schema("decoded-event"),
        registry=__import__("referencing")
        .Registry()
        .with_resource(
            json_schema("change-event")["$id"],
            __import__("referencing").Resource.from_contents(json_schema("change-event")),
        ),
    )
    checked = 0
    for fixture in MANIFEST["fixtures"].values():
        if fixture["decoded"] is None:
            continue
        for line in filter(None, (ROOT / fixture["decoded"]).read_text("utf-8").split("\n")):
            validator.validate(json.loads(line))
            checked += 1
    assert checked > 1000


def test_large_message_cases_hold_claim_check_files() -> None:
    stored = [
        cc
        for name, fixture in MANIFEST["fixtures"].items()
        if "claim-check" in name
        for message in fixture["messages"]
        for cc in message["claim_checks"]
    ]
    assert stored
    assert all(cc["location"].startswith("s3://bucket/claim-check/") for cc in stored)


def test_shipped_tree_verifies() -> None:
    assert fixtures.verify(ROOT) == []


def test_verify_names_a_tampered_byte(tree: Path) -> None:
    target = tree / "data/open/tiflow.types.bigint-unsigned.m000.value"
    original = target.read_bytes()
    target.write_bytes(original[:10] + bytes([original[10] ^ 1]) + original[11:])
    try:
        problems = fixtures.verify(tree)
        named = [p for p in problems if p.startswith("data/open/tiflow.types.bigint-unsigned")]
        assert len(named) == 2, problems  # the checksum and the regeneration
        assert "sha256" in named[0] or "sha256" in named[1]
        assert len(problems) == 3
        assert any(p.startswith(f"{bundles.PIN}: pins sha256") for p in problems)  # the bundle too
        result = cli("fixtures", "verify", "--fixtures", str(tree), "--no-regenerate")
        assert result.returncode == 1
        assert "tiflow.types.bigint-unsigned.m000.value: sha256" in result.stderr
    finally:
        target.write_bytes(original)
    assert fixtures.verify(tree, regenerate=False) == []


def test_verify_reports_extra_and_missing_files(tree: Path) -> None:
    extra = tree / "data/craft/stray.bin"
    extra.write_bytes(b"x")
    missing = tree / "data/craft/tiflow.events.resolved.m000.value"
    kept = missing.read_bytes()
    missing.unlink()
    try:
        problems = fixtures.verify(tree)
    finally:
        extra.unlink()
        missing.write_bytes(kept)
    assert "data/craft/stray.bin: not listed in the manifest" in problems
    assert any(
        p.startswith("data/craft/tiflow.events.resolved.m000.value: missing") for p in problems
    )
    assert any("regeneration writes it but the tree lacks it" in p for p in problems)


def test_build_is_deterministic_and_removes_stale_files(tmp_path: Path) -> None:
    stale = tmp_path / "data/open/old.case.change.jsonl"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}\n")
    stored = tmp_path / "data/streams/open.tiflow.old.claim-check/x.json"  # a stream's folder
    stored.parent.mkdir(parents=True)
    stored.write_text("{}")
    for name in ("README.md", "manifest.schema.json"):  # hand-written, and in the pinned bundle
        shutil.copy(ROOT / name, tmp_path / name)
    build(tmp_path)
    assert not stale.exists()
    assert not stored.parent.exists()
    assert (tmp_path / "data/streams/open.tiflow.clean-claim-check.claim-check").is_dir()
    assert (tmp_path / "manifest.json").read_bytes() == (ROOT / "manifest.json").read_bytes()
    assert (tmp_path / bundles.PIN).read_bytes() == (ROOT / bundles.PIN).read_bytes()


def test_cli_list_show_verify() -> None:
    listed = cli("fixtures", "list", "--protocol", "craft")
    assert listed.returncode == 0
    ids = [line.split("\t")[0] for line in listed.stdout.splitlines()]
    assert ids == sorted(c["id"] for c in MANIFEST["cases"] if c["protocol"] == "craft")
    shown = cli("fixtures", "show", "open.tiflow.decode.types.bigint-unsigned")
    assert shown.returncode == 0
    document = json.loads(shown.stdout)
    values = {c["name"]: c["value"] for c in document["decoded"][0]["after"]}
    assert values == {"id": 1, "c": 2**64 - 1}
    assert cli("fixtures", "show", "no.such.case").returncode == 2
    verified = cli("fixtures", "verify", "--no-regenerate")  # regeneration: the tests above
    assert verified.returncode == 0, verified.stderr
    assert "every checksum matches" in verified.stderr


def test_handle_key_only_cases_expect_a_handle_key_only_row() -> None:
    found = 0
    for name, fixture in MANIFEST["fixtures"].items():
        if name.endswith("large-message-handle-key-only"):
            text = (ROOT / fixture["decoded"]).read_text("utf-8")
            events = [json.loads(line) for line in filter(None, text.split("\n"))]
            assert [e.get("handle_key_only") for e in events if e["kind"] == "row"].count(True) == 1
            found += 1
    assert found == 8  # Open, Simple JSON, Simple Avro, Canal-JSON; two profiles each


def test_verify_without_pyarrow_checks_streams_by_checksum(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "pyarrow" else real(name, *rest),
    )
    assert fixtures.verify(ROOT) == []


def _edit_manifest(tree: Path, edit: Callable[[dict[str, Any]], None]) -> bytes:
    """Apply ``edit`` to the tree's manifest; return the original bytes to put back."""
    path = tree / "manifest.json"
    original = path.read_bytes()
    manifest = json.loads(original)
    edit(manifest)
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return original


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "/etc/passwd", "data/../../x", "data\\open\\x", "data//x", "./x"]
)
def test_a_manifest_path_leaving_the_tree_is_refused(tree: Path, name: str) -> None:
    def edit(manifest: dict[str, Any]) -> None:
        fixture = manifest["fixtures"]["data/open/tiflow.types.int"]
        fixture["sha256"][name] = "0" * 64

    original = _edit_manifest(tree, edit)
    try:
        problems = fixtures.verify(tree, regenerate=False)
        assert any(
            repr(name) in p and "(fixture data/open/tiflow.types.int)" in p for p in problems
        )
        with pytest.raises(fixtures.ManifestError, match="not a path inside the tree"):
            load_cases(tree)
        result = cli("run", "--decoder", "reference", "--fixtures", str(tree))
        assert result.returncode == 2
        assert "not a path inside the tree" in result.stderr
    finally:
        (tree / "manifest.json").write_bytes(original)


def test_a_manifest_link_out_of_the_tree_is_refused(tree: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"secret")
    (tree / "data/open/leak").symlink_to(outside)
    try:
        with pytest.raises(fixtures.ManifestError, match="leads out of the tree"):
            fixtures.tree_path(tree, "data/open/leak")
    finally:
        (tree / "data/open/leak").unlink()


def test_regeneration_names_the_manifest_entries_that_differ(tree: Path) -> None:
    def edit(manifest: dict[str, Any]) -> None:
        manifest["cases"][0]["description"] = "edited by hand"
        manifest["fixtures"]["data/open/tiflow.types.int"]["options"] = {"x": "1"}

    original = _edit_manifest(tree, edit)
    case_id = json.loads(original)["cases"][0]["id"]
    try:
        problems = fixtures.verify(tree)
    finally:
        (tree / "manifest.json").write_bytes(original)
    assert "manifest.json: differs from a fresh regeneration" in problems
    assert f"manifest.json: cases {case_id}: differs from a fresh regeneration" in problems
    assert (
        "manifest.json: fixtures data/open/tiflow.types.int: differs from a fresh regeneration"
        in problems
    )


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b"not json", "not a JSON manifest"),
        (b'{"format": "other", "version": 1}', "not a ticdc-conformance fixtures manifest"),
        (b'{"format": "ticdc-conformance fixtures", "version": 2}', "manifest version 2"),
    ],
)
def test_an_unusable_manifest_is_named(tmp_path: Path, text: bytes, reason: str) -> None:
    (tmp_path / "manifest.json").write_bytes(text)
    with pytest.raises(fixtures.ManifestError, match=reason):
        fixtures.load_manifest(tmp_path)
