"""Argument parsing and the commands ``encode``, ``decode`` and ``demo``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import IO

from ticdc_conformance.cli import _suite_commands
from ticdc_conformance.generators.faults import FAULT_KINDS, FaultPlacementError
from ticdc_conformance.generators.simulator import StreamSettings, split_sink_options
from ticdc_conformance.reference import CODECS, Message, ProtocolError
from ticdc_conformance.reference.dispatch import DISPATCHERS, DispatchRule
from ticdc_conformance.reference.errors import DecodeError, EncodeError, FormError
from ticdc_conformance.reference.events import ChangeEvent
from ticdc_conformance.reference.forms import (
    read_change_event,
    read_message,
    write_decoded_event,
    write_message,
)
from ticdc_conformance.reference.message import SchemaCodec

__all__ = ["main"]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_BROKEN = 0, 1, 2, 3


class _UsageError(Exception):
    """Options or arguments the command cannot run with (exit status 2)."""


def _json_lines(stream: IO[str]) -> Iterator[tuple[int, object]]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            raise FormError(f"not JSON: {error.msg}", line=number) from None


def _emit(document: object, out: IO[str]) -> None:
    out.write(json.dumps(document, separators=(",", ":")) + "\n")


def _parse_options(pairs: Sequence[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise _UsageError(f"--option takes NAME=VALUE, got {pair!r}")
        options[name] = value
    return options


def _read_events(stream: IO[str]) -> list[ChangeEvent]:
    return [read_change_event(raw, line=number) for number, raw in _json_lines(stream)]


def _encode(args: argparse.Namespace, out: IO[str]) -> int:
    codec = CODECS[args.protocol]
    try:
        config = codec.config_from_options(_parse_options(args.option), profile=args.profile)
    except EncodeError as error:
        raise _UsageError(str(error)) from None
    for message in codec.encode(_read_events(sys.stdin), config):
        _emit(write_message(message), out)
    return EXIT_OK


def _messages(args: argparse.Namespace) -> Iterator[tuple[str, Message | FormError]]:
    """Each message with where it came from, or the reason its line is not a message."""
    if args.key_file or args.value_file:
        try:
            key = Path(args.key_file).read_bytes() if args.key_file else None
            value = Path(args.value_file).read_bytes() if args.value_file else None
        except OSError as error:
            raise _UsageError(str(error)) from None
        yield "files", Message(key=key, value=value)
        return
    for number, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", read_message(json.loads(line), line=number)
        except json.JSONDecodeError as error:
            yield f"line {number}", FormError(f"not JSON: {error.msg}", line=number)
        except FormError as error:
            yield f"line {number}", error


def _decode(args: argparse.Namespace, out: IO[str]) -> int:
    codec = CODECS[args.protocol]
    # A protocol whose rows need state (Simple types DML by cached schemas) offers a decoder.
    decoder = codec.new_decoder() if isinstance(codec, SchemaCodec) else None
    decode = codec.decode if decoder is None else decoder.feed
    status = EXIT_OK
    places: dict[int, str] = {}
    for index, (where, item) in enumerate(_messages(args)):
        places[index] = where
        if isinstance(item, FormError):  # it names its line itself
            print(f"error: {item}", file=sys.stderr)
            status = EXIT_FAILURE
            continue
        try:
            events = decode(item, message_index=index)
        except DecodeError as error:
            print(f"error: {where}: {error}", file=sys.stderr)
            status = EXIT_FAILURE
            continue
        for event in events:
            _emit(write_decoded_event(event), out)
    if decoder is not None:
        # every message is accounted for: rows never typed are errors at their own place
        for row in (*decoder.pending(), *decoder.rejected()):
            print(
                f"error: {places[row.message_index]}: {args.protocol}: message "
                f"{row.message_index}: row not decoded: {row.reason}",
                file=sys.stderr,
            )
            status = EXIT_FAILURE
    return status


def _demo(args: argparse.Namespace, out: IO[str]) -> int:
    del args
    examples = sorted(
        (entry.name, entry.read_text(encoding="utf-8"))
        for entry in resources.files("ticdc_conformance.cli").joinpath("examples").iterdir()
        if entry.name.endswith(".change.jsonl")
    )
    for protocol, codec in CODECS.items():
        for profile in codec.PROFILES:
            config = codec.config_from_options({}, profile=profile)
            for name, text in examples:
                events = [read_change_event(json.loads(line)) for line in text.splitlines() if line]
                messages = codec.encode(events, config)
                size = sum(len(m.key or b"") + len(m.value or b"") for m in messages)
                print(
                    f"{protocol} ({profile}) {name}: {len(events)} event(s) -> "
                    f"{len(messages)} message(s), {size} bytes of key plus value",
                    file=sys.stderr,
                )
                for index, message in enumerate(messages):
                    decoded = [
                        write_decoded_event(e) for e in codec.decode(message, message_index=index)
                    ]
                    _emit(
                        {"protocol": protocol, "profile": profile, "example": name,
                         "message": write_message(message), "decoded": decoded},
                        out,
                    )  # fmt: skip
    return _suite_commands.reference_summary()


def _generate(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    try:  # pyarrow (the generators extra) is needed here only
        from ticdc_conformance.generators.generate import generate  # noqa: PLC0415
    except ImportError as error:
        raise _UsageError(f"generate needs the generators extra: {error}") from None

    try:
        options, raw = split_sink_options(_parse_options(args.option))
        settings = StreamSettings(
            protocol=args.protocol, profile=args.profile, partitions=args.partitions,
            dispatcher=DispatchRule(partition=args.dispatcher, index_name=args.index_name,
                                    columns=tuple(args.columns or ())),
            options=tuple(options.items()), output_raw_change_event=raw,
        )  # fmt: skip
        settings.codec_config()
        summary = generate(
            settings, messages=args.messages, seed=args.seed, faults=args.fault,
            folder=Path(args.out),
        )  # fmt: skip
    except (ValueError, EncodeError, FaultPlacementError) as error:
        raise _UsageError(str(error)) from None
    print(
        f"wrote {summary.records} records ({summary.parquet_bytes} bytes of Parquet) and "
        f"{summary.faults} labelled fault(s) to {args.out} in {summary.seconds:.1f} s",
        file=sys.stderr,
    )
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ticdc-conformance",
        description="Conformance kit for TiCDC's Kafka message protocols.",
        epilog="Exit codes: 0 success, 1 conformance failure, 2 usage error, 3 the run broke.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    protocols = sorted(CODECS)

    option_lines = "\n".join(
        f"  {protocol}: {name}  {text}"
        for protocol, codec in sorted(CODECS.items())
        for name, text in codec.OPTIONS.items()
    )
    encode = commands.add_parser(
        "encode",
        help="change events (JSON Lines, stdin) -> Kafka messages (JSON Lines, stdout)",
        description="Read change events as JSON Lines on stdin and write one line per Kafka "
        'message on stdout: {"key": base64 or null, "value": base64 or null}, plus '
        '"claim_checks" when TiCDC would have stored files next to the message.',
        epilog=f"options (TiCDC sink option names):\n{option_lines}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    encode.add_argument("--protocol", required=True, choices=protocols)
    encode.add_argument(
        "--profile", choices=("tiflow", "ticdc"), default="tiflow",
        help="producer line to imitate: tiflow (classic TiCDC) or ticdc (new architecture)",
    )  # fmt: skip
    encode.add_argument(
        "--option", action="append", default=[], metavar="NAME=VALUE",
        help="a TiCDC sink option (listed below), repeatable",
    )  # fmt: skip

    decode = commands.add_parser(
        "decode",
        help="Kafka messages (JSON Lines, stdin) -> decoded events (JSON Lines, stdout)",
        description="Read message lines on stdin (or one raw message from --key-file and "
        "--value-file) and write decoded events as JSON Lines. An invalid message prints "
        "one line on stderr with its location and nothing on stdout; the others are still "
        "decoded, and the exit status is 1. Simple rows are typed by the schemas of earlier "
        "BOOTSTRAP and DDL messages; a row whose schema never arrives is reported at the end.",
    )
    decode.add_argument("--protocol", required=True, choices=protocols)
    decode.add_argument("--key-file", help="raw Kafka key bytes of one message")
    decode.add_argument("--value-file", help="raw Kafka value bytes of one message")

    commands.add_parser(
        "demo",
        help="encode the bundled examples with every protocol, decode back, run the golden suite",
        description="Encode the bundled example change events with every implemented "
        "protocol and profile, decode each message back, and print message and decoded "
        "events as JSON Lines (a size summary goes to stderr); then check the reference codecs "
        "against every golden case and print the counts per protocol and tier on stderr.",
    )
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
        "max-message-bytes=N, wrong-partition two partitions or more; Debezium carries "
        "faults\nonly with --option enable-tidb-extension=true (no watermarks without it).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    generate.add_argument("--protocol", required=True, choices=protocols)
    generate.add_argument("--profile", choices=("tiflow", "ticdc"), default="tiflow")
    generate.add_argument("--messages", type=int, required=True, help="records to write, about")
    generate.add_argument("--partitions", type=int, default=3)
    generate.add_argument(
        "--dispatcher", default="default", choices=DISPATCHERS,
        help="partition dispatcher rule (default: default, which is table)",
    )  # fmt: skip
    generate.add_argument("--index-name", help="index of an index-value dispatcher")
    generate.add_argument("--columns", nargs="+", help="columns of a columns dispatcher")
    generate.add_argument(
        "--fault", action="append", default=[], choices=sorted(FAULT_KINDS),
        metavar="KIND", help="inject one fault of KIND (repeatable; kinds below)",
    )  # fmt: skip
    generate.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                          help="an encoder option, as for encode, or the sink option "
                          "output-raw-change-event=true|false (default false: key-changing "
                          "UPDATEs split into DELETE and INSERT)")  # fmt: skip
    generate.add_argument("--seed", type=int, default=1)
    generate.add_argument("--out", required=True, help="dump folder to write")
    _suite_commands.add_parsers(commands)
    _add_check_stream(commands)
    return parser


def _check_stream(args: argparse.Namespace, out: IO[str]) -> int:
    try:  # pyarrow and, when the check runs, pyspark (the spark extra)
        from ticdc_conformance.suites.stream_report import run  # noqa: PLC0415
    except ImportError as error:
        raise _UsageError(f"check-stream needs the spark extra: {error}") from None
    return run(args, out)


def _add_check_stream(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    check = commands.add_parser(
        "check-stream",
        help="check a topic dump against TiCDC's stream rules with Spark (docs/stream-checker.md)",
        description="Decode a topic dump (docs/dump-format.md) with the reference codecs in a "
        "Spark job and check the stream rules: watermarks, broadcasts, ordering, duplicates, "
        "partition affinity, limits, Simple schemas. Settings come from the dump's "
        "_labels.json; flags override them. Exit codes: 0 clean, 1 violations of severity "
        "error, 2 usage error, 3 the job failed.",
    )
    try:
        from ticdc_conformance.suites.stream_report import add_arguments  # noqa: PLC0415
    except ImportError:  # without pyarrow: the command still parses and says what is missing
        check.add_argument("rest", nargs=argparse.REMAINDER)
        return
    add_arguments(check)


_COMMANDS = {"encode": _encode, "decode": _decode, "demo": _demo, "generate": _generate,
             "check-stream": _check_stream, **_suite_commands.COMMANDS}  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    try:
        return _COMMANDS[args.command](args, sys.stdout)
    except (_UsageError, _suite_commands.UsageError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except ProtocolError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as error:  # noqa: BLE001 - anything else is a broken run, said as such
        print(f"error: the run broke: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_BROKEN
