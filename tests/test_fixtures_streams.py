"""Stream fixtures: one clean and one labelled dump per fault kind, compared by records."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.fixtures._streams import same_records
from ticdc_conformance.generators.dump import read_dump
from ticdc_conformance.generators.faults import FAULT_KINDS

ROOT = fixtures.default_root()
STREAMS = fixtures.load_manifest()["streams"]


def test_one_clean_stream_and_one_per_fault_kind() -> None:
    kinds = {(s["protocol"], s["fault"]) for s in STREAMS}
    assert kinds == {("simple-json", None), *(("simple-json", k) for k in FAULT_KINDS),
                     ("open", None), *(("open", k) for k in FAULT_KINDS if k != "missing-schema")}  # fmt: skip


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
    assert fixtures.verify(tree) == []
    # different records are not the same
    other = tmp_path / "other.parquet"
    pq.write_table(table.slice(1), other)
    assert not same_records(path, other)
    assert same_records(path, ROOT / stream["records"])
