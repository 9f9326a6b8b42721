"""Fixture bundles: a reproducible USTAR bundle, its pinned sha256, SHA256SUMS inside, export."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.fixtures import _safe_tar, bundles, kit_version, load_manifest

pytest_plugins = ["pytester"]

ROOT = fixtures.default_root()
VERSION = kit_version()


def cli(*args: str, cache: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **({"TICDC_CONFORMANCE_CACHE": str(cache)} if cache else {})}
    return subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,  # a hang guard: verify regenerates the tree, slow beside other workers
        env=env,
    )


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> bundles.Packed:
    return bundles.pack(tmp_path_factory.mktemp("release"))


def test_pack_is_reproducible_and_pinned(release: bundles.Packed, tmp_path: Path) -> None:
    again = bundles.pack(tmp_path)
    assert again.archive.read_bytes() == release.archive.read_bytes()
    tar = gzip.decompress(release.archive.read_bytes())
    assert hashlib.sha256(tar).hexdigest() == release.sha256 == bundles.pinned(VERSION)
    assert (ROOT / bundles.PIN).read_text() == f"{release.sha256}  {bundles.bundle_name(VERSION)}\n"
    digest = hashlib.sha256(release.archive.read_bytes()).hexdigest()
    assert release.sums.read_text() == f"{digest}  {release.archive.name}\n"
    assert release.archive.stat().st_size < 3_000_000


def test_bundle_headers_are_fixed_and_sums_cover_the_manifest(release: bundles.Packed) -> None:
    with tarfile.open(release.archive) as tar:
        members = tar.getmembers()
        sums_member = tar.extractfile(f"{bundles.top_folder(VERSION)}/{bundles.SUMS}")
        assert sums_member is not None
        sums = bundles.parse_sums(sums_member.read().decode(), bundles.SUMS)
    top = f"{bundles.top_folder(VERSION)}/"
    names = [m.name.removeprefix(top) for m in members]
    assert names[:4] == ["manifest.json", "manifest.schema.json", "README.md", "SHA256SUMS"]
    assert names[4:] == sorted(names[4:])
    assert all(n.startswith("data/") for n in names[4:])
    for member in members:
        assert member.name.startswith(top)
        assert member.isreg()
        assert (member.mtime, member.uid, member.gid, member.mode) == (0, 0, 0, 0o644)
        assert (member.uname, member.gname) == ("", "")
    assert set(sums) == set(names) - {"SHA256SUMS"}
    assert (
        sums["manifest.json"] == hashlib.sha256((ROOT / "manifest.json").read_bytes()).hexdigest()
    )


def test_export_is_the_unpacked_bundle(release: bundles.Packed, tmp_path: Path) -> None:
    bundles.export(tmp_path / "tree")
    tar = tmp_path / bundles.bundle_name(VERSION)
    tar.write_bytes(gzip.decompress(release.archive.read_bytes()))
    unpacked = _safe_tar.extract(tar, tmp_path / "unpacked", bundles.top_folder(VERSION))
    files = sorted(p.relative_to(unpacked) for p in unpacked.rglob("*") if p.is_file())
    assert files == sorted(
        p.relative_to(tmp_path / "tree") for p in (tmp_path / "tree").rglob("*") if p.is_file()
    )
    assert all((unpacked / f).read_bytes() == (tmp_path / "tree" / f).read_bytes() for f in files)
    assert fixtures.verify(tmp_path / "tree", regenerate=False) == []


@pytest.mark.parametrize(
    ("tamper", "named"),
    [
        (
            lambda t: (t / "manifest.json").write_bytes((t / "manifest.json").read_bytes() + b" "),
            "manifest.json: sha256",
        ),
        (lambda t: (t / "README.md").write_text("edited\n"), "README.md: sha256"),
        (
            lambda t: (t / "data/open/stray.bin").write_bytes(b"x"),
            "data/open/stray.bin: not listed in SHA256SUMS",
        ),
        (lambda t: (t / "manifest.schema.json").unlink(), "manifest.schema.json: missing"),
        (lambda t: (t / "SHA256SUMS").write_text("not a checksum\n"), "SHA256SUMS line 1 is not"),
    ],
    ids=["manifest-edited", "readme-edited", "stray-file", "missing-file", "malformed-sums"],
)
def test_verify_checks_an_exported_tree_against_its_sums(
    tmp_path: Path, tamper: object, named: str
) -> None:
    bundles.export(tmp_path)
    tamper(tmp_path)  # type: ignore[operator]
    problems = fixtures.verify(tmp_path, regenerate=False)
    assert any(named in p for p in problems), problems


def test_verify_names_a_stale_pin(tmp_path: Path) -> None:
    shutil.copytree(
        ROOT, tmp_path, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.py", "__pycache__")
    )
    pin = (tmp_path / bundles.PIN).read_text()
    assert fixtures.verify(tmp_path, regenerate=False) == []
    (tmp_path / "README.md").write_text("a README the pin does not know\n")
    [problem] = fixtures.verify(tmp_path, regenerate=False)
    assert problem.startswith(
        f"{bundles.PIN}: pins sha256 {pin.split()[0]} for {bundles.bundle_name(VERSION)}, but the tree packs to "
    )
    (tmp_path / bundles.PIN).write_text(pin.replace(VERSION, "9.9.9"))
    assert fixtures.verify(tmp_path, regenerate=False) == [
        f"{bundles.PIN}: pins {bundles.bundle_name('9.9.9')}, but the tree is of kit version {VERSION}"
    ]


def test_pack_refuses_a_tree_that_differs_from_the_pin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from ticdc_conformance.cli.main import main

    assert main(["fixtures", "pack", "--out", str(tmp_path / "ok")]) == 0
    pin = bundles.pinned(VERSION)
    assert pin is not None
    assert pin in capsys.readouterr().err
    monkeypatch.setattr(bundles, "pinned", lambda _version: "0" * 64)
    assert main(["fixtures", "pack", "--out", str(tmp_path / "stale")]) == 1
    assert f"error: the package pins {'0' * 64} ({bundles.PIN})" in capsys.readouterr().err


def test_cli_export_fetch_and_plugin_by_version(
    release: bundles.Packed,
    tmp_path: Path,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exported = cli("fixtures", "export", "--out", str(tmp_path / "tree"))
    assert exported.returncode == 0, exported.stderr
    assert cli("fixtures", "verify", "--fixtures", str(tmp_path / "tree")).returncode == 0
    fetched = cli(
        "fixtures",
        "fetch",
        VERSION,
        "--url",
        release.archive.parent.as_uri(),
        cache=tmp_path / "cache",
    )
    assert fetched.returncode == 0, fetched.stderr
    monkeypatch.setenv("TICDC_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--ticdc-decoder=reference",
        "--ticdc-protocol=craft",
        f"--ticdc-fixtures={VERSION}",
    )
    craft = [
        c
        for c in load_manifest()["cases"]
        if c["protocol"] == "craft" and c["direction"] in {"decode", "reject"}
    ]
    result.assert_outcomes(passed=len(craft))


def test_cli_export_is_atomic_and_replaces_only_an_earlier_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ticdc_conformance.cli.main import main

    tree = tmp_path / "tree"
    assert main(["fixtures", "export", "--out", str(tree)]) == 0
    (tree / "data/stale.txt").write_text("from an older export")
    assert main(["fixtures", "export", "--out", str(tree)]) == 0  # an export is replaced whole
    assert not (tree / "data/stale.txt").exists()
    assert fixtures.verify(tree, regenerate=False) == []
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    assert main(["fixtures", "export", "--out", str(other)]) == 2
    assert "exists and is not an exported fixture tree" in capsys.readouterr().err
    assert sorted(p.name for p in other.iterdir()) == ["notes.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "tree"]  # no sibling left
