"""The commands ``expected-state`` and ``check-consumer`` (docs/consumers.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import IO

from ticdc_conformance.cli._args import Commands
from ticdc_conformance.reference.errors import UsageError

__all__ = ["add_parsers"]

_EXTRA = "the consumer check needs pyarrow (the generators or consumer extra)"


def _expected_state(args: argparse.Namespace, out: IO[str]) -> int:
    try:
        from ticdc_conformance.suites.consumer.job import run_expected_state
    except ImportError as error:
        raise UsageError(f"{_EXTRA}: {error}") from None
    return run_expected_state(args, out)


def _check_consumer(args: argparse.Namespace, out: IO[str]) -> int:
    try:
        from ticdc_conformance.suites.consumer.job import run_check
    except ImportError as error:
        raise UsageError(f"{_EXTRA}: {error}") from None
    return run_check(args, out)


def add_parsers(commands: Commands) -> None:
    """Add ``expected-state`` and ``check-consumer`` (their arguments import no pyarrow)."""
    from ticdc_conformance.suites.consumer import arguments

    expected = commands.add_parser(
        "expected-state",
        help="the final tables and change log a correct consumer of a dump reaches",
        description="Run the reference consumer (TiCDC's own consumer algorithm, replays "
        "applied once) over a dump and write the expected state: Parquet per table, the "
        "expected change log, expected-state.json (docs/consumers.md).",
    )
    expected.set_defaults(handler=_expected_state)
    arguments.add_expected_arguments(expected)
    expected.add_argument("--out", required=True, type=Path, help="the folder to write")
    arguments.add_engine_arguments(expected)
    check = commands.add_parser(
        "check-consumer",
        help="check what a consumer wrote against the expected state (docs/consumers.md)",
        description="Compare a consumer's tables (files or PostgreSQL) and applied log with "
        "the expected state of the dump it read: rows missing, unexpected or different, "
        "changes lost, applied twice or out of order, DDL order. Exit codes: 0 conforms, "
        "1 findings of severity error, 2 usage error, 3 the check could not run.",
    )
    check.set_defaults(handler=_check_consumer)
    arguments.add_expected_arguments(check)
    arguments.add_check_arguments(check)
