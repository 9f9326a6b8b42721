"""Progress lines of long commands: on stderr, only when it is a terminal, at most twice a second.

One line, rewritten in place (a carriage return); ``done()`` clears it. Quiet when stderr is no
terminal or the command was given ``--quiet``, so logs and pipes get only the final summary.
"""

from __future__ import annotations

import sys
import time
from typing import IO

__all__ = ["Progress"]


class Progress:
    """``what: N of TOTAL (P %), R/s`` while a command runs."""

    __slots__ = ("_last", "_out", "_started", "_total", "_what", "_width")

    def __init__(self, what: str, total: int | None = None, out: IO[str] | None = None) -> None:
        self._what, self._total = what, total
        self._out = sys.stderr if out is None else out
        self._started = self._last = time.monotonic()
        self._width = 0

    @classmethod
    def for_terminal(cls, what: str, total: int | None = None, *, quiet: bool) -> Progress | None:
        """A progress line on stderr, or ``None`` when quiet or stderr is no terminal."""
        return None if quiet or not sys.stderr.isatty() else cls(what, total)

    def total(self, total: int) -> None:
        """The count known only once the command has looked (end offsets)."""
        self._total = total

    def update(self, count: int) -> None:
        """Show ``count``, at most every half second."""
        now = time.monotonic()
        if now - self._last < 0.5:
            return
        self._last = now
        rate = count / max(now - self._started, 1e-9)
        of = "" if not self._total else f" of {self._total} ({100 * count / self._total:.0f} %)"
        line = f"{self._what}: {count}{of}, {rate:,.0f}/s"
        self._out.write("\r" + line.ljust(self._width))
        self._width = len(line)
        self._out.flush()

    def done(self) -> None:
        """Clear the line before the summary is printed."""
        if self._width:
            self._out.write("\r" + " " * self._width + "\r")
            self._out.flush()
            self._width = 0
