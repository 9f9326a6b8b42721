"""The consumer check: what a consumer made of a TiCDC stream, against what it must make.

``expected`` writes and reads the expected state (``reference.consumer``'s result on disk),
``actual`` reads what a consumer produced (table snapshots in files or PostgreSQL, an applied
log), ``values`` compares one value type-aware, ``check`` runs the rules of ``catalog`` in plain
Python and ``spark`` at scale; ``job`` holds the ``expected-state`` and ``check-consumer``
commands and ``assert_consumer_conforms``, their twin for tests; ``pytest_fixtures`` the
plugin's ``ticdc_expected_state``; ``arguments`` the two commands' command-line arguments.
Needs pyarrow (the ``consumer`` extra), but for ``arguments``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ticdc_conformance.suites.consumer.job import assert_consumer_conforms

__all__ = ["assert_consumer_conforms"]


def __getattr__(name: str) -> Any:  # noqa: ANN401 - the job's own name
    """``assert_consumer_conforms``, imported on first use.

    The command line reads ``arguments`` from this package without importing pyarrow.
    """
    if name == "assert_consumer_conforms":
        from ticdc_conformance.suites.consumer.job import assert_consumer_conforms

        return assert_consumer_conforms
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
