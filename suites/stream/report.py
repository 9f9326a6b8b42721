"""What ``check-stream`` reports.

The JSON report (``suites/report/stream-report.schema.json``, docs/reports.md) and the
readable summary printed beside it.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import IO, Any

from ticdc_conformance.suites.stream.catalog import CheckResult
from ticdc_conformance.suites.stream.rules import RULES, CheckSettings

__all__ = ["build_report", "print_summary"]


def _sample(raw: dict[str, Any]) -> dict[str, Any]:
    key = raw.get("key")
    return {**raw, "key": None if key is None else base64.b64encode(key).decode()}


def build_report(
    result: CheckResult,
    settings: CheckSettings,
    inputs: Sequence[str],
    seconds: float,
    engine: str = "spark",
) -> dict[str, Any]:
    """The JSON report: accounting, and per rule its count and samples."""
    rules: list[dict[str, Any]] = [
        {
            "id": rule.id,
            "severity": rule.severity,
            "description": rule.description,
            "doc": rule.doc,
            "count": result.counts.get(rule.id, 0),
            "samples": [_sample(s) for s in result.samples.get(rule.id, [])],
        }
        for rule in RULES.values()
    ]
    errors = sum(r["count"] for r in rules if r["severity"] == "error")
    warnings = sum(r["count"] for r in rules if r["severity"] == "warning")
    return {
        "format": "ticdc-conformance stream check",
        "version": 1,
        "input": list(inputs),
        "settings": {
            "protocol": settings.protocol,
            "profile": settings.profile,
            "partitions": settings.partitions,
            "dispatcher": {
                "partition": settings.dispatcher.partition,
                "index-name": settings.dispatcher.index_name,
                "columns": list(settings.dispatcher.columns),
            },
            "options": dict(settings.options),
            **(
                {"topic": settings.topic, "dispatchers": [r.config() for r in settings.routes]}
                if settings.routes
                else {}
            ),
        },
        "messages": {
            "input": result.records,
            "read": result.read,
            "decoded": result.decoded,
            "undecodable": result.undecodable,
        },
        "errors": errors,
        "warnings": warnings,
        "seconds": round(seconds, 3),
        "engine": engine,
        "plan": result.plan,
        "rules": rules,
        "watermarks": result.watermarks,
    }


def print_summary(report: dict[str, Any], out: IO[str]) -> None:
    """The readable summary: accounting, then one line per rule, samples under broken ones."""
    m = report["messages"]
    accounting = (
        f"messages: {m['read']} read = {m['decoded']} decoded + {m['undecodable']} "
        f"undecodable (input {m['input']}) in {report['seconds']:.1f} s"
    )
    lines = [accounting, f"engine: {report['engine']} ({report['plan']})"]
    for rule in report["rules"]:
        mark = "ok  " if rule["count"] == 0 else rule["severity"][:4].upper()
        lines.append(f"{mark} {rule['id']:<22} {rule['count']:>8}  {rule['description']}")
        lines.extend(
            f"       at {s['topic']}/{s['partition']} offset {s['offset']} "
            f"commit_ts {s['commit_ts']}: {s['detail']}"
            for s in rule["samples"][:3]
        )
    verdict = "FAIL" if report["errors"] else "PASS"
    lines.append(f"{verdict}: {report['errors']} error(s), {report['warnings']} warning(s)")
    out.write("\n".join(lines) + "\n")
