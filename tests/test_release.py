"""The release workflow: its steps (.github/scripts/fixture-release.sh) run here as in CI."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ticdc_conformance.fixtures import bundles, kit_version

REPOSITORY = Path(__file__).resolve().parent.parent
SCRIPT = REPOSITORY / ".github" / "scripts" / "fixture-release.sh"
WORKFLOW = REPOSITORY / ".github" / "workflows" / "release.yml"
VERSION = kit_version()


def _release(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    missing = [
        tool for tool in ("bash", "sha256sum", "gunzip", "cut") if shutil.which(tool) is None
    ]
    bash = shutil.which("bash")
    if missing or bash is None:
        pytest.skip(f"the release script needs {', '.join(missing)}")
    env = {**os.environ, "PYTHON": sys.executable}
    return subprocess.run(
        [bash, str(SCRIPT), str(out), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env=env,
    )


def test_the_release_steps_build_the_pinned_bundle(tmp_path: Path) -> None:
    result = _release(tmp_path / "dist", f"v{VERSION}")
    assert result.returncode == 0, result.stderr
    archive = tmp_path / "dist" / bundles.archive_name(VERSION)
    assert sorted(p.name for p in (tmp_path / "dist").iterdir()) == [bundles.SUMS, archive.name]
    pinned = bundles.pinned(VERSION)
    assert hashlib.sha256(gzip.decompress(archive.read_bytes())).hexdigest() == pinned
    assert f"uncompressed sha256 {pinned} (the pinned one)" in result.stdout
    assert f"{archive.name}: OK" in result.stdout  # sha256sum --check of the release's SHA256SUMS


def test_a_tag_of_another_version_stops_the_release(tmp_path: Path) -> None:
    result = _release(tmp_path / "dist", "v99.0.0")
    assert result.returncode == 2
    assert f"the tag v99.0.0 does not name kit version {VERSION}" in result.stderr
    assert not (tmp_path / "dist").exists()


def test_the_workflow_runs_the_script_and_attaches_what_it_wrote() -> None:
    workflow = WORKFLOW.read_text(encoding="utf-8")
    assert "types: [published]" in workflow
    assert 'run: bash .github/scripts/fixture-release.sh dist "$TAG"' in workflow
    assert 'run: gh release upload "$TAG" dist/* --clobber' in workflow
    assert "TAG: ${{ github.event.release.tag_name }}" in workflow
    assert "contents: write" in workflow
