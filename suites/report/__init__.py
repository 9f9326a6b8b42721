"""Reports people read and CI systems consume, from the JSON reports of the kit's checks.

The JSON report of ``check-stream`` and ``check-consumer`` is the contract
(``stream-report.schema.json``, ``consumer-report.schema.json``; ``run``'s JSON Lines records
``run-record.schema.json``; ``report_schema``); every other form is made from it:

* JUnit XML (``junit_rules``): one testcase per rule, failed when a rule of severity error was
  broken, with the samples' coordinates in the failure; ``junit_cases`` gives ``run``'s
  verdict one testcase per golden case, the located diff as the failure message.
* Markdown (``markdown``): the verdict, a table of counts per rule, bounded samples.
* GitHub Actions annotations (``github_rules``, ``github_cases``, ``--annotations github``):
  a bounded number of ``::error``/``::warning`` workflow commands, one per finding.
* One self-contained HTML page (``html_page``, the ``report`` extra: jinja2, matplotlib): the
  same, plus the dump's labelled faults found and missed and two inline SVG pictures (findings
  over partitions and offsets, each partition's watermarks); no script, no style sheet, font
  or picture from the network.

``write_atomically`` writes each file whole or not at all, so an interrupted command leaves
no report that looks complete.
"""

from __future__ import annotations

from ticdc_conformance.suites.report._forms import (
    SCHEMAS,
    junit_cases,
    junit_rules,
    labelled_faults,
    markdown,
    report_schema,
    stream_report_schema,
    write_atomically,
)
from ticdc_conformance.suites.report._github import (
    add_annotations_argument,
    annotations_wanted,
    github_cases,
    github_rules,
)
from ticdc_conformance.suites.report._html import html_page

__all__ = [
    "SCHEMAS",
    "add_annotations_argument",
    "annotations_wanted",
    "github_cases",
    "github_rules",
    "html_page",
    "junit_cases",
    "junit_rules",
    "labelled_faults",
    "markdown",
    "report_schema",
    "stream_report_schema",
    "write_atomically",
]
