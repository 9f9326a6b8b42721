"""The MySQL type model: names, codes, twins, families and ranges (ground truth §1.1, §1.6)."""

from __future__ import annotations

import pytest

from ticdc_conformance.reference import mysql
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    INTEGER_BITS,
    STRING_TYPES,
    TEXT_TYPES,
    TYPE_CODES,
    TYPE_OF_CODE,
    by_code,
    codes_of,
    integer_range,
    type_named,
    type_to_str,
    wrap_int64,
)


def test_every_name_of_the_literal_has_a_code_and_no_other_name_does() -> None:
    assert set(mysql.MYSQL_TYPES) == set(TYPE_CODES)
    assert len(mysql.MYSQL_TYPES) == 32
    assert type_named("varchar") == "varchar"
    assert type_named("varchar2") is None
    assert type_named("VARCHAR") is None  # names are lower case, as TiDB's TypeToStr writes


def test_only_text_types_and_their_binary_twins_share_a_code() -> None:
    shared = {code for code in TYPE_CODES.values() if list(TYPE_CODES.values()).count(code) > 1}
    twins = {name for name in TYPE_CODES if TYPE_CODES[name] in shared}
    assert twins == STRING_TYPES
    assert TEXT_TYPES.isdisjoint(BINARY_TYPES)
    assert {TYPE_OF_CODE[TYPE_CODES[name]] for name in twins} == TEXT_TYPES


@pytest.mark.parametrize(
    ("name", "charset", "expected"),
    [
        ("varchar", "utf8mb4", "varchar"),
        ("varchar", "binary", "varbinary"),
        ("varbinary", "utf8mb4", "varchar"),
        ("text", "binary", "blob"),
        ("longblob", "latin1", "longtext"),
        ("char", "binary", "binary"),
        ("int", "binary", "int"),
        ("enum", "utf8mb4", "enum"),
    ],
)
def test_type_to_str_follows_the_charset(
    name: mysql.MySQLType, charset: str, expected: str
) -> None:
    assert type_to_str(name, charset) == expected


@pytest.mark.parametrize(
    ("name", "unsigned", "low", "high"),
    [
        ("tinyint", False, -128, 127),
        ("tinyint", True, 0, 255),
        ("mediumint", False, -(2**23), 2**23 - 1),
        ("int", True, 0, 2**32 - 1),
        ("bigint", False, -(2**63), 2**63 - 1),
        ("bigint", True, 0, 2**64 - 1),
        ("year", False, -(2**15), 2**15 - 1),
        ("bit", False, 0, 2**64 - 1),  # BIT, ENUM, SET: uint64 whatever UNSIGNED says
        ("set", True, 0, 2**64 - 1),
    ],
)
def test_integer_ranges(name: mysql.MySQLType, unsigned: bool, low: int, high: int) -> None:
    allowed = integer_range(name, unsigned=unsigned)
    assert (allowed.start, allowed.stop - 1) == (low, high)
    if name in INTEGER_BITS:
        assert allowed.stop - allowed.start == 2 ** INTEGER_BITS[name]


def test_wrap_int64_is_gos_int64_conversion() -> None:
    assert [wrap_int64(v) for v in (0, 2**63 - 1, 2**63, 2**64 - 1)] == [0, 2**63 - 1, -(2**63), -1]


def test_by_code_adds_the_aliases_and_refuses_twins_that_differ() -> None:
    text, string = object(), object()
    table: dict[mysql.MySQLType, object] = {"date": text, "varchar": string, "varbinary": string}
    assert by_code(table) == {10: text, 14: text, 15: string, 253: string}
    with pytest.raises(ValueError, match="type code 15"):
        by_code({"varchar": text, "varbinary": object()})
    assert codes_of({"date", "json"}) == {10, 14, 245}
