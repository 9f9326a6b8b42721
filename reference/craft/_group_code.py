"""One compiled reader per column-group header: the group's lengths, values and columns.

A column group's header (its column count, then the chunks of name IDs, type codes and flags,
ground truth §3.2) fixes everything of the group but its value lengths and values: how many
columns, each one's reader, type code, flags and handle-key bit. ``group_reader`` writes a
function for one header as Python source, unrolled per column, and compiles it once; the
header's readers, codes and flags reach it as the names of its own globals (no name, type or
value of a table's is in the source: positions and local names only). Globals, not default
arguments: a call copies every keyword-only default into the frame, a global is looked up
only where it is used.

The function reads a group of its header in this order: the value lengths (one byte each
where they are NULL's 1 or a size under 64, else ``leading_uvarints`` or the full chunk read),
a ``None`` where they do not fill the group to its end exactly, the names of the header's IDs
(``Terms.lookup``, kept per message and header in ``names``), then each column's value read by
its reader in column order and the ``DecodedColumn`` tuples built; ``None`` where a reader
refuses a value (``ValueError``) or finds it invalid (``Invalid``), for the decoder's full
read. The group's end lies within the message (``_fast_groups.fast_group``): a float is
unpacked where it lies.

A second function reads an UPDATE whose new and old groups both have the header in one call:
each group's type, count and header bytes checked, then both groups' lengths, the names once,
and both groups' values, new then old; ``None`` wherever either group's read would give
``None`` (the caller then reads each group alone, which gives the same outcome, a term ID
out of order raising as it would for the new group).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ticdc_conformance.reference._fast_checks import DATE_BYTES, DATETIME_BYTES, TIMESTAMP_BYTES
from ticdc_conformance.reference.craft._groups import Terms
from ticdc_conformance.reference.craft._readers import (
    DECIMAL_CHARACTERS,
    DECIMAL_TEXT,
    FLOAT64,
    LARGEST_FLOATS,
    TEXT_TESTS,
    Invalid,
    Known,
    Reader,
    reader,
    stated,
)
from ticdc_conformance.reference.craft._uvarints import leading_uvarints
from ticdc_conformance.reference.craft.primitives import read_uvarint_chunk
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.validation import code_check
from ticdc_conformance.reference.values import valid_decimal, valid_timestamp

__all__ = ["GroupReader", "UpdateReader", "group_reader", "inline_read"]

GroupReader = Callable[
    [bytes, int, int, Terms, dict[bytes, list[str]], int], tuple[DecodedColumn, ...] | None
]
"""``(value, at, end, terms, names, position)``: the columns of the group whose lengths start
at ``at`` and whose header starts at ``position``, or ``None``."""
_Columns = tuple[DecodedColumn, ...]
UpdateReader = Callable[
    [bytes, int, int, int, Terms, dict[bytes, list[str]]], tuple[_Columns, _Columns] | None
]
"""``(value, start, middle, end, terms, names)``: the old and new columns of an UPDATE whose
new group (``start..middle``) and old group (``middle..end``) both have the header, or
``None``; what ``read`` gives for each group, the names looked up once."""

_ONE_BYTE_LENGTHS = bytes([1, *range(0, 0x80, 2)])
"""The ZigZag lengths of one byte that are no fault: NULL (1) and sizes up to 63 (even)."""
_ODD = (1).__and__


_COMBINABLE = {DATE_BYTES, DATETIME_BYTES, TIMESTAMP_BYTES}
"""Tests whose patterns may be joined into one (``_runs``): no capturing group, and their only
lookarounds are lookaheads at their start that read 4 characters of a match at least 10 long,
so a joined match of several reads each one's bytes exactly as its own test does."""


TextTest = Callable[[bytes], object]
"""A DATE, DATETIME or TIMESTAMP column's sufficient test of its bytes (``_fast_checks``)."""


def _runs(tests: Sequence[TextTest | None]) -> list[tuple[int, int]]:
    """The runs of two adjacent columns or more with combinable tests: (first, last + 1)."""
    runs, j = [], 0
    while j < len(tests):
        k = j
        while k < len(tests) and tests[k] in _COMBINABLE:
            k += 1
        if k - j >= 2:
            runs.append((j, k))
        j = max(k, j + 1)
    return runs


def _joined(tests: Sequence[TextTest]) -> Callable[[bytes, int, int], object]:
    """One pattern of the tests' patterns in a row, each a group of its own."""
    patterns = [test.__self__.pattern for test in tests]  # type: ignore[attr-defined]
    return re.compile(b"".join(b"(%s)" % pattern for pattern in patterns)).fullmatch


def inline_read(
    j: int, type_code: int, flags: int, read: Reader
) -> tuple[str, dict[str, object], TextTest | None]:
    """Column ``j``'s value read as an expression of ``@``, its names and its text test.

    ``@`` stands for the value's bytes; the expression may use ``value``, ``@a`` (where the
    bytes start) and ``@l`` (their ZigZag length) as well. The text test is the DATE, DATETIME
    or TIMESTAMP test the expression starts with, else ``None`` (``_runs`` joins adjacent ones).

    Where the bulk reader ``read`` starts with a test that is sufficient (``_readers``), the
    test and its answer are written out and anything else goes to the column's reader, which
    tests again and takes the full read: the same outcome as ``read`` itself. Binary strings
    are the slice itself (``bytes`` of ``bytes`` is the same object), text their ``decode``.
    """
    if read is bytes:
        return "@", {}, None
    if read is bytes.decode:
        return "@.decode()", {}, None
    known = getattr(read, "__self__", None)
    if type(known) is Known and read == known.__getitem__:  # a table of values read, in C
        return f"k{j}[@]", {f"k{j}": known}, None
    checked = code_check(type_code, flags)
    # a string kind's reader is ``bytes`` or ``bytes.decode`` (above) or a general one; the
    # kinds below have their own reader whatever the flags (``_readers._make``)
    name = checked[0].name if checked is not None else None
    stated_type = checked is not None and stated(checked[0])
    full: dict[str, object] = {f"g{j}": reader(type_code, flags)}
    used: dict[str, object]
    if name in TEXT_TESTS and stated_type:
        used = {f"m{j}": TEXT_TESTS[name], **full}
        return f"(d.decode() if m{j}(d := @) else g{j}(d))", used, TEXT_TESTS[name]
    if name == "timestamp" and stated_type:
        used = {f"m{j}": TIMESTAMP_BYTES, "_ts": valid_timestamp, **full}
        return f"(_ts(d.decode()) if m{j}(d := @) else g{j}(d))", used, TIMESTAMP_BYTES
    if name == "decimal" and stated_type:
        used = {f"m{j}": DECIMAL_TEXT, "_dec": valid_decimal, **full}
        return (
            f"(_dec(d.decode()) if len(d := @) <= {DECIMAL_CHARACTERS} and m{j}(d) else g{j}(d))",
            used,
            None,
        )
    if name is not None and name in LARGEST_FLOATS and stated_type:
        # unpacked where it lies, no slice: eight bytes are a length of 16 (ZigZag)
        used = {
            "_f64": FLOAT64.unpack_from,
            f"hi{j}": LARGEST_FLOATS[name],
            f"lo{j}": -LARGEST_FLOATS[name],
            **full,
        }
        return (
            f"(x if @l == 16 and lo{j} <= (x := _f64(value, @a)[0]) <= hi{j} else g{j}(@))",
            used,
            None,
        )
    return f"r{j}(@)", {}, None


def group_reader(  # noqa: PLR0917 - a header's members, by position
    data: bytes,
    ids: list[int],
    types: Sequence[int],
    flags: Sequence[int],
    handles: Sequence[bool],
    readers: Sequence[Reader],
) -> tuple[GroupReader, UpdateReader]:
    """The compiled readers of the groups whose header is ``data`` (see the module doc).

    One reads one group; the other an UPDATE's two groups (both of this header) in one call.
    """
    count = len(ids)
    names: dict[str, object] = {
        "_new": tuple.__new__,
        "_C": DecodedColumn,
        "_ONE": _ONE_BYTE_LENGTHS,
        "_ODD": _ODD,
        "_leading": leading_uvarints,
        "_chunk": read_uvarint_chunk,
        "_DecodeError": DecodeError,
        "_Invalid": Invalid,
        "_data": data,
        "_ids": ids,
    }
    forms: list[str] = []
    tests: list[TextTest | None] = []
    for j in range(count):
        names[f"r{j}"] = readers[j]
        names[f"t{j}"] = types[j]
        names[f"f{j}"] = flags[j]
        names[f"h{j}"] = handles[j]
        form, used, test = inline_read(j, types[j], flags[j], readers[j])
        forms.append(form)
        tests.append(test)
        names.update(used)
    # runs of text columns tested by one joined pattern, their group ends checked; any other
    # outcome reads them one by one
    for first, last in _runs(tests):
        names[f"c{first}"] = _joined([tests[j] for j in range(first, last)])  # type: ignore[misc]
    new = _Group(forms, tests, "a", "l", "v")
    old = _Group(forms, tests, "b", "z", "w")
    ns = ", ".join(f"n{j}" for j in range(count))
    names_lines = [
        "    found = names.get(_data)",
        "    if found is None:",
        "        found = names[_data] = terms.lookup(_ids, position)",
        f"    {ns}{',' if count == 1 else ''} = found",
    ]
    width = len(data) + 2  # the group type, the count and the header
    lines = [
        "def read(value, at, end, terms, names, position):",
        *new.lengths("at", "end"),
        *names_lines,
        "    try:",
        *new.joined(),
        f"        return {new.columns()}",
        "    except (ValueError, _Invalid):",
        "        return None",
        "",
        "",
        "def update(value, start, middle, end, terms, names):",
        "    position = start + 2",
        f"    at, after = start + {width}, middle + {width}",
        "    if not (",
        "        at <= middle and after <= end",
        f"        and value[start] == 1 and value[start + 1] == {count}",
        f"        and value[middle] == 2 and value[middle + 1] == {count}",
        "        and value.startswith(_data, position) and value.startswith(_data, middle + 2)",
        "    ):",
        "        return None",
        *new.lengths("at", "middle"),
        *old.lengths("after", "end"),
        *names_lines,
        "    try:",
        *new.joined(),
        *old.joined(),
        f"        return {old.columns()}, {new.columns()}",
        "    except (ValueError, _Invalid):",
        "        return None",
    ]
    source = "\n".join(lines)  # positions and local names only: nothing of a table's
    exec(compile(source, "<craft group reader>", "exec"), names)  # noqa: S102
    return names["read"], names["update"]  # type: ignore[return-value]


class _Group:
    """The source of one group's reading: its lengths, its joined tests and its columns.

    ``a``, ``n`` and ``v`` name its locals (where each value starts, each ZigZag length, each
    value of a joined run), so that an UPDATE's two groups read in one function.
    """

    def __init__(
        self,
        forms: Sequence[str],
        tests: Sequence[TextTest | None],
        a: str,
        n: str,
        v: str,
    ) -> None:
        self.count = len(forms)
        self.tests = tests
        self.a, self.n, self.v = a, n, v
        self.values = [
            f"None if {n}{j} == 1 else "
            + form.replace("@a", f"{a}{j}")
            .replace("@l", f"{n}{j}")
            .replace("@", f"value[{a}{j}:{a}{j + 1}]")
            for j, form in enumerate(forms)
        ]
        self.runs = _runs(tests)

    def lengths(self, at: str, end: str) -> list[str]:
        """Reading the lengths from ``at``, and each value's start.

        ``None`` unless the values fill the group to ``end`` exactly.
        """
        count, a, n = self.count, self.a, self.n
        ls = ", ".join(f"{n}{j}" for j in range(count))
        return [
            f"    lengths = value[{at}:{at} + {count}]",
            f"    if len(lengths) == {count} and not lengths.translate(None, _ONE):",
            f"        {a}0 = {at} + {count}",
            "    else:",
            f"        got = _leading(value, {at}, {count}, {end})",
            "        if got is None:",
            "            try:",
            f"                got = _chunk(value, {at}, {count}, {end})",
            "            except _DecodeError:",
            "                return None",
            f"        lengths, {a}0 = got",
            "        if sum(map(_ODD, lengths)) != lengths.count(1):",
            "            return None",
            f"    {ls}{',' if count == 1 else ''} = lengths",
            *(f"    {a}{j + 1} = {a}{j} + ({n}{j} >> 1)" for j in range(count)),
            f"    if {a}{count} != {end}:",
            "        return None",
        ]

    def joined(self) -> list[str]:
        """Each run's joined test, and its values (each alone where the test fails)."""
        a, v = self.a, self.v
        lines: list[str] = []
        for first, last in self.runs:
            ends = " and ".join(f"m.end({g}) == {a}{first + g}" for g in range(1, last - first))
            lines += [
                f"        m = c{first}(value, {a}{first}, {a}{last})",
                f"        if m is not None and {ends}:",
                *(
                    f"            {v}{j} = {'_ts' if self.tests[j] is TIMESTAMP_BYTES else ''}"
                    f"(value[{a}{j}:{a}{j + 1}].decode())"
                    for j in range(first, last)
                ),
                "        else:",
                *(f"            {v}{j} = {self.values[j]}" for j in range(first, last)),
            ]
        return lines

    def columns(self) -> str:
        """The tuple of the group's ``DecodedColumn``s."""
        in_runs = {j for first, last in self.runs for j in range(first, last)}
        values = [f"{self.v}{j}" if j in in_runs else value for j, value in enumerate(self.values)]
        return (
            "("
            + "".join(
                f"_new(_C, (n{j}, {value}, t{j}, f{j}, h{j}, None, None)), "
                for j, value in enumerate(values)
            )
            + ")"
        )
