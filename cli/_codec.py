"""The commands ``encode``, ``decode`` and ``demo``: the reference codecs on the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ticdc_conformance.cli._args import PROFILES, PROTOCOLS, Commands, emit, parse_options
from ticdc_conformance.generators.claim_check import file_storage
from ticdc_conformance.reference import CODECS, ExitCode, Message
from ticdc_conformance.reference.claim_check import ClaimCheck
from ticdc_conformance.reference.compression import (
    COMPRESSION_OPTION,
    Compression,
    compression_of,
)
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.errors import DecodeError, EncodeError, FormError, UsageError
from ticdc_conformance.reference.forms import (
    DEFAULT_MAX_MESSAGE_BYTES,
    change_line_limit,
    message_line_limit,
    read_messages,
    read_numbered_change_events,
    write_decoded_event,
    write_message,
)
from ticdc_conformance.reference.message import SchemaCodec

__all__ = ["add_parsers"]


def _encode(args: argparse.Namespace, out: IO[str]) -> int:
    codec = CODECS[args.protocol]
    options = parse_options(args.option)
    try:
        config = codec.config_from_options(options, profile=args.profile)
        limit = int(options.get("max-message-bytes", DEFAULT_MAX_MESSAGE_BYTES))
    except (EncodeError, ValueError) as error:
        raise UsageError(str(error)) from None
    numbered = read_numbered_change_events(
        sys.stdin.buffer, max_line_bytes=change_line_limit(limit)
    )
    # Simple: the stream TiCDC writes, BOOTSTRAPs included (docs/simple.md)
    stream = codec.encode_stream if isinstance(codec, SchemaCodec) else codec.encode
    try:
        messages = list(stream([event for _, event in numbered], config))
    except EncodeError as error:
        if error.event_index is None:
            raise
        # name the input line, as decode does, not the 0-based event index
        line = numbered[error.event_index][0]
        print(f"error: line {line}: {error.protocol}: {error.reason}", file=sys.stderr)
        return ExitCode.FAILURE
    for message in messages:
        emit(write_message(message), out)
    return ExitCode.OK


def _messages(args: argparse.Namespace) -> Iterator[tuple[str, Message | FormError]]:
    """Each message with where it came from, or the reason its line is not a message."""
    if not args.key_file and not args.value_file:
        limit = message_line_limit(args.max_message_bytes)
        for number, item in read_messages(sys.stdin.buffer, max_line_bytes=limit):
            yield f"line {number}", item
        return
    try:
        key = Path(args.key_file).read_bytes() if args.key_file else None
        value = Path(args.value_file).read_bytes() if args.value_file else None
    except OSError as error:
        raise UsageError(str(error)) from None
    yield "files", Message(key=key, value=value)


_RAW_VALUE = "claim-check-raw-value"
_DECODER_OPTIONS = (COMPRESSION_OPTION, _RAW_VALUE)
"""The sink options a consumer must be told: the bytes do not say how they are compressed, nor
whether claim-check files hold the raw value."""


def _decoder_options(pairs: list[str]) -> tuple[Compression, bool]:
    """``large-message-handle-compression`` and ``claim-check-raw-value`` of ``--option``."""
    options = parse_options(pairs)
    for name in options:
        if name not in _DECODER_OPTIONS:
            raise UsageError(
                f"decode takes --option {' or '.join(_DECODER_OPTIONS)} only, not {name!r} "
                "(the other options change what is written, not how it is read)"
            )
    raw = options.pop(_RAW_VALUE, "false")
    if raw not in ("true", "false"):
        raise UsageError(f"{_RAW_VALUE} takes true or false, got {raw!r}")
    try:
        return compression_of(options), raw == "true"
    except ValueError as error:
        raise UsageError(str(error)) from None


def _claim_check(args: argparse.Namespace, raw_value: bool) -> ClaimCheck | None:
    """The claim-check storage ``--claim-check-storage`` names (``file://`` or a folder)."""
    if args.claim_check_storage is None:
        return None
    try:
        return ClaimCheck(storage=file_storage(args.claim_check_storage), raw_value=raw_value)
    except ValueError as error:
        raise UsageError(f"--claim-check-storage: {error}") from None


def _decode(args: argparse.Namespace, out: IO[str]) -> int:
    compression, raw_value = _decoder_options(args.option)
    decoder = PartitionDecoder(
        args.protocol,
        lenient=args.lenient,
        compression=compression,
        claim_check=_claim_check(args, raw_value),
    )
    status = ExitCode.OK
    places: dict[int, str] = {}
    for index, (where, item) in enumerate(_messages(args)):
        places[index] = where
        if isinstance(item, FormError):  # it names its line itself
            print(f"error: {item}", file=sys.stderr)
            status = ExitCode.FAILURE
            continue
        try:
            events = decoder.decode(item, message_index=index)
        except DecodeError as error:
            print(f"error: {where}: {error}", file=sys.stderr)
            status = ExitCode.FAILURE
            continue
        for warning in decoder.warnings:
            print(f"warning: {places[warning.message_index]}: {warning}", file=sys.stderr)
        decoder.warnings.clear()
        for event in events:
            emit(write_decoded_event(event), out)
    for unresolved in decoder.unresolved():  # every message is accounted for
        print(f"error: {places[unresolved.message_index]}: {unresolved}", file=sys.stderr)
        status = ExitCode.FAILURE
    return status


def _demo(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.cli._run import print_reference_check
    from ticdc_conformance.suites.gate import example_round_trips

    del args
    for trip in example_round_trips():
        print(trip.summary(), file=sys.stderr)
        for message, decoded in trip.messages:
            emit(
                {
                    "protocol": trip.protocol,
                    "profile": trip.profile,
                    "example": f"{trip.example}.change.jsonl",
                    "message": write_message(message),
                    "decoded": [write_decoded_event(e) for e in decoded],
                },
                out,
            )
    return print_reference_check()


def add_parsers(commands: Commands) -> None:
    """Add ``encode``, ``decode`` and ``demo``."""
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
    encode.add_argument("--protocol", required=True, choices=PROTOCOLS, help="wire protocol")
    encode.add_argument(
        "--profile",
        choices=PROFILES,
        default="tiflow",
        help="producer line to imitate: tiflow (classic TiCDC) or ticdc (new architecture)",
    )
    encode.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a TiCDC sink option (listed below), repeatable; max-message-bytes also bounds "
        "an input line (4 × the limit; default 10485760)",
    )
    encode.set_defaults(handler=_encode)

    decode = commands.add_parser(
        "decode",
        help="Kafka messages (JSON Lines, stdin) -> decoded events (JSON Lines, stdout)",
        description="Read message lines on stdin (or one raw message from --key-file and "
        "--value-file) and write decoded events as JSON Lines. An invalid message prints "
        "one line on stderr with its location and nothing on stdout; the others are still "
        "decoded, and the exit status is 1. Simple rows are typed by the schemas of earlier "
        "BOOTSTRAP and DDL messages; a row whose schema never arrives is reported at the end. "
        "A value TiCDC cannot have written for its column type (docs/errors.md) makes its "
        "message invalid, unless --lenient.",
    )
    decode.add_argument("--protocol", required=True, choices=PROTOCOLS, help="wire protocol")
    decode.add_argument("--key-file", help="raw Kafka key bytes of one message")
    decode.add_argument("--value-file", help="raw Kafka value bytes of one message")
    decode.add_argument(
        "--max-message-bytes",
        type=int,
        default=DEFAULT_MAX_MESSAGE_BYTES,
        metavar="N",
        help="the largest message (key plus value) a line may carry, as TiCDC's sink option "
        "(default 10485760); a longer line is reported and skipped without being held",
    )
    decode.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"a consumer option: {COMPRESSION_OPTION}=none|snappy|lz4, as the messages were "
        f"encoded with (default none); {_RAW_VALUE}=true|false, how claim-check files are "
        "stored (default false)",
    )
    decode.add_argument(
        "--claim-check-storage",
        metavar="URI",
        help="resolve claim-check references: the file:// URI (or folder) holding the files, "
        "read by each location's file name; a reference whose file is missing or does not "
        "decode is an error (default: references are printed as they are; s3:// and other "
        "remote storage are not read)",
    )
    decode.add_argument(
        "--lenient",
        action="store_true",
        help="decode messages holding invalid values anyway: print their events, and one "
        "warning line per invalid value on stderr (the exit status stays 0 for them)",
    )
    decode.set_defaults(handler=_decode)

    demo = commands.add_parser(
        "demo",
        help="encode the bundled examples with every protocol, decode back, run the golden suite",
        description="Encode the bundled example change events with every implemented "
        "protocol and profile, decode each message back, and print message and decoded "
        "events as JSON Lines (a size summary goes to stderr); then check the reference codecs "
        "against every golden case and print the counts per protocol and tier on stderr.",
    )
    demo.set_defaults(handler=_demo)
