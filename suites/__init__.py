"""Conformance suites, one subpackage per product, all built on ``reference`` and ``fixtures``.

* ``gate``: golden cases against a decoder or encoder, the verdict of a ``run``;
* ``testee``: the same gate for an implementation in any language, over stdio;
* ``stream``: TiCDC's stream rules over a topic dump, in plain Python or on Spark;
* ``plugin``: the pytest plugin (entry point ``pytest11``), the only module importing pytest.

The gate's names are also offered here (``from ticdc_conformance.suites import load_cases``).
They load on first use, so that pytest loading the plugin imports no codec.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ticdc_conformance.suites.gate import (
        Case,
        CaseMessage,
        Outcome,
        XfailEntry,
        XfailFileError,
        check_case,
        hex_diff,
        json_diff,
        load_cases,
        match_entry,
        read_xfail_file,
        replay_command,
        run_cases,
        stale_entries,
        summarize,
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


def __getattr__(name: str) -> Any:  # noqa: ANN401 - any exported name
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.gate"), name)
