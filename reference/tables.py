"""Table metadata as TiDB hands it to TiCDC, and what TiCDC derives from it.

Rules (shared/research/ticdc-ground-truth.md):

* Type names and codes are the MySQL type model of ``mysql`` (§1.6).
* Charset: text types, ENUM and SET default to ``utf8mb4``; every other type, and
  BINARY/VARBINARY/BLOB, has the charset ``binary`` (§1.2).
* Flag bits (§1.2): Binary 1 when the charset is ``binary`` (so on every numeric and temporal
  column), HandleKey 2, Generated 4, PrimaryKey 8, UniqueKey 16, MultipleKey 32 (a column of
  an index with more than one column, or a column whose own key is ``multiple``), Nullable 64,
  Unsigned 128. Profile ``ticdc`` drops the index-derived bits of generated columns (§1.2,
  the new-arch quirk).
* Handle key (§1.3): the primary key columns; otherwise the unique index whose columns are all
  NOT NULL and not virtual, fewest columns first, then the smaller index id; otherwise none.
* ``type_code`` and ``flags`` given explicitly win over derivation, as in TiCDC's benchmark
  events, which carry hand-set codes and flag 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ticdc_conformance.reference.mysql import TEXT_TYPES, TYPE_CODES, MySQLType
from ticdc_conformance.reference.values import Value

__all__ = [
    "BINARY_FLAG",
    "GENERATED_FLAG",
    "HANDLE_KEY_FLAG",
    "MULTIPLE_KEY_FLAG",
    "NULLABLE_FLAG",
    "PRIMARY_KEY_FLAG",
    "UNIQUE_KEY_FLAG",
    "UNSIGNED_FLAG",
    "ColumnInfo",
    "IndexInfo",
    "Profile",
    "TableInfo",
]

Profile = Literal["tiflow", "ticdc"]
"""Producer line: ``tiflow`` is classic TiCDC (v8.x), ``ticdc`` the new architecture (v9)."""

BINARY_FLAG = 1
HANDLE_KEY_FLAG = 2
GENERATED_FLAG = 4
PRIMARY_KEY_FLAG = 8
UNIQUE_KEY_FLAG = 16
MULTIPLE_KEY_FLAG = 32
NULLABLE_FLAG = 64
UNSIGNED_FLAG = 128

_CHARSET_TYPES = TEXT_TYPES | {"enum", "set"}
"""Types whose charset defaults to ``utf8mb4``; the others have ``binary`` (§1.2)."""

KeyKind = Literal["primary", "unique", "multiple"]
Generated = Literal["stored", "virtual"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnInfo:
    """One column of a table, with TiDB's metadata."""

    name: str
    type: MySQLType
    """MySQL type name, lower case."""
    unsigned: bool = False
    nullable: bool | None = None
    """``None``: nullable unless part of the primary key."""
    charset: str | None = None
    """``None``: ``utf8mb4`` for string types, ``binary`` for everything else."""
    collation: str | None = None
    length: int | None = None
    decimal: int | None = None
    """Scale of DECIMAL, fsp of DATETIME/TIMESTAMP/TIME."""
    elements: tuple[str, ...] | None = None
    """ENUM and SET members, in declaration order."""
    default: Value = None
    generated: Generated | None = None
    key: KeyKind | None = None
    """The column's own key flag (TiDB PriKeyFlag / UniqueKeyFlag / MultipleKeyFlag)."""
    type_code: int | None = None
    """Explicit type code; ``None`` derives it from ``type``."""
    flags: int | None = None
    """Explicit flag bits; ``None`` derives them (see the module docstring)."""
    zerofill: bool = False
    auto_increment: bool = False
    on_update_now: bool = False
    """TIMESTAMP/DATETIME ``ON UPDATE CURRENT_TIMESTAMP`` (TiDB OnUpdateNowFlag)."""
    comment: str | None = None
    column_id: int | None = None
    """TiDB column id; ``None``: position + 1. Differs from table order after ``MODIFY … FIRST``."""

    def __post_init__(self) -> None:
        if self.type not in TYPE_CODES:
            raise ValueError(f"unknown MySQL type {self.type!r}")
        if self.flags is not None and not 0 <= self.flags < 2**64:
            raise ValueError(f"flags {self.flags} are not a uint64")
        if self.type_code is not None and not 0 <= self.type_code <= 255:
            raise ValueError(f"type code {self.type_code} is not a byte")
        if self.column_id is not None and self.column_id < 1:
            raise ValueError(f"column id {self.column_id} is not positive")

    @property
    def effective_type_code(self) -> int:
        """The explicit type code, or the one the type name implies."""
        return TYPE_CODES[self.type] if self.type_code is None else self.type_code

    @property
    def effective_charset(self) -> str:
        """The explicit charset, or TiDB's default for the type."""
        if self.charset is not None:
            return self.charset
        return "utf8mb4" if self.type in _CHARSET_TYPES else "binary"

    @property
    def is_virtual(self) -> bool:
        """Virtual generated columns are not stored, so TiCDC never outputs them."""
        return self.generated == "virtual"


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexInfo:
    """An index of a table; its position in ``TableInfo.indexes`` is its id order."""

    name: str
    columns: tuple[str, ...]
    primary: bool = False
    unique: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class TableInfo:
    """A table (or one physical partition of it) as TiCDC sees it."""

    schema: str
    name: str
    columns: tuple[ColumnInfo, ...]
    indexes: tuple[IndexInfo, ...] = ()
    table_id: int | None = None
    """Logical TiDB table id."""
    partition_id: int | None = None
    """Physical partition id when the table is partitioned (Open ``ptn``)."""
    schema_version: int | None = None
    """TiDB schema version of this table info (its UpdateTS; Simple ``schemaVersion``)."""
    charset: str | None = None
    """Table default charset (Debezium ``defaultCharsetName``)."""
    _positions: dict[str, int] = field(init=False, repr=False, compare=False)
    _flags: dict[str, tuple[int, ...]] = field(init=False, repr=False, compare=False)
    _primary: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        positions = {column.name: i for i, column in enumerate(self.columns)}
        if len(positions) != len(self.columns):
            raise ValueError("duplicate column names")
        for index in self.indexes:
            missing = [name for name in index.columns if name not in positions]
            if missing or not index.columns:
                raise ValueError(f"index {index.name!r} names unknown columns {missing}")
        object.__setattr__(self, "_positions", positions)
        object.__setattr__(self, "_flags", {})  # per profile, filled on first use
        primary = next((index.columns for index in self.indexes if index.primary), None)
        object.__setattr__(
            self,
            "_primary",
            tuple(i for i, column in enumerate(self.columns) if column.key == "primary")
            if primary is None
            else tuple(positions[name] for name in primary),
        )

    def position(self, name: str) -> int | None:
        """Index of the column called ``name``, or ``None``."""
        return self._positions.get(name)

    def primary_key(self) -> tuple[int, ...]:
        """Positions of the primary key columns (primary index first, then column keys)."""
        return self._primary  # worked out once: every row's RowID asks (events.effective_row_id)

    def _not_null(self, position: int, primary: tuple[int, ...]) -> bool:
        column = self.columns[position]
        if column.nullable is not None:
            return not column.nullable
        return position in primary

    def handle_key(self) -> tuple[int, ...]:
        """Positions of the handle-key columns (§1.3); empty when the table has none."""
        primary = self.primary_key()
        if primary:
            return primary
        candidates = [
            tuple(self._positions[name] for name in index.columns)
            for index in self.indexes
            if index.unique and not index.primary
        ]
        candidates += [(i,) for i, column in enumerate(self.columns) if column.key == "unique"]
        eligible = [
            cols
            for cols in candidates
            if all(self._not_null(i, primary) and not self.columns[i].is_virtual for i in cols)
        ]
        # min() keeps the first of equal lengths: the smaller index id wins the tie.
        return min(eligible, key=len, default=())

    def column_flags(self, profile: Profile) -> tuple[int, ...]:
        """Flag bits of every column, explicit where given, derived otherwise (§1.2)."""
        if profile not in self._flags:
            self._flags[profile] = self._derive_flags(profile)
        return self._flags[profile]

    def _derive_flags(self, profile: Profile) -> tuple[int, ...]:
        handle = set(self.handle_key())
        primary = self.primary_key()
        derived = []
        for i, column in enumerate(self.columns):
            own = 0
            if column.effective_charset == "binary":
                own |= BINARY_FLAG
            if i in handle:
                own |= HANDLE_KEY_FLAG
            if column.generated is not None:
                own |= GENERATED_FLAG
            if column.unsigned:
                own |= UNSIGNED_FLAG
            if not self._not_null(i, primary):
                own |= NULLABLE_FLAG
            # the column's own key flag; index membership adds bits below
            own |= {
                "primary": PRIMARY_KEY_FLAG,
                "unique": UNIQUE_KEY_FLAG,
                "multiple": MULTIPLE_KEY_FLAG,
                None: 0,
            }[column.key]
            derived.append(own)
        for index in self.indexes:
            # The primary index is also unique in TiDB, yet its columns carry only the
            # PrimaryKey bit: TestMaxMessageBytes pins f=10 for a VARCHAR primary key (§7.2).
            bits = PRIMARY_KEY_FLAG if index.primary else UNIQUE_KEY_FLAG if index.unique else 0
            if len(index.columns) > 1:
                bits |= MULTIPLE_KEY_FLAG
            for name in index.columns:
                i = self._positions[name]
                # new-arch skips generated columns here before writing the bits back (§1.2)
                if not (profile == "ticdc" and self.columns[i].generated is not None):
                    derived[i] |= bits
        return tuple(
            derived[i] if column.flags is None else column.flags
            for i, column in enumerate(self.columns)
        )
