"""The command ``check-stream``: TiCDC's stream rules over a topic dump (docs/stream-checker.md)."""

from __future__ import annotations

import argparse
from typing import IO

from ticdc_conformance.cli._args import Commands
from ticdc_conformance.reference.errors import UsageError

__all__ = ["add_parsers"]


def _check_stream(args: argparse.Namespace, out: IO[str]) -> int:
    try:  # pyarrow and, when the check runs on Spark, pyspark (the spark extra)
        from ticdc_conformance.suites.stream.job import run
    except ImportError as error:
        raise UsageError(
            f"check-stream needs the spark extra (pip install 'ticdc-conformance[spark]'): {error}"
        ) from None
    return run(args, out)


def add_parsers(commands: Commands) -> None:
    """Add ``check-stream``; its arguments are the job's own (shared with ``spark-submit``)."""
    from ticdc_conformance.suites.stream.arguments import add_arguments  # imports no pyarrow

    check = commands.add_parser(
        "check-stream",
        help="check a topic dump against TiCDC's stream rules (docs/stream-checker.md)",
        description="Decode a topic dump (docs/dump-format.md) with the reference codecs and "
        "check the stream rules (docs/rules/stream.md): watermarks, broadcasts, ordering, "
        "duplicates, partition affinity, limits, Simple schemas. A small dump is checked in "
        "this process, a large one (or with --spark or --master) in a Spark job; the report "
        "says which. Settings come from the dump's _labels.json; flags override them. Exit "
        "codes: 0 clean, 1 violations of severity error, 2 usage error, 3 the job failed.",
    )
    check.set_defaults(handler=_check_stream)
    add_arguments(check)
