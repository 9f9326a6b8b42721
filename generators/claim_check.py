"""Claim-check storage beside a dump, and the ``file://`` storage reader the tools use.

TiCDC with ``large-message-handle-option=claim-check`` writes each oversized message to the
external storage ``claim-check-storage-uri`` names (docs/kafka.md#claim-check). A dump keeps
that storage's files in its folder ``_claim_check/``, each under its own file name (the
location's last segment): ``generate`` writes them as the records pass
(``storing_claim_checks``), and the stream checker reads them back by default
(``dump_storage``). Spark skips names starting with ``_``, so the folder never reaches it as
data. The module needs no ``pyarrow``: ``decode`` uses its reader.

``file_storage`` is the reader ``reference.claim_check.ClaimCheck`` takes: given a
``file://`` URI or a local folder, it reads a location's file name from that folder, as
TiCDC's consumers read a location's file name from the storage they are configured with.
TiCDC takes other external-storage URIs too (``s3://``, ``gcs://``/``gs://``, ``azblob://``/
``azure://``, ``hdfs://``, ``noop://``: pingcap/tiflow ``pkg/util/external_storage.go`` hands
the URI to TiDB's storage backends); the kit reads none of them, since reading one takes that
cloud's client and credentials: copy such a storage to a folder and give the folder.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

from ticdc_conformance.generators.simulator import Record
from ticdc_conformance.reference.claim_check import ClaimCheckStorage, file_name

__all__ = [
    "CLAIM_CHECK_FOLDER",
    "CLAIM_CHECK_SIDECAR",
    "REMOTE_SCHEMES",
    "dump_storage",
    "file_storage",
    "storage_folder",
    "storing_claim_checks",
]

CLAIM_CHECK_FOLDER = "_claim_check"
"""The folder of a dump holding the claim-check files its messages name (docs/dump-format.md)."""
CLAIM_CHECK_SIDECAR = ".claim-check"
"""A stream fixture's folder of claim-check files is its records file's name with this in
place of ``.parquet``, as its labels' ``.labels.json`` (docs/dump-format.md)."""

REMOTE_SCHEMES = frozenset({"s3", "gcs", "gs", "azblob", "azure", "noop", "hdfs"})
"""Storage schemes TiCDC accepts that the kit does not read."""


def storage_folder(uri: str) -> Path:
    """The local folder of a ``file://`` URI or plain path; ``ValueError`` for other storage."""
    parsed = urlparse(uri)
    if parsed.scheme in ("", "file"):
        if parsed.scheme == "file":
            if parsed.netloc not in ("", "localhost"):
                raise ValueError(f"{uri}: a file:// URI names a local folder, not a host")
            return Path(unquote(parsed.path))
        return Path(uri)
    why = "external storage" if parsed.scheme in REMOTE_SCHEMES else "an unknown scheme"
    raise ValueError(
        f"{uri}: {why} the kit does not read; copy the files to a folder and give "
        "file:///that/folder"
    )


def file_storage(uri: str) -> ClaimCheckStorage:
    """A reader of the claim-check files in ``uri``'s folder, by a location's file name.

    ``ValueError`` at once for storage that is not local; the reader raises ``OSError``
    (``FileNotFoundError``) for a file that is not there and ``LookupError`` for a location
    whose file name would leave the folder.
    """
    folder = storage_folder(uri)

    def read(location: str) -> bytes:
        name = file_name(location)
        if name in ("", ".", "..") or "\\" in name:
            raise LookupError(f"no file name in location {location!r}")
        return (folder / name).read_bytes()

    return read


def dump_storage(dump: Path) -> ClaimCheckStorage:
    """The reader of a dump's own claim-check files (``_claim_check/``)."""
    return file_storage(str(dump / CLAIM_CHECK_FOLDER))


def storing_claim_checks(records: Iterable[Record], dump: Path) -> Iterator[Record]:
    """``records`` as they are, each one's claim-check files written to ``dump/_claim_check``.

    The folder is made with the first file; a file is named by its location's file name.
    """
    folder = dump / CLAIM_CHECK_FOLDER
    for record in records:
        for stored in record.claim_checks:
            folder.mkdir(exist_ok=True)
            (folder / file_name(stored.location)).write_bytes(stored.content)
        yield record
