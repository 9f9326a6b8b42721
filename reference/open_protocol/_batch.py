"""A message of row events read by its images' plans: the decoder's fast path.

TiCDC batches the rows of one table into one message, so a message's row images mostly share
one plan (``_plans``): the same column names, kinds and member shapes. ``decode_rows`` reads
such a message whole. A message of ``COLUMN_WISE_ROWS`` rows or more is read column by
column: each plan's members are checked for all of its images at once and each column's
values read across the images with the column's batch reader (``_many``), in C loops instead
of a Python step per column. A smaller one is read image by image, each image by its plan's
compiled reader (``_image_readers``). Value entries are orjson's drafts where it gives them
(``_gojson.draft_loads``), which the readers confirm (``_documents_of``). Whether any entry
may hold ``-0`` as a number (orjson reads it as 0, the plain path as -0.0) is asked once, of
the whole value; where one may, image by image such entries take the plain path, and column
by column the drafts are taken all the same and the entries where a number equal to 0 was
taken (flags, or a value of a kind that takes numbers) then checked (``_read_group``).

It returns exactly what the decoder's entry-by-entry path returns for the message, or
``None``, and the decoder then takes that path, which words every error: a message whose
every entry is a row event (no compression), whose every key is one of today's keys
(``key_from_text``), whose every value parses as an object of ``u``/``p``/``d`` images and
whose every image has a plan it satisfies, with values its readers read without an error, an
invalid value or a float they leave to the entry path. Everything else, from the framing on,
answers ``None``. Readers have no side effects, so reading a value again on the other path is
harmless.

The checks per plan are the ones its image reader (``_plans.reader_for``) makes per column:
each column an object of exactly ``t``, ``f`` and ``v`` (and ``h``, ``true``, for a handle
column), ``t`` and ``f`` the plan's as JSON integers (equal values, and no float or
``true``/``false`` standing for an integer).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain, repeat
from operator import itemgetter
from struct import Struct

from ticdc_conformance.reference._gojson import (
    DRAFT_FLOAT_BOUND,
    drafts,
    may_hold_negative_zero,
    orjson_active,
)
from ticdc_conformance.reference.decoded import DecodedColumn, DecodedEvent
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.open_protocol._entry import parse_json
from ticdc_conformance.reference.open_protocol._keys import Key, keys_from_texts
from ticdc_conformance.reference.open_protocol._layouts import Layout, layout_for
from ticdc_conformance.reference.open_protocol._plans import reader_for
from ticdc_conformance.reference.open_protocol._readers import Invalid
from ticdc_conformance.reference.open_protocol._rows import new_row

__all__ = ["COLUMN_WISE_ROWS", "decode_rows"]

_ROW_MEMBERS = frozenset({"u", "p", "d"})
_ROWS = {1}
"""Key ``t`` of a row event."""
_kind = itemgetter(3)
"""A ``Key``'s kind."""
_new_tuple = tuple.__new__
_BOOL = {bool}
_code, _flags, _value = itemgetter("t"), itemgetter("f"), itemgetter("v")
_handle = itemgetter("h")


_length = Struct(">Q").unpack_from
"""An entry's 8-byte big-endian length, read in place."""


def _documents(key: bytes, value: bytes) -> tuple[list[bytes], list[bytes]] | None:
    """The key and value entries of the frame (key from byte 8), when it is well formed."""
    keys: list[bytes] = []
    values: list[bytes] = []
    for data, first, out in ((key, 8, keys), (value, 0, values)):
        position, end = first, len(data)
        append = out.append
        while position < end:
            start = position + 8
            if start > end:  # a length cut short
                return None
            position = start + _length(data, position)[0]
            if position > end:  # an entry running past the end
                return None
            append(data[start:position])
    return (keys, values) if len(keys) == len(values) else None


def _documents_of(entries: list[bytes], *, zeros_checked: bool) -> tuple[list[Json], bool]:
    """The documents of value entries: orjson's draft where it gives one, else ``parse_json``'s.

    The readers here confirm a draft (``_gojson.draft_loads``): none of them takes a float of
    ``DRAFT_FLOAT_BOUND`` or more (``_image_readers``, ``_small_floats``), and an image
    nests three deep. ``zeros_checked`` false: drafts of texts that may hold ``-0`` too, for a
    message none of whose entries may (``decode_rows`` asks of its whole value) or for the
    column-wise path, which then checks the entries where it took a number equal to 0.
    With them, whether any is a draft.
    """
    if not orjson_active():
        return list(map(parse_json, entries)), False
    drafted = drafts(entries, zeros_checked=zeros_checked)
    if None not in drafted:  # mostly: every entry a draft
        return drafted, True
    documents = [
        parse_json(data) if document is None else document
        for data, document in zip(entries, drafted, strict=True)
    ]
    return documents, drafted.count(None) != len(drafted)


COLUMN_WISE_ROWS = 5
"""Rows from which a message is read column by column: a column of many rows is read faster
so, one of few rows no faster than image by image."""


def decode_rows(key: bytes, value: bytes) -> list[DecodedEvent] | None:
    """The row events of a message of row events only, or ``None`` (the module's rules)."""
    frame = _documents(key, value)
    if frame is None:
        return None
    keys = keys_from_texts(frame[0])
    if keys is None or set(map(_kind, keys)) != _ROWS:
        return None
    # orjson's drafts only: an entry may hold -0 as a number only where the value does, so
    # one scan of it, not one per entry (after an entry come the end or the next length,
    # whose first byte is 0)
    zeros = orjson_active() and may_hold_negative_zero(value)
    if len(frame[1]) < COLUMN_WISE_ROWS:
        return _by_image(keys, _documents_of(frame[1], zeros_checked=zeros)[0])
    return _column_wise(keys, frame[1], zeros=zeros)


def _column_wise(
    keys: list[Key], entries: list[bytes], *, zeros: bool
) -> list[DecodedEvent] | None:
    """The rows of value ``entries``, read column by column, or ``None``.

    ``zeros``: an entry may hold ``-0`` as a number (``_gojson.may_hold_negative_zero``).
    """
    documents, drafted = _documents_of(entries, zeros_checked=False)
    zeros = zeros and drafted  # orjson's zeros told only where it may have read -0 as 0
    rows: list[Images] = []
    groups: dict[tuple[str, ...], list[dict[str, Json]]] = {}
    owners: dict[tuple[str, ...], list[int]] = {}
    """The entry of each image of a group."""
    last: tuple[str, ...] | None = None
    group: list[dict[str, Json]] = []
    owner: list[int] = []
    for entry, document in enumerate(documents):
        images = _images(document)
        if images is None:
            return None
        rows.append(images)
        for image in images[1:]:
            if image is not None:  # an object (_images)
                names = tuple(image)
                # mostly the names of the image before: compared, not hashed again
                if names != last:
                    last = names
                    group = groups.setdefault(names, [])
                    owner = owners.setdefault(names, []) if zeros else []
                    if not group and layout_for(names) is None:
                        return None  # no plan yet: found out before the other values read
                group.append(image)
                if zeros:
                    owner.append(entry)
    # JSON has true and false only where its text spells them
    bools = any(b"true" in data or b"false" in data for data in entries)
    read: list[list[tuple[DecodedColumn, ...]]] = []
    zero_entries: set[int] = set()
    for names, group in groups.items():
        layout = layout_for(names)
        got = (
            None
            if layout is None
            else _read_group(layout, group, bools=bools, drafted=drafted, zeros=zeros)
        )
        if got is None:
            return None
        columns, zero_images = got
        read.append(columns)
        if zero_images:  # none unless zeros are told
            zero_entries.update(map(owners[names].__getitem__, zero_images))
    # a number equal to 0 taken where orjson may have read -0 (drafts unchecked for it)
    if any(may_hold_negative_zero(entries[entry]) for entry in zero_entries):
        return None
    return _assembled(keys, rows, list(groups.values()), read)


def _assembled(
    keys: list[Key],
    rows: list[Images],
    groups: list[list[dict[str, Json]]],
    read: list[list[tuple[DecodedColumn, ...]]],
) -> list[DecodedEvent]:
    """The rows of ``keys``, each image's columns those ``read`` for it in its group."""
    if len(groups) == 1:
        # mostly one group, whose images were taken in row order: each takes the next columns
        take = iter(read[0]).__next__
        return [
            new_row(key, op, None if before is None else take(), None if after is None else take())
            for key, (op, before, after) in zip(keys, rows, strict=True)
        ]
    by_image = {
        id(image): columns
        for group, group_columns in zip(groups, read, strict=True)
        for image, columns in zip(group, group_columns, strict=True)
    }
    return [
        new_row(
            key,
            op,
            None if before is None else by_image[id(before)],
            None if after is None else by_image[id(after)],
        )
        for key, (op, before, after) in zip(keys, rows, strict=True)
    ]


def _by_image(keys: list[Key], documents: list[Json]) -> list[DecodedEvent] | None:
    """The rows of ``documents``, each image read by its plan's compiled reader, or ``None``.

    Each document's images as ``_images`` takes them; each row as ``new_row`` makes it.
    """
    rows: list[DecodedEvent] = []
    for key, document in zip(keys, documents, strict=True):
        images = _images(document)
        if images is None:
            return None
        op, before, after = images
        old = new = None
        if before is not None and (old := _read_image(before)) is None:
            return None
        if after is not None and (new := _read_image(after)) is None:
            return None
        rows.append(new_row(key, op, old, new))
    return rows


def _read_image(image: Image) -> tuple[DecodedColumn, ...] | None:
    """The columns of ``image`` by its plan's reader, or ``None``."""
    read = reader_for(tuple(image))
    return None if read is None else read(image)


Image = dict[str, Json]
Images = tuple[Operation, Image | None, Image | None]


def _images(document: Json) -> Images | None:
    """The operation and the before and after images of a row value, or ``None``.

    As ``_decode._images`` reads them, each image an object or absent (``None``); ``None``
    for anything else.
    """
    if type(document) is not dict or not document.keys() <= _ROW_MEMBERS:
        return None
    if "d" in document:
        before = document["d"]
        if len(document) > 1 or type(before) is not dict:
            return None
        return "delete", before, None
    after = document.get("u")
    if type(after) is not dict:
        return None
    if "p" in document:
        before = document["p"]
        return ("update", before, after) if type(before) is dict else None
    return "insert", None, after


def _read_group(
    layout: Layout, group: Sequence[dict[str, Json]], *, bools: bool, drafted: bool, zeros: bool
) -> tuple[list[tuple[DecodedColumn, ...]], Iterable[int]] | None:
    """The columns of each image of ``group`` (all of the layout's names), or ``None``.

    With them, the images (positions in ``group``) that hold a number equal to 0 where
    orjson's draft may have read ``-0`` as 0 and the plain path would not have taken -0.0:
    flags (every image, when the layout has flags 0) or a value of a column that takes
    numbers (``_readers.takes_numbers``). ``drafted``: the images may be orjson's drafts
    (``_gojson.drafts``), whose large floats are left to the entry path; ``zeros``: drafts
    whose text may hold ``-0``, whose zeros are told (none looked for otherwise). ``bools``:
    the images may hold ``true`` or ``false``.
    """
    count, width = len(group), len(layout.names)
    columns = list(chain.from_iterable(map(dict.values, group)))
    try:
        # one list per member rather than a tuple per column: fewer objects for the
        # collector to track
        codes = list(map(_code, columns))  # type: ignore[arg-type]
        flags = list(map(_flags, columns))  # type: ignore[arg-type]
        values = list(map(_value, columns))  # type: ignore[arg-type]
    except (KeyError, TypeError):  # a member missing, or a column that is not an object
        return None
    expected = layout.expected(count)
    if (
        codes != expected.codes
        or flags != expected.flags
        # each column has t, f and v: the counts add up only if none has another member
        or sum(map(len, columns)) != expected.members  # type: ignore[arg-type]
        # an equal float makes the sum a float; true and false are judged below
        or type(sum(codes)) is not int
        or type(sum(flags)) is not int
        or (bools and _bools(layout, codes, flags))
    ):
        return None
    for index in layout.handle_columns:
        try:
            marks = list(map(_handle, columns[index::width]))  # type: ignore[arg-type]
        except KeyError:
            return None
        if marks.count(True) != count or set(map(type, marks)) != _BOOL:
            return None
    for index in layout.float_columns if drafted else ():
        if not _small_floats(values[index::width]):
            return None  # a float orjson may have read from an integer (draft_loads)
    try:
        read = [read_many(values[index::width]) for index, read_many in enumerate(layout.readers)]
    except (ValueError, Invalid):  # the entry-by-entry path words it or marks it
        return None
    built = map(
        _new_tuple,
        repeat(DecodedColumn),
        zip(
            expected.names,
            chain.from_iterable(zip(*read, strict=True)),
            expected.codes,
            expected.flags,
            expected.handles,
            repeat(None),
            repeat(None),
        ),
    )
    found: Iterable[int] = range(count) if zeros and layout.zero_flags else []
    for index in layout.number_columns if zeros and not layout.zero_flags else ():
        column = values[index::width]
        if 0 in column:  # == 0: 0.0, -0.0 and false as well
            found = [*found, *(k for k, value in enumerate(column) if value == 0)]
    return list(zip(*[built] * width, strict=True)), found


def _bools(layout: Layout, codes: list[Json], flags: list[Json]) -> bool:
    """Whether ``true`` or ``false`` stands for a type code or flags of 1 or 0."""
    width = len(layout.names)
    return any(bool in map(type, codes[index::width]) for index in layout.small_codes) or any(
        bool in map(type, flags[index::width]) for index in layout.small_flags
    )


def _small_floats(values: Sequence[Json]) -> bool:
    """Whether every float among ``values`` is of magnitude below ``DRAFT_FLOAT_BOUND``."""
    try:
        if max(map(abs, values)) < DRAFT_FLOAT_BOUND:  # type: ignore[arg-type]
            return True  # numbers only, all of them small
    except TypeError:  # a value that is not a number (NULL among them)
        pass
    bound = DRAFT_FLOAT_BOUND
    return all(-bound < value < bound for value in values if type(value) is float)
