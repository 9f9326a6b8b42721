"""The example runners and testees in JavaScript and Java (examples/runners/).

With only their toolchain and the bundle they check its SHA256SUMS, pass every Open Protocol
decode and must-reject case, refuse a bundle tampered by one byte naming the file, and fail a
case whose expectation breaks a comparison rule of docs/fixture-format.md; as testees they
pass the same cases through ``run --testee``, and their decoders agree with the reference on
mutated messages. Each toolchain is skipped, saying why, where it is missing: node (npm
installs lossless-json once, into a scratch copy, when examples/runners/js has no
node_modules), javac, or a jackson-core jar (pyspark's jars/ folder, or Debian's
libjackson2-core-java).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from ticdc_conformance.fixtures import (
    _safe_tar,
    bundles,
    kit_version,
    load_manifest,
)
from ticdc_conformance.fixtures.categories import category_class, same_category
from ticdc_conformance.reference import Message
from ticdc_conformance.reference.decoding import decode_leniently
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.forms import write_message
from ticdc_conformance.suites import Case, load_cases
from ticdc_conformance.suites.gate._check import as_json, json_diff

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runners"
OPEN_CASES = [c for c in load_manifest()["cases"] if c["protocol"] == "open"]
COMPRESSED = sum("compression" in c["tags"] for c in OPEN_CASES if c["direction"] != "encode")
"""Decode and reject cases of compressed messages: the example decoders have no snappy or LZ4,
so the runners leave them out and ``run`` takes those they fail as known failures."""
DECODE = sum(c["direction"] == "decode" and "compression" not in c["tags"] for c in OPEN_CASES)
VALUE_CHECKS = sum("invalid-value" in c["tags"] for c in OPEN_CASES if c["direction"] == "reject")
"""Must-reject cases of values outside their column type: the example decoders do not check
values, so the runners leave them out and ``run`` takes them as known failures."""
REJECT = (
    sum(c["direction"] == "reject" and "compression" not in c["tags"] for c in OPEN_CASES)
    - VALUE_CHECKS
)
KNOWN_FAILURES = EXAMPLES / "known-failures.txt"


@dataclass(frozen=True, slots=True)
class Toolchain:
    """How to run one language's example: the runner (add the bundle folder) and the testee."""

    name: str
    runner: list[str]
    testee: str
    files: list[Path]
    """What a fresh folder needs besides the bundle, to run ``fresh_runner`` there."""
    fresh_runner: list[str]


def _run(
    command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, cwd=cwd, env=env
    )


@pytest.fixture(scope="session")
def javascript(tmp_path_factory: pytest.TempPathFactory) -> Toolchain:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None:
        pytest.skip("node is not installed: the JavaScript example needs Node 20+")
    folder = EXAMPLES / "js"
    if not (folder / "node_modules" / "lossless-json").is_dir():
        if npm is None:
            pytest.skip("npm is not installed: it installs the JavaScript example's lossless-json")
        folder = tmp_path_factory.mktemp("js") / "js"
        shutil.copytree(EXAMPLES / "js", folder, ignore=shutil.ignore_patterns("node_modules"))
        installed = _run([npm, "ci", "--no-audit", "--no-fund", "--prefer-offline"], cwd=folder)
        if installed.returncode != 0:
            reason = f"npm ci could not install lossless-json: {installed.stderr.strip()[-500:]}"
            if os.environ.get("CI"):
                pytest.fail(reason)  # CI reaches the npm registry: a failure there is real
            pytest.skip(reason)
    files = [folder / name for name in ("package.json", "runner.mjs", "src", "node_modules")]
    return Toolchain(
        name="javascript",
        runner=[node, str(folder / "runner.mjs")],
        testee=shlex.join([node, str(folder / "testee.mjs")]),
        files=files,
        fresh_runner=[node, "runner.mjs"],
    )


def _jackson_core() -> Path | None:
    """A jackson-core jar: pyspark's (the test extra installs it), else Debian's."""
    spec = importlib.util.find_spec("pyspark")
    jars = Path(spec.origin).parent / "jars" if spec and spec.origin else None
    found = sorted(jars.glob("jackson-core-2.*.jar")) if jars and jars.is_dir() else []
    debian = Path("/usr/share/java/jackson-core.jar")
    return found[-1] if found else (debian if debian.is_file() else None)


@pytest.fixture(scope="session")
def java(tmp_path_factory: pytest.TempPathFactory) -> Toolchain:
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("javac is not installed: the Java example needs a JDK 17+")
    jar = _jackson_core()
    if jar is None:
        pytest.skip(
            "no jackson-core jar: install the test extra (pyspark ships one) or Debian's libjackson2-core-java"
        )
    classes = tmp_path_factory.mktemp("java") / "classes"
    sources = sorted(str(p) for p in (EXAMPLES / "java" / "src").rglob("*.java"))
    compiled = _run(
        [
            javac,
            "-Xlint:all",
            "-Werror",
            "--release",
            "17",
            "-d",
            str(classes),
            "-cp",
            str(jar),
            *sources,
        ]
    )
    assert compiled.returncode == 0, compiled.stderr
    classpath = os.pathsep.join([str(classes), str(jar)])
    return Toolchain(
        name="java",
        runner=[java, "-cp", classpath, "conformance.Runner"],
        testee=shlex.join([java, "-cp", classpath, "conformance.Testee"]),
        files=[classes, jar],
        fresh_runner=[java, "-cp", os.pathsep.join(["classes", jar.name]), "conformance.Runner"],
    )


@pytest.fixture(params=["javascript", "java"])
def toolchain(request: pytest.FixtureRequest) -> Toolchain:
    chosen: Toolchain = request.getfixturevalue(request.param)
    return chosen


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> bundles.Packed:
    return bundles.pack(tmp_path_factory.mktemp("release"))


@pytest.fixture(scope="session")
def bundle(release: bundles.Packed, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unpacked bundle (shared: tests that tamper with it restore it)."""
    tar = tmp_path_factory.mktemp("tar") / bundles.bundle_name(kit_version())
    tar.write_bytes(gzip.decompress(release.archive.read_bytes()))
    return _safe_tar.extract(
        tar, tmp_path_factory.mktemp("bundle") / "unpacked", bundles.top_folder(kit_version())
    )


def _passed(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert f"open decode: {DECODE} passed, 0 failed\n" in result.stdout
    assert f"open reject: {REJECT} passed, 0 failed\n" in result.stdout
    assert f"open reject: {VALUE_CHECKS} invalid-value case(s) left out" in result.stdout
    assert f"open: {COMPRESSED} compressed case(s) left out" in result.stdout
    assert f"verdict: PASS: {DECODE + REJECT} passed, 0 failed" in result.stdout


def test_runner_passes_every_open_protocol_case(toolchain: Toolchain, bundle: Path) -> None:
    result = _run([*toolchain.runner, str(bundle)])
    _passed(result)
    assert (
        f"{len(bundles.parse_sums((bundle / 'SHA256SUMS').read_text(), 'SHA256SUMS'))} files match SHA256SUMS"
        in result.stdout
    )


def _flip(path: Path, at: int) -> bytes:
    original = path.read_bytes()
    path.write_bytes(original[:at] + bytes([original[at] ^ 1]) + original[at + 1 :])
    return original


def test_a_fresh_folder_with_only_the_toolchain_and_the_bundle(
    toolchain: Toolchain, release: bundles.Packed, tmp_path: Path
) -> None:
    tar = shutil.which("tar")
    if tar is None:
        pytest.skip("no tar command to unpack the bundle with")
    for path in (release.archive, release.sums, *toolchain.files):
        copy = shutil.copytree if path.is_dir() else shutil.copy2
        copy(path, tmp_path / path.name)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}  # nothing of the kit's, no PYTHONPATH
    unpacked = _run([tar, "-xzf", release.archive.name], cwd=tmp_path, env=env)
    assert unpacked.returncode == 0, unpacked.stderr
    top = bundles.top_folder(kit_version())
    _passed(_run([*toolchain.fresh_runner, top], cwd=tmp_path, env=env))
    _flip(tmp_path / top / "data/open/tiflow.types.bigint-unsigned.m000.value", 30)
    refused = _run([*toolchain.fresh_runner, top], cwd=tmp_path, env=env)
    assert refused.returncode == 2
    assert (
        f"refused: the bundle {top} fails its checksums:\n  data/open/tiflow.types.bigint-unsigned.m000.value: sha256 "
        in refused.stderr
    )
    assert "verdict" not in refused.stdout


@pytest.mark.parametrize(
    ("name", "named"),
    [
        (
            "data/open/ticdc.types.double.decoded.jsonl",
            "data/open/ticdc.types.double.decoded.jsonl: sha256 ",
        ),
        ("manifest.json", "manifest.json: sha256 "),
        ("SHA256SUMS", "SHA256SUMS"),
        (
            "data/craft/tiflow.types.int.m000.value",
            "data/craft/tiflow.types.int.m000.value: sha256 ",
        ),
    ],
)
def test_a_bundle_tampered_by_one_byte_is_refused(
    toolchain: Toolchain, bundle: Path, name: str, named: str
) -> None:
    original = _flip(bundle / name, 0)
    try:
        result = _run([*toolchain.runner, str(bundle)])
    finally:
        (bundle / name).write_bytes(original)
    assert result.returncode == 2
    assert result.stderr.startswith(f"refused: the bundle {bundle} fails its checksums:\n  ")
    assert named in result.stderr


EDITS = [  # case, file, old, new, what the runner must say (None: just that it fails)
    (
        "open.tiflow.decode.types.float",
        "463267587686662144",
        "463267587686662145",
        "/commit_ts: expected 463267587686662145, got 463267587686662144",
    ),
    ("open.tiflow.decode.types.double", '"value":-0.0', '"value":0.0', ": expected 0.0, got -0.0"),
    ("open.tiflow.decode.types.int", '"value":1,', '"value":1.0,', ": expected 1.0, got 1"),
    (
        "open.tiflow.decode.types.binary",
        '"AP+Afw=="',
        '"AP+Afg=="',
        '/value/bytes: expected "AP+Afg==", got "AP+Afw=="',
    ),
    ("open.tiflow.decode.types.varchar", '"测试 é"', '"测试 e"', None),
    ("open.ticdc.decode.events.transaction", "\n", "\n", None),  # the first two events swapped
]


def _rewrite(root: Path, name: str, data: bytes) -> None:
    """Change a file and every checksum that vouches for it, as a fixture author would."""
    old, new = (hashlib.sha256(d).hexdigest() for d in ((root / name).read_bytes(), data))
    (root / name).write_bytes(data)
    manifest = load_manifest(root)
    for fixture in manifest["fixtures"].values():
        if name in fixture["sha256"]:
            fixture["sha256"][name] = new
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    sums = (root / "SHA256SUMS").read_text()
    sums = sums.replace(f"{old}  {name}\n", f"{new}  {name}\n")
    sums = re.sub(
        r"^[0-9a-f]{64}  manifest\.json$",
        f"{hashlib.sha256((root / 'manifest.json').read_bytes()).hexdigest()}  manifest.json",
        sums,
        flags=re.MULTILINE,
    )
    (root / "SHA256SUMS").write_text(sums)


@pytest.fixture(scope="module")
def edited(bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the bundle whose expectations break one comparison rule per EDITS case."""
    root = tmp_path_factory.mktemp("edited") / "bundle"
    shutil.copytree(bundle, root)
    fixtures = load_manifest(root)["fixtures"]
    for case_id, old, new, _ in EDITS:
        [case] = [c for c in OPEN_CASES if c["id"] == case_id]
        name = fixtures[case["fixture"]]["decoded"]
        text = (root / name).read_text("utf-8")
        if old == new:
            first, second, rest = text.split("\n", 2)
            assert first != second
            changed = f"{second}\n{first}\n{rest}"
        else:
            assert old in text
            changed = text.replace(old, new, 1)
        _rewrite(root, name, changed.encode())
    return root


def test_runner_fails_a_case_that_breaks_a_comparison_rule(
    toolchain: Toolchain, edited: Path
) -> None:
    result = _run([*toolchain.runner, str(edited)])
    assert result.returncode == 1, result.stderr
    failed = re.findall(r"^FAIL (\S+)$", result.stdout, flags=re.MULTILINE)
    assert sorted(failed) == sorted(case_id for case_id, *_ in EDITS)
    for case_id, _, _, said in EDITS:
        report = result.stdout.split(f"FAIL {case_id}\n", 1)[1].split("\nFAIL ", 1)[0]
        assert "decoded events differ" in report
        if said is not None:
            assert said in report, report
    assert (
        f"verdict: FAIL: {DECODE + REJECT - len(EDITS)} passed, {len(EDITS)} failed"
        in result.stdout
    )


def test_testee_passes_every_open_protocol_case_through_run(
    toolchain: Toolchain,
) -> None:
    result = _run(
        [
            sys.executable,
            "-m",
            "ticdc_conformance.cli",
            "run",
            "--protocol",
            "open",
            "--testee",
            toolchain.testee,
            "--xfail",
            str(KNOWN_FAILURES),
        ]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    total = DECODE + REJECT + VALUE_CHECKS + COMPRESSED
    assert f"{total} case(s), 0 unexpected result(s)" in result.stderr
    # the category each rejection states is the case's or its class (docs/testee-protocol.md)
    assert "rejected as" not in result.stderr, result.stderr[-3000:]


def _request(case: Case) -> str:
    messages = [
        {
            "key": None if m.key is None else base64.b64encode(m.key).decode(),
            "value": None if m.value is None else base64.b64encode(m.value).decode(),
        }
        for m in case.all_messages()
    ]
    request = {
        "type": "decode",
        "id": case.id,
        "protocol": case.protocol,
        "profile": case.profile,
        "options": case.options,
        "messages": messages,
    }
    return json.dumps(request)


def test_testee_names_the_category_of_each_rejection(toolchain: Toolchain) -> None:
    """Every must-reject case the example refuses, it refuses with the case's category's class
    (docs/testee-protocol.md): it says why, not only that it refuses."""
    cases = [
        c
        for c in load_cases(protocols=["open"])
        if c.direction == "reject" and "invalid-value" not in c.tags
    ]
    hello = json.dumps({"type": "hello", "protocol_version": 1, "kit_version": kit_version()})
    lines = [hello, *map(_request, cases), json.dumps({"type": "shutdown"})]
    result = subprocess.run(
        shlex.split(toolchain.testee),
        input="".join(f"{line}\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    _, *answers = (json.loads(line) for line in result.stdout.splitlines())
    assert [a["id"] for a in answers] == [c.id for c in cases]
    stated = {a["id"]: a["error"].get("category") for a in answers}
    wrong = {
        c.id: stated[c.id]
        for c in cases
        if not same_category(stated[c.id] or "", c.error["category"] if c.error else "")
    }
    assert wrong == {}
    assert {category_class(str(c)) for c in stated.values()} >= {"framing", "length", "type"}


def _mutate(rng: random.Random, data: bytes) -> bytes:
    """One seeded change of the kinds that trip decoders: bit flips, cuts, odd numbers and text."""
    if not data:
        return data
    at = rng.randrange(len(data))
    kind = rng.randrange(5)
    if kind == 0:
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    if kind == 1:
        return data[:at]
    if kind == 2:
        digits = [i for i, byte in enumerate(data) if 0x30 <= byte <= 0x39]
        at = rng.choice(digits) if digits else at
        return data[:at] + bytes([rng.choice(b"0123456789-.e")]) + data[at + 1 :]
    if kind == 3:
        spots = [m.end() for m in re.finditer(rb'"(?:v|t|f|ts)":', data)] or [at]
        at = rng.choice(spots)
        inserted = rng.choice(
            [
                b"-0,",
                b"1e400,",
                b"2.0,",
                b'"x",',
                b"true,",
                b"[],",
                b"18446744073709551616,",
                b"null,",
            ]
        )
        return data[:at] + inserted + data[at:]
    inserted = rng.choice([b"\xff", b"\xed\xa0\x80", b"\\u00", b'"', b"\\ud800", b"\xc3\xa9"])
    return data[:at] + inserted + data[at:]


def _mutations(count: int) -> Iterator[tuple[str, list[Message]]]:
    rng = random.Random(20)  # noqa: S311 - seeded test data, not secrets
    cases = [
        c for c in load_cases(protocols=["open"]) if c.direction != "encode" and c.all_messages()
    ]
    for _ in range(count):
        case = rng.choice(cases)
        messages = list(case.all_messages())
        index = rng.randrange(len(messages))
        key, value = messages[index].key, messages[index].value
        if rng.random() < 0.3 and key is not None:
            key = _mutate(rng, key)
        else:
            value = _mutate(rng, value or b"")
        messages[index] = Message(key=key, value=value)
        yield case.profile, messages


def _reference(messages: list[Message]) -> tuple[list[object] | None, bool]:
    """The reference's events, decoding invalid values anyway (``None``: it rejects), and
    whether rejecting is right too: the example decoders check no values (known-failures.txt),
    but may refuse a number their own parsing cannot hold."""
    try:
        events, warnings = decode_leniently("open", messages)
    except DecodeError:
        return None, True
    return as_json(events), bool(warnings)


def test_decoder_agrees_with_the_reference_on_mutated_messages(toolchain: Toolchain) -> None:
    disagreements, rejected = [], 0
    command = shlex.split(toolchain.testee)
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as testee:
        assert testee.stdin is not None
        assert testee.stdout is not None

        def ask(request: Mapping[str, object]) -> dict[str, object]:
            testee.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
            testee.stdin.flush()  # type: ignore[union-attr]
            answer: dict[str, object] = json.loads(testee.stdout.readline())  # type: ignore[union-attr]
            return answer

        ask({"type": "hello", "protocol_version": 1})
        for number, (profile, messages) in enumerate(_mutations(400)):
            expected, either = _reference(messages)
            request = {
                "type": "decode",
                "id": f"m{number}",
                "protocol": "open",
                "profile": profile,
                "options": {},
                "messages": [write_message(m) for m in messages],
            }
            answer = ask(request)
            rejected += expected is None
            if "error" in answer and expected is not None and not either:
                disagreements.append(
                    f"{request}: the reference accepts, the testee answers {answer}"
                )
            elif "error" not in answer and expected is None:
                disagreements.append(
                    f"{request}: the reference rejects, the testee answers {answer}"
                )
            elif "error" not in answer and json_diff(expected, answer["events"]):
                disagreements.append(f"{request}: {json_diff(expected, answer['events'])}")
        testee.stdin.write('{"type": "shutdown"}\n')
        testee.stdin.close()
        assert testee.wait(timeout=60) == 0
    assert disagreements == []
    assert 100 < rejected < 350  # the mutations reach both outcomes
