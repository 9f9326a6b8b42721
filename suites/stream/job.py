"""``check-stream``: arguments, settings, the report (JSON and console) and the exit code.

Spark-free: ``run`` imports ``suites/stream/spark.py`` (and so pyspark) only when a check
runs. Exit codes: 0 clean (warnings allowed), 1 a rule of severity error was broken, 2 usage
error, 3 the job itself failed (including a message not accounted for).
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ticdc_conformance.generators.dump import dump_files, read_labels
from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.dispatch import DISPATCHERS, DispatchRule
from ticdc_conformance.reference.errors import ExitCode, UsageError
from ticdc_conformance.suites.stream.rules import RULES, CheckSettings

__all__ = ["add_arguments", "build_report", "run", "run_from_command_line"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``check-stream`` arguments (shared by the CLI and ``spark-submit``)."""
    parser.add_argument("--protocol", choices=sorted(CODECS),
                        help="the topic's protocol (default: the dump's labels)")  # fmt: skip
    parser.add_argument("--input", required=True, action="append",
                        help="dump folder, Parquet file or glob (repeatable)")  # fmt: skip
    parser.add_argument("--profile", choices=("tiflow", "ticdc"))
    parser.add_argument("--partitions", type=int, help="the topic's partition count")
    parser.add_argument("--dispatcher", choices=DISPATCHERS)
    parser.add_argument("--index-name", help="index of an index-value dispatcher")
    parser.add_argument("--columns", nargs="+", help="columns of a columns dispatcher")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="an encoder option (max-message-bytes, max-batch-size)")  # fmt: skip
    parser.add_argument("--report", help="write the JSON report to this file")
    parser.add_argument("--samples", type=int, default=10, help="samples kept per rule")
    parser.add_argument("--master", help="Spark master URL (default local[*] on 127.0.0.1)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")


def _paths(inputs: Sequence[str]) -> list[str]:
    paths = []
    for given in inputs:
        if not glob.glob(given):  # noqa: PTH207 - a user's glob pattern
            raise UsageError(f"no input at {given}")
        try:  # a folder an interrupted capture left is no dump
            dump_files(given)
        except ValueError as error:
            raise UsageError(str(error)) from None
        paths.append(given)
    return paths


def _labels(inputs: Sequence[str]) -> dict[str, Any]:
    for given in inputs:
        path = Path(given)
        for folder in (path, path.parent):
            if folder.is_dir() and (labels := read_labels(folder)):
                settings = labels.get("settings")
                return dict(settings) if isinstance(settings, dict) else {}
    return {}


def settings_from(args: argparse.Namespace) -> CheckSettings:
    """The dump's labelled settings, with the flags given overriding them."""
    options = []
    for pair in args.option:
        name, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--option takes NAME=VALUE, got {pair!r}")
        options.append((name, value))
    labelled = _labels(args.input)
    dispatcher = None
    if args.dispatcher is not None:
        dispatcher = DispatchRule(partition=args.dispatcher, index_name=args.index_name,
                                  columns=tuple(args.columns or ()))  # fmt: skip
    merged = {**dict((labelled.get("options") or {}).items()), **dict(options)}
    try:
        settings = CheckSettings.from_labels(
            labelled, protocol=args.protocol, profile=args.profile, partitions=args.partitions,
            dispatcher=dispatcher, options=tuple(sorted(merged.items())),
        )  # fmt: skip
    except (ValueError, TypeError) as error:
        raise UsageError(str(error)) from None
    if settings.protocol not in CODECS:
        raise UsageError(f"unknown protocol {settings.protocol!r}")
    if settings.partitions is not None and settings.partitions <= 0:
        raise UsageError("--partitions must be positive")
    return settings


def _sample(raw: dict[str, Any]) -> dict[str, Any]:
    key = raw.get("key")
    return {**raw, "key": None if key is None else base64.b64encode(key).decode()}


def build_report(
    result: Any,  # noqa: ANN401 - spark_job.CheckResult, not imported without Spark
    settings: CheckSettings,
    inputs: Sequence[str],
    seconds: float,
) -> dict[str, Any]:
    """The JSON report: accounting, and per rule its count and samples."""
    rules = [
        {"id": rule.id, "severity": rule.severity, "description": rule.description,
         "doc": rule.doc, "count": result.counts.get(rule.id, 0),
         "samples": [_sample(s) for s in result.samples.get(rule.id, [])]}
        for rule in RULES.values()
    ]  # fmt: skip
    errors = sum(r["count"] for r in rules if r["severity"] == "error")
    warnings = sum(r["count"] for r in rules if r["severity"] == "warning")
    return {
        "format": "ticdc-conformance stream check",
        "version": 1,
        "input": list(inputs),
        "settings": {"protocol": settings.protocol, "profile": settings.profile,
                     "partitions": settings.partitions,
                     "dispatcher": {"partition": settings.dispatcher.partition,
                                    "index-name": settings.dispatcher.index_name,
                                    "columns": list(settings.dispatcher.columns)},
                     "options": dict(settings.options)},
        "messages": {"input": result.records, "read": result.read, "decoded": result.decoded,
                     "undecodable": result.undecodable},
        "errors": errors,
        "warnings": warnings,
        "seconds": round(seconds, 3),
        "plan": result.plan,
        "rules": rules,
    }  # fmt: skip


def print_summary(report: dict[str, Any], out: IO[str]) -> None:
    """The readable summary: accounting, then one line per rule, samples under broken ones."""
    m = report["messages"]
    accounting = (
        f"messages: {m['read']} read = {m['decoded']} decoded + {m['undecodable']} "
        f"undecodable (input {m['input']}) in {report['seconds']:.1f} s"
    )
    lines = [accounting, f"plan: {report['plan']}"]
    for rule in report["rules"]:
        mark = "ok  " if rule["count"] == 0 else rule["severity"][:4].upper()
        lines.append(f"{mark} {rule['id']:<22} {rule['count']:>8}  {rule['description']}")
        lines.extend(
            f"       at {s['topic']}/{s['partition']} offset {s['offset']} "
            f"commit_ts {s['commit_ts']}: {s['detail']}"
            for s in rule["samples"][:3]
        )
    verdict = "FAIL" if report["errors"] else "PASS"
    lines.append(f"{verdict}: {report['errors']} error(s), {report['warnings']} warning(s)")
    out.write("\n".join(lines) + "\n")


def run(args: argparse.Namespace, out: IO[str]) -> int:
    """Run the check; print the summary; write the report; return the exit code."""
    try:
        settings = settings_from(args)
        paths = _paths(args.input)
    except UsageError as error:
        sys.stderr.write(f"error: {error}\n")
        return ExitCode.USAGE
    if args.samples < 0:
        sys.stderr.write("error: --samples must be 0 or more\n")
        return ExitCode.USAGE
    try:
        from ticdc_conformance.suites.stream import spark as spark_job  # noqa: PLC0415
    except ImportError as error:
        sys.stderr.write(f"error: check-stream needs the spark extra: {error}\n")
        return ExitCode.USAGE
    started = time.perf_counter()
    try:
        session = spark_job.session(args.master)
        if args.quiet:
            result = spark_job.check_dump(session, paths, settings, samples=args.samples)
        else:
            with spark_job.Progress(session):
                result = spark_job.check_dump(session, paths, settings, samples=args.samples)
    except Exception as error:  # noqa: BLE001 - the job failed: said as such, exit 3
        sys.stderr.write(f"error: the check job failed: {type(error).__name__}: {error}\n")
        return ExitCode.BROKEN
    report = build_report(result, settings, args.input, time.perf_counter() - started)
    print_summary(report, out)
    if args.report:
        Path(args.report).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if not result.read == result.decoded + result.undecodable == result.records:
        sys.stderr.write("error: not every input message was accounted for\n")
        return ExitCode.BROKEN
    return ExitCode.FAILURE if report["errors"] else ExitCode.OK


def run_from_command_line(argv: Sequence[str] | None = None) -> int:
    """Parse ``check-stream`` arguments and run (the ``spark-submit`` entry)."""
    parser = argparse.ArgumentParser(prog="check-stream", description=__doc__)
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return ExitCode.USAGE if exit_.code else ExitCode.OK
    return run(args, sys.stdout)
