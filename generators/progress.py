"""The progress line of the kit's long commands (tqdm): done of total, rate, time left.

``generate``, ``check-stream`` (in process), ``run``, ``capture`` and ``replay`` show one line
on stderr, rewritten in place at most twice a second, and clear it before their summary. It is
shown only when the stream is a terminal, the command was not given ``--quiet`` and tqdm is
installed (the ``generators``, ``spark``, ``kafka`` and ``test`` extras bring it): logs, pipes
and CI get only the final summary.

It lives here because every part that runs a long command may import ``generators``
(docs/architecture.md), while ``reference`` keeps no clocks.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import IO, Any

__all__ = ["Progress"]


class Progress:
    """``what: 40%|████      | 400/1000 [00:02<00:03, 150.00 messages/s]`` while a command runs.

    ``update`` takes the count done so far (not an increment), so a caller reports whatever it
    counts already. Without a total (``total`` not called yet), the line shows count and rate.
    """

    __slots__ = ("_bar",)

    def __init__(
        self, what: str, total: int | None = None, out: IO[str] | None = None, unit: str = "it"
    ) -> None:
        from tqdm import tqdm

        self._bar: Any = tqdm(  # tqdm ships no type information
            total=total,
            desc=what,
            unit=f" {unit}",
            file=sys.stderr if out is None else out,
            mininterval=0.5,
            leave=False,
            dynamic_ncols=True,
        )

    @classmethod
    def for_terminal(
        cls,
        what: str,
        total: int | None = None,
        *,
        quiet: bool,
        unit: str = "it",
        out: IO[str] | None = None,
    ) -> Progress | None:
        """A progress line on ``out`` (stderr), or ``None``: quiet, no terminal or no tqdm."""
        stream = sys.stderr if out is None else out
        shown = not quiet and stream.isatty() and importlib.util.find_spec("tqdm") is not None
        return cls(what, total, stream, unit) if shown else None

    def total(self, total: int) -> None:
        """The count known only once the command has looked (end offsets, file footers)."""
        self._bar.total = total
        self._bar.refresh()

    def update(self, count: int) -> None:
        """``count`` done so far; tqdm redraws at most every half second."""
        self._bar.update(count - self._bar.n)

    def advance(self, count: int, total: int) -> None:
        """``count`` done of ``total``: the callback form the gate's runners take."""
        if self._bar.total != total:
            self.total(total)
        self.update(count)

    def done(self) -> None:
        """Clear the line before the summary is printed."""
        self._bar.close()
