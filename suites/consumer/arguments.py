"""The arguments of ``expected-state`` and ``check-consumer`` (the commands are in ``job``).

Light on purpose: the command line builds every command's parser before it runs one, so this
module imports neither pyarrow nor the consumer check; ``job`` imports them when a command
runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ticdc_conformance.reference import CODECS
from ticdc_conformance.suites.report import add_annotations_argument

__all__ = [
    "SPARK_ABOVE_ROWS",
    "add_check_arguments",
    "add_engine_arguments",
    "add_expected_arguments",
]

SPARK_ABOVE_ROWS = 200_000
"""``--engine auto`` runs Spark above this many messages (``expected-state``) or expected rows
(``check-consumer``)."""


def add_expected_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments both commands share, then ``expected-state``'s own."""
    parser.add_argument(
        "--input",
        required=True,
        help="a dump (folder or Parquet file) or a stream fixture id; for check-consumer "
        "also an expected-state folder",
    )
    parser.add_argument("--protocol", choices=sorted(CODECS), help="default: the dump's labels")
    parser.add_argument(
        "--handle-key",
        action="append",
        default=[],
        metavar="SCHEMA.TABLE=COL,COL",
        help="a table's handle-key columns, when its messages do not mark them",
    )
    parser.add_argument(
        "--claim-check-storage",
        metavar="URI",
        help="the claim-check files: a file:// URI or a folder (default: the dump's "
        "_claim_check folder, a stream fixture's .claim-check folder)",
    )


def add_engine_arguments(
    parser: argparse.ArgumentParser,
    plain: str = "the reference consumer in this process",
    counted: str = "messages",
) -> None:
    """``--engine`` and ``--master``: ``expected-state``'s by default."""
    parser.add_argument(
        "--engine",
        choices=("auto", "plain", "spark"),
        default="auto",
        help=f"plain: {plain}; spark: a Spark job; auto (default): plain up to "
        f"{SPARK_ABOVE_ROWS} {counted}, else Spark",
    )
    parser.add_argument("--master", default="local[*]", help="the Spark master (spark engine)")
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress line (a Spark job's phases, shown only on a terminal)",
    )


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    """``check-consumer``'s own arguments."""
    parser.add_argument(
        "--actual",
        help="the consumer's tables: a folder of <schema>.<table>.parquet|csv|jsonl, "
        "or a postgresql:// URI",
    )
    parser.add_argument("--applied-log", type=Path, help="the consumer's applied log (JSON Lines)")
    parser.add_argument("--report", type=Path, help="write the JSON report here")
    parser.add_argument(
        "--markdown", type=Path, metavar="FILE", help="write the report as Markdown"
    )
    parser.add_argument(
        "--junit", type=Path, metavar="FILE", help="write JUnit XML, one testcase per rule, for CI"
    )
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="write one HTML page, self-contained (the report extra)",
    )
    add_annotations_argument(parser)
    parser.add_argument("--samples", type=int, default=20, help="samples kept per rule")
    parser.add_argument(
        "--transactional",
        action="store_true",
        help="check transaction-split: the consumer claims transactional consistency",
    )
    add_engine_arguments(parser, plain="check in this process", counted="expected rows")
