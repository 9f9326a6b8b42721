"""The ``shop`` workload's random values, drawn with few Python calls.

``random.Random``'s ``randint(a, b)``, ``randrange(n)`` and ``choice(seq)`` all come down to
``_randbelow(n)``: ``getrandbits(k)`` with ``k = n.bit_length()``, drawn again while the
result is ``n`` or more; ``uniform(a, b)`` is ``a + (b - a) * random()``. Through those
helpers a value costs three Python calls and ``randrange``'s argument checks; the makers here
call ``getrandbits`` and ``random`` themselves, the same calls in the same order, so a seed
gives exactly the values the helpers gave (``tests/test_workload_draws.py`` keeps the helper
form of every maker and compares values and generator state). ``below`` is that draw; the
makers write it out, ``getrandbits`` of the bound's bit length (a constant per draw) again
while the result is the bound or more, since a call per draw was a fifth of their time.

Each maker gives a row's values after its key columns (``workload.py``): ``orders``
customer, amount, status, note, created, updated; ``customers`` name, balance, flags,
avatar; ``samples`` value, counter.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ticdc_conformance.reference import Value
from ticdc_conformance.reference.values import valid_decimal, valid_timestamp

__all__ = ["MAKERS", "below"]

_NOTES: tuple[Value, ...] = (
    None,
    "",
    "gift <wrap> & card",
    "leave at door",
    "call first",
    "fragile",
)
_NAMES: tuple[Value, ...] = (None, "Ada", "Grace", "Linus", "Zoë", "Ngozi", "O'Brien")
_COUNTERS = (0, 2**63, 2**64 - 1)
_SAMPLE_VALUES: tuple[Value, ...] = (None, 0.5, 1e-7, 3.25e10)
_UINT64_END = 2**64
_TWO = tuple(f"{i:02d}" for i in range(100))
"""Two-digit text of 0..99: a lookup instead of a format per field."""


def below(bits: Callable[[int], int], n: int) -> int:
    """``Random._randbelow(n)``: what ``randrange(n)`` and ``choice`` draw, for ``n > 0``.

    ``bits`` is the generator's ``getrandbits``.
    """
    k = n.bit_length()
    r = bits(k)
    while r >= n:
        r = bits(k)
    return r


def _datetime(bits: Callable[[int], int], fsp: int) -> str:
    """``2026-MM-DD hh:mm:ss[.f…]``: month 1..12, day 1..28, ``fsp`` fractional digits.

    Each draw is ``below(bits, n)`` written out (the module's rules).
    """
    month = bits(4)
    while month >= 12:  # below(bits, 12)
        month = bits(4)
    day = bits(5)
    while day >= 28:  # below(bits, 28)
        day = bits(5)
    hour = bits(5)
    while hour >= 24:  # below(bits, 24)
        hour = bits(5)
    minute = bits(6)
    while minute >= 60:  # below(bits, 60)
        minute = bits(6)
    second = bits(6)
    while second >= 60:  # below(bits, 60)
        second = bits(6)
    text = f"2026-{_TWO[month + 1]}-{_TWO[day + 1]} {_TWO[hour]}:{_TWO[minute]}:{_TWO[second]}"
    if not fsp:
        return text
    fraction = 0  # the digits as one number, written zero-padded to fsp digits
    for _ in range(fsp):
        digit = bits(4)
        while digit >= 10:  # below(bits, 10)
            digit = bits(4)
        fraction = fraction * 10 + digit
    return f"{text}.{fraction:0{fsp}d}"


def _orders(rng: random.Random) -> tuple[Value, ...]:
    bits = rng.getrandbits
    customer = bits(13)
    while customer >= 5000:  # below(bits, 5000)
        customer = bits(13)
    whole = bits(17)
    while whole >= 100000:  # below(bits, 100000)
        whole = bits(17)
    cents = bits(7)
    while cents >= 100:  # below(bits, 100)
        cents = bits(7)
    status = bits(2)
    while status >= 3:  # below(bits, 3)
        status = bits(2)
    note = bits(3)
    while note >= 6:  # below(bits, 6)
        note = bits(3)
    created = _datetime(bits, 3)
    stamp = _datetime(bits, 6)  # drawn whether or not the choice below keeps it
    kept = bits(2)
    while kept >= 2:  # below(bits, 2)
        kept = bits(2)
    return (
        customer + 1,
        valid_decimal(f"{whole}.{_TWO[cents]}"),  # digits by construction: no check
        status + 1,
        _NOTES[note],
        created,
        valid_timestamp(stamp, "UTC") if kept else None,
    )


def _customers(rng: random.Random) -> tuple[Value, ...]:
    bits = rng.getrandbits
    name = bits(3)
    while name >= 7:  # below(bits, 7)
        name = bits(3)
    balance = -1e6 + 2e6 * rng.random()  # uniform(-1e6, 1e6): a + (b - a) * random()
    flags = bits(9)
    while flags >= 256:  # below(bits, 256)
        flags = bits(9)
    size = bits(5)
    while size >= 24:  # below(bits, 24)
        size = bits(5)
    data = bytearray()
    for _ in range(size + 1):
        byte = bits(9)
        while byte >= 256:  # below(bits, 256)
            byte = bits(9)
        data.append(byte)
    avatar = bits(2)
    while avatar >= 3:  # below(bits, 3)
        avatar = bits(2)
    return (
        _NAMES[name],
        balance,
        flags,
        None if avatar == 0 else b"" if avatar == 1 else bytes(data),
    )


def _samples(rng: random.Random) -> tuple[Value, ...]:
    bits = rng.getrandbits
    drawn = bits(65)
    while drawn >= _UINT64_END:  # below(bits, 2**64)
        drawn = bits(65)
    counter = bits(3)
    while counter >= 4:  # below(bits, 4)
        counter = bits(3)
    value = bits(3)
    while value >= 4:  # below(bits, 4)
        value = bits(3)
    return (_SAMPLE_VALUES[value], drawn if counter == 3 else _COUNTERS[counter])


MAKERS: dict[str, Callable[[random.Random], tuple[Value, ...]]] = {
    "orders": _orders,
    "customers": _customers,
    "samples": _samples,
}
"""Table name → the maker of a row's values after its key columns."""
