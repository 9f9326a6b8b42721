"""``check-stream``'s arguments, shared by the CLI and ``spark-submit`` (``job``).

Light on purpose: the command line builds every command's parser before it runs one, so this
module imports neither pyarrow nor the checker; ``job`` imports them when the check runs.
"""

from __future__ import annotations

import argparse

from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.dispatch import DISPATCHERS
from ticdc_conformance.suites.report import add_annotations_argument

__all__ = ["SPARK_ABOVE_RECORDS", "add_arguments"]

SPARK_ABOVE_RECORDS = 50_000
"""``--engine auto`` runs Spark above this many records: about 15 s in process on one core,
where a local Spark session (start-up included) begins to be as fast on two."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``check-stream`` arguments (shared by the CLI and ``spark-submit``)."""
    parser.add_argument(
        "--protocol",
        choices=sorted(CODECS),
        help="the topic's protocol (default: the dump's labels)",
    )
    parser.add_argument(
        "--input",
        required=True,
        action="append",
        help="dump folder, Parquet file, glob or stream fixture id (repeatable)",
    )
    parser.add_argument(
        "--profile",
        choices=("tiflow", "ticdc"),
        help="tiflow (classic TiCDC) or ticdc (new architecture): how NULL "
        "handle values hash (default: the dump's labels, else tiflow)",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        help="the topic's partition count (default: the dump's labels, else "
        "as many as the dump shows)",
    )
    parser.add_argument(
        "--dispatcher",
        choices=DISPATCHERS,
        help="the [[sink.dispatchers]] partition rule (default: the dump's labels, else default)",
    )
    parser.add_argument("--index-name", help="index of an index-value dispatcher")
    parser.add_argument("--columns", nargs="+", help="columns of a columns dispatcher")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an encoder option (max-message-bytes, max-batch-size)",
    )
    parser.add_argument(
        "--claim-check-storage",
        metavar="URI",
        help="the claim-check files: a file:// URI or a folder (default: the dump's "
        "_claim_check folder; s3://, gcs:// and other remote storage are not read)",
    )
    parser.add_argument("--report", help="write the JSON report (the contract) to this file")
    parser.add_argument("--markdown", metavar="FILE", help="write the report as Markdown")
    parser.add_argument(
        "--junit", metavar="FILE", help="write JUnit XML, one testcase per rule, for CI"
    )
    parser.add_argument(
        "--html", metavar="FILE", help="write one HTML page, self-contained (the report extra)"
    )
    add_annotations_argument(parser)
    parser.add_argument("--samples", type=int, default=10, help="samples kept per rule")
    parser.add_argument(
        "--engine",
        choices=("auto", "plain", "spark"),
        default="auto",
        help="plain: check in this process; spark: a Spark job; auto (default): "
        f"plain up to {SPARK_ABOVE_RECORDS} records, else Spark",
    )
    parser.add_argument("--spark", action="store_true", help="run on Spark (--engine spark)")
    parser.add_argument(
        "--master",
        help="Spark master URL; giving one runs on Spark (default local[*] on 127.0.0.1)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
