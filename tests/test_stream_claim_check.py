"""check-stream's ``claim-check`` rule over generated dumps with claim-check references, plain
and on Spark: clean dumps give no finding, each claim-check fault is found exactly where its
labels say, and the storage comes from the dump's ``_claim_check`` folder or the option.
Simple's dumps run the workload with large BLOBs (its BOOTSTRAPs outgrow the other rows)."""

from __future__ import annotations

import argparse
import functools
import shutil
from pathlib import Path
from typing import Any

import pytest
from stream_helpers import dump_with, labelled

from ticdc_conformance.generators.claim_check import dump_storage
from ticdc_conformance.generators.dump import CLAIM_CHECK_FOLDER, read_dump, read_labels
from ticdc_conformance.generators.faults import FAULT_KINDS, inapplicable
from ticdc_conformance.generators.simulator import StreamSettings, simulate
from ticdc_conformance.generators.truth import expected_tables, observed_tables, shop_truth
from ticdc_conformance.generators.workload import LARGE_BLOB, SHOP_TABLES, shop_workload
from ticdc_conformance.reference import (
    CODECS,
    ColumnInfo,
    DecodedRow,
    Message,
    RowChangedEvent,
    TableInfo,
)
from ticdc_conformance.reference.claim_check import ClaimCheck
from ticdc_conformance.reference.consumer import Coordinates, apply_log, consume
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.errors import EncodeError, UsageError
from ticdc_conformance.suites.stream.job import settings_from
from ticdc_conformance.suites.stream.plain import Outcome, check_records
from ticdc_conformance.suites.stream.rules import RULES, CheckSettings

KINDS = ("missing-claim-check", "swapped-claim-check")
STORAGE = (
    ("large-message-handle-option", "claim-check"),
    ("claim-check-storage-uri", "file:///var/claim-check/"),
)
SIMPLE_LIMIT = ("max-message-bytes", "4096")
"""Over Simple's BOOTSTRAP and DDL messages (at most 2.5 KiB in JSON) and its rows but those
with a large BLOB (``generate(large_blobs=True)``), which are longer than the BLOB's 4 KiB."""
SETTINGS = {
    # the limits put the shop workload's larger rows over max-message-bytes, and every
    # reference, DDL and watermark under it
    "open": StreamSettings(protocol="open", options=(("max-message-bytes", "600"), *STORAGE)),
    "canal-json": StreamSettings(
        protocol="canal-json",
        options=(
            ("max-message-bytes", "700"),
            ("enable-tidb-extension", "true"),
            ("claim-check-raw-value", "true"),
            *STORAGE,
        ),
    ),
    "simple-json": StreamSettings(protocol="simple-json", options=(SIMPLE_LIMIT, *STORAGE)),
    "simple-avro": StreamSettings(
        protocol="simple-avro",
        options=(SIMPLE_LIMIT, ("claim-check-raw-value", "true"), *STORAGE),
    ),
}
SIMPLE = ("simple-json", "simple-avro")


@functools.cache
def dump(protocol: str, faults: tuple[str, ...] = ()) -> Path:
    if protocol in SIMPLE:
        return dump_with(SETTINGS[protocol], messages=300, faults=faults, large_blobs=True)
    return dump_with(SETTINGS[protocol], messages=1200, faults=faults)


def raw_value(protocol: str) -> bool:
    """Whether the claim-check files of ``protocol``'s dump hold the value bytes alone."""
    return dict(SETTINGS[protocol].options).get("claim-check-raw-value") == "true"


def check(folder: Path, **overrides: object) -> Outcome:
    labels = read_labels(folder)["settings"]
    storage = str(folder / CLAIM_CHECK_FOLDER)
    settings = CheckSettings.from_labels(labels, **{"claim_check_storage": storage, **overrides})
    records = ((r.topic, r.partition, r.offset, r.key, r.value) for r in read_dump(folder))
    return check_records(records, settings)


def found(outcome: Outcome) -> list[tuple[str, int, int | None, int | None]]:
    return sorted((f.rule, f.partition, f.offset, f.commit_ts) for f in outcome.findings)


def references(folder: Path) -> int:
    """Messages of the dump carrying a claim-check reference."""
    count = 0
    protocol = read_labels(folder)["settings"]["protocol"]
    decoders: dict[int, PartitionDecoder] = {}  # Simple's rows need their partition's schemas
    for record in sorted(read_dump(folder), key=lambda r: (r.partition, r.offset)):
        decoder = decoders.setdefault(record.partition, PartitionDecoder(protocol))
        events = decoder.decode(Message(key=record.key, value=record.value))
        count += any(isinstance(e, DecodedRow) and e.claim_check_location for e in events)
    return count


def test_the_rule_and_its_faults_are_catalogued() -> None:
    assert RULES["claim-check"].severity == "error"
    assert {FAULT_KINDS[kind] for kind in KINDS} == {"claim-check"}
    plain = StreamSettings(protocol="open")
    assert all("claim-check" in (inapplicable(kind, plain) or "") for kind in KINDS)
    assert all(inapplicable(kind, SETTINGS["open"]) is None for kind in KINDS)


@pytest.mark.parametrize("protocol", sorted(SETTINGS))
def test_a_clean_claim_check_dump_has_no_finding(protocol: str) -> None:
    folder = dump(protocol)
    labels = read_labels(folder)
    files = sorted((folder / CLAIM_CHECK_FOLDER).iterdir())
    assert labels["claim_check"] == {"folder": CLAIM_CHECK_FOLDER, "files": len(files)}
    assert references(folder) > 10
    outcome = check(folder)
    assert outcome.findings == ()
    assert outcome.read == outcome.decoded > 0


@pytest.mark.parametrize("protocol", sorted(SETTINGS))
def test_every_reference_resolves_to_its_full_row(protocol: str) -> None:
    folder = dump(protocol)
    raw = raw_value(protocol)
    resolved = 0
    partitions: dict[int, tuple[PartitionDecoder, PartitionDecoder]] = {}
    for record in read_dump(folder):
        plain, full = partitions.setdefault(
            record.partition,
            (
                PartitionDecoder(protocol),
                PartitionDecoder(
                    protocol, claim_check=ClaimCheck(storage=dump_storage(folder), raw_value=raw)
                ),
            ),
        )
        message = Message(key=record.key, value=record.value)
        pairs = zip(plain.decode(message), full.decode(message), strict=True)
        for reference, row in pairs:
            if isinstance(reference, DecodedRow) and reference.claim_check_location:
                assert isinstance(row, DecodedRow)
                assert row.claim_check_location is None
                assert not row.handle_key_only
                assert (row.table, row.op, row.commit_ts) == (
                    reference.table,
                    reference.op,
                    reference.commit_ts,
                )
                assert len(row.after or row.before or ()) > len(
                    reference.after or reference.before or ()
                )
                resolved += 1
    assert resolved >= references(folder)


@pytest.mark.parametrize("protocol", sorted(SETTINGS))
@pytest.mark.parametrize("kind", KINDS)
def test_each_fault_is_found_exactly_where_labelled(protocol: str, kind: str) -> None:
    folder = dump(protocol, (kind,))
    expected = labelled(read_labels(folder))
    assert [rule for rule, *_ in expected] == ["claim-check"]
    assert found(check(folder)) == expected


def test_both_faults_together_and_nothing_else() -> None:
    folder = dump("open", KINDS)
    expected = labelled(read_labels(folder))
    assert len(expected) == 2
    assert found(check(folder)) == expected


def test_without_storage_every_reference_is_a_finding() -> None:
    folder = dump("open")
    outcome = check_records(
        ((r.topic, r.partition, r.offset, r.key, r.value) for r in read_dump(folder)),
        CheckSettings.from_labels(read_labels(folder)["settings"]),
    )
    assert {f.rule for f in outcome.findings} == {"claim-check"}
    assert len(outcome.findings) == references(folder)
    assert all("no claim-check storage" in f.detail for f in outcome.findings)


def _args(folder: Path, storage: str | None = None) -> argparse.Namespace:
    return argparse.Namespace(
        option=[],
        input=[str(folder)],
        dispatcher=None,
        index_name=None,
        columns=None,
        protocol="open",
        profile=None,
        partitions=None,
        claim_check_storage=storage,
    )


def test_check_stream_finds_the_storage_by_layout_or_option(tmp_path: Path) -> None:
    folder = dump("open")
    own = settings_from(_args(folder)).claim_check_storage
    assert own == str((folder / CLAIM_CHECK_FOLDER).resolve())
    elsewhere = tmp_path / "claim-check"
    shutil.copytree(folder / CLAIM_CHECK_FOLDER, elsewhere)
    given = settings_from(_args(folder, elsewhere.as_uri())).claim_check_storage
    assert given == str(elsewhere)
    assert check(folder, claim_check_storage=given).findings == ()
    for remote in ("s3://bucket/claim-check", "gcs://bucket/x", "azblob://container/x"):
        with pytest.raises(UsageError, match="does not read"):
            settings_from(_args(folder, remote))
    bare = tmp_path / "bare"
    bare.mkdir()
    for part in folder.glob("*.parquet"):
        shutil.copy(part, bare)
    assert settings_from(_args(bare)).claim_check_storage is None


@pytest.mark.spark
def test_spark_finds_the_faults_where_labelled_and_nothing_in_a_clean_dump(spark: Any) -> None:
    from ticdc_conformance.suites.stream.spark import check_dump

    for faults in ((), KINDS):
        folder = dump("open", faults)
        labels = read_labels(folder)
        settings = CheckSettings.from_labels(
            labels["settings"], claim_check_storage=str(folder / CLAIM_CHECK_FOLDER)
        )
        for shuffle in (False, True):
            result = check_dump(spark, [str(folder)], settings, samples=100, shuffle=shuffle)
            assert {rule: n for rule, n in result.counts.items() if n} == (
                {"claim-check": 2} if faults else {}
            )
            samples = sorted(
                ("claim-check", s["partition"], s["offset"], s["commit_ts"])
                for s in result.samples.get("claim-check", [])
            )
            assert samples == labelled(labels)


@pytest.mark.parametrize("protocol", ["simple-json", "simple-avro"])
def test_simple_references_resolve_with_the_partition_schemas(
    protocol: str, tmp_path: Path
) -> None:
    """Simple's stored rows are typed by the schemas the partition has seen (§6.6)."""
    codec: Any = CODECS[protocol]
    table = TableInfo(
        schema="test",
        name="t",
        columns=(
            ColumnInfo(name="id", type="int", key="primary", length=11),
            ColumnInfo(name="v", type="varchar", length=4096),
        ),
        table_id=20,
        schema_version=1,
    )
    rows = [
        RowChangedEvent(commit_ts=(10 + k) << 18, table=table, op="insert", after=(k, "x" * n))
        for k, n in enumerate((10, 2000, 20, 3000))
    ]
    options = {
        "max-message-bytes": "1500",
        "large-message-handle-option": "claim-check",
        "claim-check-storage-uri": "s3://bucket/claim-check",
        "claim-check-raw-value": "true",
    }
    config = codec.config_from_options(options)
    messages = [codec.encode_bootstrap(table, config), *codec.encode(rows, config)]
    stored = [s for m in messages for s in m.claim_checks]  # in message order
    files = {s.location.rpartition("/")[2]: s.content for s in stored}
    assert len(files) == 2
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    records = [(protocol, 0, i, m.key, m.value) for i, m in enumerate(messages)]
    settings = CheckSettings(
        protocol=protocol,
        partitions=1,
        options=tuple(sorted(options.items())),
        claim_check_storage=tmp_path.as_uri(),
    )
    assert check_records(records, settings).findings == ()
    first, second = files
    (tmp_path / first).write_bytes(files[second])  # the first reference now names the second row
    (finding,) = check_records(records, settings).findings
    assert (finding.rule, finding.offset, finding.commit_ts) == ("claim-check", 2, 11 << 18)
    assert "stored commit ts" in finding.detail


@pytest.mark.parametrize("protocol", SIMPLE)
def test_without_large_blobs_simple_refuses_a_bootstrap_before_it_stores_a_row(
    protocol: str,
) -> None:
    """TiCDC fails on a BOOTSTRAP or DDL over ``max-message-bytes`` (tiflow
    ``pkg/sink/codec/simple/encoder.go``), and the workload's rows are smaller than its
    largest BOOTSTRAP or DDL: any limit that would store a row stops the changefeed too."""
    plain = simulate(
        shop_workload(1, ddl_every=40),
        StreamSettings(protocol=protocol),
        messages=300,
        tables=SHOP_TABLES,
    )
    sizes: dict[str, int] = {}
    for delivery in (d for deliveries in plain.partitions for d in deliveries):
        size = len(delivery.message.value or b"")
        sizes[delivery.kind] = max(sizes.get(delivery.kind, 0), size)
    assert sizes["rows"] < max(sizes["bootstrap"], sizes["ddl"]) < int(SIMPLE_LIMIT[1])
    limit = ("max-message-bytes", str(sizes["rows"] - 1))  # stores the largest row
    settings = StreamSettings(protocol=protocol, options=(limit, *STORAGE))
    with pytest.raises(EncodeError, match="max-message-bytes"):
        simulate(shop_workload(1, ddl_every=40), settings, messages=300, tables=SHOP_TABLES)


@pytest.mark.parametrize("protocol", SIMPLE)
def test_the_simple_consumer_with_the_storage_ends_with_the_workload_truth(
    protocol: str,
) -> None:
    folder = dump(protocol)
    records = sorted(read_dump(folder), key=lambda r: (r.partition, r.offset))
    messages = [
        (Coordinates(r.topic, r.partition, r.offset), Message(key=r.key, value=r.value))
        for r in records
    ]
    storage = ClaimCheck(storage=dump_storage(folder), raw_value=raw_value(protocol))
    consumed = consume(protocol, messages, claim_check=storage)
    assert consumed.not_applied == ()
    workload = read_labels(folder)["workload"]
    upstream = shop_truth(workload)
    avatars = [image[-1] for image in upstream.tables["shop", "customers"].values()]
    assert any(isinstance(a, bytes) and len(a) >= LARGE_BLOB[0] for a in avatars)
    # a dump cut at its record count may end above its last watermark: flushed, those rows
    # complete the truth
    flushed = apply_log((*consumed.log, *consumed.pending))
    applied = observed_tables({k: v for k, v in flushed.items() if v}, upstream.infos)
    assert applied == expected_tables(upstream, protocol, "tiflow")
    # the labels' large_blobs is the workload's: without it the truth is another
    assert expected_tables(shop_truth({**workload, "large_blobs": False}), protocol, "tiflow") != (
        applied
    )


@pytest.mark.spark
@pytest.mark.parametrize("protocol", SIMPLE)
def test_spark_finds_simple_claim_check_faults_where_labelled_and_nothing_else(
    spark: Any, protocol: str
) -> None:
    from ticdc_conformance.suites.stream.spark import check_dump

    folder = dump(protocol, KINDS)
    labels = read_labels(folder)
    settings = CheckSettings.from_labels(
        labels["settings"], claim_check_storage=str(folder / CLAIM_CHECK_FOLDER)
    )
    result = check_dump(spark, [str(folder)], settings, samples=100, shuffle=False)
    assert {rule: n for rule, n in result.counts.items() if n} == {"claim-check": 2}
    samples = sorted(
        ("claim-check", s["partition"], s["offset"], s["commit_ts"])
        for s in result.samples["claim-check"]
    )
    assert samples == labelled(labels) == found(check(folder))
