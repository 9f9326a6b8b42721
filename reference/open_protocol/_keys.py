"""Open Protocol key entries (ground truth §2.3): the checked key of one event."""

from __future__ import annotations

import re
from functools import partial
from typing import NamedTuple

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
_key = partial(tuple.__new__, Key)


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


_PLAIN = rb"[ !#-\[\]-~]*"
"""Printable ASCII but the double quote and the backslash: a JSON string's text as it is."""
_SIGNED = rb"0|-?[1-9][0-9]{0,18}"
"""A JSON integer of int64's digits at most, never ``-0`` (which the JSON reader keeps as
-0.0, so the full check refuses it)."""
_KEY_TEXT = re.compile(
    rb'\{"ts":(0|[1-9][0-9]{0,19}),"scm":"(%s)","tbl":"(%s)"(?:,"rid":(%s))?(?:,"ptn":(%s))?'
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


_TS = b'{"ts":'
_AFTER_TS: dict[bytes, tuple[str, str, int, int | None, int | None, bool, str | None]] = {}
"""The members after ``commit_ts`` of the keys read, by the text after ``ts`` (which decides
them all)."""
_MAX_AFTER_TS = 1024
"""Texts kept: the schema and table names are the message's to choose, the memory is not."""
_TS_DIGITS = 20


def key_from_text(data: bytes) -> Key | None:
    """The key in ``data`` read from its text, or ``None``: read and check the JSON.

    Only one of today's keys (``_KEY_TEXT``) that the full check would accept is read here.
    A key differs from the one before mostly in ``ts``: the rest of its text, once read, is
    looked up. In ``_KEY_TEXT``, ``ts`` is the first member and its integer the only one
    before the first comma, so the rest decides every other group, and a text matches when
    its ``ts`` integer does (the pattern's ``0|[1-9][0-9]{0,19}``) and the rest matched.
    """
    comma = data.find(b",", 6)
    if comma > 6 and data.startswith(_TS):
        rest = _AFTER_TS.get(data[comma:])
        digits = data[6:comma]
        if (
            rest is not None
            and len(digits) <= _TS_DIGITS
            and digits.isdigit()
            and (digits[0] != 0x30 or len(digits) == 1)  # no leading zero
            and (commit_ts := int(digits)) in UINT64
        ):
            return _key((commit_ts, *rest))
    key = _key_from_pattern(data)
    if key is not None and (len(_AFTER_TS) < _MAX_AFTER_TS or data[comma:] in _AFTER_TS):
        _AFTER_TS[data[comma:]] = key[1:]
    return key


def keys_from_texts(texts: list[bytes]) -> list[Key] | None:
    """``key_from_text`` of every text, or ``None`` when one of them is ``None``."""
    keys = list(map(key_from_text, texts))
    return None if None in keys else keys  # type: ignore[return-value]
