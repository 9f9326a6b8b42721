"""The committed benchmark scripts keep running (smoke runs; no timing is asserted)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_open_protocol.py"


@pytest.mark.slow
def test_open_protocol_benchmark_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == ["| craft-case1", "| wide-batch"]


@pytest.mark.slow
def test_craft_benchmark_runs() -> None:
    script = SCRIPT.with_name("bench_craft.py")
    result = subprocess.run(
        [sys.executable, str(script), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[1:]] == ["| craft-case1", "| wide-batch"]
    assert rows[1][2] == "997"  # case 1 is the 997-byte message of ground truth §8


@pytest.mark.slow
@pytest.mark.parametrize(
    ("script", "datasets"),
    [
        ("bench_simple.py", ["craft-case1", "wide-batch"] * 2),
        ("bench_debezium.py", ["craft-case1", "wide-batch"]),
    ],
)
def test_codec_benchmark_runs(script: str, datasets: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT.with_name(script)), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    names = [row[1] if script == "bench_simple.py" else row[0][2:] for row in rows[1:]]
    assert names == datasets
    ratios = [cell for row in rows[1:] for cell in row if cell.startswith("**")]
    assert ratios
    assert all(float(cell.strip("*× |")) > 0 for cell in ratios)


@pytest.mark.slow
def test_generate_benchmark_runs() -> None:
    script = SCRIPT.with_name("bench_generate.py")
    result = subprocess.run(
        [sys.executable, str(script), "--messages", "300", "600", "--fault", "replay"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [int(row[0].strip("| ")) for row in rows[1:]] == [300, 600]
    assert all(int(row[1]) >= int(row[0].strip("| ")) for row in rows[1:])  # records written
    assert all(float(row[-1].strip(" |").replace(",", "")) > 0 for row in rows[1:])  # peak RSS
    assert "faults: replay" in result.stdout


@pytest.mark.slow
@pytest.mark.spark
def test_stream_checker_benchmark_runs(spark: Any, tmp_path: Path) -> None:
    """In the tests' Spark session (a new one would start a second JVM): a tiny dump."""
    path = SCRIPT.with_name("bench_stream_checker.py")
    spec = importlib.util.spec_from_file_location("bench_stream_checker", path)
    assert spec is not None
    assert spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.write_bench_dump(tmp_path / "dump", 300)
    table = bench.measure(spark, tmp_path / "dump")
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[1:]] == [
        "| bare read + decode + count",
        "| full rule catalog (check_dump, file path)",
        "| the same, each Kafka partition in one task",
    ]
    assert int(rows[1][1]) == int(rows[2][1]) == int(rows[3][1]) >= 300
    assert "Findings in the clean dump: 0. Check plan: files." in table  # too small to split
    assert re.search(r"Largest Kafka partition: \d, [0-9.]+% of the records", table)


@pytest.mark.slow
@pytest.mark.kafka
def test_kafka_benchmark_runs() -> None:
    pytest.importorskip("confluent_kafka")
    script = SCRIPT.with_name("bench_kafka.py")
    result = subprocess.run(
        [sys.executable, str(script), "--messages", "300"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[1:]] == [
        "| bare produce",
        "| replay",
        "| reading the dump alone",
        "| bare consume",
        "| capture",
    ]
    assert len({row[1] for row in rows[1:]}) == 1  # every job moved every record
    assert int(rows[1][1]) >= 300
    assert "Broker: tansu broker" in result.stdout


@pytest.mark.slow
@pytest.mark.spark
def test_consumer_check_benchmark_runs(tmp_path: Path) -> None:
    """A dump of 2000 messages: the script exits 1 unless the check finds what it planted."""
    script = SCRIPT.with_name("bench_consumer_check.py")
    expected = tmp_path / "expected"
    command = [sys.executable, str(script), "--messages", "2000", "--repeat", "1"]
    result = subprocess.run(
        [*command, "--expected", str(expected)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[1:]] == [
        "| bare full outer join, every column",
        "| check-consumer state rules",
    ]
    dumped = re.search(r"Dump: (\d+) messages", result.stdout)
    assert dumped is not None
    assert int(dumped[1]) >= 2000
    planted = re.search(r"(\d+) findings planted, (\d+) found", result.stdout)
    assert planted is not None
    assert planted[1] == planted[2] != "0"
    assert (expected / "expected-state.json").is_file()  # kept for the next run
