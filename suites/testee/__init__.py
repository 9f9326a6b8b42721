"""The language-neutral testee runner: an implementation in any language, over stdio.

A testee speaks the testee protocol (docs/testee-protocol.md, JSON Schema in
``protocol.schema.json``): ``Testee`` starts and drives one such program, ``run_testee`` checks
cases through it with the gate's own checks. ``python -m ticdc_conformance.suites.testee.reference``
is the reference testee, the kit's codecs behind the protocol.
"""

from __future__ import annotations

from ticdc_conformance.suites.testee._gate import TesteeRun, TesteeSettings, gate_testee
from ticdc_conformance.suites.testee._runner import (
    Testee,
    TesteeBrokenError,
    TesteeError,
    run_testee,
)

__all__ = [
    "Testee",
    "TesteeBrokenError",
    "TesteeError",
    "TesteeRun",
    "TesteeSettings",
    "gate_testee",
    "run_testee",
]
