"""Progress of a Spark job in the job's own phases, not Spark's stage numbers.

A Spark check runs in phases a person can name: ``check-stream`` reads the dump, decodes the
partitions and applies the rules, matches broadcasts across partitions, collects findings;
``check-consumer`` joins one table after another; ``expected-state`` decodes the partitions,
applies the changes, writes each table and the change log. Each phase is one Spark job group
(``SparkContext.setJobGroup``, its description the phase's name, so the Spark UI says it too),
and a thread asks Spark's ``StatusTracker`` every ``every`` seconds for the tasks of the group's
jobs: done of total, summed over their stages (a total known only once Spark has planned a
stage, until then the line shows the phase alone; it grows when Spark plans a further stage, as
adaptive query execution does after a shuffle).

The line is the kit's progress line (``generators.progress``: tqdm on stderr, only on a
terminal and without ``--quiet``), rewritten as the phase changes: ``check-stream: decoding
partitions and applying rules (2 of 4): 12/40 tasks``. The session's own console progress bar
is off (``spark.ui.showConsoleProgress=false``, ``suites/stream/spark.py``), so the two never
share the terminal. A ``listener`` receives every update (``PhaseUpdate``), the phases in the
order they ran, whether or not a line is shown.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Self

from ticdc_conformance.generators.progress import Progress

if TYPE_CHECKING:
    from pyspark import SparkContext

__all__ = ["PhaseUpdate", "Phases"]

_GROUPS = itertools.count(1)


@dataclass(frozen=True, slots=True)
class PhaseUpdate:
    """A phase started (``done`` 0), progressed, or ended (``ended``)."""

    phase: str
    group: str
    """The phase's Spark job group."""
    index: int
    """1 for the first phase."""
    planned: int | None
    """Phases planned, when known in advance."""
    done: int
    total: int | None
    """Tasks of the phase's stages; ``None`` before Spark has planned any."""
    ended: bool = False


class Phases:
    """The phases of one Spark command; use ``with phases.phase(name):`` around each."""

    def __init__(
        self,
        context: SparkContext | None,
        *,
        command: str,
        quiet: bool = False,
        planned: int | None = None,
        listener: Callable[[PhaseUpdate], None] | None = None,
        out: IO[str] | None = None,
        every: float = 0.5,
    ) -> None:
        self._context = context
        self._command = command
        self._quiet = quiet
        self._planned = planned
        self._listener = listener
        self._out = out
        self._every = every
        self._lock = threading.Lock()
        self._index = 0
        self._line: Progress | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close_line()

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Run the body as one phase: its Spark jobs in one job group, its progress shown."""
        self._index += 1
        group = f"ticdc-conformance-{next(_GROUPS)}"
        self._emit(PhaseUpdate(name, group, self._index, self._planned, 0, None))
        self._open_line(name)
        stop = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(name, group, stop), daemon=True)
        if self._context is not None:
            self._context.setJobGroup(group, f"{self._command}: {name}")
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
            if self._context is not None:
                self._context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
                self._context.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
            done, total = self._tasks(group)
            self._emit(
                PhaseUpdate(name, group, self._index, self._planned, done, total, ended=True)
            )
            self._close_line()

    def _tasks(self, group: str) -> tuple[int, int | None]:
        """Tasks done and in all of the group's jobs' stages, as Spark knows them now."""
        if self._context is None:
            return 0, None
        tracker = self._context.statusTracker()
        done, total, known = 0, 0, False
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for stage in () if info is None else info.stageIds:
                stage_info = tracker.getStageInfo(stage)
                if stage_info is not None:
                    known = True
                    done += stage_info.numCompletedTasks
                    total += stage_info.numTasks
        return done, (total if known else None)

    def _watch(self, name: str, group: str, stop: threading.Event) -> None:
        last: tuple[int, int | None] = (0, None)
        while not stop.wait(self._every):
            now = self._tasks(group)
            if now != last:
                last = now
                self._emit(PhaseUpdate(name, group, self._index, self._planned, *now))

    def _emit(self, update: PhaseUpdate) -> None:
        with self._lock:
            if self._listener is not None:
                self._listener(update)
            if self._line is not None and update.total is not None:
                self._line.advance(min(update.done, update.total), update.total)

    def _open_line(self, name: str) -> None:
        of = f" ({self._index} of {self._planned})" if self._planned else ""
        with self._lock:
            self._line = Progress.for_terminal(
                f"{self._command}: {name}{of}", quiet=self._quiet, unit="tasks", out=self._out
            )

    def _close_line(self) -> None:
        with self._lock:
            if self._line is not None:
                self._line.done()
                self._line = None
