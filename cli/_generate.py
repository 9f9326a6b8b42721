"""The command ``generate``: a simulated TiCDC topic, with labelled faults, as a dump."""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import IO, Any

from ticdc_conformance.cli._args import PROFILES, PROTOCOLS, Commands, parse_options
from ticdc_conformance.generators.faults import FAULT_KINDS, FaultPlacementError
from ticdc_conformance.generators.simulator import StreamSettings, split_sink_options
from ticdc_conformance.reference import ExitCode
from ticdc_conformance.reference.dispatch import DISPATCHERS, DispatchRule
from ticdc_conformance.reference.errors import EncodeError, UsageError
from ticdc_conformance.reference.routing import RoutingRule
from ticdc_conformance.reference.tables import Profile

__all__ = ["add_parsers", "read_case_sensitive", "read_dispatchers"]


def _sink_config(path: Path) -> dict[str, Any]:
    """A changefeed configuration file (TOML) as data; ``UsageError`` when it cannot be read."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UsageError(f"{path}: {error}") from None


def read_dispatchers(path: Path) -> tuple[RoutingRule, ...]:
    """The ``[[sink.dispatchers]]`` rules of a changefeed configuration file (TOML).

    ``UsageError`` when the file cannot be read or a rule is not one TiCDC takes.
    """
    rules = _sink_config(path).get("sink", {}).get("dispatchers", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise UsageError(f"{path}: sink.dispatchers is not an array of tables")
    try:
        return tuple(RoutingRule.from_config(rule) for rule in rules)
    except ValueError as error:
        raise UsageError(f"{path}: {error}") from None


def read_case_sensitive(path: Path, profile: Profile) -> bool:
    """Whether a changefeed's dispatcher matchers compare names as they are (docs/kafka.md).

    tiflow reads the top-level ``case-sensitive`` (``ReplicaConfig.CaseSensitive``, false by
    default since v7.5.0). ticdc's event router reads ``[sink] case-sensitive``, which
    ``cdc cli`` and the OpenAPI do not carry to the changefeed (their ``SinkConfig`` has no
    such field), and its top-level key only filters tables: its matchers compare in lower
    case whatever the file says. ``UsageError`` when either key is not a boolean, and for
    ``[sink] case-sensitive`` under tiflow (its ``SinkConfig`` has none; ``cdc cli`` refuses
    unknown keys).
    """
    config = _sink_config(path)
    keys = {
        "case-sensitive": config.get("case-sensitive", False),
        "sink.case-sensitive": config.get("sink", {}).get("case-sensitive", False),
    }
    for key, value in keys.items():
        if not isinstance(value, bool):
            raise UsageError(f"{path}: {key} must be true or false, not {value!r}")
    if profile == "tiflow" and "case-sensitive" in config.get("sink", {}):
        raise UsageError(f"{path}: tiflow's [sink] has no case-sensitive (the top-level key is)")
    return profile == "tiflow" and keys["case-sensitive"]


def _generate(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    try:  # pyarrow (the generators extra) is needed here only
        from ticdc_conformance.generators.generate import generate
        from ticdc_conformance.generators.progress import Progress
    except ImportError as error:
        raise UsageError(f"generate needs the generators extra: {error}") from None
    try:
        options, raw = split_sink_options(parse_options(args.option))
        routes = () if args.sink_config is None else read_dispatchers(args.sink_config)
        sensitive = args.sink_config is not None and read_case_sensitive(
            args.sink_config, args.profile
        )
        settings = StreamSettings(
            protocol=args.protocol,
            profile=args.profile,
            topic=args.topic,
            routes=routes,
            case_sensitive=sensitive,
            partitions=args.partitions,
            dispatcher=DispatchRule(
                partition=args.dispatcher,
                index_name=args.index_name,
                columns=tuple(args.columns or ()),
            ),
            options=tuple(options.items()),
            output_raw_change_event=raw,
        )
        settings.codec_config()
        summary = generate(
            settings,
            messages=args.messages,
            seed=args.seed,
            faults=args.fault,
            folder=args.out,
            large_blobs=args.large_blobs,
            progress=Progress.for_terminal("simulated", quiet=args.quiet, unit="records"),
        )
    except (ValueError, EncodeError, FaultPlacementError, FileExistsError) as error:
        raise UsageError(str(error)) from None
    print(
        f"wrote {summary.records} records ({summary.parquet_bytes} bytes of Parquet) and "
        f"{summary.faults} labelled fault(s) to {args.out} in {summary.seconds:.1f} s",
        file=sys.stderr,
    )
    return ExitCode.OK


def add_parsers(commands: Commands) -> None:
    """Add ``generate``."""
    fault_lines = "\n".join(f"  {kind}: breaks rule {rule}" for kind, rule in FAULT_KINDS.items())
    generate = commands.add_parser(
        "generate",
        help="simulate a TiCDC topic (with labelled faults) and write it as a Parquet dump",
        description="Run the seeded 'shop' workload through the TiCDC stream simulator and "
        "write the topic log as a dump folder (docs/dump-format.md): Parquet records plus "
        "_labels.json with the settings and every injected fault's expected findings. The "
        "same arguments always write the same dump.",
        epilog=f"fault kinds:\n{fault_lines}\nmissing-schema applies to Simple only, "
        "oversized-batch to Open and Craft only, oversized-message needs\n--option "
        "max-message-bytes=N, wrong-partition two partitions or more, wrong-topic\n--sink-config "
        "rules and a protocol other than Simple; Debezium carries "
        "faults\nonly with --option enable-tidb-extension=true (no watermarks without it).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    generate.add_argument("--protocol", required=True, choices=PROTOCOLS, help="wire protocol")
    generate.add_argument(
        "--profile", choices=PROFILES, default="tiflow", help="producer line (default tiflow)"
    )
    generate.add_argument("--messages", type=int, required=True, help="records to write, about")
    generate.add_argument("--partitions", type=int, default=3, help="topic partitions (3)")
    generate.add_argument(
        "--topic",
        default="ticdc-conformance",
        help="the changefeed's default topic (ticdc-conformance)",
    )
    generate.add_argument(
        "--sink-config",
        type=Path,
        metavar="TOML",
        help="a changefeed configuration file whose [[sink.dispatchers]] rules (matcher, "
        "partition, index, columns, topic; with --profile ticdc also target-schema, "
        "target-table) route tables to topics, before the implicit *.* rule with --dispatcher; "
        "with --profile tiflow its case-sensitive says how matchers compare names "
        "(docs/kafka.md)",
    )
    generate.add_argument(
        "--dispatcher",
        default="default",
        choices=DISPATCHERS,
        help="partition dispatcher rule (default: default, which is table)",
    )
    generate.add_argument("--index-name", help="index of an index-value dispatcher")
    generate.add_argument("--columns", nargs="+", help="columns of a columns dispatcher")
    generate.add_argument(
        "--fault",
        action="append",
        default=[],
        choices=sorted(FAULT_KINDS),
        metavar="KIND",
        help="inject one fault of KIND (repeatable; kinds below)",
    )
    generate.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an encoder option, as for encode, or the sink option "
        "output-raw-change-event=true|false (default false: key-changing UPDATEs split into "
        "DELETE and INSERT)",
    )
    generate.add_argument("--seed", type=int, default=1, help="workload seed (1)")
    generate.add_argument(
        "--large-blobs",
        action="store_true",
        help="a quarter of the customers' avatar BLOBs hold 4 to 6 KiB: in Simple, row "
        "messages larger than any BOOTSTRAP or DDL, for max-message-bytes and "
        "large-message-handle-option (docs/generators.md)",
    )
    generate.add_argument("--out", required=True, type=Path, help="dump folder to write")
    generate.add_argument(
        "--quiet", action="store_true", help="no progress line (shown only on a terminal)"
    )
    generate.set_defaults(handler=_generate)
