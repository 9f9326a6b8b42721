"""``expected-state`` on Spark (suites/consumer/spark_state.py) writes the plain path's folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
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
