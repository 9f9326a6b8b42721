"""Stream fixtures: one clean and one labelled dump per fault kind, compared by records."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import shutil
import tarfile
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from stream_helpers import comparable, labelled
from truth_helpers import KEYS, dump_rows

from ticdc_conformance import fixtures
from ticdc_conformance.fixtures import bundles
from ticdc_conformance.fixtures.builder._streams import same_records
from ticdc_conformance.generators.claim_check import file_storage
from ticdc_conformance.generators.dump import CLAIM_CHECK_FOLDER, read_dump
from ticdc_conformance.generators.faults import FAULT_KINDS
from ticdc_conformance.generators.truth import expected_tables, observed_tables, shop_truth
from ticdc_conformance.reference import (
    CODECS,
    DecodedBootstrap,
    DecodedColumn,
    DecodedRow,
    Message,
)
from ticdc_conformance.reference.claim_check import ClaimCheck
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.fold import fold_rows, handle_key_of
from ticdc_conformance.suites.consumer.expected import expected_state_document
from ticdc_conformance.suites.consumer.job import consume_dump
from ticdc_conformance.suites.stream.plain import check_records
from ticdc_conformance.suites.stream.routing import SourceNames
from ticdc_conformance.suites.stream.rules import CheckSettings

ROOT = fixtures.default_root()
STREAMS = fixtures.load_manifest()["streams"]


FAMILIES = {
    ("open", "tiflow"),
    ("open", "ticdc"),
    ("craft", "tiflow"),
    ("simple-json", "tiflow"),
    ("simple-avro", "tiflow"),
    ("debezium", "tiflow"),
    ("canal-json", "tiflow"),
    ("canal-json", "ticdc"),
}
"""Every protocol in profile tiflow, and Open Protocol and Canal-JSON in ticdc (their bytes
differ)."""


CLAIM_CHECK_FAMILIES = {
    ("open", "tiflow"),
    ("canal-json", "tiflow"),
    ("simple-json", "tiflow"),
    ("simple-avro", "tiflow"),
}
"""The families written with large-message-handle-option=claim-check: their larger rows are
references to stored files (Simple's: the rows with the workload's large BLOBs)."""
CLAIM_CHECK = [s for s in STREAMS if s["claim_check"] is not None]


def _applies(protocol: str, kind: str) -> bool:
    # no stream fixture: invalid values have must-reject golden cases; wrong-topic needs
    # routing rules and the claim-check kinds claim-check options (their own families)
    if kind in {"invalid-value", "wrong-topic"} or FAULT_KINDS[kind] == "claim-check":
        return False
    if kind in {"missing-schema", "late-schema", "partial-bootstrap"}:  # Simple's (§6.6)
        return protocol.startswith("simple")
    if kind == "bad-checksum":  # the Simple JSON streams carry row checksums (§4.6)
        return protocol == "simple-json"
    if kind == "oversized-batch":  # max-batch-size bounds the batching protocols only
        return protocol in {"open", "craft"}
    if kind == "missing-ddl":  # Canal-JSON writes a DDL to partition 0 alone (§6.2)
        return protocol != "canal-json"
    if kind == "oversized-message":  # needs a small max-message-bytes: not in Debezium's options
        return protocol != "debezium"
    return True


def test_one_clean_stream_and_one_per_fault_kind() -> None:
    ids = [s["id"] for s in STREAMS]
    expected = {
        f"stream.{protocol}.{profile}.{kind or 'clean'}"
        for protocol, profile in FAMILIES
        for kind in (None, *FAULT_KINDS)
        if kind is None or _applies(protocol, kind)
    }
    # TiCDC's default Debezium output (no WATERMARK): a clean stream only
    expected.add("stream.debezium.tiflow.clean-without-watermarks")
    # TiCDC's default Canal-JSON output (no commit ts, no watermark): a clean stream only
    expected.add("stream.canal-json.tiflow.clean-without-tidb-extension")
    # key-changing UPDATEs sent whole: a clean stream per family
    expected |= {
        f"stream.{protocol}.{profile}.clean-raw-change-event" for protocol, profile in FAMILIES
    }
    # Simple's BOOTSTRAP options
    expected |= {
        "stream.simple-json.tiflow.clean-bootstrap-options",
        "stream.simple-avro.ticdc.clean-bootstrap-options",
    }
    # Simple Avro with row checksums: its clean stream and bad-checksum
    expected |= {
        "stream.simple-avro.tiflow.clean-row-checksum",
        "stream.simple-avro.tiflow.bad-checksum",
    }
    # the other dispatchers: a clean stream and the kinds whose placement follows them
    routed = (
        "wrong-partition",
        "reordered-versions",
        "insert-before-delete",
        "row-below-watermark",
        "row-after-ddl",
    )
    dispatched = {
        ("tiflow", "table"): ("wrong-partition",),
        ("tiflow", "rowid"): ("wrong-partition",),
        ("tiflow", "index-value"): routed,
        ("tiflow", "ts"): routed,
        ("tiflow", "columns"): routed,
        ("ticdc", "index-value"): ("wrong-partition",),
    }
    expected |= {
        f"stream.{protocol}.{profile}.{kind}-by-{dispatcher}"
        for (wanted, dispatcher), kinds in dispatched.items()
        for protocol, profile in FAMILIES
        if profile == wanted
        for kind in ("clean", *kinds)
    }
    # routed over three topics (ticdc: renamed too): a clean stream, and wrong-topic where it
    # can be placed
    expected |= {
        f"stream.{protocol}.{profile}.{kind}-routed"
        for protocol, profile in FAMILIES
        for kind in ("clean", "wrong-topic")
        if kind == "clean" or not protocol.startswith("simple")
    }
    # claim-check: a clean stream and each claim-check fault, named by its kind alone
    expected |= {
        f"stream.{protocol}.{profile}.{kind}"
        for protocol, profile in CLAIM_CHECK_FAMILIES
        for kind in ("clean-claim-check", "missing-claim-check", "swapped-claim-check")
    }
    assert set(ids) == expected
    assert len(ids) == len(expected)
    for stream in STREAMS:
        name = stream["id"].split(".")[3].split("-by-")[0].removesuffix("-routed")
        assert stream["fault"] == (None if name.startswith("clean") else name)


@pytest.mark.parametrize("stream", STREAMS, ids=[s["id"] for s in STREAMS])
def test_a_stream_names_its_dispatcher(stream: dict[str, object]) -> None:
    labels = json.loads((ROOT / str(stream["labels"])).read_text())
    _, _, dispatcher = str(stream["id"]).partition("-by-")
    settings = labels["settings"]
    if dispatcher == "columns":  # a rule per table: the last, implicit one keeps the default
        rules = settings["dispatchers"]
        assert {rule["partition"] for rule in rules} == {"columns"}
        assert all(rule["columns"] for rule in rules)
        dispatcher = ""
    assert settings["dispatcher"] == {
        "partition": dispatcher or "default",
        "index-name": None,
        "columns": [],
    }


def test_debezium_fault_streams_carry_watermarks() -> None:
    # without enable-tidb-extension Debezium writes no WATERMARK and no fault could apply (§5.5)
    for stream in STREAMS:
        if stream["protocol"] == "debezium":
            labels = json.loads((ROOT / str(stream["labels"])).read_text())
            plain = stream["id"].endswith("-without-watermarks")
            options = {} if plain else {"enable-tidb-extension": "true"}
            assert labels["settings"]["options"] == options
            records = read_dump(ROOT / str(stream["records"]))
            watermarks = [r for r in records if r.key and b".watermark.Key" in r.key]
            assert bool(watermarks) is not plain


@pytest.mark.parametrize("stream", STREAMS, ids=[s["id"] for s in STREAMS])
def test_labels_name_the_findings(stream: dict[str, object]) -> None:
    labels = json.loads((ROOT / str(stream["labels"])).read_text())
    records = list(read_dump(ROOT / str(stream["records"])))
    assert labels["settings"]["protocol"] == stream["protocol"]
    assert records
    if stream["fault"] is None:
        assert labels["faults"] == []
        return
    [fault] = labels["faults"]
    assert fault["kind"] == stream["fault"]
    assert {f["rule"] for f in fault["findings"]} == {stream["rule"]}
    offsets = {(r.partition, r.offset) for r in records}
    for finding in fault["findings"]:
        if finding["offset"] is not None:
            assert (finding["partition"], finding["offset"]) in offsets


@pytest.mark.parametrize("stream", STREAMS, ids=[s["id"] for s in STREAMS])
def test_the_checker_finds_exactly_the_labelled_findings(stream: dict[str, object]) -> None:
    labels = json.loads((ROOT / str(stream["labels"])).read_text())
    records = read_dump(ROOT / str(stream["records"]))
    settings = CheckSettings.from_labels(labels["settings"], claim_check_storage=_storage(stream))
    outcome = check_records(
        ((r.topic, r.partition, r.offset, r.key, r.value) for r in records), settings
    )
    found = sorted((f.rule, f.partition, f.offset, f.commit_ts) for f in outcome.findings)
    expected = labelled(labels)
    assert found == comparable(found, expected)
    assert bool(found) is (stream["fault"] is not None)
    assert outcome.read == outcome.decoded + outcome.undecodable > 0


def _storage(stream: dict[str, object]) -> str | None:
    """The folder of a stream's claim-check files, ``None`` for a stream without them."""
    return None if stream["claim_check"] is None else str(ROOT / str(stream["claim_check"]))


def _references(stream: dict[str, object]) -> int:
    """Messages of the stream carrying a claim-check reference."""
    protocol = str(stream["protocol"])
    decoders: dict[int, PartitionDecoder] = {}
    count = 0
    for r in read_dump(ROOT / str(stream["records"])):
        decoder = decoders.setdefault(r.partition, PartitionDecoder(protocol))
        events = decoder.decode(Message(key=r.key, value=r.value))
        count += any(isinstance(e, DecodedRow) and e.claim_check_location for e in events)
    return count


@pytest.mark.parametrize("stream", CLAIM_CHECK, ids=[s["id"] for s in CLAIM_CHECK])
def test_a_claim_check_stream_carries_its_stored_files(stream: dict[str, object]) -> None:
    folder = str(stream["claim_check"])
    assert folder == str(stream["records"]).removesuffix(".parquet") + ".claim-check"
    files = sorted((ROOT / folder).iterdir())
    # every stored file is listed with its checksum, under its location's file name
    sums = dict(stream["sha256"])  # type: ignore[call-overload]
    assert sorted(p for p in sums if p.startswith(folder + "/")) == [
        f"{folder}/{f.name}" for f in files
    ]
    labels = json.loads((ROOT / str(stream["labels"])).read_text())
    assert labels["claim_check"] == {"folder": CLAIM_CHECK_FOLDER, "files": len(files)}
    options = labels["settings"]["options"]
    assert options["large-message-handle-option"] == "claim-check"
    # without its files every reference is a finding, and nothing else
    records = read_dump(ROOT / str(stream["records"]))
    bare = check_records(
        ((r.topic, r.partition, r.offset, r.key, r.value) for r in records),
        CheckSettings.from_labels(labels["settings"]),
    )
    assert files
    assert len(bare.findings) == _references(stream) > 0
    assert {f.rule for f in bare.findings} == {"claim-check"}


def test_the_claim_check_streams_are_short_and_their_faults_found_apart() -> None:
    for protocol, profile in CLAIM_CHECK_FAMILIES:
        clean, missing, swapped = (
            next(s for s in STREAMS if s["id"] == f"stream.{protocol}.{profile}.{name}")
            for name in ("clean-claim-check", "missing-claim-check", "swapped-claim-check")
        )
        assert clean["expected"] is not None
        assert missing["expected"] is swapped["expected"] is None
        for stream in (clean, missing, swapped):
            assert sum(1 for _ in read_dump(ROOT / str(stream["records"]))) <= 100


@pytest.mark.parametrize(
    "stream",
    [s for s in CLAIM_CHECK if s["expected"] is not None],
    ids=[s["id"] for s in CLAIM_CHECK if s["expected"] is not None],
)
def test_a_clean_claim_check_streams_expected_state_reads_its_stored_files(
    stream: dict[str, str], tmp_path: Path
) -> None:
    stored = json.loads((ROOT / stream["expected"]).read_text())
    # a fixture's stored files beside its records are found, or named as storage
    for storage in (None, (ROOT / stream["claim_check"]).as_uri()):
        protocol, consumed = consume_dump(stream["id"], None, {}, storage)
        assert expected_state_document(consumed, protocol) == stored
    # elsewhere, without them: the references cannot be applied as full rows
    alone = tmp_path / "stream.parquet"
    shutil.copy(ROOT / stream["records"], alone)
    shutil.copy(ROOT / stream["labels"], tmp_path / "stream.labels.json")
    protocol, consumed = consume_dump(str(alone), None, {})
    assert expected_state_document(consumed, protocol) != stored


def test_regeneration_compares_streams_by_records(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    stream = STREAMS[0]
    path = tree / stream["records"]
    # the same records written differently (as another pyarrow version might): still the same
    table = pq.read_table(path)
    pq.write_table(table, path, compression="gzip")
    manifest = json.loads((tree / "manifest.json").read_text())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest["streams"][0]["sha256"][stream["records"]] = digest
    (tree / "manifest.json").write_text(json.dumps(manifest))
    bundles.write_pin(tree)  # the pin, like the manifest's sha256, is of the bytes
    assert fixtures.verify(tree) == []
    # different records are not the same
    other = tmp_path / "other.parquet"
    pq.write_table(table.slice(1), other)
    assert not same_records(path, other)
    assert same_records(path, ROOT / stream["records"])


def test_verification_compares_stored_files_by_bytes(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    stream = CLAIM_CHECK[0]
    folder = tree / stream["claim_check"]
    changed, gone = sorted(folder.iterdir())[:2]
    changed.write_bytes(changed.read_bytes() + b" ")
    gone.unlink()
    (folder / "stray.json").write_text("{}")
    manifest = json.loads((tree / "manifest.json").read_text())
    name = f"{stream['claim_check']}/{changed.name}"
    digest = hashlib.sha256(changed.read_bytes()).hexdigest()
    manifest["streams"][STREAMS.index(stream)]["sha256"][name] = digest  # agrees with the file
    (tree / "manifest.json").write_text(json.dumps(manifest))
    problems = fixtures.verify(tree)
    assert f"{name}: differs from a fresh regeneration" in problems
    assert any(p.startswith(f"{stream['claim_check']}/{gone.name}: missing") for p in problems)
    assert f"{stream['claim_check']}/stray.json: not listed in the manifest" in problems
    # the bundle packs the stored files: one member per file
    with tarfile.open(fileobj=io.BytesIO(bundles.bundle_bytes())) as bundle:
        names = bundle.getnames()
    members = [m for m in names if f"/{stream['claim_check']}/" in m]
    assert len(members) == len(list((ROOT / stream["claim_check"]).iterdir())) > 1


def test_stream_files_are_zstd_with_the_layout_statistics() -> None:
    # small files, many at a time: ZSTD pages, statistics only where the checker's layout
    # reads them (docs/dump-format.md)
    for stream in STREAMS:
        metadata = pq.ParquetFile(ROOT / str(stream["records"])).metadata
        for group in range(metadata.num_row_groups):
            columns = [metadata.row_group(group).column(c) for c in range(metadata.num_columns)]
            assert {c.compression for c in columns} == {"ZSTD"}
            with_statistics = {c.path_in_schema for c in columns if c.is_stats_set}
            assert {"topic", "partition", "offset"} <= with_statistics
            assert "value" not in with_statistics


FOLDABLE = [s for s in STREAMS if s["fault"] in (None, "replay") and "without" not in s["id"]]
"""Streams TiCDC may write (clean, or with a replay) whose values say what the table holds
(Debezium without the TiDB extension leaves BIGINT UNSIGNED and BLOB values ambiguous)."""


@pytest.mark.parametrize("stream", FOLDABLE, ids=[s["id"] for s in FOLDABLE])
def test_folding_a_stream_gives_the_truth_of_its_labels(stream: dict[str, object]) -> None:
    labels = json.loads((ROOT / str(stream["labels"])).read_text())
    upstream = shop_truth(labels["workload"])
    protocol, profile = str(stream["protocol"]), str(stream["profile"])
    storage = _storage(stream)
    claim_check = None
    if storage is not None:  # the references resolved to their stored rows
        raw = labels["settings"]["options"].get("claim-check-raw-value") == "true"
        claim_check = ClaimCheck(storage=file_storage(storage), raw_value=raw)
    rows = dump_rows(protocol, read_dump(ROOT / str(stream["records"])), claim_check)
    # ticdc's table routing renames: each target maps back to the one source it stands for
    sources = SourceNames(CheckSettings.from_labels(labels["settings"]).router())
    folded = fold_rows((_renamed(row, sources) for row in rows), KEYS)
    assert observed_tables(folded, upstream.infos) == expected_tables(upstream, protocol, profile)


def _renamed(row: DecodedRow, sources: SourceNames) -> DecodedRow:
    [(schema, table)] = sources.of(row.schema, row.table) or [(row.schema, row.table)]
    return dataclasses.replace(row, schema=schema, table=table)


def _changes(stream: dict[str, object]) -> Counter[str]:
    """What the stream's rows do to handle keys and emails, per kind."""
    rows = list(dump_rows(str(stream["protocol"]), read_dump(ROOT / str(stream["records"]))))
    seen: Counter[str] = Counter()
    halves: dict[tuple[object, ...], set[str]] = {}
    for row in rows:
        keys = KEYS[(row.schema, row.table)]
        for image in (row.before, row.after):
            if image is not None:
                where = (row.table, row.commit_ts, handle_key_of(image, keys))
                halves.setdefault(where, set()).add(row.op)
        if row.op == "update" and row.before and row.after:
            old, new = dict(_values(row.before)), dict(_values(row.after))
            seen["update moves the handle"] += handle_key_of(row.before, keys) != handle_key_of(
                row.after, keys
            )
            seen["update changes the email"] += old.get("email") != new.get("email")
    seen["delete and insert of one handle"] = sum(
        ops == {"delete", "insert"} for ops in halves.values()
    )
    return seen


def _values(image: tuple[DecodedColumn, ...]) -> list[tuple[str, object]]:
    return [(c.name, c.value) for c in image]


@pytest.mark.parametrize("protocol", sorted({p for p, _ in FAMILIES}))
def test_key_changing_updates_come_split_or_whole(protocol: str) -> None:
    split, whole = (
        _changes(next(s for s in STREAMS if s["id"] == f"stream.{protocol}.tiflow.{name}"))
        for name in ("clean", "clean-raw-change-event")
    )
    # split (the default): a new email or (host, at) is a DELETE and an INSERT of one handle
    assert split["delete and insert of one handle"] > 0
    assert split["update moves the handle"] == split["update changes the email"] == 0
    # output-raw-change-event=true: UPDATEs that move the handle or change the email, whole
    assert whole["update moves the handle"] > 0
    assert whole["update changes the email"] > 0
    assert whole["delete and insert of one handle"] == 0


def _bootstrap_offsets(stream_id: str) -> dict[int, list[int]]:
    """Each partition's offsets of BOOTSTRAP records (Simple JSON and Avro alike)."""
    stream = next(s for s in STREAMS if s["id"] == stream_id)
    codec = CODECS[str(stream["protocol"])]
    offsets: dict[int, list[int]] = {}
    for record in read_dump(ROOT / str(stream["records"])):
        message = Message(key=record.key, value=record.value)
        if any(isinstance(e, DecodedBootstrap) for e in codec.decode(message)):
            offsets.setdefault(record.partition, []).append(record.offset)
    return offsets


def test_simple_bootstrap_option_streams() -> None:
    """``send-bootstrap-in-msg-count=5`` resends often; ticdc's start-only BOOTSTRAPs lead."""
    plain = _bootstrap_offsets("stream.simple-json.tiflow.clean")
    every_5 = _bootstrap_offsets("stream.simple-json.tiflow.clean-bootstrap-options")
    assert sum(map(len, every_5.values())) > sum(map(len, plain.values())) + 3 * 3
    assert all(offsets[:3] == [0, 1, 2] for offsets in every_5.values())  # the start's three
    at_start = _bootstrap_offsets("stream.simple-avro.ticdc.clean-bootstrap-options")
    assert at_start == {partition: [0, 1, 2] for partition in range(3)}
