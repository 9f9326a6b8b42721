"""Fault kinds around DDLs, split UPDATEs and Simple's schema messages and checksums.

The injectors of ``ticdc_conformance.generators.faults`` for the rules of
``suites/stream/ordering.py`` and ``suites/stream/schemas.py`` (docs/rules/stream.md):

* ``row-after-ddl``: a row of a table, committed just before a DDL of that table, arrives
  right after the DDL on the same partition (rule ``row-before-ddl``, §6.2);
* ``insert-before-delete``: in a flush, the INSERT of a table's transaction is moved before
  the transaction's first DELETE of that table, as a split UPDATE's halves swapped (rule
  ``split-update-order``, §6.5);
* ``late-schema``: (Simple) a DML names a new schema version whose BOOTSTRAP reaches its
  partition only right after it, and the other partitions in the same stretch (rule
  ``schema-before-dml``, §6.6);
* ``partial-bootstrap``: (Simple) a BOOTSTRAP is written to one partition only (rule
  ``bootstrap-broadcast``, §6.6), found on every other partition with no offset;
* ``bad-checksum``: (Simple with ``integrity-check-level=correctness``) a DML's
  ``checksum.current`` (``previous`` for a DELETE) no longer matches its images (rule
  ``checksum``, §4.6): JSON rewritten with the member flipped; in Avro the Checksum record's
  bytes (§4.8: union branch 1, then ``version``, ``corrupted``, ``current``, ``previous``)
  replaced in place, and the message read back to prove nothing else changed.
"""

from __future__ import annotations

import dataclasses
import json

from ticdc_conformance.generators._placement import FaultPlacementError, Injector, Mark
from ticdc_conformance.generators.simulator import Delivery, StreamSettings
from ticdc_conformance.reference import DecodeError, Message
from ticdc_conformance.reference.decoded import DecodedDDL
from ticdc_conformance.reference.dispatch import partition_of
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.simple import Checksum, read_checksum

__all__ = [
    "bad_checksum",
    "insert_before_delete",
    "late_schema",
    "order_inapplicable",
    "partial_bootstrap",
    "row_after_ddl",
]


_SIMPLE_ONLY = ("late-schema", "partial-bootstrap")


def order_inapplicable(kind: str, settings: StreamSettings) -> str | None:
    """Why a fault kind of this module cannot go into a log of ``settings``; ``None`` if it can.

    ``missing-schema`` needs Simple; ``late-schema`` and ``partial-bootstrap`` Simple with
    BOOTSTRAPs on every partition (the second, two partitions); ``bad-checksum`` Simple
    with row checksums.
    """
    options = dict(settings.options)
    if kind in ("missing-schema", *_SIMPLE_ONLY) and not settings.protocol.startswith("simple"):
        return f"{kind} applies to the Simple protocol only (§6.6)"
    if kind in _SIMPLE_ONLY and options.get("send-bootstrap-to-all-partition") == "false":
        return f"{kind} needs BOOTSTRAPs on every partition (send-bootstrap-to-all-partition)"
    if kind == "partial-bootstrap" and settings.partitions < 2:
        return "a BOOTSTRAP missing from a partition needs a topic of two partitions or more"
    if kind == "bad-checksum" and (
        not settings.protocol.startswith("simple")
        or options.get("integrity-check-level") != "correctness"
    ):
        return "bad-checksum needs Simple with integrity-check-level=correctness (§4.6)"
    return None


def _ddl_of(inj: Injector, delivery: Delivery) -> DecodedDDL | None:
    events = inj.codec.decode(delivery.message)
    ddl = next((e for e in events if isinstance(e, DecodedDDL)), None)
    return ddl if ddl is not None and ddl.table and ddl.commit_ts is not None else None


def row_after_ddl(inj: Injector, zone: int) -> list[Mark]:
    settings = inj.log.settings
    router = settings.router()  # each row partitioned by its own rule's dispatcher
    for p, start, end, _ in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        floor = deliveries[start].commit_ts if start >= 0 else 0
        for d in range(start + 1, end):
            ddl = _ddl_of(inj, deliveries[d]) if deliveries[d].kind == "ddl" else None
            if ddl is None or ddl.commit_ts is None or ddl.commit_ts - 1 <= floor:
                continue
            # a row of the DDL's table from before it, again, committed just before the DDL
            # (above the watermark before it: ``row-after-watermark`` is not this rule)
            candidates = [
                dataclasses.replace(row, commit_ts=ddl.commit_ts - 1)
                for q in inj.log.partitions
                for delivery in q
                for row in delivery.rows
                if (row.table.schema, row.table.name) == (ddl.schema, ddl.table)
                and row.commit_ts < ddl.commit_ts
            ]
            for late in reversed(candidates):
                rule = router.rule_for(late.table.schema, late.table.name).partition
                if partition_of(late, settings.partitions, rule, settings.profile) != p:
                    continue
                messages = inj.codec.encode([late], inj.config)
                added = [
                    Delivery(
                        kind="rows",
                        message=m,
                        commit_ts=late.commit_ts,
                        timestamp=deliveries[d].timestamp,
                        rows=(late,),
                    )
                    for m in messages
                ]
                deliveries[d + 1 : d + 1] = added
                return [Mark("row-before-ddl", p, a, late.commit_ts) for a in added]
    raise FaultPlacementError("no DDL of a table with an earlier row to send after it")


def _swapped(rows: tuple[RowChangedEvent, ...]) -> tuple[RowChangedEvent, ...] | None:
    """``rows`` with a transaction's first INSERT of a table moved before its first DELETE."""
    for k, row in enumerate(rows):
        if row.op != "delete":
            continue
        group = (row.commit_ts, row.table.schema, row.table.name)
        later = next(
            (
                j
                for j in range(k + 1, len(rows))
                if rows[j].op == "insert"
                and (rows[j].commit_ts, rows[j].table.schema, rows[j].table.name) == group
            ),
            None,
        )
        if later is not None:
            return (*rows[:k], rows[later], *rows[k:later], *rows[later + 1 :])
    return None


def insert_before_delete(inj: Injector, zone: int) -> list[Mark]:
    for p, _, _, indexes in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for i in indexes:
            rows = deliveries[i].rows
            swapped = _swapped(rows)
            if swapped is None:
                continue
            flush = [j for j, d in enumerate(deliveries) if d.rows is rows]
            replaced = [
                dataclasses.replace(d, rows=swapped)
                for d in inj.encode_rows(deliveries[flush[0]], swapped)
            ]
            deliveries[flush[0] : flush[-1] + 1] = replaced
            marks = []
            inserted: set[tuple[int, str, str]] = set()
            for delivery in replaced:  # what a checker sees: a DELETE after an INSERT
                late = []
                for decoded in inj.decode_rows(delivery):
                    group = (decoded.commit_ts or 0, decoded.schema, decoded.table)
                    if decoded.op == "insert":
                        inserted.add(group)
                    elif decoded.op == "delete" and group in inserted:
                        late.append(group[0])
                if late:
                    marks.append(Mark("split-update-order", p, delivery, min(late)))
            return marks
    raise FaultPlacementError("no transaction with a DELETE and an INSERT of one table")


def late_schema(inj: Injector, zone: int) -> list[Mark]:
    known = inj.schema_versions()
    version = max(v or 0 for v in known) + 1
    for p, _, end, indexes in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for i in indexes:
            template = deliveries[i]
            if len(inj.codec.encode(template.rows, inj.config)) != len(template.rows):
                continue  # Simple writes one row per message; anything else is not Simple
            # one row per message: the k-th message of a flush carries its k-th row
            siblings = [d for d in deliveries if d.rows is template.rows]
            row = template.rows[next(k for k, d in enumerate(siblings) if d is template)]
            table = dataclasses.replace(row.table, schema_version=version)
            moved = dataclasses.replace(row, table=table)
            (replacement,) = inj.encode_rows(template, [moved])
            deliveries[i] = replacement
            bootstrap = inj.codec.encode_bootstrap(table, inj.config)  # type: ignore[attr-defined]
            # the schema right after the DML on its partition, in time on every other one
            for q, others in enumerate(inj.log.partitions):
                at = i + 1 if q == p else _segment_end(inj, q, deliveries[end].commit_ts)
                others.insert(at, _bootstrap(bootstrap, template.timestamp))
            return [Mark("schema-before-dml", p, replacement, row.commit_ts)]
    raise FaultPlacementError("no DML message to announce late")


def _segment_end(inj: Injector, partition: int, watermark: int) -> int:
    deliveries = inj.log.partitions[partition]
    return next(
        j for j, d in enumerate(deliveries) if d.kind == "resolved" and d.commit_ts == watermark
    )


def _bootstrap(message: Message, timestamp: int) -> Delivery:
    return Delivery(kind="bootstrap", message=message, commit_ts=0, timestamp=timestamp)


def partial_bootstrap(inj: Injector, zone: int) -> list[Mark]:
    for p, _, end, indexes in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for i in indexes:
            rows = deliveries[i].rows
            if not rows:
                continue
            message = inj.codec.encode_bootstrap(rows[0].table, inj.config)  # type: ignore[attr-defined]
            # a BOOTSTRAP of a schema the partition already has: it resolves nothing new
            deliveries.insert(end, _bootstrap(message, deliveries[end].timestamp))
            return [
                Mark("bootstrap-broadcast", q, None, 0)
                for q in range(len(inj.log.partitions))
                if q != p
            ]
    raise FaultPlacementError("no table to send a BOOTSTRAP of")


def _flipped_json(value: bytes) -> bytes | None:
    """A Simple JSON DML with a bit of its checksum flipped; ``None`` if it has none."""
    try:
        document = json.loads(value)
    except ValueError:
        return None
    checksum = document.get("checksum") if isinstance(document, dict) else None
    if not isinstance(checksum, dict):
        return None
    half = "current" if checksum.get("current") else "previous"
    checksum[half] = int(checksum[half]) ^ 1
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def _long(n: int) -> bytes:
    """An Avro ``int``/``long``: zigzag, then a little-endian base-128 varint."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes([*out, n])


def _avro_checksum(checksum: Checksum) -> bytes:
    """The DML's ``checksum`` member: union branch 1, then the Checksum record (§4.8)."""
    return b"".join(
        (
            _long(1),
            _long(checksum.version),
            b"\x01" if checksum.corrupted else b"\x00",
            _long(checksum.current),
            _long(checksum.previous),
        )
    )


def _flipped_avro(value: bytes) -> bytes | None:
    """A Simple Avro DML with a bit of its checksum flipped; ``None`` if it has none.

    The checksum member's bytes necessarily occur where the member is; when they occur only
    once, that is the place, and they are replaced there (read back to be sure).
    """
    try:
        checksum = read_checksum(Message(key=None, value=value), encoding="avro")
    except DecodeError:
        return None
    if checksum is None:
        return None
    half = "current" if checksum.current else "previous"
    flipped = dataclasses.replace(checksum, **{half: getattr(checksum, half) ^ 1})
    old = _avro_checksum(checksum)
    if value.count(old) != 1:
        return None
    changed = value.replace(old, _avro_checksum(flipped))
    return (
        changed
        if read_checksum(Message(key=None, value=changed), encoding="avro") == flipped
        else None
    )


def bad_checksum(inj: Injector, zone: int) -> list[Mark]:
    flip = _flipped_avro if inj.log.settings.protocol == "simple-avro" else _flipped_json
    for p, _, _, indexes in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for i in indexes:
            message = deliveries[i].message
            value = flip(message.value or b"")
            if value is None:
                continue
            oldest = inj.oldest(deliveries[i])
            deliveries[i] = dataclasses.replace(
                deliveries[i], message=Message(key=message.key, value=value)
            )
            return [Mark("checksum", p, deliveries[i], oldest)]
    raise FaultPlacementError("no DML message with a checksum")
