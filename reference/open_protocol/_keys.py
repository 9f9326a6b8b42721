"""Open Protocol key entries (ground truth §2.3): the checked key of one event."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial
from itertools import repeat
from typing import Any, NamedTuple

from ticdc_conformance.reference.jsondoc import Json, Wording
from ticdc_conformance.reference.mysql import INT64, UINT64
from ticdc_conformance.reference.open_protocol._entry import Entry

__all__ = ["KINDS", "Key", "check_key", "key_from_text", "keys_from_texts"]

_KEY_MEMBERS = frozenset({"ts", "scm", "tbl", "rid", "ptn", "t", "ohk", "ccl"})
_KEY_WORDING = Wording(not_object="key must be a JSON object", unknown="unknown key member")
KINDS = frozenset({1, 2, 3})
"""Key ``t``: row, DDL, resolved (§2.3)."""


class Key(NamedTuple):
    """A checked key entry."""

    commit_ts: int
    schema: str
    table: str
    kind: int
    row_id: int | None
    partition_id: int | None
    handle_key_only: bool
    location: str | None


def _integer(raw: dict[str, Json], name: str, entry: Entry, allowed: range) -> int | None:
    if name not in raw:
        return None
    value = raw[name]
    if type(value) is not int or value not in allowed:
        entry.fail(f"{name} must be an integer in [{allowed.start}, {allowed.stop})", name)
    return value


def _text(raw: dict[str, Json], name: str, entry: Entry) -> str | None:
    if name not in raw:
        return None
    value = raw[name]
    if type(value) is not str:
        entry.fail(f"{name} must be a string", name)
    return value


def check_key(document: Json, entry: Entry) -> Key:
    if type(document) is dict and (size := len(document)) <= _FAST_KEY_SIZE:
        # today's key of a row, DDL or resolved event, read without a step per member; any
        # other key, and every error, is the full check's
        get = document.get
        commit_ts, schema, table, kind = get("ts"), get("scm"), get("tbl"), get("t")
        row_id, partition_id = get("rid"), get("ptn")
        if (
            type(commit_ts) is int
            and commit_ts in UINT64
            and type(schema) is str
            and type(table) is str
            and type(kind) is int
            and kind in KINDS
            and size == 4 + (row_id is not None) + (partition_id is not None)
            and (row_id is None or (type(row_id) is int and row_id in INT64))
            and (partition_id is None or (type(partition_id) is int and partition_id in INT64))
        ):
            return _key((commit_ts, schema, table, kind, row_id, partition_id, False, None))
    return _checked_key(document, entry)


_FAST_KEY_SIZE = 6
"""``ts``, ``scm``, ``tbl``, ``t``; ``rid`` for a table without a handle; ``ptn`` for a
partitioned one."""
_new = tuple.__new__
_key = partial(_new, Key)


def _checked_key(document: Json, entry: Entry) -> Key:
    raw = entry.members(document, _KEY_MEMBERS, _KEY_WORDING)
    commit_ts = _integer(raw, "ts", entry, UINT64)
    if commit_ts is None:
        entry.fail("key has no ts")
    row_id = _integer(raw, "rid", entry, INT64)
    partition_id = _integer(raw, "ptn", entry, INT64)
    schema, table = _text(raw, "scm", entry) or "", _text(raw, "tbl", entry) or ""
    location = _text(raw, "ccl", entry)
    handle_key_only = raw.get("ohk", False)
    if type(handle_key_only) is not bool:
        entry.fail("ohk must be a boolean", "ohk")
    kind = raw.get("t")
    if type(kind) is not int or kind not in KINDS:
        entry.fail("t must be 1 (row), 2 (DDL) or 3 (resolved)", "t")
    return Key(commit_ts, schema, table, kind, row_id, partition_id, handle_key_only, location)


_TS = b'{"ts":'
_TS_GROUP = rb"(0|[1-9][0-9]{0,19})"
"""A key's ``ts`` integer: uint64's digits at most, no leading zero."""
_PLAIN = rb"[ !#-\[\]-~]*"
"""Printable ASCII but the double quote and the backslash: a JSON string's text as it is."""
_SIGNED = rb"0|-?[1-9][0-9]{0,18}"
"""A JSON integer of int64's digits at most, never ``-0`` (which the JSON reader keeps as
-0.0, so the full check refuses it)."""
_KEY_TEXT = re.compile(
    re.escape(_TS) + _TS_GROUP + rb',"scm":"(%s)","tbl":"(%s)"(?:,"rid":(%s))?(?:,"ptn":(%s))?'
    rb',"t":([123])(?:,"ptn":(%s))?\}' % (_PLAIN, _PLAIN, _SIGNED, _SIGNED, _SIGNED)
)
"""Today's keys as both profiles write them, compact: ``ts``, ``scm``, ``tbl``, then
``rid`` and ``ptn`` (classic) before ``t``, or ``ptn`` after it (new architecture)."""


def _key_from_pattern(data: bytes) -> Key | None:
    """The key in ``data`` read from its text, or ``None``: read and check the JSON.

    Only one of today's keys (``_KEY_TEXT``) that the full check would accept is read here.

    Such a text is an object of exactly those members, with strings that hold no escape and
    integers the JSON reader reads as these ints, so ``check_key`` of the parsed document
    returns this very key; the ranges are checked here, and anything out of them is left to
    the full path, which words the error.
    """
    match = _KEY_TEXT.fullmatch(data)
    if match is None:
        return None
    ts, schema, table, rid, ptn, kind, late_ptn = match.groups()
    if ptn is not None and late_ptn is not None:
        return None  # ptn twice: the JSON reader keeps the last, the full path decides
    commit_ts = int(ts)
    row_id = None if rid is None else int(rid)
    partition = ptn or late_ptn
    partition_id = None if partition is None else int(partition)
    if (
        commit_ts not in UINT64
        or (row_id is not None and row_id not in INT64)
        or (partition_id is not None and partition_id not in INT64)
    ):
        return None
    return _key(
        (commit_ts, schema.decode(), table.decode(), int(kind), row_id, partition_id, False, None)
    )


_RID = b',"rid":'
_TS_DIGITS = 20
"""The most digits of ``_TS_GROUP``."""
_TS_END = len(_TS)
"""Where a key's ``ts`` integer starts."""
_UINT64_STOP = UINT64.stop
"""The first ``ts`` past uint64, compared with rather than looked up in ``UINT64``."""


class _TableKeys(NamedTuple):
    """The keys of one table's events of one kind as a pattern of their own."""

    findall: Callable[[bytes], list[Any]]
    """The pattern's, one key a line: groups ``ts`` (and ``rid``) integers' text."""
    schema: str
    table: str
    kind: int
    partition_id: int | None
    row_ids: bool


_TABLES: dict[bytes, _TableKeys] = {}
"""Table patterns by the text after ``ts`` without ``rid``'s integer (which decides every
other member of the key)."""
_MAX_TABLES = 1024
"""Patterns kept: the schema and table names are the message's to choose, the memory is not."""


def _after_ts(data: bytes) -> tuple[bytes, bytes, bytes | None] | None:
    """The text after ``ts`` without ``rid``'s integer, when ``data`` starts as a key does.

    With it, the parts before and after that integer (``None`` after it without ``rid``).
    """
    comma = data.find(b",", _TS_END)
    if comma <= _TS_END or not data.startswith(_TS):
        return None
    at = data.find(_RID, comma)
    if at < 0:
        return data[comma:], b"", None
    start = at + len(_RID)
    end = data.find(b",", start)
    return None if end < 0 else (data[comma:start] + data[end:], data[comma:start], data[end:])


def _table_keys(data: bytes) -> _TableKeys | None:
    """The pattern of the keys whose text after ``ts`` is ``data``'s but for ``rid``'s integer.

    ``None`` when ``data`` is not one of today's keys (``_key_from_pattern``) and no pattern
    has its text after ``ts``, or when the patterns kept are too many.

    In ``_KEY_TEXT``, ``ts`` is the first member and its integer the only one before the
    first comma, and ``rid``'s integer runs from its member name to the next comma (no text
    member holds a quote, so none holds ``,"rid":``): the rest decides every other group. A
    text of that rest matches ``_KEY_TEXT`` exactly when its ``ts`` integer matches the
    pattern's and its ``rid`` integer ``_SIGNED``, and reads as the same key but for them.
    """
    split = _after_ts(data)
    if split is None:
        return None
    rest, head, tail = split
    known = _TABLES.get(rest)
    if known is not None or len(_TABLES) >= _MAX_TABLES:
        return known
    key = _key_from_pattern(data)
    if key is None:
        return None
    if tail is None:
        text = _TS_GROUP + re.escape(rest)
    else:
        text = _TS_GROUP + re.escape(head) + b"(%s)" % _SIGNED + re.escape(tail)
    pattern = re.compile(b"^" + re.escape(_TS) + text + b"$", re.MULTILINE)
    made = _TableKeys(
        pattern.findall,
        key.schema,
        key.table,
        key.kind,
        key.partition_id,
        row_ids=tail is not None,
    )
    _TABLES[rest] = made
    return made


_AFTER_TS: dict[bytes, tuple[str, str, int, int | None]] = {}
"""Schema, table, kind and partition of the keys without ``rid`` read, by their text after
``ts`` (which decides them all)."""


def key_from_text(data: bytes) -> Key | None:
    """The key in ``data`` read from its text, or ``None``: read and check the JSON.

    Only one of today's keys (``_KEY_TEXT``) that the full check would accept is read here.
    A key without ``rid`` differs from the one before of its table mostly in ``ts``: the rest
    of its text, once read, is looked up. In ``_KEY_TEXT``, ``ts`` is the first member and its
    integer the only one before the first comma, so the rest decides every other group, and a
    text matches when its ``ts`` integer does (the pattern's ``0|[1-9][0-9]{0,19}``) and the
    rest matched. A key with ``rid`` (a row's own integer) is read by the pattern.
    """
    comma = data.find(b",", _TS_END)
    if comma > _TS_END and data.startswith(_TS):
        known = _AFTER_TS.get(data[comma:])
        digits = data[_TS_END:comma]
        if (
            known is not None
            and comma <= _TS_END + _TS_DIGITS
            and digits.isdigit()  # ASCII digits only: no sign, so the integer is not negative
            and (digits[0] != 0x30 or comma == _TS_END + 1)  # no leading zero
            and (commit_ts := int(digits)) < _UINT64_STOP
        ):
            schema, table, kind, partition_id = known
            return _new(Key, (commit_ts, schema, table, kind, None, partition_id, False, None))
    key = _key_from_pattern(data)
    if key is not None and key.row_id is None:
        rest = data[comma:]
        if len(_AFTER_TS) < _MAX_TABLES or rest in _AFTER_TS:
            _AFTER_TS[rest] = (key.schema, key.table, key.kind, key.partition_id)
    return key


_TOGETHER = 5
"""Keys from which a message's keys are tried together: fewer are read faster one by one."""


def keys_from_texts(texts: list[bytes]) -> list[Key] | None:
    """``key_from_text`` of every text, or ``None`` when one of them is ``None``.

    The keys of a batch of one table's rows (``_TOGETHER`` or more; the first's and the last's
    pattern the same) are read together by its pattern, in C loops.
    """
    table = _table_keys(texts[0]) if len(texts) >= _TOGETHER else None
    if table is not None and _table_keys(texts[-1]) is table:
        keys = _together(table, texts)
        if keys is not None:
            return keys
    each = list(map(key_from_text, texts))
    return None if None in each else each  # type: ignore[return-value]


def _together(table: _TableKeys, texts: list[bytes]) -> list[Key] | None:
    """The keys of ``texts`` when every one is of ``table``'s pattern, else ``None``."""
    joined = b"\n".join(texts)
    if joined.count(b"\n") != len(texts) - 1:
        return None  # one key a line: no text may hold a newline (the pattern holds none)
    found = table.findall(joined)
    if len(found) != len(texts):
        return None
    row_ids: Iterable[int | None] = repeat(None)
    stamps: Iterable[bytes] = found
    if table.row_ids:
        stamps, rids = zip(*found, strict=True)
        integers = list(map(int, rids))
        if min(integers) < INT64.start or max(integers) >= INT64.stop:
            return None
        row_ids = integers
    commit_ts = list(map(int, stamps))
    if max(commit_ts) >= _UINT64_STOP:
        return None
    members = zip(
        commit_ts,
        repeat(table.schema),
        repeat(table.table),
        repeat(table.kind),
        row_ids,
        repeat(table.partition_id),
        repeat(False),  # noqa: FBT003 - the key's handle_key_only
        repeat(None),
    )
    return list(map(_new, repeat(Key), members))
