"""What a command's ``--input`` names: a dump folder, a dump's Parquet file, a stream fixture.

The commands that read a topic dump (``check-stream``, ``expected-state``, ``check-consumer``)
accept three forms (docs/dump-format.md):

* a dump folder: its labels are ``_labels.json`` in it, its claim-check files ``_claim_check/``;
* a Parquet file: a stream fixture's ``<name>.parquet`` has its labels in ``<name>.labels.json``
  and its claim-check files in ``<name>.claim-check/`` beside it; a file of a dump folder falls
  back to the folder's ``_labels.json`` and ``_claim_check/``;
* a stream fixture id (``stream.<protocol>.<profile>.<name>``, ``fixtures list``): the shipped
  fixture's records file, read as above.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ticdc_conformance.generators.claim_check import CLAIM_CHECK_FOLDER, CLAIM_CHECK_SIDECAR
from ticdc_conformance.generators.dump import read_labels
from ticdc_conformance.reference.errors import UsageError

__all__ = ["claim_check_folder", "fixture_records", "input_labels", "resolve_input"]

_PARQUET = ".parquet"
_LABELS_SIDECAR = ".labels.json"


def fixture_records(given: str) -> Path:
    """The records file of the stream fixture ``given`` names (``stream.…``)."""
    from ticdc_conformance import fixtures

    for stream in fixtures.load_manifest()["streams"]:
        if stream["id"] == given:
            return fixtures.default_root() / str(stream["records"])
    raise UsageError(f"--input {given}: no such stream fixture (`fixtures list`)")


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name.removesuffix(_PARQUET) + suffix)


def input_labels(path: Path) -> dict[str, Any]:
    """The labels of a dump folder or Parquet file (``{}`` when none is there)."""
    if path.is_dir():
        return read_labels(path)
    sidecar = _sidecar(path, _LABELS_SIDECAR)
    if sidecar.is_file():
        labels: dict[str, Any] = json.loads(sidecar.read_text(encoding="utf-8"))
        return labels
    return read_labels(path.parent)


def resolve_input(given: str) -> tuple[Path, dict[str, Any]]:
    """A dump (folder or Parquet file) or a stream fixture id: its path and its labels."""
    path = fixture_records(given) if given.startswith("stream.") else Path(given)
    if not path.exists():
        raise UsageError(f"--input {given}: no dump, expected state or stream fixture there")
    return path, input_labels(path)


def claim_check_folder(path: Path) -> Path | None:
    """The claim-check files of a dump folder or Parquet file (``None`` when there are none)."""
    found = (
        (path / CLAIM_CHECK_FOLDER,)
        if path.is_dir()
        else (_sidecar(path, CLAIM_CHECK_SIDECAR), path.parent / CLAIM_CHECK_FOLDER)
    )
    return next((folder for folder in found if folder.is_dir()), None)
