"""The plain forms of a report: JUnit XML, Markdown, labelled faults, atomic writes.

A rule report (``check-stream``, ``check-consumer``) has ``rules``: ``id``, ``severity``,
``description``, ``doc`` (its anchor in docs/rules/), ``count`` and bounded ``samples``; a
sample says where: Kafka coordinates (``topic``, ``partition``, ``offset``, ``commit_ts``) or a
table row (``table``, ``key``), and what (``detail``). A rule of severity ``error`` with a
count fails; a ``warning`` is counted only.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = [
    "SCHEMAS",
    "junit_cases",
    "junit_rules",
    "labelled_faults",
    "markdown",
    "report_schema",
    "stream_report_schema",
    "verdict",
    "where",
    "write_atomically",
]

_SHOWN = 20
"""Samples a Markdown or JUnit form lists per rule (the JSON report keeps what it kept)."""


SCHEMAS = {
    "stream": "stream-report.schema.json",
    "consumer": "consumer-report.schema.json",
    "run": "run-record.schema.json",
}
"""The shipped JSON Schemas (draft 2020-12): ``check-stream``'s and ``check-consumer``'s JSON
reports, and one line of ``run``'s JSON Lines report."""


def report_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of a report: ``stream``, ``consumer`` or ``run`` (one record)."""
    text = resources.files(__package__).joinpath(SCHEMAS[kind]).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def stream_report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``check-stream``'s JSON report."""
    return report_schema("stream")


def write_atomically(path: Path | str, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file, then a rename)."""
    target = Path(path)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        Path(temporary).replace(target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def verdict(report: Mapping[str, Any]) -> str:
    """``PASS`` or ``FAIL``: whether a rule of severity error was broken."""
    return "FAIL" if report.get("errors") else "PASS"


def where(sample: Mapping[str, Any]) -> str:
    """A sample's place: ``topic/partition offset N (commit ts T)`` or ``table key K``."""
    if "topic" in sample:
        offset = sample.get("offset")
        at = "a missing record" if offset is None else f"offset {offset}"
        ts = sample.get("commit_ts")
        said = f"{sample['topic']}/{sample['partition']} {at}"
        return said if ts is None else f"{said} (commit ts {ts})"
    place = f"{sample.get('table', '?')} key {sample.get('key')}"
    if sample.get("partition") is not None:
        place += f" from partition {sample['partition']} offset {sample.get('offset')}"
    return place


def what(sample: Mapping[str, Any]) -> str:
    """A sample's detail, or its differing columns."""
    detail = sample.get("detail")
    if detail:
        return str(detail)
    return ", ".join(
        f"{c['column']}: expected {c['expected']!r}, got {c['actual']!r}"
        for c in sample.get("columns", ())
    )


def _fails(rule: Mapping[str, Any]) -> bool:
    return bool(rule["count"]) and rule["severity"] == "error"


def junit_rules(report: Mapping[str, Any], *, suite: str) -> str:
    """JUnit XML: one testcase per rule; a broken error rule fails with its samples."""
    rules = report["rules"]
    root = ET.Element("testsuites")
    cases = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(rules)),
        failures=str(sum(_fails(r) for r in rules)),
        errors="0",
        skipped="0",
        time=str(report.get("seconds", 0)),
    )
    for rule in rules:
        case = ET.SubElement(cases, "testcase", classname=suite, name=rule["id"], time="0")
        lines = [f"{where(s)}: {what(s)}" for s in rule["samples"][:_SHOWN]]
        if _fails(rule):
            failure = ET.SubElement(
                case,
                "failure",
                type=rule["id"],
                message=f"{rule['count']} violation(s) of {rule['id']}: {rule['description']} "
                f"({rule['doc']})",
            )
            failure.text = "\n".join(lines)
        elif rule["count"]:
            ET.SubElement(case, "system-out").text = (
                f"{rule['count']} counted ({rule['severity']}): " + "\n".join(lines)
            )
    return _xml(root)


def junit_cases(rows: Sequence[Mapping[str, Any]], *, suite: str = "ticdc-conformance") -> str:
    """JUnit XML of ``run``'s report rows: one testcase per golden case.

    A failure's message is the located diff; a listed known failure and a case the adapter
    does not handle are skipped, with the reason.
    """
    root = ET.Element("testsuites")
    failures = sum(1 for r in rows if r["status"] == "fail" and not r.get("known_failure"))
    skipped = sum(1 for r in rows if r["status"] == "skip" or r.get("known_failure"))
    cases = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(rows)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    for row in rows:
        classname = f"{row['protocol']}.{row['profile']}.{row['direction']}"
        case = ET.SubElement(cases, "testcase", classname=classname, name=row["id"], time="0")
        detail = str(row.get("detail") or "")
        if row.get("known_failure") and row["status"] == "fail":
            ET.SubElement(case, "skipped", message=f"known failure: {row['known_failure']}")
        elif row["status"] == "fail":
            first = detail.splitlines()[0] if detail else "failed"
            failure = ET.SubElement(case, "failure", type="conformance", message=first)
            failure.text = detail + (f"\nreplay: {row['replay']}" if row.get("replay") else "")
        elif row["status"] == "skip":
            ET.SubElement(case, "skipped", message=detail or "not run")
        elif row.get("known_failure"):
            failure = ET.SubElement(
                case,
                "failure",
                type="unexpected-pass",
                message=f"listed as a known failure but passes: {row['known_failure']}",
            )
    return _xml(root)


_NOT_IN_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""Characters XML 1.0 cannot hold: control characters, and lone surrogates (the raw bytes a
decoder's text may carry as surrogate escapes)."""


def _xml(root: ET.Element) -> str:
    ET.indent(root)
    text = ET.tostring(root, "unicode")
    text = _NOT_IN_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n"


def labelled_faults(report: Mapping[str, Any], labels: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each finding a dump's labels promise, with ``found``: ``yes``, ``no`` or ``unknown``.

    A labelled finding is found when a sample of its rule has its partition, offset and (but
    for an undecodable record, which no longer says it) commit ts; ``unknown`` when the rule
    counted more findings than it kept samples and none of those matches.
    """
    rules = {rule["id"]: rule for rule in report["rules"]}
    out = []
    for fault in labels.get("faults") or ():
        for finding in fault.get("findings") or ():
            rule = rules.get(finding["rule"])
            samples: Iterable[Mapping[str, Any]] = rule["samples"] if rule else ()
            hit = any(
                s.get("partition") == finding["partition"]
                and s.get("offset") == finding["offset"]
                and (finding["rule"] == "undecodable" or s.get("commit_ts") == finding["commit_ts"])
                for s in samples
            )
            if hit:
                found = "yes"
            elif rule and rule["count"] > len(rule["samples"]):
                found = "unknown"
            else:
                found = "no"
            out.append({"kind": fault.get("kind"), **finding, "found": found})
    return out


def markdown(
    report: Mapping[str, Any], *, title: str, faults: Sequence[Mapping[str, Any]] = ()
) -> str:
    """The report as Markdown: verdict, counts per rule, samples, labelled faults."""
    errors, warnings = report.get("errors", 0), report.get("warnings", 0)
    summary = f"**{verdict(report)}**: {errors} error(s), {warnings} warning(s)"
    if "messages" in report:
        m = report["messages"]
        summary += (
            f"; {m['read']} messages read, {m['decoded']} decoded, "
            f"{m['undecodable']} undecodable (input {m['input']})"
        )
    if "engine" in report:
        summary += f"; engine {report['engine']}, {report.get('seconds', 0):.1f} s"
    lines = [f"# {title}", "", summary]
    lines += ["", "| rule | severity | count | what it asks |", "|---|---|---:|---|"]
    lines += [
        f"| [`{r['id']}`]({r['doc']}) | {r['severity']} | {r['count']} | {r['description']} |"
        for r in report["rules"]
    ]
    for rule in report["rules"]:
        if not rule["samples"]:
            continue
        shown = rule["samples"][:_SHOWN]
        lines += ["", f"## `{rule['id']}`: {rule['count']} ({len(shown)} shown)", ""]
        lines += [f"- {where(s)}: {_escape(what(s))}" for s in shown]
    if faults:
        hits = sum(f["found"] == "yes" for f in faults)
        lines += ["", f"## Labelled faults: {hits} of {len(faults)} found", ""]
        said = {"yes": "found", "no": "**missed**", "unknown": "not among the samples kept"}
        for f in faults:
            at = "a missing record" if f["offset"] is None else f"offset {f['offset']}"
            lines.append(
                f"- {f['kind']} (`{f['rule']}`), partition {f['partition']} {at}: "
                f"{said[f['found']]}"
            )
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
