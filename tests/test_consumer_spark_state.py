"""``expected-state`` on Spark (suites/consumer/spark_state.py) writes the plain path's folder."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from stream_helpers import dump_with

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.dump import CLAIM_CHECK_FOLDER, read_dump, read_labels
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.reference import DecodedRow, Message
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.errors import UsageError
from ticdc_conformance.suites.consumer import expected
from ticdc_conformance.suites.consumer.job import consume_dump

ROOT = fixtures.default_root()
SAMPLED = (
    "stream.open.tiflow.replay",
    "stream.simple-json.tiflow.replay",
    "stream.debezium.tiflow.clean-without-watermarks",
    "stream.canal-json.ticdc.replay",
)
"""Stream fixtures TiCDC may write (each carries its expected state): replays, Simple's
schemas, a stream without watermarks; the command line runs Craft (a Spark run costs
seconds each on two cores)."""
WRITTEN = [s for s in fixtures.load_manifest()["streams"] if s["id"] in SAMPLED]


def _folder(folder: Path) -> dict[str, Any]:
    """An expected-state folder as data: the manifest, every table's rows, the log."""
    manifest = json.loads((folder / expected.MANIFEST_FILE).read_text(encoding="utf-8"))
    return {
        "manifest": manifest,
        "tables": {
            t["file"]: pq.read_table(folder / t["file"]).to_pylist() for t in manifest["tables"]
        },
        "schemas": {
            t["file"]: pq.read_schema(folder / t["file"]).names for t in manifest["tables"]
        },
        "log": pq.read_table(folder / "log.parquet").to_pylist(),
        "log_schema": pq.read_schema(folder / "log.parquet"),
    }


def test_the_sample_is_of_streams_ticdc_may_write() -> None:
    assert all(s["fault"] in (None, "replay") for s in WRITTEN)
    assert len(WRITTEN) == len(SAMPLED)


@pytest.mark.spark
@pytest.mark.parametrize("stream", WRITTEN, ids=[s["id"] for s in WRITTEN])
def test_the_spark_path_writes_the_plain_paths_folder(
    stream: dict[str, Any],
    spark: Any,
    tmp_path: Path,
) -> None:
    from ticdc_conformance.suites.consumer import spark_state

    protocol, consumed = consume_dump(stream["id"], None, {})
    stored = json.loads((ROOT / stream["expected"]).read_text(encoding="utf-8"))
    assert expected.expected_state_document(consumed, protocol) == stored
    expected.write_expected_state(consumed, protocol, tmp_path / "plain")
    shuffle = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", "2")
    try:
        out = tmp_path / "spark"
        # a few dozen rows a fetch: the tables and the log span several range partitions
        spark_state.write_expected_state(
            spark, ROOT / stream["records"], protocol, out, fetch_rows=40
        )
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", shuffle)
    plain, on_spark = _folder(tmp_path / "plain"), _folder(tmp_path / "spark")
    assert on_spark["manifest"] == plain["manifest"]
    assert on_spark["schemas"] == plain["schemas"]
    assert on_spark["log_schema"] == plain["log_schema"]
    assert on_spark["log"] == plain["log"]
    assert on_spark["tables"] == plain["tables"]


@pytest.mark.spark
@pytest.mark.usefixtures("spark")
def test_expected_state_engine_spark_writes_what_plain_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stream = "stream.craft.tiflow.clean-raw-change-event"
    for engine in ("plain", "spark"):
        args = ["expected-state", "--input", stream, "--out", str(tmp_path / engine)]
        assert main([*args, "--engine", engine, "--master", "local[2]"]) == 0
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 2
    assert said[0].removesuffix(str(tmp_path / "plain")) == said[1].removesuffix(
        str(tmp_path / "spark")
    )
    assert _folder(tmp_path / "spark") == _folder(tmp_path / "plain")


CLAIM_CHECK = {
    # the limits put the shop workload's larger rows over max-message-bytes (as in
    # tests/test_stream_claim_check.py); Canal-JSON stores the value bytes alone
    "open": (("max-message-bytes", "600"),),
    "canal-json": (
        ("max-message-bytes", "700"),
        ("enable-tidb-extension", "true"),
        ("claim-check-raw-value", "true"),
    ),
}


@functools.cache
def claim_check_dump(protocol: str) -> Path:
    """A generated dump whose larger rows are claim-check references, files in ``_claim_check``."""
    options = (
        *CLAIM_CHECK[protocol],
        ("large-message-handle-option", "claim-check"),
        ("claim-check-storage-uri", "file:///var/claim-check/"),
    )
    settings = StreamSettings(protocol=protocol, topic="consumer-claim-check", options=options)
    return dump_with(settings, messages=600)


def _references(folder: Path) -> int:
    """How many rows of the dump are claim-check references (to rows stored elsewhere)."""
    protocol = read_labels(folder)["settings"]["protocol"]
    decoder = PartitionDecoder(protocol)
    return sum(
        sum(isinstance(e, DecodedRow) and e.claim_check_location is not None for e in events)
        for events in (decoder.decode(Message(key=r.key, value=r.value)) for r in read_dump(folder))
    )


def _unresolved(dump: Path, storage: str | None = None) -> list[str]:
    """The reasons the plain path gives for the references it could not resolve."""
    consumed = consume_dump(str(dump), None, {}, storage)[1]
    return [m.reason for m in consumed.not_applied if "claim-check" in m.reason]


@pytest.mark.parametrize("protocol", sorted(CLAIM_CHECK))
def test_the_plain_path_applies_the_rows_claim_check_stored(protocol: str, tmp_path: Path) -> None:
    """Found in the dump's ``_claim_check`` or named by ``--claim-check-storage``."""
    folder = claim_check_dump(protocol)
    references = _references(folder)
    assert references > 0
    assert _unresolved(folder) == []
    moved = tmp_path / "dump"
    shutil.copytree(folder, moved)
    storage = tmp_path / "storage"
    (moved / CLAIM_CHECK_FOLDER).rename(storage)
    assert len(_unresolved(moved)) == references
    for given in (str(storage), storage.as_uri()):
        assert _unresolved(moved, given) == []
    with pytest.raises(UsageError, match="--claim-check-storage"):
        consume_dump(str(moved), None, {}, "s3://bucket/claim-check")


@pytest.mark.spark
@pytest.mark.usefixtures("spark")
@pytest.mark.parametrize("protocol", sorted(CLAIM_CHECK))
def test_spark_resolves_claim_checks_as_the_plain_path_does(
    protocol: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = claim_check_dump(protocol)
    moved = tmp_path / "dump"  # the Spark run reads the files from the storage it is given
    shutil.copytree(folder, moved)
    storage = tmp_path / "storage"
    (moved / CLAIM_CHECK_FOLDER).rename(storage)
    runs = {
        "plain": [str(folder)],
        "spark": [str(moved), "--claim-check-storage", storage.as_uri()],
        "spark-own-folder": [str(folder)],
    }
    for name, given in runs.items():
        engine = name.partition("-")[0]
        args = ["expected-state", "--input", *given, "--out", str(tmp_path / name)]
        assert main([*args, "--engine", engine, "--master", "local[2]"]) == 0
    capsys.readouterr()
    plain = _folder(tmp_path / "plain")
    assert not any("claim-check" in m["reason"] for m in plain["manifest"]["not_applied"])
    assert _folder(tmp_path / "spark") == plain
    assert _folder(tmp_path / "spark-own-folder") == plain
