"""The progress line (tqdm): on a terminal, done of total with rate and time left; else silent.

A terminal is a text stream whose ``isatty`` says so (what tqdm and the commands ask); the
commands run for real (``generate``, ``check-stream`` on a shipped stream fixture).
"""

from __future__ import annotations

import io
import shutil
import sys
import time
from pathlib import Path

import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.progress import Progress


class Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_the_line_says_done_of_total_rate_and_time_left() -> None:
    out = Terminal()
    progress = Progress("checked", 1000, out, unit="messages")
    time.sleep(0.6)  # past tqdm's redraw interval
    progress.update(400)
    shown = out.getvalue()
    progress.done()
    last = shown.split("\r")[-1]
    assert last.startswith("checked:  40%")
    assert "400/1000" in last
    assert "messages/s]" in last
    assert "<00:0" in last  # the time left, [elapsed<left, rate]
    assert out.getvalue().endswith("\r")  # cleared before the summary


def test_a_total_known_later_is_shown() -> None:
    out = Terminal()
    progress = Progress("captured", out=out, unit="records")
    progress.update(5)
    progress.total(50)  # redrawn at once with the total
    progress.done()
    first, second = out.getvalue().split("\r")[1:3]
    assert first.startswith("captured: 0 records [")
    assert "/50 [" in second


@pytest.mark.parametrize(
    ("stream", "quiet", "shown"),
    [(Terminal, False, True), (Terminal, True, False), (io.StringIO, False, False)],
    ids=["terminal", "terminal with --quiet", "pipe"],
)
def test_only_a_terminal_gets_a_line(stream: type[io.StringIO], quiet: bool, shown: bool) -> None:
    out = stream()
    progress = Progress.for_terminal("replayed", 10, quiet=quiet, out=out)
    assert (progress is not None) is shown
    if progress is not None:
        progress.update(10)
        progress.done()
    assert bool(out.getvalue()) is shown


def _generate(tmp_path: Path, *extra: str) -> None:
    argv = ["generate", "--protocol", "open", "--messages", "600", "--out", str(tmp_path / "d")]
    assert main([*argv, *extra]) == 0


@pytest.mark.parametrize(
    ("terminal", "extra", "shown"),
    [(True, (), True), (True, ("--quiet",), False), (False, (), False)],
    ids=["terminal", "terminal with --quiet", "pipe"],
)
def test_generate_shows_progress_on_a_terminal_only(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    terminal: bool,
    extra: tuple[str, ...],
    shown: bool,
) -> None:
    err = Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    _generate(tmp_path, *extra)
    said = err.getvalue()
    assert ("simulated:" in said and "/600" in said) is shown
    assert ("\r" in said) is shown
    assert "wrote " in said.rsplit("\r", 1)[-1]  # the summary after the cleared line


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_check_stream_in_process_shows_progress_on_a_terminal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, terminal: bool
) -> None:
    [stream] = [
        s for s in fixtures.load_manifest()["streams"] if s["id"] == "stream.open.tiflow.clean"
    ]
    root = fixtures.default_root()
    shutil.copy(root / stream["records"], tmp_path / "part-00000.parquet")
    shutil.copy(root / stream["labels"], tmp_path / "_labels.json")
    err = Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert main(["check-stream", "--input", str(tmp_path), "--engine", "plain"]) == 0
    said = err.getvalue()
    assert ("checked:" in said and " messages" in said) is terminal
    assert ("\r" in said) is terminal


@pytest.mark.parametrize(
    ("terminal", "extra", "shown"),
    [(True, (), True), (True, ("--quiet",), False), (False, (), False)],
    ids=["terminal", "terminal with --quiet", "pipe"],
)
def test_run_shows_cases_done_of_cases_on_a_terminal_only(
    monkeypatch: pytest.MonkeyPatch, terminal: bool, extra: tuple[str, ...], shown: bool
) -> None:
    err = Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    argv = ["run", "--decoder", "reference", "--protocol", "open", "--profile", "tiflow"]
    assert main([*argv, "--case", "open.tiflow.decode.types.*", *extra]) == 0
    said = err.getvalue()
    assert ("checked:" in said and " cases" in said) is shown
    assert ("\r" in said) is shown
