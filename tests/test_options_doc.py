"""docs/options.md: the table of TiCDC's sink options agrees with what the codecs take."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.errors import EncodeError

DOC = Path(__file__).resolve().parents[1] / "docs" / "options.md"
COLUMNS = {
    "Open": ("open",),
    "Craft": ("craft",),
    "Simple": ("simple-json", "simple-avro"),
    "Debezium": ("debezium",),
    "Canal-JSON": ("canal-json",),
}
CELLS = frozenset({"✓", "generate", "name", "—", "✗", "transport"})


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def option_rows() -> list[tuple[tuple[str, ...], dict[str, str], str]]:
    """(option names, protocol → cell, notes) of every row of the option tables."""
    rows = []
    header: list[str] | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if cells[0] == "option":
            header = cells
            continue
        if header is None or set(cells[0]) <= {"-"}:
            continue
        names = tuple(re.findall(r"`([^`]+)`", cells[0]))
        by_protocol = {
            protocol: cell
            for column, cell in zip(header[1:-1], cells[1:-1], strict=True)
            for protocol in COLUMNS[column]
        }
        rows.append((names, by_protocol, cells[-1]))
    return rows


ROWS = option_rows()


def test_the_tables_are_read() -> None:
    assert len(ROWS) >= 30
    for names, cells, _ in ROWS:
        assert names, cells
        assert set(cells.values()) <= CELLS, names
        assert set(cells) == {p for protocols in COLUMNS.values() for p in protocols}


@pytest.mark.parametrize("protocol", sorted(CODECS))
def test_every_option_a_codec_takes_is_a_tick(protocol: str) -> None:
    ticked = {name for names, cells, _ in ROWS if cells[protocol] == "✓" for name in names}
    assert set(CODECS[protocol].OPTIONS) == ticked


@pytest.mark.parametrize("protocol", sorted(CODECS))
def test_a_tick_is_an_option_the_codec_takes(protocol: str) -> None:
    """The other way round, option by option: a row's tick names one option, taken as text."""
    codec = CODECS[protocol]
    for names, cells, _ in ROWS:
        if cells[protocol] == "✓":
            assert len(names) == 1, names
            assert names[0] in codec.OPTIONS


def test_a_cross_gives_a_reason() -> None:
    for names, cells, notes in ROWS:
        if "✗" in cells.values():
            assert len(notes) > 20, names


def test_an_option_a_codec_does_not_take_is_refused() -> None:
    """A cell other than a tick is not silently accepted by ``config_from_options``."""
    refused = 0
    for names, cells, _ in ROWS:
        for protocol, cell in cells.items():
            codec = CODECS[protocol]
            if cell == "✓" or len(names) != 1 or names[0] in codec.OPTIONS:
                continue
            with pytest.raises(EncodeError):
                codec.config_from_options({names[0]: "true"})
            refused += 1
    assert refused > 50
