"""The stream checker reads compressed dumps: the label sidecar's options say how."""

from __future__ import annotations

import argparse

import pytest
from stream_helpers import dump

from ticdc_conformance.generators.dump import read_dump, read_labels
from ticdc_conformance.reference.errors import UsageError
from ticdc_conformance.suites.stream.job import settings_from
from ticdc_conformance.suites.stream.plain import Outcome, check_records
from ticdc_conformance.suites.stream.rules import CheckSettings

COMPRESSED = (
    ("open", "lz4"),
    ("simple-json", "snappy"),
    ("debezium", "lz4"),
)


def _check(protocol: str, compression: str, **overrides: object) -> Outcome:
    folder = dump(
        protocol, messages=200, options=(("large-message-handle-compression", compression),)
    )
    settings = CheckSettings.from_labels(read_labels(folder)["settings"], **overrides)
    records = ((r.topic, r.partition, r.offset, r.key, r.value) for r in read_dump(folder))
    return check_records(records, settings)


@pytest.mark.parametrize(("protocol", "compression"), COMPRESSED)
def test_a_compressed_dump_checks_clean(protocol: str, compression: str) -> None:
    folder = dump(
        protocol, messages=200, options=(("large-message-handle-compression", compression),)
    )
    assert read_labels(folder)["settings"]["options"] == {
        "large-message-handle-compression": compression
    }
    outcome = _check(protocol, compression)
    assert outcome.findings == ()
    assert outcome.read == outcome.decoded > 0


@pytest.mark.parametrize(("protocol", "compression"), COMPRESSED)
def test_without_the_option_nothing_decodes(protocol: str, compression: str) -> None:
    outcome = _check(protocol, compression, options=(("max-message-bytes", "10485760"),))
    assert outcome.undecodable > 0
    assert "undecodable" in {f.rule for f in outcome.findings}
    if protocol != "open":  # Open's resolved events have no value to compress
        assert outcome.undecodable == outcome.read


def test_check_stream_refuses_an_unknown_compression() -> None:
    folder = dump("open", messages=200, options=(("large-message-handle-compression", "lz4"),))
    args = argparse.Namespace(
        option=["large-message-handle-compression=zstd"],
        input=[str(folder)],
        dispatcher=None,
        index_name=None,
        columns=None,
        protocol=None,
        profile=None,
        partitions=None,
    )
    with pytest.raises(UsageError, match="must be none, snappy or lz4"):
        settings_from(args)
    args.option = []
    assert settings_from(args).compression == "lz4"  # from the labels
