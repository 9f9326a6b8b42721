"""Small labelled topic dumps for the stream checker tests, generated once per run."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from ticdc_conformance.generators.faults import FAULT_KINDS
from ticdc_conformance.generators.generate import generate
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.routing import RoutingRule

_ROOT = Path(tempfile.mkdtemp(prefix="stream-dumps-"))
atexit.register(shutil.rmtree, _ROOT, ignore_errors=True)

CLEAN = sorted(CODECS)
"""One clean dump per protocol."""
_SIMPLE = ("missing-schema", "late-schema", "partial-bootstrap", "bad-checksum")
FAULTY = {
    kind: "simple-json" if kind in _SIMPLE else "open"
    for kind in FAULT_KINDS
    if kind not in ("oversized-message", "wrong-topic") and FAULT_KINDS[kind] != "claim-check"
}
"""One dump per fault kind, with the protocol it is injected into (``oversized-message`` needs
a small ``max-message-bytes``: the stream fixtures carry it; the claim-check kinds need
claim-check options: tests/test_stream_claim_check.py; ``wrong-topic`` routing rules:
``routed_dump``)."""
FAULT_OPTIONS = {"bad-checksum": (("integrity-check-level", "correctness"),)}
"""The encoder options a fault kind needs (``bad-checksum``: rows with checksums)."""


@functools.cache
def dump(
    protocol: str,
    fault: str | None = None,
    messages: int = 400,
    dispatcher: str = "default",
    options: tuple[tuple[str, str], ...] = (),
) -> Path:
    """A dump of the seeded shop workload, with one fault of ``fault`` when given.

    Its topic is named like its folder, so several dumps can be checked together.
    """
    tag = "-".join(f"{k}={v}" for k, v in options)
    name = f"{protocol}-{fault or 'clean'}-{messages}-{dispatcher}{tag}"
    folder = _ROOT / name
    faults = [fault] if fault else []
    settings = StreamSettings(
        protocol=protocol,
        topic=name,
        options=options or FAULT_OPTIONS.get(fault or "", ()),
        dispatcher=DispatchRule(partition=dispatcher),
    )
    generate(settings, messages=messages, seed=3, faults=faults, folder=folder)
    return folder


def dump_with(
    settings: StreamSettings,
    messages: int,
    faults: tuple[str, ...] = (),
    *,
    large_blobs: bool = False,
) -> Path:
    """A dump of the shop workload (seed 1) under other settings, its large BLOBs if asked."""
    name = f"{settings.topic}-{settings.protocol}-{settings.partitions}-{messages}-{faults}"
    folder = _ROOT / (name + ("-large-blobs" if large_blobs else ""))
    generate(
        settings, messages=messages, seed=1, faults=faults, folder=folder, large_blobs=large_blobs
    )
    return folder


def routes(prefix: str) -> tuple[RoutingRule, ...]:
    """Routing rules sending ``shop.orders`` and ``shop.customers`` to topics of their own,
    named after ``prefix`` so several dumps can be checked together."""
    return (
        RoutingRule(
            matcher=("shop.orders",),
            topic=prefix + ".{schema}_{table}",
            partition=DispatchRule(partition="ts"),
        ),
        RoutingRule(matcher=("shop.cust*",), topic=prefix + ".people"),
    )


@functools.cache
def routed_dump(protocol: str, fault: str | None = None, messages: int = 600) -> Path:
    """A dump of three topics (``routes``; the samples table stays on the default topic)."""
    name = f"routed-{protocol}-{fault or 'clean'}-{messages}"
    extended = protocol in ("canal-json", "debezium")  # watermarks only with the extension
    options = (("enable-tidb-extension", "true"),) if extended else ()
    settings = StreamSettings(
        protocol=protocol, topic=name, partitions=2, routes=routes(name), options=options
    )
    folder = _ROOT / name
    generate(settings, messages=messages, seed=3, faults=[fault] if fault else [], folder=folder)
    return folder


def renamed_routes(prefix: str) -> tuple[RoutingRule, ...]:
    """``routes`` with ticdc's table routing: each table's messages carry another name.

    Topic and partition follow the source names; the customers rule hashes the table name
    (``table``), the samples one falls to the default dispatcher (handle key and names).
    """
    return (
        RoutingRule(
            matcher=("shop.orders",),
            topic=prefix + ".{schema}_{table}",
            partition=DispatchRule(partition="ts"),
            target_table="{table}_v2",
        ),
        RoutingRule(
            matcher=("shop.cust*",),
            topic=prefix + ".people",
            partition=DispatchRule(partition="table"),
            target_schema="crm_{schema}",
        ),
        RoutingRule(matcher=("shop.samples",), target_table="{schema}_{table}"),
    )


@functools.cache
def renamed_dump(protocol: str, fault: str | None = None, messages: int = 600) -> Path:
    """A dump of three topics under profile ``ticdc`` whose rules rename every table."""
    name = f"renamed-{protocol}-{fault or 'clean'}-{messages}"
    extended = protocol in ("canal-json", "debezium")  # watermarks only with the extension
    settings = StreamSettings(
        protocol=protocol,
        profile="ticdc",
        topic=name,
        partitions=3,
        routes=renamed_routes(name),
        options=(("enable-tidb-extension", "true"),) if extended else (),
    )
    folder = _ROOT / name
    generate(settings, messages=messages, seed=3, faults=[fault] if fault else [], folder=folder)
    return folder


Coordinates = tuple[str, int, int | None, int | None]


def labelled(labels: dict[str, object]) -> list[Coordinates]:
    """(rule, partition, offset, commit ts) of every finding the labels promise, sorted."""
    faults = labels["faults"]
    assert isinstance(faults, list)
    return sorted(
        (f["rule"], f["partition"], f["offset"], f["commit_ts"])
        for fault in faults
        for f in fault["findings"]
    )


def comparable(found: list[Coordinates], expected: list[Coordinates]) -> list[Coordinates]:
    """``expected`` with the commit ts of undecodable records replaced by what was found.

    A corrupted record no longer says which commit ts it carried, so a checker reports none.
    """
    return (
        sorted((rule, p, o, None if rule == "undecodable" else ts) for rule, p, o, ts in expected)
        if any(r == "undecodable" for r, *_ in found)
        else expected
    )
