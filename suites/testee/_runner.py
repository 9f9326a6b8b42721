"""The language-neutral testee runner: an implementation in any language, over stdio.

A *testee* is a program that speaks the testee protocol (docs/testee-protocol.md): the runner
starts it once, says hello, learns what it takes (directions, protocols, profiles), then sends
one request line per case on its stdin and reads one response line from its stdout. The
runner is an adapter of the suite library: each case goes through ``check_case`` like a
Python adapter's, so the verdicts, diffs, known-failure files and reports are the same.

What can go wrong with the process, and what the runner does:

* it exits while handling a case (a crash): the case fails, with the exit status and the
  testee's last stderr lines; the testee is started again for the next case;
* it does not answer within the timeout: the case fails; the runner kills it (its whole
  process group) and starts it again;
* it answers a line that is not a response to the request (not JSON, another id): the case
  fails and the testee is started again, since its output is out of step; a response to the
  request that breaks the protocol otherwise (say, ``events`` not a list) only fails the case;
* it cannot be started again, fails its hello, or breaks more than ``max_restarts`` times:
  the run stops (``TesteeBrokenError``; the command's exit status 3).

A must-reject case the testee crashes or hangs on fails: only an ``error`` response is a
rejection. The testee's stderr is passed through, each line prefixed with ``testee:``.
"""

from __future__ import annotations

import json
import shlex
import sys
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import IO, Any

from ticdc_conformance.reference import ChangeEvent, Message
from ticdc_conformance.suites.gate._cases import Case
from ticdc_conformance.suites.gate._check import (
    AdapterFaultError,
    AdapterSkipError,
    Outcome,
    check_case,
)
from ticdc_conformance.suites.testee._process import MAX_LINE_BYTES, OutputTooLong, TesteeProcess
from ticdc_conformance.suites.testee._protocol import (
    Answer,
    Capabilities,
    ResponseError,
    case_request,
    hello_request,
    parse_answer,
    parse_hello,
)

__all__ = ["Testee", "TesteeBrokenError", "TesteeError", "run_testee"]

_STARTUP_TIMEOUT = 30.0
_TIMEOUT_HINT = " (--testee-timeout)"


class TesteeError(Exception):
    """The testee answered a request with an error: it rejects the case's input.

    ``category`` is the ``error.category`` it stated (``None``: none), compared with a
    must-reject case's own (``suites.gate.reported_category``: a mismatch is a
    warning, not a failure).
    """

    def __init__(self, message: str, category: str | None = None) -> None:
        super().__init__(message)
        self.category = category


class TesteeBrokenError(Exception):
    """The testee cannot be (re)started or said a broken hello: the run cannot go on."""


class _NoAnswerError(Exception):
    """No usable response line (the testee has been stopped).

    ``reason`` says why, ``ended`` how the testee was stopped, ``tail`` quotes its last stderr
    lines.
    """

    def __init__(self, reason: str, ended: str, tail: str) -> None:
        super().__init__(reason)
        self.reason, self.ended, self.tail = reason, ended, tail


class Testee:
    """A testee command: started on ``start``, restarted after it breaks, closed on ``close``.

    ``command`` is split like a POSIX shell line (no shell features: use ``sh -c '…'`` for
    those). ``log``, when given, receives every line sent (``> ``) and received (``< ``).
    """

    def __init__(
        self,
        command: str,
        *,
        timeout: float = 10.0,
        max_restarts: int = 20,
        kit_version: str = "",
        log: IO[str] | None = None,
        stderr: Callable[[], IO[str]] | None = None,
        startup_timeout: float = _STARTUP_TIMEOUT,
        max_line_bytes: int = MAX_LINE_BYTES,
    ) -> None:
        self.command = command
        self.max_line_bytes = max_line_bytes
        """The longest response line read; a longer one fails its case."""
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("--testee: an empty command")
        self.timeout = timeout
        self.startup_timeout = max(timeout, startup_timeout)
        """Seconds the hello may take (JVM start-ups are slow)."""
        self.max_restarts = max_restarts
        self.kit_version = kit_version
        self.restarts = 0
        self.capabilities: Capabilities | None = None
        self._log = log
        self._stderr = stderr or (lambda: sys.stderr)
        self._process: TesteeProcess | None = None
        self._lock = threading.Lock()

    def _echo(self, line: str) -> None:
        self._note(f"testee: {line}")

    def _note(self, text: str) -> None:
        with self._lock:
            print(text, file=self._stderr(), flush=True)

    def _record(self, direction: str, line: bytes | str) -> None:
        if self._log is not None:
            text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
            with self._lock:
                self._log.write(f"{direction} {text.rstrip(chr(10))}\n")

    def start(self) -> Capabilities:
        """Start the command and say hello; the capabilities it declares.

        Raises ``OSError`` when the command cannot be run, ``TesteeBrokenError`` when it
        does not say a valid hello.
        """
        self._process = TesteeProcess(self.argv, self._echo, max_line_bytes=self.max_line_bytes)
        try:
            line = self._exchange(hello_request(self.kit_version), timeout=self.startup_timeout)
        except _NoAnswerError as error:
            raise TesteeBrokenError(f"the testee {error.reason} to its hello{error.tail}") from None
        if line is None:
            status, tail = self._ended(), self._stderr_tail()
            self._stop()
            raise TesteeBrokenError(f"the testee exited ({status}) before its hello{tail}")
        try:
            capabilities = parse_hello(line)
        except ResponseError as error:
            self._stop()
            raise TesteeBrokenError(
                f"the testee's hello breaks the protocol: {error}: {_show(line)}"
            ) from None
        if self.capabilities is not None and capabilities != self.capabilities:
            self._stop()
            raise TesteeBrokenError("the restarted testee declares other capabilities")
        self.capabilities = capabilities
        return capabilities

    def ensure_running(self) -> None:
        """Restart the testee when it is not running; ``TesteeBrokenError`` past the budget.

        A testee found to have exited after its last answer is started again without failing
        a case (best effort: if it is still exiting, the next case sees it crash).
        """
        process = self._process
        if process is not None and process.popen.poll() is not None:
            self._note(
                f"the testee exited between cases ({process.exit_status()})"
                f"{self._stderr_tail(process)}"
            )
            self._stop()
        if self._process is not None:
            return
        if self.restarts >= self.max_restarts:
            raise TesteeBrokenError(
                f"the testee broke {self.restarts + 1} times; stopped "
                f"(--testee-restarts {self.max_restarts})"
            )
        self.restarts += 1
        try:
            self.start()
        except OSError as error:
            raise TesteeBrokenError(f"cannot restart the testee: {error}") from None

    def _exchange(self, request: dict[str, Any], *, timeout: float) -> str | None:
        """Send ``request``; the response line, or ``None`` when the testee has gone.

        ``_NoAnswerError`` (the testee is then stopped) when no line comes within ``timeout``
        or the line is not UTF-8.
        """
        process = self._process
        if process is None:
            raise AdapterFaultError("the testee is not running")
        # ASCII only (\uXXXX escapes): any JSON reader takes it whatever its locale
        line = json.dumps(request, separators=(",", ":")) + "\n"
        for stray in process.drain():
            text = (
                f"(more than {stray.limit} bytes without a newline, skipped)".encode()
                if isinstance(stray, OutputTooLong)
                else stray
            )
            self._record("<", text)
            self._note(f"warning: the testee wrote a line that answers no request: {_show(text)}")
        self._record(">", line)
        process.send(line.encode("utf-8"))
        try:
            raw = process.receive(timeout)
        except TimeoutError:
            self._record("#", f"no response within {timeout:g} s")
            self._stop()
            raise _NoAnswerError(
                f"did not answer within {timeout:g} s", "killed", self._stderr_tail(process)
            ) from None
        if raw is None:
            return None
        if isinstance(raw, OutputTooLong):
            self._record("#", f"more than {raw.limit} bytes without a newline")
            self._stop()
            raise _NoAnswerError(
                f"answered more than {raw.limit} bytes without a newline (--testee-max-line-bytes)",
                "stopped",
                self._stderr_tail(process),
            )
        self._record("<", raw)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self._stop()
            raise _NoAnswerError(
                f"answered a line that is not UTF-8: {_show(raw)}", "stopped", ""
            ) from None

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process = None

    def _ended(self) -> str:
        """How the process ended (``exit status N``, ``killed by signal S``)."""
        process = self._process
        if process is None:
            return "not running"
        return process.exit_status()

    def _stderr_tail(self, process: TesteeProcess | None = None) -> str:
        process = process or self._process
        if process is None or not process.stderr:
            return ""
        return "; its last stderr lines:\n" + "\n".join(f"  {line}" for line in process.stderr)

    def request(
        self,
        case: Case,
        *,
        messages: Sequence[Message] | None = None,
        events: Sequence[ChangeEvent] | None = None,
    ) -> Answer:
        """Send the case's request; its answer, or ``AdapterFaultError`` saying what broke."""
        kind = "decode" if events is None else "encode"
        request = case_request(
            case, messages=list(messages or []), events=None if events is None else list(events)
        )
        try:
            line = self._exchange(request, timeout=self.timeout)
        except _NoAnswerError as error:
            raise AdapterFaultError(
                f"the testee {error.reason}{_TIMEOUT_HINT if error.ended == 'killed' else ''}; "
                f"it was {error.ended} and is "
                f"started again for the next case{error.tail}"
            ) from None
        if line is None:
            status = self._ended()
            tail = self._stderr_tail()
            self._stop()
            raise AdapterFaultError(
                f"the testee crashed on this case ({status}); it is "
                f"started again for the next case{tail}"
            )
        try:
            return parse_answer(line, case_id=case.id, kind=kind)
        except ResponseError as error:
            if not error.in_step:
                self._stop()
            again = "" if error.in_step else "; it is started again for the next case"
            raise AdapterFaultError(
                f"malformed response from the testee: {error}: {_show(line)}{again}"
            ) from None

    def decoder(self, case: Case) -> Callable[..., list[dict[str, Any]]]:
        """A decoder adapter sending ``case``'s messages to the testee (with its options)."""

        def decode(
            protocol: str, messages: Sequence[Message], options: object = None
        ) -> list[dict[str, Any]]:
            del protocol, options  # the case says them
            answer = self.request(case, messages=messages)
            _raise_for(answer)
            return answer.events or []

        return decode

    def encoder(self, case: Case) -> Callable[..., list[Message]]:
        """An encoder adapter sending ``case``'s change events to the testee."""

        def encode(
            protocol: str, profile: str, options: object, events: Sequence[ChangeEvent]
        ) -> list[Message]:
            del protocol, profile, options  # the case says them
            answer = self.request(case, events=events)
            _raise_for(answer)
            return answer.messages or []

        return encode

    def close(self) -> None:
        """Ask the testee to shut down, and make sure it has."""
        if self._process is not None:
            shutdown = json.dumps({"type": "shutdown"}) + "\n"
            self._record(">", shutdown)
            self._process.close(shutdown.encode())
            self._process = None


def _raise_for(answer: Answer) -> None:
    if answer.skipped is not None:
        raise AdapterSkipError(f"the testee skips this case: {answer.skipped}")
    if answer.error is not None:
        raise TesteeError(answer.error, answer.error_category)


def _show(line: bytes | str, limit: int = 200) -> str:
    text = line.decode("utf-8", "replace") if isinstance(line, bytes) else line
    text = text.rstrip("\r\n")
    return json.dumps(text if len(text) <= limit else text[: limit - 1] + "…", ensure_ascii=False)


def run_testee(
    testee: Testee,
    cases: Iterable[Case],
    *,
    fixtures: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[Outcome], str | None]:
    """Check every case through ``testee`` (started already).

    ``progress`` is told (cases done, cases) after each case.

    Returns the outcomes, and why the run stopped early (``None`` when it did not).
    """
    outcomes: list[Outcome] = []
    names = {"testee": testee.command}
    chosen = list(cases)
    for case in chosen:
        try:
            testee.ensure_running()
        except TesteeBrokenError as error:
            return outcomes, f"{error}; {case.id} and the cases after it were not run"
        outcome = check_case(
            case,
            decoder=testee.decoder(case),
            encoder=testee.encoder(case),
            adapters=names,
            fixtures=fixtures,
        )
        outcomes.append(outcome)
        if progress is not None:
            progress(len(outcomes), len(chosen))
    return outcomes, None
