"""The commands ``expected-state`` and ``check-consumer`` (docs/consumers.md, "Check yours").

``expected-state`` runs the reference consumer (``reference.consumer``) over a dump and writes
the expected state (``expected``). ``check-consumer`` compares what a consumer produced (a
snapshot of its tables, its applied log, or both) with the expected state, computing it first
when ``--input`` is a dump. ``--engine plain`` checks in Python; ``spark`` runs the state rules
as a Spark job (the rows stay on the executors; only counts and samples reach the driver); the
default picks Spark for an expected state of more than ``SPARK_ABOVE_ROWS`` rows.
``expected-state --engine spark`` runs the reference consumer as a Spark job
(``spark_state``); the default picks it for a dump of more than ``SPARK_ABOVE_ROWS`` messages.

Exit codes as ``check-stream``: 0 conforms, 1 a rule of severity error was broken, 2 usage,
3 the check could not run.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ticdc_conformance.generators.claim_check import file_storage
from ticdc_conformance.generators.dump import dump_files, publishing, read_dump
from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.claim_check import ClaimCheck
from ticdc_conformance.reference.consumer import Consumed, Coordinates, consume
from ticdc_conformance.reference.errors import ExitCode, UsageError
from ticdc_conformance.reference.fold import TableName
from ticdc_conformance.reference.message import Message
from ticdc_conformance.suites.consumer.actual import Snapshot, read_applied_log
from ticdc_conformance.suites.consumer.arguments import SPARK_ABOVE_ROWS
from ticdc_conformance.suites.consumer.check import Tally, check_log, check_snapshot
from ticdc_conformance.suites.consumer.expected import (
    ExpectedState,
    is_expected_state,
    read_expected_state,
    write_expected_state,
)
from ticdc_conformance.suites.consumer.report import build_report, print_summary
from ticdc_conformance.suites.inputs import claim_check_folder, input_labels, resolve_input
from ticdc_conformance.suites.report import (
    annotations_wanted,
    github_rules,
    html_page,
    junit_rules,
    markdown,
    write_atomically,
)
from ticdc_conformance.suites.stream.job import choose_engine
from ticdc_conformance.suites.stream.plain import count_records

__all__ = [
    "assert_consumer_conforms",
    "check_consumer",
    "consume_dump",
    "run_check",
    "run_expected_state",
]


def _handle_keys(values: Sequence[str]) -> dict[TableName, tuple[str, ...]]:
    keys: dict[TableName, tuple[str, ...]] = {}
    for value in values:
        table, _, columns = value.partition("=")
        schema, _, name = table.partition(".")
        if not (schema and name and columns):
            raise UsageError(f"--handle-key {value!r}: write it schema.table=column,column")
        keys[(schema, name)] = tuple(columns.split(","))
    return keys


def _messages(dump: Path) -> Iterator[tuple[Coordinates, Message]]:
    records = sorted(read_dump(dump), key=lambda r: (r.topic, r.partition, r.offset))
    for r in records:
        yield Coordinates(r.topic, r.partition, r.offset), Message(key=r.key, value=r.value)


def consume_dump(
    given: str,
    protocol: str | None,
    handle_keys: Mapping[TableName, Sequence[str]],
    claim_check_storage: str | None = None,
) -> tuple[str, Consumed]:
    """The reference consumer over a dump; the protocol from its labels or the flag."""
    dump, labels = resolve_input(given)
    protocol = _protocol_of(given, protocol, labels)
    claim_check = claim_check_of(dump, claim_check_storage, labels)
    return protocol, consume(
        protocol, _messages(dump), handle_keys=handle_keys, claim_check=claim_check
    )


def claim_check_of(
    dump: Path, storage: str | None = None, labels: Mapping[str, Any] | None = None
) -> ClaimCheck | None:
    """The claim-check files of a dump, read as its labels say (``claim-check-raw-value``).

    ``storage`` (``--claim-check-storage``: a ``file://`` URI or a folder) when given, else
    the dump's own ``_claim_check/`` folder, or a stream fixture's ``<name>.claim-check/``
    beside its ``<name>.parquet`` (docs/dump-format.md#claim-check-files); ``None`` when none
    is there. ``labels``: the dump's (default: its folder's ``_labels.json``).
    """
    if storage is None:
        found = claim_check_folder(dump)
        if found is None:
            return None
        storage = str(found)
    labels = input_labels(dump) if labels is None else labels
    options = (labels.get("settings") or {}).get("options") or {}
    raw = options.get("claim-check-raw-value") == "true"
    try:
        read = file_storage(storage)
    except ValueError as error:
        raise UsageError(f"--claim-check-storage: {error}") from None
    return ClaimCheck(storage=read, raw_value=raw)


def _protocol_of(given: str, protocol: str | None, labels: Mapping[str, Any]) -> str:
    protocol = protocol or (labels.get("settings") or {}).get("protocol")
    if protocol not in CODECS:
        raise UsageError(f"--input {given}: say --protocol (one of {', '.join(CODECS)})")
    return protocol


def _dump_engine(requested: str, dump: Path) -> str:
    if requested != "auto":  # no need to read a footer
        return requested
    return choose_engine(requested, count_records(dump_files(dump)), SPARK_ABOVE_ROWS)


_STATE_KIND = "an expected-state folder"


def _expected_on_spark(
    args: argparse.Namespace,
    dump: Path,
    protocol: str,
    folder: Path,
    handle_keys: Mapping[TableName, Sequence[str]],
    *,
    claim_check: ClaimCheck | None,
) -> dict[str, Any]:
    from ticdc_conformance.suites.consumer import spark, spark_state
    from ticdc_conformance.suites.stream.phases import Phases

    session = spark.session(args.master)
    quiet = getattr(args, "quiet", False)
    with Phases(session.sparkContext, command="expected-state", quiet=quiet) as phases:
        return spark_state.write_expected_state(
            session,
            dump,
            protocol,
            folder,
            handle_keys=handle_keys,
            claim_check=claim_check,
            phases=phases,
        )


def run_expected_state(args: argparse.Namespace, out: IO[str]) -> int:
    """``expected-state``: write the expected state of a dump."""
    handle_keys = _handle_keys(args.handle_key)
    dump, labels = resolve_input(args.input)
    protocol = _protocol_of(args.input, args.protocol, labels)
    spark_engine = _dump_engine(args.engine, dump) == "spark"
    claim_check = claim_check_of(dump, getattr(args, "claim_check_storage", None), labels)
    try:
        # an interrupted run leaves no folder that looks complete (docs/consumers.md)
        with publishing(
            Path(args.out), "expected-state", replaceable=is_expected_state, kind=_STATE_KIND
        ) as folder:
            if spark_engine:
                manifest = _expected_on_spark(
                    args, dump, protocol, folder, handle_keys, claim_check=claim_check
                )
            else:
                consumed = consume(
                    protocol, _messages(dump), handle_keys=handle_keys, claim_check=claim_check
                )
                manifest = write_expected_state(consumed, protocol, folder)
    except FileExistsError as error:
        raise UsageError(str(error)) from None
    rows = sum(t["rows"] for t in manifest["tables"])
    out.write(
        f"{manifest['messages']} messages: {manifest['changes']} changes and "
        f"{manifest['ddls']} DDLs applied, {manifest['pending']} pending above watermark "
        f"{manifest['watermark']}, {len(manifest['not_applied'])} not applied; "
        f"{len(manifest['tables'])} tables, {rows} rows in {args.out}\n"
    )
    return ExitCode.OK


def _expected(args: argparse.Namespace, scratch: Path) -> ExpectedState:
    if is_expected_state(Path(args.input)):
        return read_expected_state(Path(args.input))
    storage = getattr(args, "claim_check_storage", None)
    keys = _handle_keys(args.handle_key)
    protocol, consumed = consume_dump(args.input, args.protocol, keys, storage)
    write_expected_state(consumed, protocol, scratch)
    return read_expected_state(scratch)


def check_consumer(
    expected: ExpectedState,
    *,
    actual: str | None,
    applied_log: Path | None,
    samples: int = 20,
    transactional: bool = False,
    engine: str = "plain",
    master: str = "local[*]",
    quiet: bool = True,
) -> Tally:
    """Run the rules that the given sources allow; return their tally.

    On Spark, a progress line shows the job's phases unless ``quiet`` (or off a terminal).
    """
    tally = Tally(samples)
    if actual is not None:
        snapshot = Snapshot(actual)
        if engine == "spark":
            from ticdc_conformance.suites.consumer import spark
            from ticdc_conformance.suites.stream.phases import Phases

            session = spark.session(master)
            tables = len(expected.tables)
            with Phases(
                session.sparkContext, command="check-consumer", quiet=quiet, planned=tables
            ) as phases:
                spark.check_snapshot(session, expected, snapshot, tally, phases)
        else:
            check_snapshot(expected, snapshot, tally)
    if applied_log is not None:
        check_log(expected, read_applied_log(applied_log), tally, transactional=transactional)
    return tally


def run_check(args: argparse.Namespace, out: IO[str]) -> int:
    """``check-consumer``: check, print the summary, write the report, return the exit code."""
    if args.actual is None and args.applied_log is None:
        raise UsageError("say --actual, --applied-log or both")
    if args.samples < 0:
        raise UsageError("--samples must be 0 or more")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="expected-") as scratch:
        expected = _expected(args, Path(scratch))
        rows = sum(table.rows for table in expected.tables)
        engine = choose_engine(args.engine, rows, SPARK_ABOVE_ROWS)
        tally = check_consumer(
            expected,
            actual=args.actual,
            applied_log=args.applied_log,
            samples=args.samples,
            transactional=args.transactional,
            engine=engine,
            master=args.master,
            quiet=args.quiet,
        )
    report = build_report(tally, args, engine, time.perf_counter() - started)
    print_summary(report, out)
    if annotations_wanted(getattr(args, "annotations", None)):
        lines = github_rules(report, command_name="check-consumer")
        out.writelines(f"{line}\n" for line in lines)
    title = f"check-consumer: {report['input']}"
    if args.report:
        write_atomically(args.report, json.dumps(report, indent=2) + "\n")
    if args.markdown:
        write_atomically(args.markdown, markdown(report, title=title))
    if args.junit:
        write_atomically(args.junit, junit_rules(report, suite="check-consumer"))
    if args.html:
        write_atomically(args.html, html_page(report, title=title))
    return ExitCode.FAILURE if report["errors"] else ExitCode.OK


def assert_consumer_conforms(
    expected: ExpectedState,
    *,
    actual: str | Path | None = None,
    applied_log: str | Path | None = None,
    transactional: bool = False,
    samples: int = 5,
) -> None:
    """Check a consumer's output; an ``AssertionError`` with the summary if a rule is broken.

    The test-side twin of ``check-consumer`` (plain Python): ``actual`` is a snapshot source
    (a folder of table files or a ``postgresql://`` URI), ``applied_log`` an applied log.
    """
    if actual is None and applied_log is None:
        raise UsageError("give actual, applied_log or both")
    args = argparse.Namespace(
        input=str(expected.folder),
        actual=None if actual is None else str(actual),
        applied_log=None if applied_log is None else Path(applied_log),
        transactional=transactional,
    )
    started = time.perf_counter()
    tally = check_consumer(
        expected,
        actual=args.actual,
        applied_log=args.applied_log,
        samples=samples,
        transactional=transactional,
    )
    report = build_report(tally, args, "plain", time.perf_counter() - started)
    if report["errors"]:
        summary = io.StringIO()
        print_summary(report, summary)
        raise AssertionError("the consumer does not conform:\n" + summary.getvalue())
