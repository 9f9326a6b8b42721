"""``check-stream`` end to end on a small stream fixture: the in-process fast path and Spark.

Each run is the whole command as a user types it (a fresh ``python -m ticdc_conformance.cli``
process: interpreter and imports, the footers' record count, the check, the report), timed by
wall clock, on a shipped stream fixture of about 120 records; the Spark run is the same command
with ``--spark`` (a JVM and a local session started in that process, as a user gets it). The
floor is the fast path; the Spark run is its ratio to it. Both reports must agree.

    python benchmarks/bench_check_stream_engines.py                 # stream.open.tiflow.missing-ddl
    python benchmarks/bench_check_stream_engines.py --stream stream.simple-json.tiflow.clean
    python benchmarks/bench_check_stream_engines.py --repeat 3 --write
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ticdc_conformance import fixtures

RESULTS = Path(__file__).resolve().parent / "results" / "check_stream_engines.md"


def run_once(records: Path, engine: str, report: Path) -> tuple[float, dict[str, Any]]:
    """Wall seconds of one ``check-stream`` process, and its report."""
    command = [
        sys.executable,
        "-m",
        "ticdc_conformance.cli",
        "check-stream",
        "--input",
        str(records),
        "--report",
        str(report),
        "--quiet",
        "--engine",
        engine,
    ]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)  # noqa: S603 - our own command
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(
            f"check-stream --engine {engine} exited {done.returncode}: {done.stderr[-2000:]}"
        )
    return seconds, json.loads(report.read_text(encoding="utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--stream",
        default="stream.open.tiflow.missing-ddl",
        help="a stream fixture id (manifest streams)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per engine; the best counts")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    args = parser.parse_args()
    [stream] = [s for s in fixtures.load_manifest()["streams"] if s["id"] == args.stream]
    root = fixtures.default_root()
    with tempfile.TemporaryDirectory(prefix="bench-engines-") as scratch:
        folder = Path(scratch) / "dump"
        folder.mkdir()
        (folder / "part-00000.parquet").write_bytes((root / stream["records"]).read_bytes())
        (folder / "_labels.json").write_bytes((root / stream["labels"]).read_bytes())
        best: dict[str, float] = {}
        reports: dict[str, dict[str, Any]] = {}
        for engine in ("plain", "spark"):
            for n in range(args.repeat):
                seconds, reports[engine] = run_once(folder, engine, Path(scratch) / f"{n}.json")
                best[engine] = min(best.get(engine, seconds), seconds)
    same = ("rules", "messages", "errors", "warnings")
    if any(reports["plain"][k] != reports["spark"][k] for k in same):
        raise SystemExit("the two engines' reports differ")
    records = reports["plain"]["messages"]["input"]
    lines = [
        f"# check-stream end to end: fast path and Spark ({args.stream}, {records} records)",
        "",
        (
            f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} "
            f"cores, best of {args.repeat}; each run a fresh process, as a user runs it."
        ),
        "",
        "| engine | wall seconds | ratio to the fast path |",
        "|---|---|---|",
        f"| plain (in-process, the floor) | {best['plain']:.2f} | 1.0 |",
        (
            f"| spark (`--spark`, local session) | {best['spark']:.2f} | "
            f"{best['spark'] / best['plain']:.1f} |"
        ),
        "",
        "Both reports give the same findings, counts and accounting.",
    ]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
