"""Safe unpacking of fixture bundles: every attack refused, naming its member, nothing written.

The attacks (tests/malicious_bundles.py) run in this interpreter and, when one is found, under
the newest Python installed: tarfile's extraction filters differ between 3.11 (none before
3.11.4), 3.12 and 3.14 (the default), and the module must depend on none of them.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import malicious_bundles
import pytest

from ticdc_conformance.fixtures import _safe_tar

EXPECTED = {
    "traversal": "has a '..' component",
    "absolute": "is an absolute path",
    "symlink": "is a symbolic link",
    "relative-symlink": "is a symbolic link (to '../..')",
    "hardlink": "is a hard link",
    "device": "is a device",
    "fifo": "is a FIFO",
    "outside-top": f"lies outside the bundle's folder {malicious_bundles.TOP}/",
    "backslash": "has a backslash in its name",
    "duplicate": "repeats an earlier member's name",
}


def _check(outcomes: dict[str, str]) -> None:
    assert set(outcomes) == set(EXPECTED)
    for name, outcome in outcomes.items():
        assert outcome.startswith("UnsafeMemberError: bundle member "), (name, outcome)
        assert EXPECTED[name] in outcome, (name, outcome)
        assert outcome.endswith("; refused"), (name, outcome)


def test_every_attack_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    _check(malicious_bundles.attack(_safe_tar.extract, tmp_path))


def _newest_python() -> str | None:
    """A Python newer than this one that runs: on PATH, or in pyenv's versions folder."""
    candidates = [shutil.which(f"python3.{minor}") for minor in range(20, sys.version_info[1], -1)]
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    if root.is_dir():
        candidates += [str(p / "bin" / "python3") for p in sorted(root.iterdir(), reverse=True)]
    newest: tuple[tuple[int, int], str] | None = None
    for candidate in filter(None, candidates):
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sys; print(*sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        version = tuple(map(int, probe.stdout.split()))
        if (
            len(version) == 2
            and version > sys.version_info[:2]
            and (newest is None or version > newest[0])
        ):
            newest = ((version[0], version[1]), candidate)
    return None if newest is None else newest[1]


def test_every_attack_is_refused_on_the_newest_python(tmp_path: Path) -> None:
    python = _newest_python()
    if python is None:
        pytest.skip(
            f"no Python newer than {sys.version_info[0]}.{sys.version_info[1]} is installed"
        )
    script = Path(malicious_bundles.__file__)
    run = subprocess.run(
        [python, "-I", str(script), _safe_tar.__file__, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    _check(json.loads(run.stdout))


def test_a_bundle_of_files_and_folders_unpacks(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.tar"
    top = malicious_bundles.TOP
    with tarfile.open(archive, "w") as tar:
        folder = tarfile.TarInfo(f"{top}/data")
        folder.type = tarfile.DIRTYPE
        tar.addfile(folder)
        for name, data in ((f"{top}/manifest.json", b"{}"), (f"{top}/data/x.key", b"\x00\x01")):
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o4777  # a setuid, world-writable mode is not kept
            tar.addfile(info, io.BytesIO(data))
    root = _safe_tar.extract(archive, tmp_path / "out", top)
    assert root == tmp_path / "out" / top
    assert (root / "data/x.key").read_bytes() == b"\x00\x01"
    assert (root / "manifest.json").stat().st_mode & 0o7777 == 0o644
    with pytest.raises(FileExistsError):
        _safe_tar.extract(archive, tmp_path / "out", top)  # only into a new folder


def test_a_bundle_past_the_size_limit_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_safe_tar, "MAX_BYTES", 10)
    archive = tmp_path / "bundle.tar"
    with tarfile.open(archive, "w") as tar:
        info = tarfile.TarInfo(f"{malicious_bundles.TOP}/big")
        info.size = 11
        tar.addfile(info, io.BytesIO(b"x" * 11))
    with pytest.raises(_safe_tar.UnsafeMemberError, match="big' passes 10 bytes"):
        _safe_tar.extract(archive, tmp_path / "out", malicious_bundles.TOP)
    assert not (tmp_path / "out").exists()
