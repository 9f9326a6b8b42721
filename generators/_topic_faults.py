"""The ``wrong-topic`` fault: a row message produced to a topic its table does not route to.

The machinery of ``ticdc_conformance.generators.faults``. A row message of one topic moves to
the same partition of another topic, just before the watermark that follows it there, so it
stays between the same two watermarks and its dispatcher still picks that partition: only
``topic-routing`` breaks (docs/kafka.md "Topic routing"). Its table's rows are nowhere else on
the other topic, so no order rule sees it. The other topic must carry both watermarks around
the message (a topic gets watermarks once a table routed to it is active). Simple is left out:
the other topic never announced the message's schema (``schema-before-dml``).
"""

from __future__ import annotations

import itertools

from ticdc_conformance.generators._placement import FaultPlacementError, Injector, Mark
from ticdc_conformance.generators.simulator import Delivery, StreamSettings

__all__ = ["topic_inapplicable", "wrong_topic"]


def topic_inapplicable(kind: str, settings: StreamSettings) -> str | None:
    """Why ``wrong-topic`` cannot go into a log of ``settings``; ``None`` if it can."""
    if kind != "wrong-topic":
        return None
    if not settings.routes:
        return "wrong-topic needs routing rules that send tables to a second topic"
    if settings.protocol.startswith("simple"):
        return "wrong-topic leaves Simple's schema unannounced on the other topic (§6.6)"
    return None


def _watermarks(deliveries: list[Delivery]) -> dict[int, int]:
    """Commit ts → index of its first watermark in a partition."""
    found: dict[int, int] = {}
    for i, d in enumerate(deliveries):
        if d.kind == "resolved":
            found.setdefault(d.commit_ts, i)
    return found


def wrong_topic(inj: Injector, zone: int) -> list[Mark]:
    """Move one row message of ``zone`` to the same partition of another topic."""
    topics = sorted(inj.log.topics)
    inj.rng.shuffle(topics)
    pairs = [(source, target) for source in topics for target in topics if source != target]
    for source, target in pairs:
        for p in inj.partitions():
            here, there = inj.log.topics[source][p], inj.log.topics[target][p]
            marks = [i for i, d in enumerate(here) if d.kind == "resolved"]
            theirs = _watermarks(there)
            spans = [
                (here[start].commit_ts, here[end].commit_ts, rows)
                for start, end in itertools.pairwise(marks)
                if here[end].commit_ts in inj.zones[zone]
                and here[start].commit_ts < here[end].commit_ts
                and {here[start].commit_ts, here[end].commit_ts} <= theirs.keys()
                and (rows := [i for i in range(start + 1, end) if here[i].kind == "rows"])
            ]
            if not spans:
                continue
            _, end_ts, rows = inj.rng.choice(spans)
            moved = here.pop(inj.rng.choice(rows))
            there.insert(theirs[end_ts], moved)
            return [Mark("topic-routing", p, moved, inj.oldest(moved), topic=target)]
    raise FaultPlacementError("no row message between watermarks two topics share")
