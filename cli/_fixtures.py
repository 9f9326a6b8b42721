"""The command ``fixtures``: build, list, show, verify, pack, export and fetch golden fixtures."""

from __future__ import annotations

import argparse
import json
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
    from ticdc_conformance.fixtures.builder import build  # noqa: PLC0415 - the builder

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
    from ticdc_conformance.suites.gate import load_cases  # noqa: PLC0415

    for case in load_cases(_root(args), protocols=args.protocol, ids=args.case):
        out.write(f"{case.id}\t{case.tier}\t{case.comparison}\t{case.description}\n")
    return ExitCode.OK


def _show(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.suites.gate import load_cases  # noqa: PLC0415

    cases = load_cases(_root(args), ids=[args.case])
    if not cases:
        raise UsageError(f"no case {args.case!r}")
    for case in cases:
        out.write(json.dumps(case.describe(), ensure_ascii=False, indent=1) + "\n")
    return ExitCode.OK


def _pack(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    tarball = bundles.pack(Path(args.out), _root(args))
    print(f"wrote {tarball} and {tarball.parent / 'SHA256SUMS'}", file=sys.stderr)
    return ExitCode.OK


def _export(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    target = Path(args.out)
    for name, path in bundles.members(_root(args) or fixtures.default_root()):
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        (target / name).write_bytes(path.read_bytes())
    print(f"exported the fixture tree to {target}", file=sys.stderr)
    return ExitCode.OK


def _fetch(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    try:
        root = bundles.fetch(args.version, args.url)
    except ValueError as error:
        raise UsageError(str(error)) from None
    print(f"fixtures {args.version} are in {root}", file=sys.stderr)
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
        "export": ("copy the tree (manifest, schema, README, data) as files", _export),
    }
    for name, (text, handler) in bundle_actions.items():
        action = actions.add_parser(name, help=text)
        action.add_argument("--out", required=True, help="folder to write into")
        action.add_argument("--fixtures", help="fixtures folder (default: the shipped one)")
        action.set_defaults(handler=handler)
    fetch = actions.add_parser("fetch", help="download a bundle into the cache, checksum-checked")
    fetch.add_argument("version", help="kit version of the bundle")
    fetch.add_argument(
        "--url",
        required=True,
        help="base URL (https://, file:// or a folder) of bundle and SHA256SUMS",
    )
    fetch.set_defaults(handler=_fetch)
