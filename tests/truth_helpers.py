"""Decoding a simulated topic log as a consumer does, and the one-change-per-key check."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import groupby
from typing import NamedTuple

from hypothesis import strategies as st

from ticdc_conformance.generators.faults import inject_faults
from ticdc_conformance.generators.oracle import ORACLE_CONFIGS
from ticdc_conformance.generators.simulator import (
    Record,
    StreamSettings,
    TopicLog,
    WorkloadItem,
    simulate,
)
from ticdc_conformance.generators.truth import Upstream
from ticdc_conformance.generators.workload import SHOP_TABLES, shop_workload
from ticdc_conformance.reference import CODECS, DecodedRow, Message, Profile, ResolvedEvent
from ticdc_conformance.reference.claim_check import ClaimCheck
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.fold import TableName, handle_key_of
from ticdc_conformance.reference.message import SchemaCodec

KEYS: dict[TableName, tuple[str, ...]] = {
    (t.schema, t.name): tuple(t.columns[i].name for i in t.handle_key()) for t in SHOP_TABLES
}
"""The handle-key columns of the shop tables."""


def decoded_rows(log: TopicLog, *, release: bool = False) -> Iterator[DecodedRow]:
    """Every row of ``log``, partition by partition in offset order, as a consumer decodes it.

    ``release`` drops each partition's records once decoded, to bound memory on large logs.
    """
    for partition, deliveries in enumerate(log.partitions):
        yield from partition_rows(log.settings.protocol, (d.message for d in deliveries))
        if release:
            log.partitions[partition] = []


def windows(workload: Iterable[WorkloadItem], items: int) -> Iterator[list[WorkloadItem]]:
    """``workload`` in windows of at least ``items`` items, each ending at a checkpoint.

    A checkpoint flushes every partition, so simulating window after window writes the records
    one simulation writes (offsets aside) for a protocol without BOOTSTRAP messages, and holds
    one window's log at a time.
    """
    window: list[WorkloadItem] = []
    for item in workload:
        window.append(item)
        if isinstance(item, ResolvedEvent) and len(window) >= items:
            yield window
            window = []
    if window:
        yield window


class WindowedStream:
    """The decoded rows of about ``messages`` records, simulated window by window (``windows``).

    ``check`` sees every row; its memory of each transaction is dropped at a window's end, where
    every row at or below the window's last checkpoint has been delivered.
    """

    def __init__(
        self,
        workload: Iterable[WorkloadItem],
        settings: StreamSettings,
        messages: int,
        check: OneChangePerKey,
    ) -> None:
        self.workload = workload
        self.settings = settings
        self.messages = messages
        self.check = check
        self.records = 0

    def __iter__(self) -> Iterator[DecodedRow]:
        for window in windows(self.workload, min(self.messages, 20_000)):
            log = simulate(window, self.settings)
            self.records += len(log)
            yield from map(self.check.see, decoded_rows(log, release=True))
            self.check.seen.clear()
            if self.records >= self.messages:
                return


def partition_rows(protocol: str, messages: Iterable[Message]) -> Iterator[DecodedRow]:
    """The rows of one partition's messages in offset order (Simple: one stateful decoder)."""
    codec = CODECS[protocol]
    feed = codec.new_decoder().feed if isinstance(codec, SchemaCodec) else codec.decode
    for offset, message in enumerate(messages):
        for event in feed(message, message_index=offset):
            if isinstance(event, DecodedRow):
                yield event


def dump_rows(
    protocol: str, records: Iterable[Record], claim_check: ClaimCheck | None = None
) -> Iterator[DecodedRow]:
    """The rows of a dump's records, partition by partition in offset order.

    With ``claim_check``, a reference is the row its stored file holds.
    """
    ordered = sorted(records, key=lambda r: (r.partition, r.offset))
    for _, group in groupby(ordered, key=lambda r: r.partition):
        messages = (Message(key=r.key, value=r.value) for r in group)
        if claim_check is None:
            yield from partition_rows(protocol, messages)
            continue
        decoder = PartitionDecoder(protocol, claim_check=claim_check)
        for message in messages:
            yield from (e for e in decoder.decode(message) if isinstance(e, DecodedRow))


class OneChangePerKey:
    """Keys that one transaction changes twice, found as the decoded rows stream past.

    Per (table, key, commit ts), the distinct changes seen (an exact replay is the same
    change): more than one is allowed only as the two halves of a split UPDATE that kept the
    handle key, a DELETE and an INSERT (in either order, as two partitions may deliver them).
    """

    def __init__(self) -> None:
        self.seen: dict[tuple[TableName, object, int | None], tuple[tuple[str, int], ...]] = {}
        self.twice: list[tuple[TableName, object, int | None]] = []
        self.rows = 0

    def see(self, row: DecodedRow) -> DecodedRow:
        """Check ``row`` and pass it on."""
        self.rows += 1
        name = (row.schema, row.table)
        change = (row.op, hash((row.before, row.after)))
        images = [image for image in (row.before, row.after) if image is not None]
        for key in {handle_key_of(image, KEYS[name]) for image in images}:
            where = (name, key, row.commit_ts)
            seen = self.seen.setdefault(where, (change,))
            if change not in seen:
                self.seen[where] = (*seen, change)
                if sorted(op for op, _ in self.seen[where]) != ["delete", "insert"]:
                    self.twice.append(where)
        return row


PROFILES: tuple[Profile, ...] = ("tiflow", "ticdc")
FAMILIES = [
    (p, profile) for p in sorted(CODECS) for profile in PROFILES if profile in CODECS[p].PROFILES
]
DISPATCHERS = ["default", "table", "index-value", "rowid", "ts"]
"""Every rule one setting can apply to all three shop tables (``columns`` and ``index-name``
name columns only one table has)."""


def stream(
    protocol: str,
    profile: Profile,
    dispatcher: str,
    partitions: int,
    *,
    raw: bool,
    replay: bool,
    seed: int,
) -> tuple[Upstream, TopicLog]:
    """A generated stream and its truth (``Upstream`` checks TiDB's rules as it goes)."""
    options = tuple(ORACLE_CONFIGS[protocol].items())  # Debezium with watermarks and type names
    stream_settings = StreamSettings(
        protocol=protocol,
        profile=profile,
        partitions=partitions,
        dispatcher=DispatchRule(partition=dispatcher),
        options=options,
        output_raw_change_event=raw,
    )
    upstream = Upstream()
    log = simulate(upstream.track(shop_workload(seed, ddl_every=40)), stream_settings, messages=200)
    if replay:
        inject_faults(log, ["replay"], seed)
    return upstream, log


class GeneratedStream(NamedTuple):
    """A stream drawn by ``generated_streams``, with its truth."""

    protocol: str
    profile: Profile
    upstream: Upstream
    log: TopicLog


@st.composite
def generated_streams(draw: st.DrawFn) -> GeneratedStream:
    """Any family, dispatcher, 1 to 4 partitions, split or whole UPDATEs, with or without a
    replay, any workload seed."""
    protocol, profile = draw(st.sampled_from(FAMILIES))
    upstream, log = stream(
        protocol,
        profile,
        draw(st.sampled_from(DISPATCHERS)),
        draw(st.sampled_from([1, 2, 4])),
        raw=draw(st.booleans()),
        replay=draw(st.booleans()),
        seed=draw(st.integers(0, 2**16)),
    )
    return GeneratedStream(protocol, profile, upstream, log)
