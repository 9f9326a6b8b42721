"""``generate``: a seeded workload through the simulator, faults injected, written as a dump."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ticdc_conformance.generators.dump import publishing, write_dump
from ticdc_conformance.generators.faults import inject_faults
from ticdc_conformance.generators.progress import Progress
from ticdc_conformance.generators.simulator import StreamSettings, simulate
from ticdc_conformance.generators.truth import Upstream
from ticdc_conformance.generators.workload import SHOP_TABLES, SHOP_VERSION, shop_workload

__all__ = ["GenerateSummary", "generate"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GenerateSummary:
    """What ``generate`` wrote and how long it took."""

    records: int
    faults: int
    seconds: float
    parquet_bytes: int


def generate(
    settings: StreamSettings,
    *,
    messages: int,
    seed: int,
    faults: Sequence[str],
    folder: Path,
    ddl_every: int = 500,
    progress: Progress | None = None,
) -> GenerateSummary:
    """Simulate, inject faults and write a dump with its labels to ``folder``.

    The dump appears at ``folder`` only once complete (``dump.publishing``); an older dump
    there is replaced, anything else is a ``FileExistsError``.

    The ``shop`` workload of ``seed`` runs until the log holds ``messages`` records; one fault
    of each kind in ``faults`` goes in; every ``ddl_every`` transactions a DDL changes a
    table's schema. The labels' ``workload`` member says how many workload ``items`` the
    stream holds, so ``truth.shop_truth`` rebuilds its final tables. The same arguments always
    write the same dump. ``progress`` counts the records simulated, of ``messages``.
    """
    started = time.perf_counter()
    upstream = Upstream()  # checks TiDB's rules on every transaction
    workload = upstream.track(shop_workload(seed, ddl_every=ddl_every))
    if progress is not None:
        progress.total(messages)
    log = simulate(
        workload,
        settings,
        messages=messages,
        tables=SHOP_TABLES,  # the tables the changefeed starts with (send-all-bootstrap-at-start)
        progress=None if progress is None else progress.update,
    )
    if progress is not None:
        progress.done()
    injected = inject_faults(log, faults, seed)
    labels = {
        "format": "ticdc-conformance topic dump",
        "version": 1,
        "settings": settings.describe(),
        "workload": {
            "name": "shop",
            "version": SHOP_VERSION,
            "seed": seed,
            "messages": messages,
            "ddl_every": ddl_every,
            "items": upstream.items,
        },
        "faults": [
            {
                "kind": fault.kind,
                "findings": [
                    {
                        "rule": f.rule,
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
    with publishing(folder, "generate") as scratch:  # an interrupted run leaves no dump
        count = write_dump(log.records(), scratch, labels=labels)
        size = sum(f.stat().st_size for f in scratch.glob("*.parquet"))
    return GenerateSummary(
        records=count,
        faults=len(injected),
        seconds=time.perf_counter() - started,
        parquet_bytes=size,
    )
