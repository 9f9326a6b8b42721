"""fixtures fetch against a real HTTP server on 127.0.0.1: good, corrupt and wrongly summed
bundles, mirrors, the pinned hash, and a cache whose every part can go bad."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import subprocess
import sys
import tarfile
import threading
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import malicious_bundles
import pytest

from ticdc_conformance.fixtures import _fetch, bundles, kit_version, verify

VERSION = kit_version()
OTHER = "0.0.9"  # a version this package pins no hash for
REPOSITORY = Path(__file__).resolve().parent.parent


class _Handler(SimpleHTTPRequestHandler):
    requests: ClassVar[list[str]] = []

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        del size
        self.requests.append(f"{code} {self.path}")

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base's name
        del format, args


@dataclass(frozen=True, slots=True)
class Server:
    """A folder served over HTTP, and the requests it answered (``status path``)."""

    folder: Path
    url: str
    requests: list[str]


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1 :]


def _release(folder: Path, version: str) -> tuple[bytes, str]:
    """Pack the shipped tree as ``version`` into ``folder``: the archive bytes, the tar's sha256."""
    packed = bundles.pack(folder, version=version)
    return packed.archive.read_bytes(), packed.sha256


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """good/ (this version), corrupt/ (bad gzip), altered/ (a good gzip of a changed tar),
    other/ (an unpinned version with its SHA256SUMS), wrong-sums/, garbled-sums/, no-line/."""
    www = tmp_path_factory.mktemp("www")
    archive, _ = _release(www / "good", VERSION)
    (www / "corrupt").mkdir()
    (www / "corrupt" / bundles.archive_name(VERSION)).write_bytes(_flip(archive, len(archive) // 2))
    (www / "altered").mkdir()
    altered = gzip.compress(_flip(gzip.decompress(archive), 4096))
    (www / "altered" / bundles.archive_name(VERSION)).write_bytes(altered)
    other, _ = _release(www / "other", OTHER)
    sums = {
        "wrong-sums": f"{'0' * 64}  {bundles.archive_name(OTHER)}\n",
        "garbled-sums": "<html>not found</html>\n",
        "no-line": f"{'0' * 64}  something-else.tar.gz\n",
    }
    for name, text in sums.items():
        (www / name).mkdir()
        (www / name / bundles.archive_name(OTHER)).write_bytes(other)
        (www / name / bundles.SUMS).write_text(text)

    class Handler(_Handler):
        requests: ClassVar[list[str]] = []

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(www)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield Server(www, f"http://127.0.0.1:{httpd.server_address[1]}", Handler.requests)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def _cached(cache: Path, version: str) -> list[str]:
    folder = cache / version
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_a_pinned_version_needs_only_the_archive_and_then_the_cache(
    server: Server, tmp_path: Path
) -> None:
    server.requests.clear()
    fetched = bundles.fetch(VERSION, [f"{server.url}/good"], cache=tmp_path)
    assert server.requests == [f"200 /good/{bundles.archive_name(VERSION)}"]  # no SHA256SUMS
    assert fetched.source == f"{server.url}/good/{bundles.archive_name(VERSION)}"
    assert fetched.notes == ()
    assert verify(fetched.root, regenerate=False) == []
    again = bundles.fetch(VERSION, [f"{server.url}/good"], cache=tmp_path)
    assert (again.root, again.source, again.notes) == (fetched.root, "cache", ())
    assert len(server.requests) == 1
    assert bundles.cached_root(VERSION, cache=tmp_path) == fetched.root


def _refused(server: Server, cache: Path, version: str, mirror: str) -> str:
    """Why fetching ``version`` from one mirror fails (after the URL), with nothing cached."""
    with pytest.raises(bundles.BundleError) as raised:
        bundles.fetch(version, [f"{server.url}/{mirror}"], cache=cache)
    assert _cached(cache, version) == []
    prefix = f"no good bundle {version}: {server.url}"
    assert str(raised.value).startswith(prefix)
    return str(raised.value).removeprefix(prefix)


@pytest.mark.parametrize(
    ("mirror", "message"),
    [
        ("corrupt", "/corrupt/{archive}: not a whole gzip file"),
        (
            "altered",
            "/altered/{archive}: the uncompressed bundle's sha256 is {altered}, not the sha256 pinned by this package {pin}",
        ),
        ("missing", "/missing/{archive}: HTTP 404"),
    ],
)
def test_a_bad_download_of_a_pinned_version_is_refused(
    server: Server, tmp_path: Path, mirror: str, message: str
) -> None:
    altered = gzip.decompress(
        (server.folder / "altered" / bundles.archive_name(VERSION)).read_bytes()
    )
    expected = message.format(
        archive=bundles.archive_name(VERSION),
        pin=bundles.pinned(VERSION),
        altered=hashlib.sha256(altered).hexdigest(),
    )
    assert _refused(server, tmp_path, VERSION, mirror).startswith(expected)


@pytest.mark.parametrize(
    ("mirror", "message"),
    [
        (
            "wrong-sums",
            "/wrong-sums/{archive}: sha256 {actual}, but {url}/wrong-sums/SHA256SUMS lists "
            + "0" * 64,
        ),
        (
            "garbled-sums",
            "/garbled-sums/SHA256SUMS line 1 is not '<sha256>  <file>': '<html>not found</html>'",
        ),
        ("no-line", "/no-line/SHA256SUMS lists no {archive}"),
    ],
)
def test_a_wrong_checksum_file_never_poisons_the_cache(
    server: Server, tmp_path: Path, mirror: str, message: str
) -> None:
    actual = hashlib.sha256(
        (server.folder / "other" / bundles.archive_name(OTHER)).read_bytes()
    ).hexdigest()
    expected = message.format(archive=bundles.archive_name(OTHER), actual=actual, url=server.url)
    assert _refused(server, tmp_path, OTHER, mirror) == expected
    fetched = bundles.fetch(OTHER, [f"{server.url}/other"], cache=tmp_path)  # a good mirror next
    assert fetched.notes == ()
    assert _cached(tmp_path, OTHER) == [
        bundles.top_folder(OTHER),
        bundles.bundle_name(OTHER),
        f"{bundles.bundle_name(OTHER)}.sha256",
    ]


def test_mirrors_are_tried_in_order_and_the_failures_named(server: Server, tmp_path: Path) -> None:
    fetched = bundles.fetch(
        VERSION,
        [f"{server.url}/missing", f"{server.url}/corrupt", f"{server.url}/good"],
        cache=tmp_path,
    )
    assert fetched.source.startswith(f"{server.url}/good/")
    assert [n.split(": ")[1] for n in fetched.notes] == [
        f"{server.url}/missing/{bundles.archive_name(VERSION)}",
        f"{server.url}/corrupt/{bundles.archive_name(VERSION)}",
    ]
    assert all(n.startswith("skipped a mirror: ") for n in fetched.notes)


def test_a_given_sha256_pins_another_version(server: Server, tmp_path: Path) -> None:
    tar = gzip.decompress((server.folder / "other" / bundles.archive_name(OTHER)).read_bytes())
    server.requests.clear()
    fetched = bundles.fetch(
        OTHER, [f"{server.url}/wrong-sums"], cache=tmp_path, sha256=hashlib.sha256(tar).hexdigest()
    )
    assert server.requests == [f"200 /wrong-sums/{bundles.archive_name(OTHER)}"]  # its sums unread
    assert fetched.root.name == bundles.top_folder(OTHER)
    with pytest.raises(bundles.BundleError, match="not the given sha256 " + "1" * 64):
        bundles.fetch(OTHER, [f"{server.url}/other"], cache=tmp_path / "fresh", sha256="1" * 64)


def _tamper_tar(folder: Path) -> str:
    tar = folder / bundles.bundle_name(folder.name)
    tar.write_bytes(_flip(tar.read_bytes(), 10_000))
    return f"{tar}: sha256 "


def _tamper_record(folder: Path) -> str:
    (folder / f"{bundles.bundle_name(folder.name)}.sha256").write_text("garbage\n")
    return f"{bundles.bundle_name(folder.name)}.sha256 line 1 is not"


def _tamper_tree(folder: Path) -> str:
    """A changed, a missing and a stray file: the note names all three."""
    root = folder / bundles.top_folder(folder.name)
    path = root / "data/open/tiflow.types.bit.m000.value"
    path.write_bytes(_flip(path.read_bytes(), 20))
    (root / "manifest.json").unlink()
    (root / "data/open/extra.value").write_bytes(b"x")
    return "manifest.json: missing; data/open/tiflow.types.bit.m000.value: sha256 "


def _tamper_sums(folder: Path) -> str:
    path = folder / bundles.top_folder(folder.name) / bundles.SUMS
    path.write_bytes(path.read_bytes() + b"\n")
    return "SHA256SUMS: differs from the bundle's"


@pytest.mark.parametrize(
    ("version", "tamper", "downloads_again"),
    [
        (VERSION, _tamper_tar, True),
        (OTHER, _tamper_tar, True),
        (OTHER, _tamper_record, True),
        (VERSION, _tamper_tree, False),
        (VERSION, _tamper_sums, False),
    ],
    ids=["tarball", "unpinned-tarball", "checksum-record", "unpacked-tree", "unpacked-sums"],
)
def test_a_corrupt_cache_is_named_and_replaced(
    server: Server,
    tmp_path: Path,
    version: str,
    tamper: Callable[[Path], str],
    downloads_again: bool,
) -> None:
    mirror = [f"{server.url}/{'good' if version == VERSION else 'other'}"]
    first = bundles.fetch(version, mirror, cache=tmp_path)
    named = tamper(tmp_path / version)
    with pytest.raises(bundles.BundleError, match="run 'ticdc-conformance fixtures fetch"):
        bundles.cached_root(version, cache=tmp_path)
    server.requests.clear()
    again = bundles.fetch(version, mirror, cache=tmp_path)
    [note] = again.notes
    assert named in note, note
    if tamper is _tamper_tree:
        assert "data/open/extra.value: not listed in SHA256SUMS" in note
    assert note.endswith("; fetched again" if downloads_again else "; unpacked again")
    assert sum(r.endswith(".tar.gz") for r in server.requests) == (1 if downloads_again else 0)
    assert bundles.cached_root(version, cache=tmp_path) == first.root
    assert bundles.fetch(version, mirror, cache=tmp_path).notes == ()


def test_a_malicious_bundle_matching_its_hash_is_refused_and_forgotten(tmp_path: Path) -> None:
    version = "0.0.0"  # malicious_bundles.TOP's
    outside = tmp_path / "outside"
    outside.mkdir()
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in malicious_bundles.attacks(outside)["symlink"]:
            tar.addfile(info, None if data is None else io.BytesIO(data))
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / bundles.archive_name(version)).write_bytes(gzip.compress(raw.getvalue()))
    digest = hashlib.sha256(raw.getvalue()).hexdigest()
    with pytest.raises(bundles.BundleError, match=r"bundle member '.*/link' is a symbolic link"):
        bundles.fetch(version, [str(tmp_path / "mirror")], cache=tmp_path / "cache", sha256=digest)
    assert list(outside.iterdir()) == []
    assert _cached(tmp_path / "cache", version) == []


def test_the_default_location_is_the_project_release_page(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    urls = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]["urls"]
    monkeypatch.delenv(bundles.URL_VARIABLE, raising=False)
    assert _fetch.default_urls(VERSION) == [f"{urls['Releases']}/download/v{VERSION}"]
    monkeypatch.setenv(bundles.URL_VARIABLE, f"{server.url}/missing {server.url}/{{version}}")
    (server.folder / OTHER).mkdir(exist_ok=True)
    for name in (bundles.archive_name(OTHER), bundles.SUMS):
        (server.folder / OTHER / name).write_bytes((server.folder / "other" / name).read_bytes())
    fetched = bundles.fetch(OTHER, cache=tmp_path)
    assert fetched.source == f"{server.url}/{OTHER}/{bundles.archive_name(OTHER)}"
    assert "/missing/" in fetched.notes[0]


def _cli(*args: str, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TICDC_CONFORMANCE_CACHE": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", "fixtures", "fetch", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )


@pytest.mark.parametrize(
    ("args", "status", "said"),
    [
        (
            ["--url", "{url}/good"],
            0,
            "fixtures are in {cache}/{version}/ticdc-conformance-fixtures-{version} (from {url}/good/",
        ),
        (
            ["--url", "{url}/altered"],
            1,
            "error: no good bundle {version}: {url}/altered/ticdc-conformance-fixtures-{version}.tar.gz: the uncompressed bundle's sha256 is ",
        ),
        (["0.0.9", "--url", "{url}/wrong-sums"], 1, "but {url}/wrong-sums/SHA256SUMS lists 0000"),
        (
            ["--url", "ftp://127.0.0.1/x"],
            2,
            "error: ftp://127.0.0.1/x: only http, https, file URLs and local folders are read",
        ),
        (
            ["--sha256", "abc"],
            2,
            "error: --sha256 takes the 64 hex digits of the uncompressed bundle",
        ),
        (["../../etc", "--url", "{url}/good"], 2, "error: '../../etc' is not a kit version"),
    ],
    ids=["good", "altered", "wrong-sums", "scheme", "bad-sha256", "bad-version"],
)
def test_cli_fetch_says_what_is_wrong(
    server: Server, tmp_path: Path, args: list[str], status: int, said: str
) -> None:
    result = _cli(*(a.format(url=server.url) for a in args), cache=tmp_path)
    assert result.returncode == status, result.stderr
    assert said.format(url=server.url, version=VERSION, cache=tmp_path) in result.stderr
    assert "Traceback" not in result.stderr
