"""The command's entry point: Ctrl-C ends it quietly with 130 even while it starts up.

The command imports the codecs, pyarrow and numpy before it parses a word; an interrupt during
those imports would print a traceback from the import machinery. This module imports nothing
of the kit at load time, so the interrupt is caught here wherever it lands.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]

_INTERRUPTED = 130
"""``ExitCode.INTERRUPTED``, said here without importing the kit."""


def main(argv: Sequence[str] | None = None) -> int:
    """Import and run the command line; 130, without a word, on Ctrl-C at any point."""
    try:
        from ticdc_conformance.cli.main import main as run

        return run(argv)
    except KeyboardInterrupt:
        sys.stderr.flush()
        return _INTERRUPTED
