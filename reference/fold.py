"""Fold decoded row changes into final tables: what a consumer holds once it has applied them.

Plain Python over decoded events (``ticdc_conformance.reference.decoded``), for any protocol;
the consumer check and the stream simulator's truth test share it.

Rules:

* A table (schema, table) keeps its rows by handle key, TiCDC's key for a row (the primary
  key, else the NOT NULL unique index it chose, ground truth §1.3). The key columns are
  ``handle_keys[(schema, table)]`` when given, else the columns the message marks as the
  handle key (Open ``h``, the HandleKey flag bit of Open and Craft). A row that names none
  is a ``ValueError``: its table cannot be folded.
* What a change does to a key: an INSERT sets key(after) to its new image; a DELETE removes
  key(before); an UPDATE removes key(before) when it differs from key(after) (a key-changing
  UPDATE sent whole under ``output-raw-change-event=true``) and sets key(after). An UPDATE
  without an old image (``output-old-value=false``), or whose old image lacks a key column
  (``only-output-updated-columns``), is taken to keep its key: such a stream cannot say more.
* Per key, the change with the greatest commit ts wins. TiDB writes a key once per
  transaction, so one commit ts carries two changes of one key only as the halves of a split
  UPDATE that changed a unique key but not the handle key: a DELETE and an INSERT of the same
  key, which a ``columns`` or ``index-name`` dispatcher may put on different partitions. So at
  one commit ts a new image beats a removal, and of two images the last in input order wins
  (they are equal but for an exact replay, §6.3): the result depends neither on how the
  partitions are interleaved nor on at-least-once re-deliveries.
* DDL, watermark and bootstrap events change no row; a row without a commit ts (a Debezium
  message from outside TiCDC) or with only its handle-key columns (``handle-key-only`` large
  messages, whose values a consumer must read from upstream) is a ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ticdc_conformance.reference.decoded import DecodedColumn, DecodedEvent, DecodedRow
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG
from ticdc_conformance.reference.values import Value

__all__ = [
    "FoldedTables",
    "HandleKey",
    "TableName",
    "fold_rows",
    "handle_key_of",
    "marked_handle_key",
]

TableName = tuple[str, str]
"""(schema, table)."""
HandleKey = tuple[Value, ...]
"""A row's handle-key values, in the order of the key's columns."""
Image = tuple[DecodedColumn, ...]
FoldedTables = dict[TableName, dict[HandleKey, Image]]
"""Every table's live rows: handle key → the row's last image, as decoded."""


def marked_handle_key(image: Image) -> tuple[str, ...]:
    """The columns the message marks as the handle key (Open ``h``, the HandleKey flag)."""

    def marked(column: DecodedColumn) -> bool:
        if column.handle_key is not None:
            return column.handle_key
        return column.flags is not None and bool(column.flags & HANDLE_KEY_FLAG)

    return tuple(c.name for c in image if marked(c))


def handle_key_of(image: Image, columns: Sequence[str]) -> HandleKey | None:
    """The values of ``columns`` in ``image``, in that order; ``None`` if one is missing."""
    values = {c.name: c.value for c in image}
    if any(name not in values for name in columns):
        return None
    return tuple(values[name] for name in columns)


class _Fold:
    def __init__(self, handle_keys: Mapping[TableName, Sequence[str]]) -> None:
        self.handle_keys = dict(handle_keys)
        self.latest: dict[TableName, dict[HandleKey, tuple[int, bool, Image | None]]] = {}
        """Per key: the winning change's commit ts, whether it sets an image, the image."""

    def columns(self, row: DecodedRow, image: Image) -> Sequence[str]:
        name = (row.schema, row.table)
        if name not in self.handle_keys:
            marked = marked_handle_key(image)
            if not marked:
                raise ValueError(
                    f"{row.schema}.{row.table}: the message marks no handle-key column; "
                    "name the table's key columns in handle_keys"
                )
            self.handle_keys[name] = marked
        return self.handle_keys[name]

    def key(self, row: DecodedRow, image: Image) -> HandleKey:
        key = handle_key_of(image, self.columns(row, image))
        if key is None:
            raise ValueError(f"{row.schema}.{row.table}: a row image lacks a handle-key column")
        return key

    def set(self, row: DecodedRow, key: HandleKey, image: Image | None) -> None:
        assert row.commit_ts is not None
        table = self.latest.setdefault((row.schema, row.table), {})
        seen = table.get(key)
        if seen is None or (row.commit_ts, image is not None) >= seen[:2]:
            table[key] = (row.commit_ts, image is not None, image)

    def apply(self, row: DecodedRow) -> None:
        if row.commit_ts is None:
            raise ValueError(f"{row.schema}.{row.table}: a row without commit ts cannot be ordered")
        if row.handle_key_only and row.op != "delete":
            raise ValueError(
                f"{row.schema}.{row.table}: a handle-key-only row carries no values to apply"
            )
        if row.op == "delete":
            assert row.before is not None
            self.set(row, self.key(row, row.before), None)
            return
        assert row.after is not None
        new = self.key(row, row.after)
        if row.op == "update" and row.before is not None:
            old = handle_key_of(row.before, self.columns(row, row.after))
            if old is not None and old != new:
                self.set(row, old, None)
        self.set(row, new, row.after)


def fold_rows(
    events: Iterable[DecodedEvent], handle_keys: Mapping[TableName, Sequence[str]] | None = None
) -> FoldedTables:
    """The final tables after applying every row change of ``events`` (see the module doc)."""
    fold = _Fold(handle_keys or {})
    for event in events:
        if isinstance(event, DecodedRow):
            fold.apply(event)
    return {
        name: {key: image for key, (_, _, image) in rows.items() if image is not None}
        for name, rows in fold.latest.items()
    }
