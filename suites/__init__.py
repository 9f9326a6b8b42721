"""Conformance suites: load golden cases, check an implementation against them, report.

Built on ``ticdc_conformance.reference`` and ``ticdc_conformance.fixtures``. ``load_cases``
reads the manifest in a fixed order; ``check_case`` runs one case through a decoder or encoder
adapter (``adapters``) and returns an ``Outcome`` that names the case id, its fixture files,
what differs and one command replaying just that case; ``run_cases`` checks many. Known-failure
files (``read_xfail_file``) list cases an implementation is known to fail. The pytest plugin
(``plugin``, the only module here importing pytest), the ``run`` command and the testee runner
(``testee``: any language, JSON lines over stdio, docs/testee-protocol.md) sit on top.

Names load on first use, so that pytest loading the plugin imports no codec.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ticdc_conformance.suites._cases import Case, CaseMessage, load_cases
    from ticdc_conformance.suites._check import (
        Outcome,
        check_case,
        hex_diff,
        json_diff,
        replay_command,
        run_cases,
        summarize,
    )
    from ticdc_conformance.suites._xfail import (
        XfailEntry,
        XfailFileError,
        match_entry,
        read_xfail_file,
        stale_entries,
    )

__all__ = [
    "Case",
    "CaseMessage",
    "Outcome",
    "XfailEntry",
    "XfailFileError",
    "check_case",
    "hex_diff",
    "json_diff",
    "load_cases",
    "match_entry",
    "read_xfail_file",
    "replay_command",
    "run_cases",
    "stale_entries",
    "summarize",
]

_HOMES = {
    **dict.fromkeys(("Case", "CaseMessage", "load_cases"), "_cases"),
    **dict.fromkeys(
        (
            "Outcome",
            "check_case",
            "hex_diff",
            "json_diff",
            "replay_command",
            "run_cases",
            "summarize",
        ),
        "_check",
    ),
    **dict.fromkeys(
        ("XfailEntry", "XfailFileError", "match_entry", "read_xfail_file", "stale_entries"),
        "_xfail",
    ),
}


def __getattr__(name: str) -> Any:  # noqa: ANN401 - any exported name
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
