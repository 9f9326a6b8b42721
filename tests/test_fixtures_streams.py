"""Stream fixtures: one clean and one labelled dump per fault kind, compared by records."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from stream_helpers import comparable, labelled

from ticdc_conformance import fixtures
from ticdc_conformance.fixtures import bundles
from ticdc_conformance.fixtures.builder._streams import same_records
from ticdc_conformance.generators.dump import read_dump
from ticdc_conformance.generators.faults import FAULT_KINDS
from ticdc_conformance.suites.stream.rules import CheckSettings, check_records

ROOT = fixtures.default_root()
STREAMS = fixtures.load_manifest()["streams"]


FAMILIES = {("open", "tiflow"), ("open", "ticdc"), ("craft", "tiflow"), ("simple-json", "tiflow"),
            ("simple-avro", "tiflow"), ("debezium", "tiflow")}  # fmt: skip
"""Every protocol in profile tiflow, and Open Protocol in ticdc (its bytes differ)."""


def _applies(protocol: str, kind: str) -> bool:
    if kind == "missing-schema":  # Simple's schema messages only (§6.6)
        return protocol.startswith("simple")
    if kind == "oversized-batch":  # max-batch-size bounds the batching protocols only
        return protocol in {"open", "craft"}
    if kind == "oversized-message":  # needs a small max-message-bytes: not in Debezium's options
        return protocol != "debezium"
    return True


def test_one_clean_stream_and_one_per_fault_kind() -> None:
    ids = [s["id"] for s in STREAMS]
    expected = {f"stream.{protocol}.{profile}.{kind or 'clean'}" for protocol, profile in FAMILIES
                for kind in (None, *FAULT_KINDS) if kind is None or _applies(protocol, kind)}  # fmt: skip
    # TiCDC's default Debezium output (no WATERMARK): a clean stream only
    expected.add("stream.debezium.tiflow.clean-without-watermarks")
    assert set(ids) == expected
    assert len(ids) == len(expected)
    for stream in STREAMS:
        assert stream["fault"] == (None if ".clean" in stream["id"] else stream["id"].split(".")[3])


def test_debezium_fault_streams_carry_watermarks() -> None:
    # without enable-tidb-extension Debezium writes no WATERMARK and no fault could apply (§5.5)
    for stream in STREAMS:
        if stream["protocol"] == "debezium":
            labels = json.loads((ROOT / str(stream["labels"])).read_text())
            plain = stream["id"].endswith("-without-watermarks")
            options = {} if plain else {"enable-tidb-extension": "true"}
            assert labels["settings"]["options"] == options
            records = read_dump(ROOT / str(stream["records"]))
            watermarks = [r for r in records if r.key and b".watermark.Key" in r.key]
            assert bool(watermarks) is not plain


@pytest.mark.parametrize("stream", STREAMS, ids=[s["id"] for s in STREAMS])
def test_labels_name_the_findings(stream: dict[str, object]) -> None:
    labels = json.loads((ROOT / str(stream["labels"])).read_text())
    records = list(read_dump(ROOT / str(stream["records"])))
    assert labels["settings"]["protocol"] == stream["protocol"]
    assert records
    if stream["fault"] is None:
        assert labels["faults"] == []
        return
    [fault] = labels["faults"]
    assert fault["kind"] == stream["fault"]
    assert {f["rule"] for f in fault["findings"]} == {stream["rule"]}
    offsets = {(r.partition, r.offset) for r in records}
    for finding in fault["findings"]:
        if finding["offset"] is not None:
            assert (finding["partition"], finding["offset"]) in offsets


@pytest.mark.parametrize("stream", STREAMS, ids=[s["id"] for s in STREAMS])
def test_the_checker_finds_exactly_the_labelled_findings(stream: dict[str, object]) -> None:
    labels = json.loads((ROOT / str(stream["labels"])).read_text())
    records = read_dump(ROOT / str(stream["records"]))
    settings = CheckSettings.from_labels(labels["settings"])
    outcome = check_records(((r.topic, r.partition, r.offset, r.key, r.value) for r in records),
                            settings)  # fmt: skip
    found = sorted((f.rule, f.partition, f.offset, f.commit_ts) for f in outcome.findings)
    expected = labelled(labels)
    assert found == comparable(found, expected)
    assert bool(found) is (stream["fault"] is not None)
    assert outcome.read == outcome.decoded + outcome.undecodable > 0


def test_regeneration_compares_streams_by_records(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    stream = STREAMS[0]
    path = tree / stream["records"]
    # the same records written differently (as another pyarrow version might): still the same
    table = pq.read_table(path)
    pq.write_table(table, path, compression="gzip")
    manifest = json.loads((tree / "manifest.json").read_text())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["streams"][0]["sha256"][stream["records"]] = digest
    (tree / "manifest.json").write_text(json.dumps(manifest))
    bundles.write_pin(tree)  # the pin, like the manifest's sha256, is of the bytes
    assert fixtures.verify(tree) == []
    # different records are not the same
    other = tmp_path / "other.parquet"
    pq.write_table(table.slice(1), other)
    assert not same_records(path, other)
    assert same_records(path, ROOT / stream["records"])
