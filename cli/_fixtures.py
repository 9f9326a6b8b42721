"""The command ``fixtures``: build, list, show, verify, pack, export and fetch golden fixtures."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import IO, Any

from ticdc_conformance import fixtures
from ticdc_conformance.cli._args import PROTOCOLS, Commands
from ticdc_conformance.fixtures import bundles
from ticdc_conformance.reference import ExitCode
from ticdc_conformance.reference.errors import UsageError

__all__ = ["add_parsers"]


def _root(args: argparse.Namespace) -> Path | None:
    return Path(args.fixtures) if getattr(args, "fixtures", None) else None


def _build(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.fixtures.builder import build

    del out
    manifest = build(Path(args.out))
    print(
        f"wrote {len(manifest['cases'])} cases ({len(manifest['fixtures'])} fixture folders) "
        f"to {args.out}",
        file=sys.stderr,
    )
    return ExitCode.OK


def _verify(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    root = _root(args)
    problems = fixtures.verify(root, regenerate=not args.no_regenerate)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return ExitCode.FAILURE
    manifest = fixtures.load_manifest(root)
    regenerated = "" if args.no_regenerate else ", regeneration is byte-identical"
    print(
        f"ok: {len(manifest['cases'])} cases, every checksum matches{regenerated}",
        file=sys.stderr,
    )
    return ExitCode.OK


def _list(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.suites.gate import load_cases

    for case in load_cases(_root(args), protocols=args.protocol, ids=args.case):
        out.write(f"{case.id}\t{case.tier}\t{case.comparison}\t{case.description}\n")
    return ExitCode.OK


def _show(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.suites.gate import load_cases

    cases = load_cases(_root(args), ids=[args.case])
    if not cases:
        raise UsageError(f"no case {args.case!r}")
    for case in cases:
        out.write(json.dumps(case.describe(), ensure_ascii=False, indent=1) + "\n")
    return ExitCode.OK


def _pack(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    packed = bundles.pack(Path(args.out), _root(args))
    print(
        f"wrote {packed.archive} and {packed.sums}; the uncompressed bundle's sha256 is "
        f"{packed.sha256}",
        file=sys.stderr,
    )
    pin = bundles.pinned(fixtures.kit_version())
    if _root(args) is None and pin != packed.sha256:
        print(
            f"error: the package pins {pin or 'no sha256'} ({bundles.PIN}): rebuild the "
            "fixtures (fixtures build) before releasing them",
            file=sys.stderr,
        )
        return ExitCode.FAILURE
    return ExitCode.OK


def _is_export(folder: Path) -> bool:
    """Whether ``folder`` holds an earlier export (which ``export`` may replace)."""
    return (folder / bundles.SUMS).is_file() and (folder / "manifest.json").is_file()


def _export(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.generators.dump import publishing

    del out
    target = Path(args.out)
    # written beside the target and renamed at the end: a stopped export leaves nothing behind
    try:
        with publishing(
            target, "export", replaceable=_is_export, kind="an exported fixture tree"
        ) as folder:
            bundles.export(folder, _root(args))
    except FileExistsError as error:
        raise UsageError(str(error)) from None
    print(f"exported the fixture tree to {target}", file=sys.stderr)
    return ExitCode.OK


def _fetch(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    if args.sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", args.sha256):
        raise UsageError("--sha256 takes the 64 hex digits of the uncompressed bundle")
    try:
        fetched = bundles.fetch(args.version, args.url or (), sha256=args.sha256)
    except bundles.BundleError as error:
        print(f"error: {error}", file=sys.stderr)
        return ExitCode.FAILURE
    except ValueError as error:
        raise UsageError(str(error)) from None
    for note in fetched.notes:
        print(f"warning: {note}", file=sys.stderr)
    print(f"fixtures are in {fetched.root} (from {fetched.source})", file=sys.stderr)
    return ExitCode.OK


def add_parsers(commands: Commands) -> None:
    """Add ``fixtures`` and its actions."""
    parser = commands.add_parser(
        "fixtures",
        help="build, list, show or verify the golden fixtures",
        description="Golden fixtures: build writes the tree deterministically; list and show "
        "read the manifest; verify checks every sha256 and that regeneration is "
        "byte-identical.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    build = actions.add_parser("build", help="write the golden tree (regenerate)")
    build.add_argument("--out", required=True, help="fixtures folder to write")
    build.set_defaults(handler=_build)
    listing = actions.add_parser("list", help="list case ids")
    listing.add_argument("--protocol", action="append", choices=PROTOCOLS, help="repeatable")
    listing.add_argument("--case", action="append", help="id or pattern, repeatable")
    listing.set_defaults(handler=_list)
    show = actions.add_parser("show", help="show one case")
    show.add_argument("case", help="case id (or pattern)")
    show.set_defaults(handler=_show)
    verify = actions.add_parser("verify", help="check checksums and regeneration")
    verify.add_argument("--no-regenerate", action="store_true", help="check checksums only")
    verify.set_defaults(handler=_verify)
    for action in (listing, show, verify):
        action.add_argument("--fixtures", help="fixtures folder (default: the shipped one)")
    bundle_actions: dict[str, tuple[str, Any]] = {
        "pack": ("write the versioned tarball and SHA256SUMS", _pack),
        "export": (
            "write the bundle's files (manifest, schema, README, SHA256SUMS, data)",
            _export,
        ),
    }
    for name, (text, handler) in bundle_actions.items():
        action = actions.add_parser(name, help=text)
        action.add_argument("--out", required=True, help="folder to write into")
        action.add_argument("--fixtures", help="fixtures folder (default: the shipped one)")
        action.set_defaults(handler=handler)
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
    fetch.set_defaults(handler=_fetch)
