"""Builders that keep the table-driven cases short, and the wheel builder of the tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from ticdc_conformance.reference import ClaimCheckObject, Message

ROOT = Path(__file__).resolve().parents[1]
_NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".tox",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    "node_modules",  # the JavaScript example's dependencies (examples/runners/js)
)


def build_wheel(folder: Path) -> Path:
    """The wheel of the working tree, built from a copy of it in ``folder``.

    A copy, because setuptools reuses a ``build/`` folder in the tree it builds: a module
    since deleted from the source could still be shipped.
    """
    source = folder / "source"
    shutil.copytree(ROOT, source, ignore=_NOT_SOURCE)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(folder),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = folder.glob("*.whl")
    return wheel


def frame(
    keys: list[bytes], values: list[bytes], claim_checks: tuple[ClaimCheckObject, ...] = ()
) -> Message:
    """An Open Protocol message from key JSON and value entries (§2.1 framing)."""
    key = (1).to_bytes(8, "big") + b"".join(len(k).to_bytes(8, "big") + k for k in keys)
    value = b"".join(len(v).to_bytes(8, "big") + v for v in values)
    return Message(key=key, value=value, claim_checks=claim_checks)
