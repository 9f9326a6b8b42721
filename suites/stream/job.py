"""``check-stream``: arguments, settings, the report (JSON and console) and the exit code.

Spark-free: a dump of up to ``SPARK_ABOVE_RECORDS`` records (counted from the Parquet footers) is
checked in this process (``suites/stream/plain.py``); a larger one, or any with ``--spark``,
``--engine spark`` or ``--master``, by the Spark job, and only then is ``suites/stream/spark.py``
(and so pyspark) imported. The report's ``engine`` says which ran. Exit codes: 0 clean
(warnings allowed), 1 a rule of severity error was broken, 2 usage error, 3 the job itself
failed (including a message not accounted for).
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from ticdc_conformance.generators.claim_check import storage_folder
from ticdc_conformance.generators.dump import dump_files
from ticdc_conformance.generators.progress import Progress
from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.errors import ExitCode, UsageError
from ticdc_conformance.suites.inputs import claim_check_folder, fixture_records, input_labels
from ticdc_conformance.suites.report import (
    annotations_wanted,
    github_rules,
    html_page,
    junit_rules,
    labelled_faults,
    markdown,
    write_atomically,
)
from ticdc_conformance.suites.stream import plain
from ticdc_conformance.suites.stream.arguments import SPARK_ABOVE_RECORDS, add_arguments
from ticdc_conformance.suites.stream.catalog import CheckResult
from ticdc_conformance.suites.stream.report import build_report, print_summary
from ticdc_conformance.suites.stream.rules import CheckSettings

__all__ = ["run", "run_from_command_line"]


_NO_DUMP = re.compile(r"not a topic dump: [^\n]*")
"""A Spark task's refusal of its input (``layout.read_unit``), within the job's error text."""


def _located(given: str) -> Path:
    """An input as a path (or glob): a stream fixture id is its records file."""
    return fixture_records(given) if given.startswith("stream.") else Path(given)


def _paths(inputs: Sequence[str]) -> list[str]:
    """Each input as a path or glob, checked to hold a dump."""
    paths = []
    for given in inputs:
        path = str(_located(given))
        if not glob.glob(path):  # noqa: PTH207 - a user's glob pattern
            raise UsageError(f"no input at {given}")
        try:  # a folder an interrupted capture left is no dump
            dump_files(path)
        except ValueError as error:
            raise UsageError(str(error)) from None
        paths.append(path)
    return paths


def _all_labels(inputs: Sequence[str]) -> dict[str, Any]:
    """The labels of the first labelled input (``{}`` when none is labelled)."""
    for path in map(_located, inputs):
        if path.exists() and (labels := input_labels(path)):
            return labels
    return {}


def _labels(inputs: Sequence[str]) -> dict[str, Any]:
    settings = _all_labels(inputs).get("settings")
    return dict(settings) if isinstance(settings, dict) else {}


def _claim_check_storage(args: argparse.Namespace) -> str | None:
    """``--claim-check-storage``, else the claim-check folder of the first input with one."""
    given: str | None = getattr(args, "claim_check_storage", None)
    if given is not None:
        try:
            return str(storage_folder(given).resolve())
        except ValueError as error:
            raise UsageError(f"--claim-check-storage: {error}") from None
    for path in map(_located, args.input):
        if path.exists() and (folder := claim_check_folder(path)) is not None:
            return str(folder.resolve())
    return None


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
        dispatcher = DispatchRule(
            partition=args.dispatcher, index_name=args.index_name, columns=tuple(args.columns or ())
        )
    merged = {**dict((labelled.get("options") or {}).items()), **dict(options)}
    try:
        settings = CheckSettings.from_labels(
            labelled,
            protocol=args.protocol,
            profile=args.profile,
            partitions=args.partitions,
            dispatcher=dispatcher,
            options=tuple(sorted(merged.items())),
            claim_check_storage=_claim_check_storage(args),
        )
        settings.compression  # noqa: B018 - an unknown compression is a usage error here
    except (ValueError, TypeError) as error:
        raise UsageError(str(error)) from None
    if settings.protocol not in CODECS:
        raise UsageError(f"unknown protocol {settings.protocol!r}")
    if settings.partitions is not None and settings.partitions <= 0:
        raise UsageError("--partitions must be positive")
    return settings


def choose_engine(asked: str, size: int, spark_above: int) -> str:
    """``plain`` or ``spark``: what was asked, else by the input's size.

    Spark for more than ``spark_above`` (records, messages or rows, as the caller counts).
    """
    if asked != "auto":
        return asked
    return "spark" if size > spark_above else "plain"


def engine_for(args: argparse.Namespace, records: int) -> str:
    """``check-stream``'s engine: ``--spark`` and ``--master`` ask for Spark."""
    asked = "spark" if args.spark or args.master else str(args.engine)
    return choose_engine(asked, records, SPARK_ABOVE_RECORDS)


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
    report_extra = ("jinja2", "matplotlib")
    if args.html and any(importlib.util.find_spec(n) is None for n in report_extra):  # said first
        sys.stderr.write(
            "error: --html needs the report extra (pip install 'ticdc-conformance[report]')\n"
        )
        return ExitCode.USAGE
    started = time.perf_counter()
    try:
        files = plain.input_files(paths)
        records = plain.count_records(files)
        engine = engine_for(args, records)
        result = _in_process(args, files, records, settings) if engine == "plain" else None
    except ValueError as error:  # no dump, or offsets no Kafka partition has
        sys.stderr.write(f"error: {error}\n")
        return ExitCode.USAGE
    if result is None:
        on_spark = _on_spark_or_exit(args, files, settings)
        if isinstance(on_spark, int):
            return on_spark
        result = on_spark
    report = build_report(result, settings, args.input, time.perf_counter() - started, engine)
    print_summary(report, out)
    if annotations_wanted(getattr(args, "annotations", None)):
        out.writelines(f"{line}\n" for line in github_rules(report, command_name="check-stream"))
    write_reports(args, report)
    if not result.read == result.decoded + result.undecodable == result.records:
        sys.stderr.write("error: not every input message was accounted for\n")
        return ExitCode.BROKEN
    return ExitCode.FAILURE if report["errors"] else ExitCode.OK


def _on_spark_or_exit(
    args: argparse.Namespace, files: list[Path], settings: CheckSettings
) -> CheckResult | int:
    """The check on Spark, or the exit status its failure calls for, said on stderr."""
    try:
        # the files checked above, not their folders: Spark would read any other file
        # beside them as Parquet
        return _on_spark(args, [str(file) for file in files], settings)
    except ImportError as error:
        sys.stderr.write(
            f"error: check-stream on Spark needs the spark extra "
            f"(pip install 'ticdc-conformance[spark]'): {error}\n"
        )
        return ExitCode.USAGE
    except Exception as error:  # noqa: BLE001 - the job failed: said as such, exit 3
        refused = _NO_DUMP.search(str(error))
        if refused:  # a task met input that is no dump (layout.read_unit): the user's
            sys.stderr.write(f"error: {refused[0]}\n")
            return ExitCode.USAGE
        sys.stderr.write(f"error: the check job failed: {type(error).__name__}: {error}\n")
        return ExitCode.BROKEN


def _in_process(
    args: argparse.Namespace, files: list[Path], records: int, settings: CheckSettings
) -> CheckResult:
    progress = Progress.for_terminal("checked", records, quiet=args.quiet, unit="messages")
    try:
        return plain.check_dump(
            files,
            settings,
            samples=args.samples,
            progress=None if progress is None else progress.update,
        )
    finally:
        if progress is not None:
            progress.done()


def write_reports(args: argparse.Namespace, report: dict[str, Any]) -> None:
    """Each report asked for, each file written whole or not at all."""
    title = f"check-stream: {', '.join(report['input'])}"
    faults = labelled_faults(report, _all_labels(args.input))
    if args.report:
        write_atomically(args.report, json.dumps(report, indent=2) + "\n")
    if args.markdown:
        write_atomically(args.markdown, markdown(report, title=title, faults=faults))
    if args.junit:
        write_atomically(args.junit, junit_rules(report, suite="check-stream"))
    if args.html:
        write_atomically(args.html, html_page(report, title=title, faults=faults))


def _on_spark(args: argparse.Namespace, paths: list[str], settings: CheckSettings) -> CheckResult:
    from ticdc_conformance.suites.stream import spark as spark_job
    from ticdc_conformance.suites.stream.phases import Phases

    session = spark_job.session(args.master)
    planned = len(spark_job.CHECK_PHASES)
    with Phases(
        session.sparkContext, command="check-stream", quiet=args.quiet, planned=planned
    ) as phases:
        return spark_job.check_dump(session, paths, settings, samples=args.samples, phases=phases)


def run_from_command_line(argv: Sequence[str] | None = None) -> int:
    """Parse ``check-stream`` arguments and run (the ``spark-submit`` entry)."""
    parser = argparse.ArgumentParser(prog="check-stream", description=__doc__)
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return ExitCode.USAGE if exit_.code else ExitCode.OK
    return run(args, sys.stdout)
