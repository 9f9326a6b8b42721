"""The pytest plugin: one test item per golden case, against your decoder or encoder.

Installed with the package (entry point ``pytest11``: ``ticdc_conformance``) and inert until
``--ticdc-decoder``, ``--ticdc-encoder`` or ``--ticdc-testee`` is given::

    pytest --ticdc-decoder=mypkg.adapter:decode --ticdc-protocol=open --ticdc-tier=required
    pytest --ticdc-testee="java -jar my-decoder.jar" --junitxml=conformance.xml

Adapters are imported as ``ticdc-conformance run`` imports them: pytest's rootdir (the folder
of ``pytest.ini``/``pyproject.toml``, else where pytest runs) is put first on ``sys.path``, so
``mypkg.adapter`` is found where ``run --decoder mypkg.adapter:decode`` finds it. A testee is a
program in any language speaking the testee protocol (docs/testee-protocol.md); it is started
once for the session and again after it breaks, and pytest's own reports (``--junitxml``)
cover it like any test.

Options: ``--ticdc-decoder`` / ``--ticdc-encoder`` (``module:callable``, or ``reference`` for
the kit's own codecs; see ``ticdc_conformance.suites.gate.adapters`` for the signatures),
``--ticdc-protocol``, ``--ticdc-profile``, ``--ticdc-tier`` (repeatable filters),
``--ticdc-fixtures`` (a fixtures folder, or a kit version fetched into the cache),
``--ticdc-property-examples`` (Hypothesis round trips per protocol and profile: reference
encoder → your decoder, your encoder → reference decoder) and ``--ticdc-xfail`` (a
known-failure file, ``CASE-ID-OR-PATTERN: reason`` a line). Each item is named by its case id
and marked ``ticdc``, ``ticdc_<protocol>`` (``-`` as ``_``), ``ticdc_decode`` /
``ticdc_encode`` and ``ticdc_required`` / ``ticdc_recommended``, so ``-k`` and ``-m`` select
cases. Listed known failures are strict xfails: a listed case that passes fails the run and its
report names the line to delete; stale entries are reported at the end.

Only the hooks live here; the suite library is imported when the options ask for cases. The
Kafka fixtures (``ticdc_kafka_broker``, ``ticdc_kafka_topic``) are ``kafka/pytest_fixtures.py``.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ticdc_conformance.suites import Case, Outcome, XfailEntry
    from ticdc_conformance.suites.testee import Testee

__all__ = ["CaseFailedError", "TicdcCaseItem", "TicdcPropertyItem"]

pytest_plugins = [
    "ticdc_conformance.kafka.pytest_fixtures",
    "ticdc_conformance.suites.consumer.pytest_fixtures",
]

_PROTOCOLS = ("open", "craft", "simple-json", "simple-avro", "debezium", "canal-json")
_DIRECTIONS = {"decoder": ("decode", "reject"), "encoder": ("encode",)}
_STALE = pytest.StashKey[list["XfailEntry"]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--ticdc-*`` options."""
    group = parser.getgroup("ticdc", "TiCDC protocol conformance (ticdc-conformance)")
    group.addoption(
        "--ticdc-decoder", metavar="MODULE:CALLABLE", help="decoder under test, or 'reference'"
    )
    group.addoption(
        "--ticdc-encoder", metavar="MODULE:CALLABLE", help="encoder under test, or 'reference'"
    )
    group.addoption(
        "--ticdc-testee",
        metavar="COMMAND",
        help="a program in any language speaking the testee protocol on stdin "
        "and stdout (docs/testee-protocol.md), instead of a decoder or "
        "encoder",
    )
    group.addoption(
        "--ticdc-testee-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="per-case answer time of the testee (default 10)",
    )
    group.addoption(
        "--ticdc-protocol",
        action="append",
        choices=_PROTOCOLS,
        help="run this protocol's cases (repeatable; default all)",
    )
    group.addoption(
        "--ticdc-profile",
        action="append",
        choices=("tiflow", "ticdc"),
        help="run this producer profile's cases (repeatable)",
    )
    group.addoption(
        "--ticdc-tier",
        action="append",
        choices=("required", "recommended"),
        help="run this tier's cases (repeatable)",
    )
    group.addoption(
        "--ticdc-case",
        action="append",
        metavar="ID",
        help="run this case (id or shell pattern; repeatable)",
    )
    group.addoption(
        "--ticdc-fixtures",
        metavar="PATH|VERSION",
        help="fixtures folder, or a kit version (default: installed)",
    )
    group.addoption(
        "--ticdc-property-examples",
        type=int,
        default=0,
        metavar="N",
        help="also run Hypothesis round trips per protocol and profile: reference "
        "encoder -> your decoder, your encoder -> reference decoder; N examples "
        "(default 0: off)",
    )
    group.addoption(
        "--ticdc-xfail",
        metavar="FILE",
        help="known failures: 'CASE-ID-OR-PATTERN: reason' per line",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers the case items carry."""
    lines = ["ticdc: a ticdc-conformance golden case"]
    lines += [f"ticdc_{p.replace('-', '_')}: a {p} case" for p in _PROTOCOLS]
    lines += [
        "ticdc_decode: a decode case (messages -> decoded events)",
        "ticdc_reject: a must-reject case (the decoder raises)",
        "ticdc_property: a Hypothesis round trip (through your decoder or encoder)",
        "ticdc_encode: an encode case (change events -> messages)",
        "ticdc_required: a case of the required tier",
        "ticdc_recommended: a case of the recommended tier",
    ]
    for line in lines:
        config.addinivalue_line("markers", line)


class TicdcPropertyItem(pytest.Item):
    """A Hypothesis round trip for one protocol and profile, of a decoder or an encoder."""

    def __init__(
        self,
        *,
        protocol: str,
        profile: str,
        kind: str,
        adapter: Callable[..., Any],
        examples: int,
        **kwargs: Any,  # noqa: ANN401 - pytest passes its own keywords through
    ) -> None:
        super().__init__(**kwargs)
        self.protocol, self.profile, self.kind = protocol, profile, kind
        self.adapter, self.examples = adapter, examples

    def runtest(self) -> None:
        """Run the property; Hypothesis shrinks and reports a failing row."""
        from ticdc_conformance.suites.gate._property import (
            encoder_round_trip_property,
            round_trip_property,
        )

        run = round_trip_property if self.kind == "decoder" else encoder_round_trip_property
        run(self.protocol, self.profile, self.adapter, examples=self.examples)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,  # noqa: ANN401 - pytest's repr_failure signature
    ) -> Any:  # noqa: ANN401 - pytest's repr_failure signature
        """The disagreement and Hypothesis's shrunk example, without the library's frames.

        Each of them when Hypothesis found several distinct failures.
        """
        error = excinfo.value
        found = list(error.exceptions) if isinstance(error, BaseExceptionGroup) else [error]
        if not all(isinstance(e, AssertionError) for e in found):
            return super().repr_failure(excinfo, style=style)
        lines = [f"Hypothesis found {len(found)} distinct failures:"] if len(found) > 1 else []
        for each in found:
            lines += [str(each), *getattr(each, "__notes__", [])]
        return "\n".join(lines)

    def reportinfo(self) -> tuple[str, int | None, str]:
        """What the item checks."""
        return "ticdc", None, f"ticdc property {self.name}"


def _property_items(
    session: pytest.Session, config: pytest.Config, adapters: dict[str, Callable[..., Any]]
) -> list[pytest.Item]:
    from ticdc_conformance.reference import CODECS

    examples = config.getoption("--ticdc-property-examples")
    protocols = config.getoption("--ticdc-protocol") or list(CODECS)
    profiles = config.getoption("--ticdc-profile")
    items: list[pytest.Item] = []
    for kind, suffix in (("decoder", "round-trip"), ("encoder", "encoder-round-trip")):
        if kind not in adapters:
            continue
        for protocol in protocols:
            for profile in CODECS[protocol].PROFILES:
                if profiles and profile not in profiles:
                    continue
                name = f"property.{protocol}.{profile}.{suffix}"
                item = TicdcPropertyItem.from_parent(
                    session,
                    name=name,
                    nodeid=f"ticdc::{name}",
                    protocol=protocol,
                    profile=profile,
                    kind=kind,
                    adapter=adapters[kind],
                    examples=examples,
                )
                for marker in ("ticdc", "ticdc_property", f"ticdc_{protocol.replace('-', '_')}"):
                    item.add_marker(marker)
                items.append(item)
    return items


class CaseFailedError(Exception):
    """A case's outcome was not a pass; carries the outcome for the report."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.case.id)
        self.outcome = outcome


class TicdcCaseItem(pytest.Item):
    """One golden case."""

    def __init__(
        self,
        *,
        case: Case,
        adapters: dict[str, Any],
        names: dict[str, str],
        fixtures: str | None,
        testee: Testee | None = None,
        **kwargs: Any,  # noqa: ANN401 - pytest passes its own keywords through
    ) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.adapters = adapters
        self.names = names
        self.fixtures = fixtures
        self.testee = testee

    def runtest(self) -> None:
        """Check the case; a failure raises ``CaseFailedError``."""
        from ticdc_conformance.suites import check_case

        adapters = self.adapters
        if self.testee is not None:
            from ticdc_conformance.suites.testee import TesteeBrokenError

            try:
                self.testee.ensure_running()
            except TesteeBrokenError as error:
                pytest.fail(f"the testee cannot run: {error}", pytrace=False)
            adapters = {
                "decoder": self.testee.decoder(self.case),
                "encoder": self.testee.encoder(self.case),
            }
        outcome = check_case(self.case, adapters=self.names, fixtures=self.fixtures, **adapters)
        if outcome.status == "skip":
            pytest.skip(outcome.detail)
        if outcome.status != "pass":
            raise CaseFailedError(outcome)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,  # noqa: ANN401 - pytest's repr_failure signature
    ) -> Any:  # noqa: ANN401 - pytest's repr_failure signature
        """The case report: id, fixture path, differences, replay commands."""
        if not isinstance(excinfo.value, CaseFailedError):
            return super().repr_failure(excinfo, style=style)
        words = ["pytest", f"--ticdc-case={self.case.id}"]
        kind = "encoder" if self.case.direction == "encode" else "decoder"
        kind = "testee" if self.testee is not None else kind
        words.append(f"--ticdc-{kind}={self.names[kind]}")
        if self.fixtures:
            words.append(f"--ticdc-fixtures={self.fixtures}")
        return excinfo.value.outcome.report() + "\n  replay (pytest): " + shlex.join(words)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the case lives."""
        return self.case.root / "manifest.json", None, f"ticdc case {self.case.id}"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ValueError:  # a module set to None in sys.modules: not importable
        return False


def _fixtures_root(value: str | None) -> Path | None:
    if value is None:
        return None
    path = Path(value)
    if path.exists():
        return path
    from ticdc_conformance.fixtures import bundles

    try:
        root: Path = bundles.cached_root(value)
    except (OSError, ValueError) as error:
        raise pytest.UsageError(f"--ticdc-fixtures={value}: {error}") from None
    return root


def _items(session: pytest.Session, config: pytest.Config) -> list[pytest.Item]:
    from ticdc_conformance.suites import XfailFileError, load_cases, match_entry, read_xfail_file  # noqa: I001 - one import kept on one line: the names the plugin needs
    from ticdc_conformance.suites import stale_entries
    from ticdc_conformance.suites.gate.adapters import load_adapter

    names = {k: config.getoption(f"--ticdc-{k}") or "" for k in ("decoder", "encoder")}
    root = str(config.rootpath)
    if root not in sys.path:  # adapters import from the project, as with ``run``
        sys.path.insert(0, root)
    testee = _testee(config, names) if config.getoption("--ticdc-testee") else None
    try:
        adapters = {k: load_adapter(names[k], k) for k in _DIRECTIONS if names[k]}
        xfail_file = config.getoption("--ticdc-xfail")
        entries = read_xfail_file(xfail_file) if xfail_file else []
    except (ValueError, XfailFileError, OSError) as error:
        raise pytest.UsageError(str(error)) from None
    fixtures = config.getoption("--ticdc-fixtures")
    cases = load_cases(
        _fixtures_root(fixtures),
        protocols=config.getoption("--ticdc-protocol"),
        profiles=config.getoption("--ticdc-profile"),
        tiers=config.getoption("--ticdc-tier"),
        directions=[
            d for k in (testee_kinds(testee) if testee else adapters) for d in _DIRECTIONS[k]
        ],
        ids=config.getoption("--ticdc-case"),
    )
    if testee is not None:
        capabilities = testee.capabilities
        cases = [c for c in cases if capabilities is None or capabilities.covers(c)]
    config.stash[_STALE] = stale_entries([c.id for c in cases], entries)
    items: list[pytest.Item] = []
    for case in cases:
        item = TicdcCaseItem.from_parent(
            session,
            name=case.id,
            nodeid=f"ticdc::{case.id}",
            case=case,
            adapters=adapters,
            names=names,
            fixtures=fixtures,
            testee=testee,
        )
        for marker in (
            "ticdc",
            f"ticdc_{case.protocol.replace('-', '_')}",
            f"ticdc_{case.direction}",
            f"ticdc_{case.tier}",
        ):
            item.add_marker(marker)
        entry = match_entry(case.id, entries)
        if entry is not None:
            reason = (
                f"{entry.reason} (known failure {entry.where()}; if it passes, delete "
                f"that line: {entry.text()})"
            )
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True, raises=CaseFailedError))
        items.append(item)
    if config.getoption("--ticdc-property-examples") > 0:
        if not _installed("hypothesis"):
            raise pytest.UsageError(
                "--ticdc-property-examples needs the generators extra "
                "(pip install 'ticdc-conformance[generators]'): Hypothesis is not installed"
            )
        return [*items, *_property_items(session, config, adapters)]
    return items


_TESTEE = pytest.StashKey["Testee"]()


def _testee(config: pytest.Config, names: dict[str, str]) -> Testee:
    """Start the session's testee (closed when pytest ends); ``UsageError`` when it cannot."""
    from ticdc_conformance.suites.testee import Testee, TesteeBrokenError

    if names["decoder"] or names["encoder"]:
        raise pytest.UsageError("--ticdc-testee replaces --ticdc-decoder and --ticdc-encoder")
    command = config.getoption("--ticdc-testee")
    names["testee"] = command
    try:
        testee = Testee(command, timeout=config.getoption("--ticdc-testee-timeout"))
        config.stash[_TESTEE] = testee
        testee.start()
    except (OSError, ValueError, TesteeBrokenError) as error:
        raise pytest.UsageError(f"--ticdc-testee={command}: cannot run it: {error}") from None
    return testee


def testee_kinds(testee: Testee) -> list[str]:
    """``decoder`` and/or ``encoder``: what the testee's hello declares."""
    directions = testee.capabilities.directions() if testee.capabilities else []
    return [k for k, ds in _DIRECTIONS.items() if any(d in directions for d in ds)]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Shut the session's testee down."""
    testee = config.stash.get(_TESTEE, None)
    if testee is not None:
        testee.close()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Add one item per selected case, before ``-k`` and ``-m`` deselect."""
    if any(config.getoption(f"--ticdc-{k}") for k in ("decoder", "encoder", "testee")):
        items.extend(_items(session, config))


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:  # noqa: ANN401 - pytest's TerminalReporter is untyped
    """Report known-failure entries that match no selected case."""
    stale = config.stash.get(_STALE, [])
    if stale:
        terminalreporter.write_sep("=", "ticdc: stale known-failure entries")
        for entry in stale:
            terminalreporter.write_line(
                f"{entry.where()}: matches no selected case: {entry.text()}"
            )
