"""When TiCDC sends a Simple BOOTSTRAP, as a deterministic schedule (ground truth §6.6).

TiCDC's bootstrap worker (tiflow and ticdc ``pkg/sink/codec/bootstraper.go``) keeps one entry
per table (by physical table id) that has had a row:

* a table's first row (or its first after being forgotten) sends its BOOTSTRAP at once,
  before the row;
* a ticker re-sends a table's BOOTSTRAP when ``send-bootstrap-interval-in-sec`` has passed
  since the last one or its counter reached ``send-bootstrap-in-msg-count``. Simple is not a
  batch-encoded protocol (``IsBatchEncode``, ``pkg/config/sink_protocol.go``), so the sink adds
  rows to the encoder group one at a time and the counter counts rows: the first row's send
  resets it to 0, every later row adds 1. A changed schema or name only replaces the table
  info the next BOOTSTRAP carries;
* tables without a row for 30 minutes are forgotten;
* both numbers must be above 0, else nothing is sent (``ShouldSendBootstrapMsg``,
  ``pkg/config/sink.go``).

TiCDC's clock is the wall clock and its ticker fires every 5 s (forgetting every 30 s), so
where a re-sent BOOTSTRAP lands in a live topic depends on timing. An offline encoder has no
such clock; this schedule reads time from the stream instead: ``now`` is the physical time of
the commit ts of the event at hand, and the ticker runs before every row and every DDL or
checkpoint. A re-sent BOOTSTRAP thus lands right before the first event at which TiCDC's
condition holds, the earliest place a live TiCDC could have put it. Tables are visited in the
order of their first row (Go's ``sync.Map`` has none).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, RowChangedEvent
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.simple._config import Config, EncodingFormat
from ticdc_conformance.reference.simple._encode import encode, encode_bootstrap
from ticdc_conformance.reference.tables import TableInfo

__all__ = ["BootstrapSchedule", "bootstraps_at_start", "encode_stream", "sends_bootstraps"]

FORGET_AFTER_MS = 30 * 60 * 1000
"""``defaultMaxInactiveDuration``: a table without rows this long is forgotten."""


def sends_bootstraps(config: Config) -> bool:
    """Whether TiCDC's bootstrap worker runs: both numbers above 0."""
    return config.send_bootstrap_interval_in_sec > 0 < config.send_bootstrap_in_msg_count


def bootstraps_at_start(config: Config) -> bool:
    """Whether every table's BOOTSTRAP is broadcast when the changefeed starts.

    tiflow asks ``ShouldSendAllBootstrapAtStart`` (the option and a running bootstrap worker,
    ``cdc/owner/ddl_manager.go``); ticdc's dispatcher manager reads the option alone
    (``downstreamadapter/dispatchermanager/dispatcher_manager.go``), so under profile
    ``ticdc`` it holds even when the periodic BOOTSTRAP is off.
    """
    if not config.send_all_bootstrap_at_start:
        return False
    return config.profile == "ticdc" or sends_bootstraps(config)


def _key(table: TableInfo) -> object:
    """TiCDC's key of a table: its physical id, else (an id-less test table) its names."""
    physical = table.partition_id if table.partition_id is not None else table.table_id
    return physical if physical is not None else (table.schema, table.name)


@dataclass(slots=True)
class _Entry:
    table: TableInfo
    last_sent_ms: int
    last_row_ms: int
    rows: int = 0


class BootstrapSchedule:
    """The bootstrap worker's state; ``tick`` before each event, then ``row`` for a row."""

    __slots__ = ("_count", "_entries", "_interval_ms")

    def __init__(self, config: Config) -> None:
        """An empty schedule for ``config``; check ``sends_bootstraps`` before using it."""
        self._interval_ms = config.send_bootstrap_interval_in_sec * 1000
        self._count = config.send_bootstrap_in_msg_count
        self._entries: dict[object, _Entry] = {}

    def tick(self, now: int) -> list[TableInfo]:
        """The ticker at ``now`` (ms): forget idle tables, return those whose BOOTSTRAP is due.

        A returned table's interval and counter start again from ``now``.
        """
        due = []
        for key, entry in list(self._entries.items()):
            if now - entry.last_row_ms > FORGET_AFTER_MS:
                del self._entries[key]
            elif now - entry.last_sent_ms >= self._interval_ms or entry.rows >= self._count:
                entry.last_sent_ms, entry.rows = now, 0
                due.append(entry.table)
        return due

    def row(self, table: TableInfo, now: int) -> bool:
        """Add one row of ``table`` at ``now``; ``True``: send its BOOTSTRAP before the row."""
        key = _key(table)
        entry = self._entries.get(key)
        if entry is None:
            self._entries[key] = _Entry(table=table, last_sent_ms=now, last_row_ms=now)
            return True
        entry.table, entry.last_row_ms = table, now
        entry.rows += 1
        return False


def _start_tables(events: Sequence[ChangeEvent]) -> list[TableInfo]:
    """The tables replicated at the start of ``events``, as they were then.

    Each table that has rows, in the order of its first mention: the table before its first
    DDL when that DDL knows it, the table of its first row when no DDL comes first, and none
    when its first DDL knows no earlier table (it is created after the start).
    """
    found: dict[object, TableInfo | None] = {}
    for event in events:
        if isinstance(event, RowChangedEvent):
            found.setdefault(_key(event.table), event.table)
        elif isinstance(event, DDLEvent) and event.table_info is not None:
            found.setdefault(_key(event.table_info), event.pre_table_info)
    named = {_key(e.table) for e in events if isinstance(e, RowChangedEvent)}
    return [table for key, table in found.items() if table is not None and key in named]


def encode_stream(
    events: Iterable[ChangeEvent], config: Config, encoding: EncodingFormat
) -> Iterator[Message]:
    """The messages of one partition's stream: ``events`` with TiCDC's BOOTSTRAPs among them.

    ``send-bootstrap-to-all-partition`` changes nothing here: partition 0 gets every
    BOOTSTRAP either way. ``send-all-bootstrap-at-start`` reads every event first to learn the
    tables of the start (``_start_tables``); otherwise the events stream through.
    """
    if bootstraps_at_start(config):
        events = list(events)
        for table in _start_tables(events):
            yield encode_bootstrap(table, config, encoding)
    schedule = BootstrapSchedule(config) if sends_bootstraps(config) else None
    for index, event in enumerate(events):
        try:
            yield from _with_bootstraps(event, schedule, config, encoding)
        except EncodeError as error:  # name the event by its place in ``events``
            raise EncodeError(error.reason, protocol=error.protocol, event_index=index) from None


def _with_bootstraps(
    event: ChangeEvent,
    schedule: BootstrapSchedule | None,
    config: Config,
    encoding: EncodingFormat,
) -> Iterator[Message]:
    """``event``'s message, after the BOOTSTRAPs due before it."""
    if schedule is not None:
        now = event.commit_ts >> 18  # a TSO's physical milliseconds
        for table in schedule.tick(now):
            yield encode_bootstrap(table, config, encoding)
        if isinstance(event, RowChangedEvent) and schedule.row(event.table, now):
            yield encode_bootstrap(event.table, config, encoding)
    yield from encode((event,), config, encoding)
