"""The commands ``fixtures`` (build, list, show, verify) and ``run`` (gate an implementation)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ticdc_conformance.reference import CODECS

__all__ = ["COMMANDS", "add_parsers", "reference_summary"]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_BROKEN = 0, 1, 2, 3


class UsageError(Exception):
    """Options the command cannot run with (exit status 2)."""


def _root(args: argparse.Namespace) -> Path | None:
    return Path(args.fixtures) if getattr(args, "fixtures", None) else None


def _fixtures(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance import fixtures  # noqa: PLC0415 - keeps the other commands light

    if args.action == "build":
        manifest = fixtures.build(Path(args.out))
        print(f"wrote {len(manifest['cases'])} cases ({len(manifest['fixtures'])} fixture "
              f"folders) to {args.out}", file=sys.stderr)  # fmt: skip
        return EXIT_OK
    if args.action in {"pack", "export", "fetch"}:
        return _bundle(args)
    root = _root(args)
    if args.action == "verify":
        problems = fixtures.verify(root, regenerate=not args.no_regenerate)
        for problem in problems:
            print(f"error: {problem}", file=sys.stderr)
        manifest = fixtures.load_manifest(root)
        if problems:
            return EXIT_FAILURE
        print(f"ok: {len(manifest['cases'])} cases, every checksum matches"
              f"{'' if args.no_regenerate else ', regeneration is byte-identical'}",
              file=sys.stderr)  # fmt: skip
        return EXIT_OK
    from ticdc_conformance.suites import load_cases  # noqa: PLC0415

    patterns = [args.case] if args.action == "show" else args.case or None
    cases = load_cases(root, protocols=getattr(args, "protocol", None), ids=patterns)
    if args.action == "list":
        for case in cases:
            out.write(f"{case.id}\t{case.tier}\t{case.comparison}\t{case.description}\n")
        return EXIT_OK
    if not cases:
        raise UsageError(f"no case {args.case!r}")
    for case in cases:
        document: dict[str, Any] = {
            "id": case.id, "protocol": case.protocol, "profile": case.profile,
            "direction": case.direction, "comparison": case.comparison, "tier": case.tier,
            "tags": list(case.tags), "spec": case.spec, "description": case.description,
            "options": case.options, "fixture": str(case.path) + ".*",
            "change_events": [json.loads(x) for x in _lines(case.root, case.change)],
            "messages": [
                {"role": m.role,
                 "key": None if m.key is None else (case.root / m.key).read_bytes().hex(),
                 "value": None if m.value is None else _text_or_hex(case.root / m.value)}
                for m in case.messages
            ],
            "decoded": case.expected_decoded(),
            **({"error": case.error} if case.error else {}),
            **({"encode_error": case.encode_error} if case.encode_error else {}),
        }  # fmt: skip
        out.write(json.dumps(document, ensure_ascii=False, indent=1) + "\n")
    return EXIT_OK


def _bundle(args: argparse.Namespace) -> int:
    from ticdc_conformance.fixtures import bundles, kit_version  # noqa: PLC0415

    if args.action == "fetch":
        if args.sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", args.sha256):
            raise UsageError("--sha256 takes the 64 hex digits of the uncompressed bundle")
        try:
            fetched = bundles.fetch(args.version, args.url or (), sha256=args.sha256)
        except bundles.BundleError as error:
            print(f"error: {error}", file=sys.stderr)
            return EXIT_FAILURE
        except ValueError as error:
            raise UsageError(str(error)) from None
        for note in fetched.notes:
            print(f"warning: {note}", file=sys.stderr)
        print(f"fixtures are in {fetched.root} (from {fetched.source})", file=sys.stderr)
        return EXIT_OK
    if args.action == "pack":
        packed = bundles.pack(Path(args.out), _root(args))
        print(
            f"wrote {packed.archive} and {packed.sums}; the uncompressed bundle's sha256 is "
            f"{packed.sha256}",
            file=sys.stderr,
        )
        pin = bundles.pinned(kit_version())
        if _root(args) is None and pin != packed.sha256:
            print(
                f"error: the package pins {pin or 'no sha256'} ({bundles.PIN}): rebuild the "
                "fixtures (fixtures build) before releasing them",
                file=sys.stderr,
            )
            return EXIT_FAILURE
        return EXIT_OK
    bundles.export(Path(args.out), _root(args))
    print(f"exported the fixture tree to {args.out}", file=sys.stderr)
    return EXIT_OK


def _lines(root: Path, name: str | None) -> list[str]:
    if name is None:
        return []
    return [line for line in (root / name).read_text("utf-8").split("\n") if line]


def _text_or_hex(path: Path) -> str:
    data = path.read_bytes()
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return data.hex(" ")
    return text if text.isprintable() else data.hex(" ")


def _run(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.suites import (  # noqa: PLC0415
        XfailFileError,
        load_cases,
        read_xfail_file,
        run_cases,
    )
    from ticdc_conformance.suites.adapters import load_adapter  # noqa: PLC0415

    del out
    if args.testee:
        if args.decoder or args.encoder:
            raise UsageError("--testee replaces --decoder and --encoder: give one or the other")
        return _run_testee(args)
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # adapters import from the current folder, as in pytest
    if not args.decoder and not args.encoder:
        raise UsageError("give --decoder or --encoder (module:callable, or reference), or --testee")
    try:
        decoder = load_adapter(args.decoder, "decoder") if args.decoder else None
        encoder = load_adapter(args.encoder, "encoder") if args.encoder else None
        entries = read_xfail_file(args.xfail) if args.xfail else []
    except (ValueError, XfailFileError, OSError) as error:
        raise UsageError(str(error)) from None
    directions = [d for d, given in (("decode", decoder), ("reject", decoder), ("encode", encoder))
                  if given]  # fmt: skip
    cases = load_cases(
        _root(args), protocols=args.protocol or None, profiles=args.profile or None,
        tiers=args.tier or None, directions=directions, ids=args.case or None,
    )  # fmt: skip
    if not cases:
        raise UsageError("no case matches the selection")
    adapters = {"decoder": args.decoder or "", "encoder": args.encoder or ""}
    outcomes = run_cases(cases, decoder=decoder, encoder=encoder, adapters=adapters,
                         fixtures=args.fixtures)  # fmt: skip
    return _report(args, cases, outcomes, entries)


def _run_testee(args: argparse.Namespace) -> int:
    """``run --testee``: the same selection, checks and report, through the testee protocol."""
    from ticdc_conformance.fixtures import kit_version  # noqa: PLC0415
    from ticdc_conformance.suites import XfailFileError, load_cases, read_xfail_file  # noqa: PLC0415
    from ticdc_conformance.suites.testee import Testee, TesteeBrokenError, run_testee  # noqa: PLC0415

    if args.testee_timeout <= 0 or args.testee_restarts < 0:
        raise UsageError("--testee-timeout must be positive, --testee-restarts not negative")
    log = None
    try:
        entries = read_xfail_file(args.xfail) if args.xfail else []
        log = Path(args.testee_log).open("w", encoding="utf-8") if args.testee_log else None  # noqa: SIM115
        testee = Testee(
            args.testee,
            timeout=args.testee_timeout,
            max_restarts=args.testee_restarts,
            kit_version=kit_version(),
            log=log,
        )
    except (ValueError, XfailFileError, OSError) as error:
        if log is not None:
            log.close()
        raise UsageError(str(error)) from None
    try:
        try:
            capabilities = testee.start()
        except OSError as error:
            raise UsageError(f"--testee {args.testee}: cannot run it: {error}") from None
        except TesteeBrokenError as error:
            print(f"error: the run broke: {error}", file=sys.stderr)
            return EXIT_BROKEN
        print(capabilities.describe(), file=sys.stderr)
        for where in capabilities.ignored:
            print(f"warning: the testee declares {where}, which this kit does not know; ignored",
                  file=sys.stderr)  # fmt: skip
        selected = load_cases(
            _root(args), protocols=args.protocol or None, profiles=args.profile or None,
            tiers=args.tier or None, directions=capabilities.directions(), ids=args.case or None,
        )  # fmt: skip
        cases = [c for c in selected if capabilities.covers(c)]
        if len(cases) < len(selected):
            print(f"{len(selected) - len(cases)} selected case(s) outside what the testee "
                  "declares are not run", file=sys.stderr)  # fmt: skip
        if not cases:
            raise UsageError("no case matches the selection and the testee's capabilities")
        outcomes, stopped = run_testee(testee, cases, fixtures=args.fixtures)
    finally:
        testee.close()
        if log is not None:
            log.close()
    status = _report(args, cases[: len(outcomes)], outcomes, entries)
    if testee.restarts:
        print(f"the testee was started again {testee.restarts} time(s)", file=sys.stderr)
    if stopped is not None:
        print(f"error: the run broke: {stopped}", file=sys.stderr)
        return EXIT_BROKEN
    return status


def _report(args: argparse.Namespace, cases: list[Any], outcomes: list[Any],
            entries: list[Any]) -> int:  # fmt: skip
    """Print failures, unexpected passes, stale entries and counts; write ``--report``."""
    from ticdc_conformance.suites import match_entry, stale_entries, summarize  # noqa: PLC0415

    failed = 0
    for outcome in outcomes:
        entry = match_entry(outcome.case.id, entries)
        if outcome.status == "fail" and entry is None:
            failed += 1
            print(outcome.report(), file=sys.stderr)
        elif outcome.status == "pass" and entry is not None:
            failed += 1
            print(f"XPASS {outcome.case.id}: listed as a known failure but passes; delete "
                  f"line {entry.where()}: {entry.text()}", file=sys.stderr)  # fmt: skip
    if args.report:
        with Path(args.report).open("w", encoding="utf-8") as report:
            for outcome in outcomes:
                entry = match_entry(outcome.case.id, entries)
                report.write(json.dumps({
                    "id": outcome.case.id, "protocol": outcome.case.protocol,
                    "profile": outcome.case.profile, "direction": outcome.case.direction,
                    "tier": outcome.case.tier, "status": outcome.status,
                    "known_failure": None if entry is None else entry.text(),
                    "detail": outcome.detail, "replay": outcome.replay,
                }, ensure_ascii=False) + "\n")  # fmt: skip
    for entry in stale_entries([c.id for c in cases], entries):
        print(f"warning: stale known-failure entry {entry.where()} matches no selected case: "
              f"{entry.text()}", file=sys.stderr)  # fmt: skip
    for line in summarize(outcomes):
        print(line, file=sys.stderr)
    print(f"{len(outcomes)} case(s), {failed} unexpected result(s)", file=sys.stderr)
    return EXIT_FAILURE if failed else EXIT_OK


def reference_summary() -> int:
    """Run every golden case against the reference codecs; print counts per protocol and tier."""
    import time  # noqa: PLC0415

    from ticdc_conformance.suites import load_cases, run_cases, summarize  # noqa: PLC0415
    from ticdc_conformance.suites.adapters import (  # noqa: PLC0415
        reference_decoder,
        reference_encoder,
    )

    started = time.perf_counter()
    outcomes = run_cases(load_cases(), decoder=reference_decoder, encoder=reference_encoder)
    print("golden suite against the reference codecs:", file=sys.stderr)
    for outcome in outcomes:
        if outcome.status != "pass":
            print(outcome.report(), file=sys.stderr)
    for line in summarize(outcomes):
        print(f"  {line}", file=sys.stderr)
    failed = sum(o.status != "pass" for o in outcomes)
    print(f"  {len(outcomes)} cases, {failed} not passed, in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)  # fmt: skip
    return EXIT_FAILURE if failed else EXIT_OK


def add_parsers(commands: Any) -> None:  # noqa: ANN401 - argparse's subparsers action is private
    """Add ``fixtures`` and ``run`` to the command parser."""
    protocols = sorted(CODECS)
    fixtures = commands.add_parser(
        "fixtures", help="build, list, show or verify the golden fixtures",
        description="Golden fixtures: build writes the tree deterministically; list and show "
        "read the manifest; verify checks every sha256 and that regeneration is "
        "byte-identical.",
    )  # fmt: skip
    actions = fixtures.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="write the golden tree (regenerate)")
    build.add_argument("--out", required=True, help="fixtures folder to write")
    for name, text in (("list", "list case ids"), ("show", "show one case"),
                       ("verify", "check checksums and regeneration")):  # fmt: skip
        action = actions.add_parser(name, help=text)
        action.add_argument("--fixtures", help="fixtures folder (default: the shipped one)")
        if name == "show":
            action.add_argument("case", help="case id (or pattern)")
        elif name == "list":
            action.add_argument("--protocol", action="append", choices=protocols)
            action.add_argument("--case", action="append", help="id or pattern, repeatable")
        else:
            action.add_argument("--no-regenerate", action="store_true",
                                help="check checksums only")  # fmt: skip
    bundle_actions = (
        ("pack", "write the versioned tarball and SHA256SUMS"),
        ("export", "write the bundle's files (manifest, schema, README, SHA256SUMS, data)"),
    )
    for name, text in bundle_actions:
        action = actions.add_parser(name, help=text)
        action.add_argument("--out", required=True, help="folder to write into")
        action.add_argument("--fixtures", help="fixtures folder (default: the shipped one)")
    fetch = actions.add_parser(
        "fetch",
        help="download a bundle into the cache, checked against its pinned sha256",
        description="Download the fixture bundle of a kit version into the cache "
        "(TICDC_CONFORMANCE_CACHE), check it and unpack it safely. This kit's own version is "
        "checked against the sha256 the package pins; another version against --sha256, "
        "else the SHA256SUMS beside it. A corrupt cached part is named and replaced. Exit "
        "status 1 when no mirror gives a bundle that verifies.",
    )
    fetch.add_argument("version", nargs="?", help="kit version (default: this kit's)")
    fetch.add_argument(
        "--url",
        action="append",
        metavar="BASE",
        help="base URL (https://, file:// or a folder) of the release, repeatable: mirrors, "
        "tried in order (default: $TICDC_CONFORMANCE_FIXTURES_URL, else the project's "
        "release page)",
    )
    fetch.add_argument(
        "--sha256",
        metavar="HEX",
        help="sha256 of the uncompressed bundle (.tar), as a release pins it",
    )
    run = commands.add_parser(
        "run", help="check an implementation against the golden cases",
        description="Check a decoder (messages -> decoded events) and/or an encoder (change "
        "events -> messages), Python callables or a testee program in any language, against "
        "every selected case; print each failure with its case "
        "id, fixture path, difference and a command replaying just that case, then counts "
        "per protocol and tier.",
        epilog="Exit codes: 0 every case as expected, 1 a conformance failure or unexpected "
        "pass, 2 usage error, 3 the run broke.",
    )  # fmt: skip
    run.add_argument("--protocol", action="append", choices=protocols)
    run.add_argument("--profile", action="append", choices=("tiflow", "ticdc"))
    run.add_argument("--tier", action="append", choices=("required", "recommended"))
    run.add_argument("--case", action="append", help="case id or pattern, repeatable")
    run.add_argument("--decoder", help="module:callable, or reference")
    run.add_argument("--encoder", help="module:callable, or reference")
    run.add_argument("--testee", metavar="COMMAND",
                     help="a program in any language speaking the testee protocol on "
                     "stdin and stdout (docs/testee-protocol.md), instead of "
                     "--decoder/--encoder")  # fmt: skip
    run.add_argument("--testee-timeout", type=float, default=10.0, metavar="SECONDS",
                     help="per-case answer time; a testee that takes longer is killed, the case "
                     "fails and the testee is started again (default 10)")  # fmt: skip
    run.add_argument("--testee-restarts", type=int, default=20, metavar="N",
                     help="start a crashed, hung or out-of-step testee again at most N times, "
                     "then stop with exit status 3 (default 20)")  # fmt: skip
    run.add_argument("--testee-log", metavar="FILE",
                     help="write every line sent to ('> ') and read from ('< ') the "
                     "testee")  # fmt: skip
    run.add_argument("--xfail", help="known-failure file: 'CASE-ID-OR-PATTERN: reason' lines")
    run.add_argument("--fixtures", help="fixtures folder (default: the shipped one)")
    run.add_argument("--report", help="also write every outcome as JSON Lines to this file")


COMMANDS: dict[str, Callable[[argparse.Namespace, IO[str]], int]] = {
    "fixtures": _fixtures,
    "run": _run,
}
