"""The Spark stream checker: the same findings as the plain rules, through Spark and the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from stream_helpers import CLEAN, FAULTY, comparable, dump, dump_with, labelled

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.dump import read_labels
from ticdc_conformance.generators.faults import FAULT_KINDS
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.suites.spark_checker import spark_int_hash

pytestmark = pytest.mark.spark

Coordinates = tuple[str, int, int | None, int | None]


def found(report: dict[str, Any]) -> list[Coordinates]:
    return sorted(
        (rule["id"], s["partition"], s["offset"], s["commit_ts"])
        for rule in report["rules"]
        for s in rule["samples"]
    )


def check(spark: Any, folder: Path, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    del spark  # the shared session is the one the command finds
    report = tmp_path / "report.json"
    code = main(["check-stream", "--input", str(folder), "--report", str(report), "--quiet",
                 *extra])  # fmt: skip
    return code, json.loads(report.read_text(encoding="utf-8"))


@pytest.mark.parametrize("protocol", CLEAN)
def test_clean_dumps_pass(spark: Any, protocol: str, tmp_path: Path) -> None:
    code, report = check(spark, dump(protocol), tmp_path)
    assert code == 0
    assert found(report) == []
    assert all(rule["count"] == 0 for rule in report["rules"])
    m = report["messages"]
    assert m["read"] == m["decoded"] == m["input"] > 0


@pytest.mark.parametrize(("fault", "protocol"), sorted(FAULTY.items()))
def test_each_fault_is_reported_where_labelled(
    spark: Any,
    fault: str,
    protocol: str,
    tmp_path: Path,
) -> None:
    folder = dump(protocol, fault)
    code, report = check(spark, folder, tmp_path)
    expected = labelled(read_labels(folder))
    got = found(report)
    assert got == comparable(got, expected)
    counts = {rule["id"]: rule["count"] for rule in report["rules"] if rule["count"]}
    assert counts == {FAULT_KINDS[fault]: len(expected)}
    assert code == (0 if fault == "replay" else 1)
    m = report["messages"]
    assert m["read"] == m["decoded"] + m["undecodable"] == m["input"]


def _families() -> dict[str, list[dict[str, Any]]]:
    """The stream fixtures grouped by the settings they were written with."""
    root = fixtures.default_root()
    families: dict[str, list[dict[str, Any]]] = {}
    for stream in fixtures.load_manifest()["streams"]:
        settings = json.loads((root / stream["labels"]).read_text(encoding="utf-8"))["settings"]
        options = "-".join(f"{k}={v}" for k, v in sorted(settings["options"].items()))
        name = "-".join(filter(None, [stream["protocol"], stream["profile"], options]))
        families.setdefault(name, []).append(stream)
    return families


FAMILIES = _families()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_every_stream_fixture_is_reported_where_labelled(
    spark: Any, name: str, tmp_path: Path
) -> None:
    """One job per family of settings: each fixture of the family is a topic of its own."""
    del spark  # the shared session is the one the command finds
    root = fixtures.default_root()
    family = FAMILIES[name]
    inputs: list[str] = []
    expected: list[tuple[str, str, int, int | None, int | None]] = []
    for stream in family:
        folder = tmp_path / stream["id"]
        folder.mkdir()
        table = pq.read_table(root / stream["records"])
        at = table.schema.get_field_index("topic")
        topic = pa.array([stream["id"]] * table.num_rows, pa.string())
        pq.write_table(table.set_column(at, table.schema.field(at), topic),
                       folder / "part-00000.parquet")  # fmt: skip
        shutil.copy(root / stream["labels"], folder / "_labels.json")
        inputs += ["--input", str(folder)]
        expected += [(stream["id"], *f) for f in labelled(read_labels(folder))]
    report_file = tmp_path / "report.json"
    code = main(["check-stream", *inputs, "--report", str(report_file), "--quiet",
                 "--samples", "1000"])  # fmt: skip
    report = json.loads(report_file.read_text(encoding="utf-8"))
    got = sorted(
        (s["topic"], rule["id"], s["partition"], s["offset"], s["commit_ts"])
        for rule in report["rules"]
        for s in rule["samples"]
    )
    # a corrupted record no longer says its commit ts: the checker reports none
    want = sorted((t, r, p, o, None if r == "undecodable" else ts) for t, r, p, o, ts in expected)
    assert got == want
    counts = {rule["id"]: rule["count"] for rule in report["rules"] if rule["count"]}
    assert counts == {r: sum(1 for e in expected if e[1] == r) for r in {e[1] for e in expected}}
    assert {t for t, *_ in got} == {s["id"] for s in family if s["fault"] is not None}
    assert code == (1 if any(e[1] != "allowed-duplicate" for e in expected) else 0)
    m = report["messages"]
    assert m["read"] == m["decoded"] + m["undecodable"] == m["input"]


def test_samples_are_bounded_and_counts_are_not(spark: Any, tmp_path: Path) -> None:
    code, report = check(spark, dump("open"), tmp_path, "--option", "max-batch-size=1",
                         "--samples", "2")  # fmt: skip
    (batch,) = [rule for rule in report["rules"] if rule["id"] == "batch-size"]
    assert code == 1
    assert len(batch["samples"]) == 2
    assert batch["count"] > 2


def test_usage_errors(spark: Any, tmp_path: Path) -> None:
    del spark
    assert main(["check-stream", "--input", str(tmp_path / "nothing")]) == 2
    assert main(["check-stream", "--input", str(dump("open")), "--partitions", "0"]) == 2


def test_several_topics_in_one_check(spark: Any, tmp_path: Path) -> None:
    clean = dump("open")
    faulty = dump_with(StreamSettings(protocol="open", topic="other"), 400, ("wrong-partition",))
    code, report = check(spark, clean, tmp_path, "--input", str(faulty))
    samples = [s for rule in report["rules"] for s in rule["samples"]]
    assert code == 1
    assert [s["topic"] for s in samples] == ["other"]
    assert found(report) == labelled(read_labels(faulty))
    m = report["messages"]
    assert m["read"] == m["input"] > 800


def test_a_failing_job_exits_3(spark: Any, tmp_path: Path) -> None:
    del spark
    pq.write_table(pa.table({"topic": ["t"], "partition": [0]}), tmp_path / "part-0.parquet")
    assert main(["check-stream", "--input", str(tmp_path), "--protocol", "open", "--quiet"]) == 3


def test_without_labels_the_protocol_must_be_given(spark: Any, tmp_path: Path) -> None:
    del spark
    shutil.copy(dump("craft") / "part-00000.parquet", tmp_path / "part-00000.parquet")
    assert main(["check-stream", "--input", str(tmp_path), "--quiet"]) == 2
    assert main(["check-stream", "--input", str(tmp_path), "--protocol", "craft", "--quiet"]) == 0


@pytest.mark.slow
def test_spark_submit_runs_the_same_job(tmp_path: Path) -> None:
    submit = Path(sys.executable).with_name("spark-submit")
    if not submit.exists() and shutil.which("spark-submit") is None:
        pytest.skip("spark-submit is not installed")
    script = Path(__file__).resolve().parents[1] / "suites" / "spark_checker.py"
    folder = dump("open", "wrong-partition")
    report = tmp_path / "report.json"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable}  # fmt: skip
    done = subprocess.run(
        [str(submit if submit.exists() else "spark-submit"), "--master", "local[2]",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.driver.host=127.0.0.1",
         "--conf", "spark.driver.bindAddress=127.0.0.1",
         str(script), "--input", str(folder), "--report", str(report), "--quiet"],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    got = found(json.loads(report.read_text(encoding="utf-8")))
    assert got == labelled(read_labels(folder))


def test_the_driver_knows_sparks_int_hash(spark: Any) -> None:
    from pyspark.sql import functions as F  # noqa: N812

    rows = spark.range(-50, 200).select("id", F.hash(F.col("id").cast("int"))).collect()
    assert [spark_int_hash(int(r[0])) for r in rows] == [int(r[1]) for r in rows]
