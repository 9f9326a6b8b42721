"""The truth of a simulated stream: the tables its workload leaves upstream.

A workload is what TiDB committed, so its final tables are what a correct consumer must end
with, whatever TiCDC legally did on the way (splits, batches, partitions, replays).
``Upstream`` applies workload items one by one and checks, at every transaction, the rules
only TiDB's own writes keep (a workload breaking one is a ``WorkloadError``):

* a transaction changes each handle key once: no two of its rows touch one key, counting
  both the old and the new key of a key-changing UPDATE;
* a DELETE or UPDATE names a live row by its handle key and carries that row's image as its
  old image; an INSERT or UPDATE never gives a row a handle key another live row holds;
* after the transaction, no two live rows share a value of a unique key (a primary key or a
  unique index; NULLs never collide, as in MySQL).

Tables are keyed by TiCDC's handle key (``TableInfo.handle_key``), as ``reference.fold``
keys the decoded stream. To compare the two, ``expected_tables`` projects the truth through
a protocol's documented losses and ``observed_tables`` reduces the folded decoded rows the
same way (``generators.oracle``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice

from ticdc_conformance.generators.oracle import Canonical, observed_image, projected_image
from ticdc_conformance.generators.simulator import Transaction, WorkloadItem
from ticdc_conformance.reference import DDLEvent, RowChangedEvent, TableInfo, Value
from ticdc_conformance.reference.fold import FoldedTables, HandleKey, TableName

__all__ = [
    "CanonicalTables",
    "Upstream",
    "UpstreamTables",
    "WorkloadError",
    "expected_tables",
    "final_tables",
    "observed_tables",
    "shop_truth",
]

Image = tuple[Value, ...]
UpstreamTables = dict[TableName, dict[HandleKey, Image]]
"""Every table's live rows upstream: handle key → row image (change-event values)."""
CanonicalTables = dict[TableName, dict[tuple[Canonical, ...], dict[str, Canonical]]]
"""Tables reduced to meaning (``generators.oracle``): handle key → column name → value."""


class WorkloadError(ValueError):
    """A workload wrote what TiDB cannot commit (see the module doc for the rules)."""


def _unique_keys(table: TableInfo) -> list[tuple[int, ...]]:
    keys = [table.primary_key()] if table.primary_key() else []
    keys += [
        tuple(p for name in index.columns if (p := table.position(name)) is not None)
        for index in table.indexes
        if index.unique and not index.primary
    ]
    keys += [(i,) for i, column in enumerate(table.columns) if column.key == "unique"]
    return keys


class Upstream:
    """The upstream tables, applied item by item with TiDB's rules checked (module doc)."""

    def __init__(self) -> None:
        self.tables: UpstreamTables = {}
        """The live rows now."""
        self.infos: dict[TableName, TableInfo] = {}
        """Every table's newest table info."""
        self.items = 0
        """Workload items applied so far (transactions, DDLs, resolved events)."""
        self.transactions = 0
        """Transactions applied so far."""
        self._unique: dict[tuple[TableName, tuple[int, ...]], dict[Image, HandleKey]] = {}
        self._keys: dict[int, tuple[TableInfo, tuple[int, ...], list[tuple[int, ...]]]] = {}

    def keys(self, table: TableInfo) -> tuple[tuple[int, ...], list[tuple[int, ...]]]:
        """(handle-key positions, the other unique keys' positions) of ``table``, found once."""
        known = self._keys.get(id(table))
        if known is None or known[0] is not table:
            handle = table.handle_key()  # the tables themselves keep it unique
            unique = [key for key in _unique_keys(table) if key != handle]
            known = self._keys[id(table)] = (table, handle, unique)
        return known[1], known[2]

    def handle(self, table: TableInfo, image: Image) -> HandleKey:
        """The handle key of a row image of ``table``."""
        return tuple(image[i] for i in self.keys(table)[0])

    def track(self, workload: Iterable[WorkloadItem]) -> Iterator[WorkloadItem]:
        """``workload``, applying each item as it passes (feed it to ``simulate``)."""
        for item in workload:
            self.apply(item)
            yield item

    def apply(self, item: WorkloadItem) -> None:
        """Apply one item; ``WorkloadError`` when a transaction breaks a rule."""
        self.items += 1
        if isinstance(item, DDLEvent) and item.table_info is not None:
            self.infos[(item.schema, item.table)] = item.table_info
        if not isinstance(item, Transaction):
            return
        self.transactions += 1
        touched: set[tuple[TableName, HandleKey]] = set()
        for row in item.rows:
            images = (row.before, row.after)
            keys = {(_name(row.table), self.handle(row.table, i)) for i in images if i is not None}
            if keys & touched:
                raise WorkloadError(
                    f"commit ts {item.commit_ts}: {keys & touched} changed twice in one transaction"
                )
            touched |= keys
        for row in item.rows:  # old images out first: a transaction's order is not TiDB's
            if row.before is not None:
                self._remove(row)
        for row in item.rows:
            self.infos[_name(row.table)] = row.table
            if row.after is not None:
                self._add(row.table, row.after, item.commit_ts)

    def _remove(self, row: RowChangedEvent) -> None:
        assert row.before is not None
        name, key = _name(row.table), self.handle(row.table, row.before)
        live = self.tables.get(name, {}).pop(key, None)
        if live != row.before:
            raise WorkloadError(
                f"commit ts {row.commit_ts}: {row.op} of {name} {key} whose "
                f"old image is not the live row {live}"
            )
        for columns in self.keys(row.table)[1]:
            self._unique[(name, columns)].pop(tuple(row.before[i] for i in columns), None)

    def _add(self, table: TableInfo, image: Image, ts: int) -> None:
        name, key = _name(table), self.handle(table, image)
        rows = self.tables.setdefault(name, {})
        if key in rows:
            raise WorkloadError(f"commit ts {ts}: two live rows of {name} share handle {key}")
        rows[key] = image
        for columns in self.keys(table)[1]:
            values = tuple(image[i] for i in columns)
            holders = self._unique.setdefault((name, columns), {})
            if None not in values and holders.setdefault(values, key) != key:
                raise WorkloadError(
                    f"commit ts {ts}: two live rows of {name} share the unique key {values}"
                )


def _name(table: TableInfo) -> TableName:
    return (table.schema, table.name)


def final_tables(workload: Iterable[WorkloadItem], items: int | None = None) -> Upstream:
    """``workload``'s first ``items`` items (all when ``None``) applied to empty tables."""
    upstream = Upstream()
    for item in islice(workload, items):
        upstream.apply(item)
    return upstream


def shop_truth(workload: Mapping[str, object]) -> Upstream:
    """The truth of a dump of the ``shop`` workload, from its labels' ``workload`` member.

    ``ValueError`` for another workload, or another version of this one (docs/dump-format.md).
    ``large_blobs`` is there only when true (``generate``'s option).
    """
    from ticdc_conformance.generators.workload import SHOP_VERSION, shop_workload

    name, version = workload.get("name"), workload.get("version")
    if (name, version) != ("shop", SHOP_VERSION):
        raise ValueError(
            f"the truth of workload {name!r} version {version!r} is unknown here; "
            f"this kit writes 'shop' version {SHOP_VERSION}"
        )
    seed, ddl_every, items = (workload.get(k) for k in ("seed", "ddl_every", "items"))
    if not (isinstance(seed, int) and isinstance(ddl_every, int) and isinstance(items, int)):
        raise ValueError("the workload member needs the integers seed, ddl_every and items")
    large_blobs = workload.get("large_blobs", False)
    if not isinstance(large_blobs, bool):
        raise ValueError("the workload member's large_blobs is true or false")
    return final_tables(shop_workload(seed, ddl_every=ddl_every, large_blobs=large_blobs), items)


def _keyed(
    table: TableInfo, rows: Iterable[dict[str, Canonical]]
) -> dict[tuple[Canonical, ...], dict[str, Canonical]]:
    names = [table.columns[i].name for i in table.handle_key()]
    return {tuple(row[name] for name in names): row for row in rows}


def expected_tables(
    upstream: Upstream, protocol: str, profile: str, *, tables: Iterable[TableName] | None = None
) -> CanonicalTables:
    """The truth as ``protocol`` is documented to deliver it (its losses applied).

    ``tables`` limits it to those tables (a large truth reduced one table at a time).
    """
    wanted = set(upstream.tables if tables is None else tables)
    return {
        name: _keyed(
            upstream.infos[name],
            (
                projected_image(upstream.infos[name], image, protocol, profile)
                for image in rows.values()
            ),
        )
        for name, rows in upstream.tables.items()
        if rows and name in wanted
    }


def observed_tables(folded: FoldedTables, tables: Mapping[TableName, TableInfo]) -> CanonicalTables:
    """Folded decoded rows (``reference.fold``) reduced to meaning, typed by ``tables``."""
    return {
        name: _keyed(tables[name], (observed_image(tables[name], image) for image in rows.values()))
        for name, rows in folded.items()
        if rows
    }
