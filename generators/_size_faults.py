"""Fault kinds that break a size limit: ``max-batch-size`` and ``max-message-bytes``.

The injectors of ``ticdc_conformance.generators.faults`` for ``batch-size`` and
``message-size`` (docs/dump-format.md):

* ``oversized-batch``: (Open, Craft) a flush split by ``max-batch-size`` goes out as one message
  holding more rows than the limit (§2.2, §3.4);
* ``oversized-message``: a row message grows past ``max-message-bytes`` (a BLOB or TEXT value
  of the row made longer), which TiCDC's producer would have refused (§1.5).
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

from ticdc_conformance.generators._placement import (
    FaultPlacementError,
    Injector,
    Mark,
    rows_carried,
)

__all__ = ["oversized_batch", "oversized_message"]


def oversized_batch(inj: Injector, zone: int) -> list[Mark]:
    config: Any = inj.config  # Open's or Craft's: both have the two limits
    for p, _, _, rows in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        # neighbouring row messages, merged: the same rows in the same order, one message
        steps = itertools.groupby(enumerate(rows), lambda n: n[1] - n[0])
        runs = [[i for _, i in group] for _, group in steps]
        run = max(runs, key=len, default=[])
        carried = [row for i in run for row in rows_carried(deliveries, deliveries[i], inj)]
        if len(carried) <= config.max_batch_size:
            continue
        unbatched = dataclasses.replace(config, max_batch_size=len(carried))
        messages = inj.codec.encode(carried, unbatched)  # type: ignore[arg-type]
        if len(messages) != 1 or messages[0].length() > config.max_message_bytes:
            continue  # only one message within max-message-bytes breaks max-batch-size alone
        merged = dataclasses.replace(deliveries[run[-1]], message=messages[0])
        oldest = min(inj.oldest(deliveries[i]) for i in run)
        deliveries[run[0] : run[-1] + 1] = [merged]
        return [Mark("batch-size", p, merged, oldest)]
    raise FaultPlacementError("no neighbouring row messages hold more than max-batch-size rows")


_LOBS = {"tinyblob", "blob", "mediumblob", "longblob", "tinytext", "text", "mediumtext", "longtext"}


def oversized_message(inj: Injector, zone: int) -> list[Mark]:
    config: Any = inj.config
    limit: int = config.max_message_bytes
    roomy = dataclasses.replace(config, max_message_bytes=2**31 - 1)
    for p, _, _, rows in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for i in rows:
            carried: list[Any] = rows_carried(deliveries, deliveries[i], inj)
            for k, row in enumerate(carried):
                image = "after" if row.after is not None else "before"
                columns = row.table.columns
                lob = next(
                    (
                        c
                        for c, column in enumerate(columns)
                        if column.type in _LOBS and column.key is None
                    ),
                    None,
                )
                if lob is None:
                    continue
                # the same row with one BLOB/TEXT value made longer than the whole limit
                long = b"x" * limit if columns[lob].type.endswith("blob") else "x" * limit
                values = list(getattr(row, image))
                values[lob] = long
                grown = dataclasses.replace(row, **{image: tuple(values)})
                messages = inj.codec.encode([*carried[:k], grown, *carried[k + 1 :]], roomy)
                if len(messages) != 1:
                    continue
                deliveries[i] = dataclasses.replace(deliveries[i], message=messages[0])
                return [Mark("message-size", p, deliveries[i], inj.oldest(deliveries[i]))]
    raise FaultPlacementError("no row message with a BLOB or TEXT value to grow")
