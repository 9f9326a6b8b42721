"""Known-failure files: the cases an implementation is known to fail, each with a reason.

One entry a line, ``PATTERN: REASON``; ``#`` starts a comment. ``PATTERN`` is a case id or a
shell-style pattern (``open.*.decode.types.bigint-unsigned``). Strict, as the best suites
are: a listed case that passes is an *unexpected pass* and fails the run (the report prints
the line to delete), and an entry that matches no selected case is reported as stale.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

__all__ = ["XfailEntry", "XfailFileError", "match_entry", "read_xfail_file", "stale_entries"]


class XfailFileError(ValueError):
    """A line of a known-failure file that is not ``PATTERN: REASON``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class XfailEntry:
    """One known failure."""

    pattern: str
    reason: str
    file: str
    line: int

    def where(self) -> str:
        """``FILE:LINE``, for the messages that ask to delete or fix the entry."""
        return f"{self.file}:{self.line}"

    def text(self) -> str:
        """The entry as written."""
        return f"{self.pattern}: {self.reason}"


def read_xfail_file(path: Path | str) -> list[XfailEntry]:
    """The entries of a known-failure file; raises ``XfailFileError`` naming a bad line."""
    entries = []
    for number, raw in enumerate(Path(path).read_text("utf-8").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pattern, sep, reason = line.partition(":")
        if not sep or not pattern.strip() or not reason.strip():
            raise XfailFileError(f"{path}:{number}: expected 'CASE-ID-OR-PATTERN: reason'")
        entries.append(
            XfailEntry(pattern=pattern.strip(), reason=reason.strip(), file=str(path), line=number)
        )
    return entries


def match_entry(case_id: str, entries: list[XfailEntry]) -> XfailEntry | None:
    """The first entry whose pattern matches ``case_id``."""
    return next((e for e in entries if fnmatch.fnmatchcase(case_id, e.pattern)), None)


def stale_entries(case_ids: list[str], entries: list[XfailEntry]) -> list[XfailEntry]:
    """The entries that match none of ``case_ids``."""
    return [e for e in entries if not any(fnmatch.fnmatchcase(i, e.pattern) for i in case_ids)]
