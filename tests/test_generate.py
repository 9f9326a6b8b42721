"""``generate`` streams a clean log to its files and writes the same bytes as ever."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import pytest

from ticdc_conformance.generators import dump
from ticdc_conformance.generators.dump import write_dump
from ticdc_conformance.generators.generate import generate
from ticdc_conformance.generators.simulator import (
    StreamSettings,
    WorkloadItem,
    simulate,
    stream_records,
)
from ticdc_conformance.generators.workload import SHOP_TABLES, shop_workload
from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.routing import RoutingRule

# (settings, seed, faults) and the sha256 of the dump's files as generate wrote them before it
# streamed: 1,500 messages, a DDL every 40 transactions. A change here is a change of format.
PINNED = [
    (
        "open-clean",
        StreamSettings(protocol="open"),
        1,
        (),
        "0be06ed6e57ecac570a5e6093d48894001981d98760ef7d3b42ba38857927703",
    ),
    (
        "open-faults",
        StreamSettings(protocol="open", partitions=6),
        2,
        ("replay", "wrong-partition", "missing-ddl", "reordered-versions"),
        "a458dbd7730638a7765cd63979a99a79cf9933b8360815a095e4a43e0763b38b",
    ),
    (
        "craft-faults",
        StreamSettings(protocol="craft", options=(("max-message-bytes", "4096"),)),
        3,
        ("oversized-batch", "oversized-message", "corrupted-message", "row-below-watermark"),
        "678017209372b3b55d879a3b97a8554547063c95712b46ba4bfcdf89f76fd5b3",
    ),
    (
        "simple-faults",
        StreamSettings(
            protocol="simple-json", partitions=4, dispatcher=DispatchRule(partition="index-value")
        ),
        4,
        ("missing-schema", "invalid-value", "watermark-regression", "missing-watermark"),
        "16ec3a9f2fdbc05eeaecaee4b4f01eccb4f58b39f80892dd7ba4d309981786ae",
    ),
]


def digest(folder: Path) -> str:
    """sha256 over every file of a dump folder and its subfolders, paths and bytes, in order."""
    hashed = hashlib.sha256()
    for file in sorted(f for f in folder.rglob("*") if f.is_file()):
        hashed.update(file.relative_to(folder).as_posix().encode())
        hashed.update(file.read_bytes())
    return hashed.hexdigest()


@pytest.mark.parametrize(
    ("settings", "seed", "faults", "expected"), [c[1:] for c in PINNED], ids=[c[0] for c in PINNED]
)
def test_generate_writes_the_pinned_bytes(
    tmp_path: Path, settings: StreamSettings, seed: int, faults: tuple[str, ...], expected: str
) -> None:
    out = tmp_path / "dump"
    generate(settings, messages=1500, seed=seed, faults=faults, folder=out, ddl_every=40)
    assert digest(out) == expected


@pytest.mark.parametrize(("row_group", "spill"), [(7, 3), (64, 5), (64, 64), (1000, 4096)])
def test_streamed_records_write_the_bytes_of_the_whole_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, row_group: int, spill: int
) -> None:
    # small row groups and spills, so that partitions interleave across many of them
    monkeypatch.setattr(dump, "_BATCH", row_group)
    monkeypatch.setattr(dump, "_SPILL", spill)
    settings = StreamSettings(protocol="open", partitions=3)
    log = simulate(shop_workload(5, ddl_every=40), settings, messages=600, tables=SHOP_TABLES)
    streamed = list(
        stream_records(shop_workload(5, ddl_every=40), settings, messages=600, tables=SHOP_TABLES)
    )
    assert sorted(streamed, key=lambda r: (r.partition, r.offset)) == list(log.records())
    assert [r.partition for r in streamed] != sorted(r.partition for r in streamed)
    # the whole log, partition by partition, as generate wrote it before it streamed
    write_dump(log.records(), tmp_path / "whole")
    write_dump(iter(streamed), tmp_path / "streamed", full_row_groups=True)
    assert digest(tmp_path / "streamed") == digest(tmp_path / "whole")
    assert not [f for f in (tmp_path / "streamed").iterdir() if f.name.startswith(".")]


def test_streamed_records_of_several_topics_are_the_whole_logs() -> None:
    rule = RoutingRule(
        matcher=("shop.orders",), topic="orders", partition=DispatchRule(partition="ts")
    )
    settings = StreamSettings(protocol="open", partitions=2, routes=(rule,))
    log = simulate(shop_workload(5, ddl_every=40), settings, messages=600, tables=SHOP_TABLES)
    streamed = stream_records(
        shop_workload(5, ddl_every=40), settings, messages=600, tables=SHOP_TABLES
    )
    records = sorted(streamed, key=lambda r: (r.topic, r.partition, r.offset))
    assert records == list(log.records())
    assert {r.topic for r in records} == {"orders", "ticdc-conformance"}


def test_stream_records_holds_no_log() -> None:
    pulled = 0

    def workload() -> Iterator[WorkloadItem]:
        nonlocal pulled
        for item in islice(shop_workload(6), 3000):
            pulled += 1
            yield item

    records = stream_records(workload(), StreamSettings(protocol="open"))
    first = [next(records) for _ in range(50)]
    assert pulled < 100  # a log held whole would have taken all 3000 items first
    assert [r.offset for r in first if r.partition == 0][:3] == [0, 1, 2]
    assert sum(1 for _ in records) + 50 == len(
        simulate(islice(shop_workload(6), 3000), StreamSettings(protocol="open"))
    )


def test_large_blobs_write_one_dump_per_seed_and_the_labels_say_so(tmp_path: Path) -> None:
    """``large_blobs`` is deterministic, and without it the same settings store nothing."""
    settings = StreamSettings(
        protocol="simple-avro",
        options=(
            ("max-message-bytes", "4096"),
            ("large-message-handle-option", "claim-check"),
            ("claim-check-storage-uri", "file:///var/claim-check/"),
        ),
    )
    for name, large in (("large", True), ("again", True), ("plain", False)):
        generate(
            settings,
            messages=200,
            seed=7,
            faults=(),
            folder=tmp_path / name,
            ddl_every=40,
            large_blobs=large,
        )
    assert digest(tmp_path / "large") == digest(tmp_path / "again")
    assert (tmp_path / "large" / "_claim_check").is_dir()
    assert not (tmp_path / "plain" / "_claim_check").exists()
    workloads = [dump.read_labels(tmp_path / n)["workload"] for n in ("large", "plain")]
    assert workloads[0].pop("large_blobs") is True
    assert "large_blobs" not in workloads[1]
    assert workloads[0] == workloads[1]
