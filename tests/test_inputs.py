"""``--input`` in its three forms (suites/inputs.py): a dump folder, a Parquet file, a stream
fixture id, each with its labels and claim-check files; and ``check-stream`` given a shipped
claim-check fixture by file or by id finds its settings and stored files by itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.claim_check import CLAIM_CHECK_FOLDER
from ticdc_conformance.generators.dump import LABELS_FILE
from ticdc_conformance.reference.errors import UsageError
from ticdc_conformance.suites.inputs import claim_check_folder, resolve_input

ROOT = fixtures.default_root()
STREAMS = {s["id"]: s for s in fixtures.load_manifest()["streams"]}
SWAPPED = "stream.canal-json.tiflow.swapped-claim-check"
CLEAN = "stream.open.tiflow.clean"


def _fixture_labels(stream_id: str) -> dict[str, object]:
    labels: dict[str, object] = json.loads((ROOT / STREAMS[stream_id]["labels"]).read_text())
    return labels


def _dump_folder(tmp_path: Path, stream_id: str) -> Path:
    """A dump folder made of a fixture: its records, ``_labels.json``, ``_claim_check/``."""
    stream = STREAMS[stream_id]
    folder = tmp_path / "dump"
    folder.mkdir()
    shutil.copy(ROOT / stream["records"], folder / "part-0.parquet")
    shutil.copy(ROOT / stream["labels"], folder / LABELS_FILE)
    if stream["claim_check"] is not None:
        shutil.copytree(ROOT / stream["claim_check"], folder / CLAIM_CHECK_FOLDER)
    return folder


@pytest.mark.parametrize("stream_id", [SWAPPED, CLEAN])
@pytest.mark.parametrize("form", ["id", "file", "folder", "file-in-folder"])
def test_every_form_gives_the_records_labels_and_stored_files(
    tmp_path: Path, stream_id: str, form: str
) -> None:
    stream = STREAMS[stream_id]
    folder = _dump_folder(tmp_path, stream_id)
    records, sidecar = ROOT / stream["records"], ROOT / str(stream["claim_check"])
    given, path, stored = {
        "id": (stream_id, records, sidecar),
        "file": (str(records), records, sidecar),
        "folder": (str(folder), folder, folder / CLAIM_CHECK_FOLDER),
        "file-in-folder": (
            str(folder / "part-0.parquet"),
            folder / "part-0.parquet",
            folder / CLAIM_CHECK_FOLDER,
        ),
    }[form]
    resolved, labels = resolve_input(given)
    assert resolved == path
    assert labels == _fixture_labels(stream_id)
    assert claim_check_folder(resolved) == (None if stream["claim_check"] is None else stored)


@pytest.mark.parametrize("given", ["stream.open.tiflow.no-such-stream", "no/such/dump"])
def test_an_unknown_input_is_a_usage_error(given: str) -> None:
    with pytest.raises(UsageError, match="--input"):
        resolve_input(given)


def test_a_parquet_file_without_labels_has_none(tmp_path: Path) -> None:
    bare = tmp_path / "records.parquet"
    shutil.copy(ROOT / STREAMS[CLEAN]["records"], bare)
    assert resolve_input(str(bare)) == (bare, {})
    assert claim_check_folder(bare) is None


@pytest.mark.parametrize("form", ["id", "file"])
def test_check_stream_reads_a_claim_check_fixture_alone(
    tmp_path: Path, form: str, capsys: pytest.CaptureFixture[str]
) -> None:
    given = SWAPPED if form == "id" else str(ROOT / STREAMS[SWAPPED]["records"])
    report = tmp_path / "report.json"
    code = main(["check-stream", "--input", given, "--engine", "plain", "--report", str(report)])
    assert code == 1, capsys.readouterr()
    counts = {r["id"]: r["count"] for r in json.loads(report.read_text())["rules"]}
    labelled = _fixture_labels(SWAPPED)["faults"]
    assert isinstance(labelled, list)
    expected = {f["rule"] for fault in labelled for f in fault["findings"]}
    assert {rule for rule, count in counts.items() if count} == expected == {"claim-check"}
    assert counts["claim-check"] == sum(len(fault["findings"]) for fault in labelled)
    assert "claim-check" in capsys.readouterr().out
