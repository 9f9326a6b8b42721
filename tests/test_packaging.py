"""The distribution exposes one import name, ``ticdc_conformance``, over the owner's folders."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers import build_wheel

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FOLDERS = ("cli", "fixtures", "generators", "kafka", "reference", "suites")


def _declared() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return set(config["tool"]["setuptools"]["packages"])


def _dist_info(wheel: Path) -> str:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    return f"{wheel.name.split('-')[0]}-{version}.dist-info"


def test_package_list_matches_the_folders() -> None:
    """setuptools cannot prefix discovered packages, so every folder (code or data) is listed."""
    on_disk = {"ticdc_conformance"} | {
        "ticdc_conformance." + ".".join(path.relative_to(ROOT).parts)
        for folder in PACKAGE_FOLDERS
        for path in [ROOT / folder, *(ROOT / folder).rglob("*")]
        if path.is_dir()
        and "__pycache__" not in path.parts
        # a claim-check stream's stored files: data of data.streams (its "*/*")
        and not path.name.endswith(".claim-check")
    }
    assert on_disk == _declared()


@pytest.mark.slow
def test_wheel_has_one_top_level_name(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"ticdc_conformance", _dist_info(wheel)}
    for data in (
        "ticdc_conformance/reference/schemas/change-event.schema.json",
        "ticdc_conformance/reference/schemas/decoded-event.schema.json",
        "ticdc_conformance/reference/schemas/simple-message.avsc",
        "ticdc_conformance/fixtures/examples/ddl.change.jsonl",
        "ticdc_conformance/reference/py.typed",
        "ticdc_conformance/fixtures/manifest.json",
        "ticdc_conformance/fixtures/manifest.schema.json",
        "ticdc_conformance/fixtures/README.md",
        "ticdc_conformance/fixtures/bundle.sha256",
        "ticdc_conformance/fixtures/data/changes/types.bigint-unsigned.change.jsonl",
        "ticdc_conformance/fixtures/data/simple_avro/tiflow.types.json.m001.value",
        "ticdc_conformance/fixtures/data/streams/open.tiflow.clean.parquet",
        "ticdc_conformance/fixtures/data/streams/open.tiflow.clean-claim-check.labels.json",
    ):
        assert data in names
    # a claim-check stream's stored files, in their folder
    stored = "ticdc_conformance/fixtures/data/streams/open.tiflow.clean-claim-check.claim-check/"
    assert any(name.startswith(stored) for name in names)
    entry_points = zipfile.ZipFile(wheel).read(_dist_info(wheel) + "/entry_points.txt")
    assert b"[pytest11]\nticdc_conformance = ticdc_conformance.suites.plugin" in entry_points


def test_bare_folder_names_are_not_importable(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import reference"], cwd=tmp_path, capture_output=True, check=False
    )
    assert result.returncode != 0


def test_ci_runs_the_readme_test_command() -> None:
    """.ci/run calls the README's test command and nothing else."""
    ci_lines = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert len(ci_lines) == 1
    readme = (ROOT / "README.md").read_text()
    blocks = readme.split("```bash\n")
    assert blocks[2].split("\n```")[0] == ci_lines[0], "the second README command is the tests"
    assert "tox run -e demo" in blocks[1].split("\n```")[0], "the first runs the main job"
