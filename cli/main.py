"""The command line: one parser, one handler per command, one way for a command to end.

Each command lives in a module of its own that adds its parser and sets its handler
(``(args, stdout) -> exit status``): ``_codec`` (encode, decode, demo), ``_generate``,
``_fixtures``, ``_run``, ``_stream`` (check-stream), ``_consumer`` (expected-state,
check-consumer), ``_kafka`` (broker, replay, capture). A handler parses nothing and decides
no policy: it calls the library and prints.

How a command ends (``ExitCode``): the handler's status; a ``ProtocolError`` prints one line,
``error: …``, and ends with the status its class names (1 invalid input, 2 usage, 3 a broken
run); Ctrl-C ends quietly with 130 (``cli/entry.py``, the command's entry point, catches it
while the command starts up); a reader closing stdout early (``| head``) ends quietly;
anything else is a bug in the kit, said as such with status 3.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ticdc_conformance.cli import _codec, _consumer, _fixtures, _generate, _kafka, _run, _stream
from ticdc_conformance.reference.errors import ExitCode, ProtocolError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ticdc-conformance",
        description="Conformance kit for TiCDC's Kafka message protocols.",
        epilog="Exit codes: 0 success, 1 conformance failure, 2 usage error, 3 the run broke, "
        "130 interrupted.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (_codec, _generate, _fixtures, _run, _stream, _consumer, _kafka):
        module.add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    try:
        args = _parser().parse_args(argv)  # building the parser imports what the commands need
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    try:
        return int(args.handler(args, sys.stdout))
    except ProtocolError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:  # the user knows: no traceback, no words
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader has gone: nothing left to say, and nowhere to say it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return ExitCode.OK
    except Exception as error:  # noqa: BLE001 - anything else is a broken run, said as such
        print(f"error: the run broke: {type(error).__name__}: {error}", file=sys.stderr)
        return ExitCode.BROKEN
