"""Fixture bundles: reproducible tarball with SHA256SUMS, checksum-checked fetch (no network)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from ticdc_conformance.fixtures import bundles, kit_version, load_manifest, verify

pytest_plugins = ["pytester"]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("release")
    bundles.pack(folder)
    return folder


def test_pack_is_reproducible(release: Path, tmp_path: Path) -> None:
    again = bundles.pack(tmp_path)
    tarball = release / bundles.bundle_name(kit_version())
    assert again.read_bytes() == tarball.read_bytes()
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert (release / "SHA256SUMS").read_text() == f"{digest}  {tarball.name}\n"
    assert tarball.stat().st_size < 3_000_000


@pytest.mark.parametrize("scheme", ["path", "file-url"])
def test_fetch_from_a_local_mirror(release: Path, tmp_path: Path, scheme: str) -> None:
    base = str(release) if scheme == "path" else release.as_uri()
    root = bundles.fetch(kit_version(), base, cache=tmp_path)
    assert root == bundles.cached_root(kit_version(), cache=tmp_path)
    assert load_manifest(root)["kit_version"] == kit_version()
    assert verify(root, regenerate=False) == []


def test_fetch_rejects_a_tampered_bundle(release: Path, tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    name = bundles.bundle_name(kit_version())
    data = bytearray((release / name).read_bytes())
    data[100] ^= 1
    (mirror / name).write_bytes(bytes(data))
    (mirror / "SHA256SUMS").write_bytes((release / "SHA256SUMS").read_bytes())
    with pytest.raises(ValueError, match="SHA256"):
        bundles.fetch(kit_version(), str(mirror), cache=tmp_path / "cache")
    with pytest.raises(ValueError, match="not in the cache"):
        bundles.cached_root(kit_version(), cache=tmp_path / "cache")


def test_cli_pack_export_fetch_and_plugin_by_version(
    release: Path, tmp_path: Path, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "ticdc_conformance.cli", *args],
                              capture_output=True, text=True, check=False, timeout=120,
                              env={**__import__("os").environ,
                                   "TICDC_CONFORMANCE_CACHE": str(tmp_path / "cache")})  # fmt: skip

    packed = cli("fixtures", "pack", "--out", str(tmp_path / "out"))
    assert packed.returncode == 0, packed.stderr
    assert (tmp_path / "out" / "SHA256SUMS").read_bytes() == (release / "SHA256SUMS").read_bytes()
    exported = cli("fixtures", "export", "--out", str(tmp_path / "tree"))
    assert exported.returncode == 0, exported.stderr
    assert cli("fixtures", "verify", "--fixtures", str(tmp_path / "tree")).returncode == 0
    fetched = cli("fixtures", "fetch", kit_version(), "--url", release.as_uri())
    assert fetched.returncode == 0, fetched.stderr
    monkeypatch.setenv("TICDC_CONFORMANCE_CACHE", str(tmp_path / "cache"))
    result = pytester.runpytest("-p", "no:cacheprovider", "--ticdc-decoder=reference",
                                "--ticdc-protocol=craft", f"--ticdc-fixtures={kit_version()}")  # fmt: skip
    craft = [c for c in load_manifest()["cases"]
             if c["protocol"] == "craft" and c["direction"] in {"decode", "reject"}]  # fmt: skip
    result.assert_outcomes(passed=len(craft))
