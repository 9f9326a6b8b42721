"""The workload's direct draws are ``random``'s helpers' draws: same values, same state after.

``generators/_draws.py`` calls ``getrandbits`` and ``random`` itself instead of ``randint``,
``randrange``, ``choice`` and ``uniform``; the helper form of every maker is kept here and the
two are compared value by value, generator state included, so a seed keeps its workload.
"""

from __future__ import annotations

import random
from itertools import islice

from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.generators import _draws, _live_rows
from ticdc_conformance.generators.simulator import Transaction
from ticdc_conformance.generators.workload import shop_workload
from ticdc_conformance.reference import DecimalValue, RowChangedEvent, TimestampValue, Value

_NOTES = ("", "gift <wrap> & card", "leave at door", "call first", "fragile")
_NAMES = ("Ada", "Grace", "Linus", "Zoë", "Ngozi", "O'Brien")


def _datetime(rng: random.Random, fsp: int) -> str:
    text = (
        f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    )
    return text + ("." + "".join(str(rng.randint(0, 9)) for _ in range(fsp)) if fsp else "")


def helper_values(table: str, rng: random.Random) -> tuple[Value, ...]:
    """The values through ``random``'s helpers: the form the makers must equal."""
    if table == "orders":
        return (
            rng.randint(1, 5000),
            DecimalValue(f"{rng.randint(0, 99999)}.{rng.randint(0, 99):02d}"),
            rng.randint(1, 3),
            rng.choice((None, *_NOTES)),
            _datetime(rng, 3),
            rng.choice((None, TimestampValue(_datetime(rng, 6), "UTC"))),
        )
    if table == "customers":
        return (
            rng.choice((None, *_NAMES)),
            rng.uniform(-1e6, 1e6),
            rng.randint(0, 255),
            rng.choice((None, b"", bytes(rng.randrange(256) for _ in range(rng.randint(1, 24))))),
        )
    counter = rng.choice((0, 2**63, 2**64 - 1, rng.randrange(2**64)))
    return (rng.choice((None, 0.5, 1e-7, 3.25e10)), counter)


@settings(max_examples=200)
@given(seed=st.integers(0, 2**64), table=st.sampled_from(sorted(_draws.MAKERS)))
def test_a_maker_draws_what_the_helpers_draw(seed: int, table: str) -> None:
    direct, helpers = random.Random(seed), random.Random(seed)  # noqa: S311 - seeded, not secret
    for _ in range(20):
        values = _draws.MAKERS[table](direct)
        expected = helper_values(table, helpers)
        assert values == expected
        assert [type(v) for v in values] == [type(v) for v in expected]
    assert direct.getstate() == helpers.getstate()


@given(seed=st.integers(0, 2**32), bound=st.integers(1, 2**70))
def test_below_is_randrange(seed: int, bound: int) -> None:
    direct, helpers = random.Random(seed), random.Random(seed)  # noqa: S311 - seeded, not secret
    assert [_draws.below(direct.getrandbits, bound) for _ in range(5)] == [
        helpers.randrange(bound) for _ in range(5)
    ]
    assert direct.getstate() == helpers.getstate()


def test_row_events_are_the_constructors() -> None:
    for item in islice(shop_workload(5), 2000):
        if not isinstance(item, Transaction):
            continue
        for row in item.rows:
            built = RowChangedEvent(
                commit_ts=row.commit_ts,
                table=row.table,
                op=row.op,
                before=row.before,
                after=row.after,
                row_id=row.row_id,
            )
            assert row == built


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.integers(-(2**63), 2**64 - 1),
            st.floats(allow_nan=False, allow_infinity=False),
            st.text(),
            st.binary(),
            st.builds(DecimalValue, st.sampled_from(["1.50", "-0.01", "12345"])),
            st.builds(
                TimestampValue, st.just("2026-01-02 03:04:05"), st.sampled_from([None, "UTC"])
            ),
        ),
        max_size=8,
    ).map(tuple)
)
def test_packed_images_come_back(image: tuple[Value, ...]) -> None:
    back = _live_rows.unpacked(_live_rows.packed(image))
    assert back == image
    assert [type(v) for v in back] == [type(v) for v in image]
