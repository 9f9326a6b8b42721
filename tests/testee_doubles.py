"""Testee doubles: the reference testee, getting one thing wrong on purpose.

Run as ``python testee_doubles.py MODE [CASE-PATTERN]``; the mode misbehaves on the cases whose
id matches the shell-style pattern (default: every case):

* ``reference``: the reference testee, unchanged;
* ``signed-bigint``: reads 64-bit unsigned values as signed, as a consumer using int64 would;
* ``crash``: says a panic on stderr and exits with status 2;
* ``hang``: never answers;
* ``garbage``: prints a line that is not JSON, then goes on;
* ``bad-events``: answers ``"events": [1]``;
* ``lenient``: answers every decode request with no events, never an error;
* ``skip-encode``: skips every encode request;
* ``decode-open``: declares only Open Protocol decoding (tiflow profile);
* ``hello-crash``: exits before its hello; ``hello-old``: says protocol version 0;
  ``hello-hang``: never says hello;
* ``chatty``: writes a stray line right after each answer;
* ``flip-byte``: flips the last byte of the first message an encoder writes;
* ``fickle``: crashes on the first matching case, then declares less when started again;
* ``crash-once``: crashes on the matching cases the first time only (a marker file
  ``crashed-once`` in the current folder remembers it);
* ``flood``: writes 4 MiB without a newline in place of the matching cases' answers;
* ``classed``: states the class of a must-reject case's category (its id's fourth part) as
  its error's ``category``; ``miscategorized``: states ``checksum`` for every error;
* ``grandchild``: on hello, starts a sleeping child in a session of its own and writes its
  process id to ``grandchild.pid`` in the current folder.
"""

from __future__ import annotations

import base64
import fnmatch
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from ticdc_conformance.fixtures.categories import category_class
from ticdc_conformance.suites.testee.reference import answer

UINT64_WRAP = 2**64


def _signed(events: list[dict[str, Any]]) -> None:
    for event in events:
        for image in ("before", "after"):
            for column in event.get(image) or []:
                value = column["value"]
                if type(value) is int and value >= 2**63:
                    column["value"] = value - UINT64_WRAP


def respond(  # noqa: C901, PLR0911, PLR0912 - one branch per misbehaviour the runner must survive
    mode: str, pattern: str, request: dict[str, Any]
) -> dict[str, Any] | str | None:
    """The response (a dict, or a raw line) to one request; ``None`` after shutdown."""
    response = answer(request)
    if request["type"] == "hello":
        if mode == "hello-crash":
            sys.stderr.write("boom: no config\n")
            sys.exit(1)
        if mode == "hello-hang":
            time.sleep(3600)
        if mode == "grandchild":
            child = subprocess.Popen(
                [sys.executable, "-c", "import time; time.sleep(3600)"],
                start_new_session=True,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            Path("grandchild.pid").write_text(str(child.pid))
        if mode == "hello-old":
            return {**(response or {}), "protocol_version": 0}
        if mode == "decode-open":
            declared = {"open": ["tiflow"], "maxwell": ["tiflow"]}
            return {**(response or {}), "capabilities": {"decode": declared}}
        if mode == "fickle" and Path("crashed-once").exists():
            return {**(response or {}), "capabilities": {"decode": {"open": ["tiflow"]}}}
        return response
    if response is None or not fnmatch.fnmatchcase(request["id"], pattern):
        return response
    if mode == "signed-bigint" and "events" in response:
        _signed(response["events"])
    elif mode == "crash" or (
        mode in {"crash-once", "fickle"} and not Path("crashed-once").exists()
    ):
        Path("crashed-once").touch()
        sys.stderr.write(f"panic: runtime error on {request['id']}\n")
        sys.exit(2)
    elif mode == "flip-byte" and response.get("messages"):
        value = base64.b64decode(response["messages"][0]["value"])
        flipped = value[:-1] + bytes([value[-1] ^ 0xFF])
        response["messages"][0]["value"] = base64.b64encode(flipped).decode()
    elif mode == "hang":
        time.sleep(3600)
    elif mode == "garbage":
        return "this is not JSON"
    elif mode == "flood":
        sys.stdout.write("x" * (4 * 1024 * 1024))
        sys.stdout.flush()
        time.sleep(3600)
    elif mode == "bad-events" and "events" in response:
        return {"id": request["id"], "events": [1]}
    elif mode == "lenient" and request["type"] == "decode":
        return {"id": request["id"], "events": []}
    elif mode == "classed" and "error" in response:
        response["error"]["category"] = category_class(request["id"].split(".")[3]).upper()
    elif mode == "miscategorized" and "error" in response:
        response["error"]["category"] = "checksum"
    elif mode == "skip-encode" and request["type"] == "encode":
        return {"id": request["id"], "skipped": {"reason": "no encoder yet"}}
    return response


def main() -> int:
    mode = sys.argv[1]
    pattern = sys.argv[2] if len(sys.argv) > 2 else "*"
    for line in sys.stdin:
        request = json.loads(line)
        response = respond(mode, pattern, request)
        if response is None:
            break
        text = response if isinstance(response, str) else json.dumps(response)
        matches = "id" in request and fnmatch.fnmatchcase(request["id"], pattern)
        if mode == "chatty" and matches:
            text += "\ndebug: that went well"
        sys.stdout.write(text + "\n")  # one write: the stray line comes at once
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
