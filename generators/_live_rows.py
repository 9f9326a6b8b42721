"""The ``shop`` workload's live rows: every live row key and its image, out of the Python heap.

A long stream keeps millions of rows alive, so they are held compactly: row keys come from
counters, so arrays indexed by key replace dictionaries, and each image is ``marshal`` bytes
(``packed``) in an ``ImageStore``, an unlinked temporary file the operating system removes
once it is closed. The random pick of a live row is the same draw whatever holds the images,
so a seed gives the same workload (docs/generators.md, "Memory and speed").
"""

from __future__ import annotations

import itertools
import marshal
import os
import tempfile
import weakref
from array import array
from pathlib import Path
from typing import Any

from ticdc_conformance.reference import DecimalValue, TimestampValue, Value
from ticdc_conformance.reference.values import valid_decimal, valid_timestamp

__all__ = ["STORE_BUFFER", "ImageStore", "LiveRows", "packed", "unpacked"]


class ImageStore:
    """Packed row images in an unnamed temporary file, appended and read back by position.

    The images of a long stream's live rows are most of the workload's memory (a million
    live rows at about 3 million messages), so they stay out of it: an image is appended
    (through a buffer of ``STORE_BUFFER`` bytes) and read back by its span, ``position << 16
    | length``. Nothing is ever rewritten; a replaced or deleted image is left where it is.
    The file is unlinked as soon as it is made, so the operating system removes it once its
    descriptor is closed (``close``, the store's collection or the end of the process).
    """

    def __init__(self) -> None:
        self.descriptor, name = tempfile.mkstemp(prefix="shop-rows-")
        Path(name).unlink()
        self.close = weakref.finalize(self, os.close, self.descriptor)
        """Close the file (once; later calls do nothing)."""
        self.written = 0
        """Bytes in the file; the buffer's bytes follow them."""
        self.buffer = bytearray()

    def add(self, packed: bytes) -> int:
        """Append ``packed``; its span."""
        if len(packed) >= 1 << 16:
            raise ValueError(f"a row image of {len(packed)} bytes is over the store's 64 KiB")
        span = (self.written + len(self.buffer)) << 16 | len(packed)
        self.buffer += packed
        if len(self.buffer) >= STORE_BUFFER:
            done = 0
            with memoryview(self.buffer) as view:
                while done < len(view):
                    done += os.pwrite(self.descriptor, view[done:], self.written + done)
            self.written += done
            self.buffer = bytearray()
        return span

    def get(self, span: int) -> bytes:
        """The bytes ``add`` gave ``span`` for."""
        position, length = span >> 16, span & 0xFFFF
        if position >= self.written:
            start = position - self.written
            return bytes(self.buffer[start : start + length])
        return os.pread(self.descriptor, length, position)


STORE_BUFFER = 1 << 20
"""Bytes of images ``ImageStore`` collects before it writes them to its file."""


class LiveRows:
    """The rows a table holds by row key: ``keys`` to draw one from, a removal in constant time.

    Held compactly, since a long stream keeps millions of rows alive: row keys come from
    counters, so arrays indexed by key replace dictionaries, and each image is kept as
    ``marshal`` bytes (``packed``) in an ``ImageStore`` shared by the tables, turned back
    into the same values when a statement reads it.
    """

    def __init__(self, store: ImageStore) -> None:
        self.store = store
        self.keys = array("q")
        """The live keys, in no order (a removal moves the last one into the gap)."""
        self.where = array("q")
        """Row key → its index in ``keys``; -1 when the row is not live."""
        self.spans = array("q")
        """Row key → the span of the row's packed image in ``store``; -1 when not live."""

    def __len__(self) -> int:
        return len(self.keys)

    def __contains__(self, key: int) -> bool:
        return key < len(self.spans) and self.spans[key] >= 0

    def image(self, key: int) -> tuple[Value, ...] | None:
        """The live image of ``key``, or ``None``."""
        span = self.spans[key] if key < len(self.spans) else -1
        return None if span < 0 else unpacked(self.store.get(span))

    def put(self, key: int, image: tuple[Value, ...]) -> None:
        if key >= len(self.spans):  # keys come from counters: grow ahead, not by one
            grow = max(key + 1 - len(self.spans), len(self.spans) // 2, 1024)
            self.spans.extend(itertools.repeat(-1, grow))
            self.where.extend(itertools.repeat(-1, grow))
        spans = self.spans
        if spans[key] < 0:
            self.where[key] = len(self.keys)
            self.keys.append(key)
        spans[key] = self.store.add(packed(image))

    def remove(self, key: int) -> None:
        index, last = self.where[key], self.keys.pop()
        self.where[key] = -1
        if last != key:
            self.keys[index], self.where[last] = last, index
        self.spans[key] = -1


_TAGGED = (DecimalValue, TimestampValue)


def packed(image: tuple[Value, ...]) -> bytes:
    """An image as ``marshal`` bytes: DECIMAL and TIMESTAMP values as tagged tuples."""
    for v in image:
        if isinstance(v, _TAGGED):
            break
    else:  # nothing to tag: marshal writes the image as it is
        return marshal.dumps(image)  # type: ignore[arg-type] # plain values only, as checked
    return marshal.dumps(
        tuple(
            [
                ("d", v.text)
                if isinstance(v, DecimalValue)
                else ("t", v.text, v.zone)
                if isinstance(v, TimestampValue)
                else v
                for v in image
            ]
        )
    )


def unpacked(packed: bytes) -> tuple[Value, ...]:
    """The image ``packed`` gave ``packed`` for (no ``Value`` is a tuple: tags are plain)."""
    image: tuple[Any, ...] = marshal.loads(packed)  # noqa: S302 - bytes packed wrote here
    for v in image:
        if type(v) is tuple:
            break
    else:  # no tags: the image as it was
        return image
    # the texts were valid values' (``packed``): no constructor's check again
    return tuple(
        [
            (valid_decimal(v[1]) if v[0] == "d" else valid_timestamp(v[1], v[2]))
            if type(v) is tuple
            else v
            for v in image
        ]
    )
