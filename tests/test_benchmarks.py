"""The committed benchmark script keeps running (a smoke run; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_open_protocol.py"


@pytest.mark.slow
def test_open_protocol_benchmark_runs() -> None:
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick"], capture_output=True, text=True, check=True,
        timeout=300,
    )  # fmt: skip
    rows = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows[1:]] == ["| craft-case1", "| wide-batch"]


@pytest.mark.slow
def test_craft_benchmark_runs() -> None:
    script = SCRIPT.with_name("bench_craft.py")
    result = subprocess.run(
        [sys.executable, str(script), "--quick"], capture_output=True, text=True, check=True,
        timeout=300,
    )  # fmt: skip
    rows = [line.split(" | ") for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [row[0] for row in rows[1:]] == ["| craft-case1", "| wide-batch"]
    assert rows[1][2] == "997"  # case 1 is the 997-byte message of ground truth §8
