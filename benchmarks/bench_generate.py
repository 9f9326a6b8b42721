"""``generate`` at growing sizes: messages per second and peak memory, one process per size.

Each size is the whole command as a user types it (a fresh ``python -m ticdc_conformance.cli
generate`` process), so its peak resident memory is the process's own (``os.wait4``), and its
CPU seconds are its own whatever else runs on the machine: messages per CPU second is the
throughput on one core. A flat peak memory across sizes is the goal (docs/generators.md).

    python benchmarks/bench_generate.py                          # 50k, 100k, 200k; Open, clean
    python benchmarks/bench_generate.py --messages 200000 --fault replay --fault missing-ddl
    python benchmarks/bench_generate.py --write
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "generate.md"


def run_once(args: argparse.Namespace, messages: int, out: Path) -> tuple[float, float, int, str]:
    """(wall seconds, CPU seconds, peak RSS bytes, summary line) of one ``generate``."""
    command = [
        sys.executable,
        "-m",
        "ticdc_conformance.cli",
        "generate",
        "--protocol",
        args.protocol,
        "--messages",
        str(messages),
        "--partitions",
        str(args.partitions),
        "--seed",
        "1",
        "--quiet",
        "--out",
        str(out),
    ]
    for kind in args.fault:
        command += ["--fault", kind]
    started = time.perf_counter()
    child = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)  # noqa: S603 - our own command
    assert child.stderr is not None
    summary = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"generate exited {child.returncode}: {summary[-2000:]}")
    peak = usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return seconds, usage.ru_utime + usage.ru_stime, peak, summary.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--messages", type=int, nargs="+", default=[50_000, 100_000, 200_000], help="sizes"
    )
    parser.add_argument("--protocol", default="open", help="wire protocol (open)")
    parser.add_argument("--partitions", type=int, default=6, help="topic partitions (6)")
    parser.add_argument("--fault", action="append", default=[], help="a fault kind (repeatable)")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-generate-") as scratch:
        for messages in args.messages:
            wall, cpu, peak, summary = run_once(args, messages, Path(scratch) / "dump")
            records = int(summary.split()[1])
            rows.append(
                f"| {messages} | {records} | {wall:.1f} | {cpu:.1f} | {records / cpu:,.0f} | "
                f"{peak / 2**20:,.0f} |"
            )
    faults = ", ".join(args.fault) or "none"
    lines = [
        f"# generate: {args.protocol}, {args.partitions} partitions, seed 1, faults: {faults}",
        "",
        (
            f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} "
            "cores; each size a fresh process."
        ),
        "",
        "| --messages | records | wall s | CPU s | messages per CPU second | peak RSS MiB |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
