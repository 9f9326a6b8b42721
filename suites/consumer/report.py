"""What ``check-consumer`` reports.

The JSON report (``suites/report/consumer-report.schema.json``, docs/reports.md) and the
readable summary printed beside it.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import IO, Any

from ticdc_conformance.suites.consumer.catalog import LOG_RULES, RULES, STATE_RULES
from ticdc_conformance.suites.consumer.check import Tally

__all__ = ["build_report", "print_summary"]


def build_report(
    tally: Tally, args: argparse.Namespace, engine: str, seconds: float
) -> dict[str, Any]:
    """The JSON report: what was checked, and per rule its count and samples."""
    ran = [*(STATE_RULES if args.actual else ()), *(LOG_RULES if args.applied_log else ())]
    if not args.transactional:
        ran = [rule for rule in ran if rule.id != "transaction-split"]
    rules = [
        {
            "id": rule.id,
            "severity": rule.severity,
            "description": rule.description,
            "source": rule.source,
            "doc": rule.doc,
            "count": tally.counts.get(rule.id, 0),
            "samples": tally.found.get(rule.id, []),
        }
        for rule in ran
    ]
    return {
        "format": "ticdc-conformance consumer check",
        "version": 1,
        "input": str(args.input),
        "actual": args.actual,
        "applied_log": None if args.applied_log is None else str(args.applied_log),
        "engine": engine,
        "checked": dict(tally.checked),
        "errors": sum(r["count"] for r in rules if RULES[r["id"]].severity == "error"),
        "seconds": round(seconds, 3),
        "rules": rules,
    }


def print_summary(report: Mapping[str, Any], out: IO[str]) -> None:
    """The readable summary: what was checked, one line per rule, samples under broken ones."""
    checked = ", ".join(f"{n} {what}" for what, n in report["checked"].items()) or "nothing"
    lines = [f"checked: {checked} ({report['engine']}, {report['seconds']:.1f} s)"]
    for rule in report["rules"]:
        mark = "ok  " if rule["count"] == 0 else rule["severity"][:4].upper()
        lines.append(f"{mark} {rule['id']:<21} {rule['count']:>8}  {rule['description']}")
        for sample in rule["samples"][:3]:
            where = f" from {sample['source']}" if sample.get("source") else ""
            detail = sample.get("detail") or ", ".join(
                f"{c['column']}: expected {c['expected']!r}, got {c['actual']!r}"
                for c in sample.get("columns", ())
            )
            lines.append(f"       {sample['table']} key {sample['key']}{where}: {detail}")
    verdict = "FAIL" if report["errors"] else "PASS"
    lines.append(f"{verdict}: {report['errors']} error(s)")
    out.write("\n".join(lines) + "\n")
