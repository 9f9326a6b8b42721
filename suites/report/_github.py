r"""GitHub Actions annotations: one workflow command per finding, bounded.

A workflow command is a line ``::error title=T::MESSAGE`` (or ``::warning``, ``::notice``) on
stdout; GitHub shows it on the run's summary and, with no ``file`` property, on the workflow.
The escaping follows GitHub's workflow-command syntax (``actions/toolkit``,
``packages/core/src/command.ts``): in the message, ``%``, ``\r`` and ``\n`` become ``%25``,
``%0D`` and ``%0A``; in a property value, also ``:`` and ``,`` become ``%3A`` and ``%2C``.

GitHub shows at most 10 error and 10 warning annotations per step, so at most ``limit`` of each
level are written (10 unless asked), in report order; one ``::notice`` then says how many
findings were left out and where the whole report is. Each annotation names the rule (or the
case), says where (Kafka coordinates, a table and key, or a case id) and what, and cites the
rule's anchor in docs/rules/.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ticdc_conformance.suites.report._forms import what, where

__all__ = [
    "ANNOTATE_AT_MOST",
    "add_annotations_argument",
    "annotations_wanted",
    "escape_data",
    "escape_property",
    "github_cases",
    "github_rules",
]

ANNOTATE_AT_MOST = 10
"""Annotations of each level GitHub shows per step."""


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: as a message, and ``:`` and ``,`` too."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, *, title: str) -> str:
    """One workflow command line (no line break)."""
    return f"::{level} title={escape_property(title)}::{escape_data(message)}"


def _bounded(
    annotations: Iterator[tuple[str, str, str]], limit: int, left_out: int, whole: str
) -> list[str]:
    """At most ``limit`` annotations per level, then a notice of those left out."""
    lines: list[str] = []
    shown: dict[str, int] = {}
    for level, title, message in annotations:
        if shown.get(level, 0) < limit:
            shown[level] = shown.get(level, 0) + 1
            lines.append(command(level, message, title=title))
        else:
            left_out += 1
    if left_out:
        lines.append(
            command(
                "notice",
                f"{left_out} more finding(s) not annotated; {whole}",
                title="ticdc-conformance: more findings",
            )
        )
    return lines


def github_rules(
    report: Mapping[str, Any],
    *,
    command_name: str,
    limit: int = ANNOTATE_AT_MOST,
    whole: str = "the full report has them (--report, --markdown, --html)",
) -> list[str]:
    """The annotations of a rule report (``check-stream``, ``check-consumer``).

    One per sample of a rule with findings, an ``error`` for a rule of severity error, else a
    ``warning``; a rule counting findings beyond its samples adds them to the notice's count,
    and a rule with findings but no sample kept (``--samples 0``) gets one annotation saying
    its count.
    """
    unsampled = sum(
        max(0, rule["count"] - len(rule["samples"])) for rule in report["rules"] if rule["samples"]
    )

    def annotations() -> Iterator[tuple[str, str, str]]:
        for rule in report["rules"]:
            if not rule["count"]:
                continue
            level = "error" if rule["severity"] == "error" else "warning"
            title = f"{command_name}: {rule['id']}"
            cite = f"{rule['description']} ({rule['doc']})"
            samples = rule["samples"]
            if not samples:
                yield level, title, f"{rule['count']} finding(s). {cite}"
                continue
            for sample in samples:
                yield level, title, f"{where(sample)}: {what(sample)}. {cite}"

    return _bounded(annotations(), limit, unsampled, whole)


def github_cases(
    rows: Sequence[Mapping[str, Any]],
    *,
    limit: int = ANNOTATE_AT_MOST,
    whole: str = "the full report has them (--report, --junit)",
) -> list[str]:
    """The annotations of ``run``'s rows: an ``error`` per unexpected failure or pass.

    A failure's message is its located diff, the case's ``spec`` and the replay command; a
    listed known failure that fails is no annotation, one that passes is an error (its entry
    is out of date).
    """

    def annotations() -> Iterator[tuple[str, str, str]]:
        for row in rows:
            cite = f"(spec: {row['spec']})" if row.get("spec") else ""
            if row["status"] == "fail" and not row.get("known_failure"):
                message = f"{row['id']} fails: {row.get('detail') or 'failed'}\n{cite}"
                if row.get("replay"):
                    message += f"\nreplay: {row['replay']}"
                yield "error", f"ticdc-conformance run: {row['id']}", message.strip()
            elif row["status"] == "pass" and row.get("known_failure"):
                message = (
                    f"{row['id']} is listed as a known failure but passes: "
                    f"{row['known_failure']}\n{cite}"
                )
                yield "error", f"ticdc-conformance run: {row['id']}", message.strip()

    return _bounded(annotations(), limit, 0, whole)


def add_annotations_argument(parser: argparse.ArgumentParser) -> None:
    """``--annotations``: the option ``check-stream``, ``check-consumer`` and ``run`` share."""
    parser.add_argument(
        "--annotations",
        choices=("github", "auto"),
        help="also print GitHub Actions annotations (::error/::warning lines on stdout), at "
        f"most {ANNOTATE_AT_MOST} of each level; auto: only when GITHUB_ACTIONS=true",
    )


def annotations_wanted(choice: str | None, environ: Mapping[str, str] | None = None) -> bool:
    """Whether to print annotations: ``github``, or ``auto`` inside a GitHub Actions job."""
    if choice == "auto":
        return (os.environ if environ is None else environ).get("GITHUB_ACTIONS") == "true"
    return choice == "github"
