"""A naive TiCDC consumer: applies each message as it arrives. Do not copy it; learn from it.

It reads every partition of a topic, decodes each message, and at once applies what it holds
to PostgreSQL: a row change is an upsert or a delete by its handle key, a DDL is applied, and
each change goes to the applied log. It ignores the watermarks. That looks right and is not
(docs/consumers.md, "What a correct consumer does"):

* a replay after a TiCDC restart delivers changes again, and it applies them again, over
  whatever later changes of the same rows it applied in between;
* TiCDC orders rows only within a partition: the rows of one table, even of one key, spread
  over partitions, and it applies them in the order the partitions happen to arrive, not in
  commit-ts order;
* every DDL comes on every partition: it applies each copy, the first one before rows of
  other partitions that precede it;
* rows above the last watermark are not yet to be applied: it applies them anyway.

``check-consumer`` reports each of these at its key and coordinates. ``correct.py`` beside it
is the same program done right.

Run it (the kit and the consumer extra installed, a topic loaded with ``ticdc-conformance
replay``)::

    python examples/consumers/naive.py --bootstrap-servers 127.0.0.1:9092 --topic TOPIC \
        --protocol open --dsn postgresql://postgres@127.0.0.1:5432/postgres \
        --applied-log applied.jsonl
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from postgres_sink import AppliedLog, HandleKeys, PostgresSink, command_line, read_topic

from ticdc_conformance.reference import DecodedBootstrap, DecodedDDL, DecodedRow


def run(config: Mapping[str, str], topic: str, protocol: str, dsn: str, applied_log: Path) -> int:
    """Read ``topic`` to its end, applying each event as it comes; return the changes applied."""
    keys = HandleKeys()
    with PostgresSink(dsn) as sink, AppliedLog(applied_log) as log:
        for source, event in read_topic(config, topic, protocol):
            if isinstance(event, DecodedDDL | DecodedBootstrap):
                keys.learn(event)
            if isinstance(event, DecodedRow):
                sink.apply_row(event, keys)
            elif isinstance(event, DecodedDDL):
                sink.apply_ddl(event)
            else:
                continue  # a watermark or a BOOTSTRAP: nothing to apply, so ignored
            log.write(event, source)
            sink.commit()
        return log.lines


def main(argv: list[str] | None = None) -> int:
    """The command line (the module doc)."""
    config, args = command_line(__doc__, argv)
    changes = run(config, args.topic, args.protocol, args.dsn, args.applied_log)
    print(f"{changes} changes applied, as they came")
    return 0


if __name__ == "__main__":
    sys.exit(main())
