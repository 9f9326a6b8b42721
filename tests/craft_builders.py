"""Golden Craft messages and a builder for hand-made (often invalid) ones.

The golden values are written out by hand from the rules of ground truth §3.2 (the derived
vectors of §3.5 and the hand-computed cases of ``test_craft.py``), never produced by the
encoder under test.
"""

from __future__ import annotations

from collections.abc import Sequence

from ticdc_conformance.reference.craft import primitives

RESOLVED_TS = 424316592563683329
DDL_TS = 424316555979653121
RESOLVED_HEX = "01 8180c0e095b6def105 03 01 01 01 02 1a 19 01 00 05"
"""§3.5: version; ts; type 3; partition, schema, table −1; size tables [13, 0] [0]; trailer."""
DDL_HEX = (
    "01 8180f0bb8db5def105 02 01 00 02 01 0e 637265617465207461626c652061"
    " 02 01 01 61 62 02 1a 0f 01 20 05"
)
"""§3.5: `create table a` (ActionType 1) on schema `a`, table `b`."""
INSERT_HEX = (
    "01 | 01 01 01 00 02 | 01 02 04 02 0f 0f 0a 40 04 04 61 61 62 62"
    " | 04 04 01 01 01 74 65 73 74 74 61 62 | 02 0a 0e 01 1c 01 1c | 07"
)
"""test.t(a varchar(10) primary key, b varchar(10)) insert ("aa", "bb") at ts 1."""


def unhex(text: str) -> bytes:
    """Bytes from hex with spaces and ``|`` separators."""
    return bytes.fromhex(text.replace("|", " "))


GOLDEN = [unhex(RESOLVED_HEX), unhex(DDL_HEX), unhex(INSERT_HEX)]


def build(
    headers: bytes,
    bodies: Sequence[bytes],
    terms: Sequence[bytes] = (),
    group_tables: Sequence[Sequence[int]] = (),
    *,
    version: int = 1,
    dictionary: bytes | None = None,
) -> bytes:
    """A message laid out as §3.2 says, with sizes computed from the parts given."""
    out = bytearray()
    primitives.write_uvarint(out, version)
    out += headers
    for body in bodies:
        out += body
    if dictionary is None:
        dictionary_out = bytearray()
        if terms:
            primitives.write_uvarint(dictionary_out, len(terms))
            primitives.write_bytes_chunk(dictionary_out, terms)
        dictionary = bytes(dictionary_out)
    out += dictionary
    tables = [[len(headers), len(dictionary)], [len(b) for b in bodies], *group_tables]
    primitives.write_size_tables(out, tables)
    return bytes(out)
