"""``generate``: a seeded workload through the simulator, faults injected, written as a dump."""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ticdc_conformance.generators.claim_check import CLAIM_CHECK_FOLDER, storing_claim_checks
from ticdc_conformance.generators.dump import publishing, write_dump, write_labels
from ticdc_conformance.generators.faults import (
    FaultPlacementError,
    InjectedFault,
    inapplicable,
    inject_faults,
)
from ticdc_conformance.generators.progress import Progress
from ticdc_conformance.generators.simulator import (
    Record,
    StreamSettings,
    WorkloadItem,
    simulate,
    stream_records,
)
from ticdc_conformance.generators.workload import SHOP_TABLES, SHOP_VERSION, shop_workload

__all__ = ["GenerateSummary", "generate"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GenerateSummary:
    """What ``generate`` wrote and how long it took."""

    records: int
    faults: int
    seconds: float
    parquet_bytes: int


_YOUNG_OBJECTS = 100_000
"""Objects the cycle collector lets a generation gather before it runs while ``generate``
runs (Python's default is 700)."""


@contextlib.contextmanager
def _rare_collections() -> Iterator[None]:
    """The cycle collector's first threshold raised to ``_YOUNG_OBJECTS`` for the block.

    A stream allocates objects by the million and makes almost no cycles (its objects go by
    reference counting), so the default threshold runs the collector hundreds of times for
    nothing, and a full collection walks every object the imports made (about 3 % of the CPU
    time at 200,000 messages). Cycles are still collected, and the thresholds restored after.
    """
    young, *older = gc.get_threshold()
    gc.set_threshold(max(young, _YOUNG_OBJECTS), *older)
    try:
        yield
    finally:
        gc.set_threshold(young, *older)


@_rare_collections()
def generate(
    settings: StreamSettings,
    *,
    messages: int,
    seed: int,
    faults: Sequence[str],
    folder: Path,
    ddl_every: int = 500,
    large_blobs: bool = False,
    progress: Progress | None = None,
) -> GenerateSummary:
    """Simulate, inject faults and write a dump with its labels to ``folder``.

    The dump appears at ``folder`` only once complete (``dump.publishing``); an older dump
    there is replaced, anything else is a ``FileExistsError``.

    The ``shop`` workload of ``seed`` runs until the log holds ``messages`` records; one fault
    of each kind in ``faults`` goes in; every ``ddl_every`` transactions a DDL changes a
    table's schema; with ``large_blobs`` a quarter of the avatars are 4 to 6 KiB
    (``workload.shop_workload``). The labels' ``workload`` member says how many workload
    ``items`` the stream holds (and ``large_blobs``, when true), so ``truth.shop_truth``
    rebuilds its final tables. The same arguments always write the same dump. ``progress``
    counts the records simulated, of ``messages``. With
    ``large-message-handle-option=claim-check`` the files TiCDC would have stored go to the
    dump's ``_claim_check/`` folder, and the labels' ``claim_check`` member says so.
    """
    started = time.perf_counter()
    pulled = _Counted(shop_workload(seed, ddl_every=ddl_every, large_blobs=large_blobs))
    if progress is not None:
        progress.total(messages)
    update = None if progress is None else progress.update
    injected: list[InjectedFault] = []
    records: Iterable[Record]
    if faults:
        for kind in faults:  # refused before the simulation, not after it
            if (reason := inapplicable(kind, settings)) is not None:
                raise FaultPlacementError(reason)
        # fault placement needs the whole log: its zones follow the count of watermarks
        # SHOP_TABLES: the tables the changefeed starts with (send-all-bootstrap-at-start)
        log = simulate(pulled, settings, messages=messages, tables=SHOP_TABLES, progress=update)
        if progress is not None:
            progress.done()
        injected = inject_faults(log, faults, seed)
        records = log.records()
    else:  # a clean log goes to the files as it is simulated: no log is held
        records = stream_records(
            pulled, settings, messages=messages, tables=SHOP_TABLES, progress=update
        )
    topics: dict[str, None] = {}
    if settings.routes:  # the labels name every topic written
        records = _noting_topics(records, topics)
    with publishing(folder, "generate") as scratch:  # an interrupted run leaves no dump
        # whole row groups: a file's bytes do not depend on how partitions interleave
        # claim-check files beside the Parquet files, as the records pass (docs/dump-format.md)
        stored = storing_claim_checks(records, scratch)
        count = write_dump(stored, scratch, full_row_groups=True)
        if progress is not None and not faults:  # the simulation ran as the files were written
            progress.done()
        labels = _labels(
            settings,
            seed=seed,
            messages=messages,
            ddl_every=ddl_every,
            large_blobs=large_blobs,
            items=pulled.count,
            injected=injected,
            topics=sorted(topics),
        )
        claim_checks = scratch / CLAIM_CHECK_FOLDER
        if claim_checks.is_dir():  # only then: a dump without them keeps its labels' bytes
            files = sum(1 for _ in claim_checks.iterdir())
            labels["claim_check"] = {"folder": CLAIM_CHECK_FOLDER, "files": files}
        write_labels(scratch, labels)
        size = sum(f.stat().st_size for f in scratch.glob("*.parquet"))
    return GenerateSummary(
        records=count,
        faults=len(injected),
        seconds=time.perf_counter() - started,
        parquet_bytes=size,
    )


def _noting_topics(records: Iterable[Record], topics: dict[str, None]) -> Iterator[Record]:
    """``records``, each one's topic noted in ``topics``."""
    for record in records:
        topics.setdefault(record.topic)
        yield record


class _Counted:
    """A workload, counting the items taken from it (the labels' ``items``)."""

    def __init__(self, items: Iterator[WorkloadItem]) -> None:
        self.items, self.count = items, 0

    def __iter__(self) -> Iterator[WorkloadItem]:
        for item in self.items:
            self.count += 1
            yield item


def _labels(
    settings: StreamSettings,
    *,
    seed: int,
    messages: int,
    ddl_every: int,
    large_blobs: bool,
    items: int,
    injected: Sequence[InjectedFault],
    topics: Sequence[str],
) -> dict[str, object]:
    """The label sidecar of a generated dump (docs/dump-format.md).

    With routing rules, ``settings`` names every topic written and its partition count
    (``topics``; TiCDC creates each with the changefeed's ``partition-num``), and a finding
    names its topic when it is not the default one.
    """
    described = settings.describe()
    if settings.routes:
        described["topics"] = dict.fromkeys(topics, settings.partitions)
    return {
        "format": "ticdc-conformance topic dump",
        "version": 1,
        "settings": described,
        "workload": {
            "name": "shop",
            "version": SHOP_VERSION,
            "seed": seed,
            "messages": messages,
            "ddl_every": ddl_every,
            **({"large_blobs": True} if large_blobs else {}),  # only then: the same bytes
            "items": items,
        },
        "faults": [
            {
                "kind": fault.kind,
                "findings": [
                    {
                        "rule": f.rule,
                        **({} if f.topic is None else {"topic": f.topic}),
                        "partition": f.partition,
                        "offset": f.offset,
                        "commit_ts": f.commit_ts,
                    }
                    for f in fault.findings
                ],
            }
            for fault in injected
        ],
    }
