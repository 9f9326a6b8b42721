"""What every command's parser shares: protocol and profile choices, sink options, output."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import IO, TypeAlias

from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.errors import UsageError

__all__ = ["PROFILES", "PROTOCOLS", "Commands", "Handler", "emit", "parse_options"]

PROTOCOLS = sorted(CODECS)
PROFILES = ("tiflow", "ticdc")

Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"  # noqa: SLF001 - no public name
"""The object ``add_subparsers`` returns (argparse gives its class no public name)."""
Handler = Callable[[argparse.Namespace, IO[str]], int]
"""A command: the parsed arguments and stdout in, the exit status out."""


def parse_options(pairs: Sequence[str]) -> dict[str, str]:
    """``NAME=VALUE`` pairs (``--option``) as a mapping; ``UsageError`` for a malformed one."""
    options = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--option takes NAME=VALUE, got {pair!r}")
        options[name] = value
    return options


def emit(document: object, out: IO[str]) -> None:
    """One compact JSON line."""
    out.write(json.dumps(document, separators=(",", ":")) + "\n")
