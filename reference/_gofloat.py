"""Floats as TiCDC's Go JSON writers and ``strconv`` print them (ground truth §1.4).

``format_float``: what ``encoding/json`` (``JsonStyle.GO_STD``) and json-iterator
(``JsonStyle.JSONITER``) write for a float of 32 (FLOAT) or 64 (DOUBLE) bits: the shortest
digits that read back as the same float of that width, ``'e'`` notation when |x| < 1e-6 or
|x| ≥ 1e21 (compared in the float's own width), and ``e-07`` cleaned to ``e-7`` by
``encoding/json`` only. ``format_float_positional``: ``strconv.FormatFloat(x, 'f', -1,
bits)``, the same digits never with an exponent (Canal-JSON's text, the dispatchers' hashed
text). The shortest float32 digits take an exact search where a double's ``repr`` cannot
tell them.
"""

from __future__ import annotations

import math
import struct
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal
from fractions import Fraction

from ticdc_conformance.reference._gojson import JsonStyle

__all__ = ["format_float", "format_float_positional"]


def _float32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


_F32_SMALL = _float32(1e-6)
_F32_LARGE = _float32(1e21)


def _float32_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def _float32_from_bits(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


_F32_LARGEST = 3.4028234663852886e38
_REPR_LOW, _REPR_HIGH = 1e-4, 1e16
"""Where ``repr`` of a float has no exponent."""
_F32_WHOLE = float(2**24)
"""Below it every whole number is a float32, and float32 spaces them by at most 1."""


def _is_float32_midpoint(y: float) -> bool:
    """Whether float64 ``y`` lies exactly halfway between two float32 values."""
    low = _float32(y)
    if low == y:
        return False
    bits = _float32_bits(low)
    other = _float32_from_bits(bits + 1 if (y > low) == (low > 0) else bits - 1)
    return (low + other) / 2 == y


def _shortest_float32(x: float) -> Decimal:
    """Fewest significant digits that read back as float32 ``x`` (x > 0), nearest first.

    Fast path: where x's rounding interval is symmetric (its mantissa is not zero), the nearest
    candidate of each length is the only one that can read back, and reading it through
    float64 rounds like reading it directly unless it lands exactly on a float32 midpoint
    (float64 rounding cannot cross one). A whole number below 2**24 is its own digits: float32
    spaces the numbers around it by at most 1, so any other number of fewer digits (a whole
    number too, at least 1 away) reads back as another float32; this covers the powers of two,
    whose asymmetric interval the fast path above leaves to the exact one. Everything else
    takes the exact path below.
    """
    if x < _F32_WHOLE and x.is_integer():
        return Decimal(int(x))
    if _float32_bits(x) & 0x7FFFFF and x < _F32_LARGEST:
        for digits in range(1, 10):
            candidate = Decimal(f"{x:.{digits - 1}e}")
            as_float64 = float(candidate)
            if as_float64 >= _F32_LARGEST or _is_float32_midpoint(as_float64):
                break  # near the top of the range struct cannot round: take the exact path
            if _float32(as_float64) == x:
                return candidate
    return _shortest_float32_exact(x)


def _shortest_float32_exact(x: float) -> Decimal:
    """Fewest significant digits that read back as float32 ``x`` (x > 0), nearest first.

    Exact: the candidates are tested against x's rounding interval with rationals, so no
    double rounding through float64 can creep in.
    """
    bits = _float32_bits(x)
    exact = Fraction(x)
    lower = Fraction(_float32_from_bits(bits - 1)) if bits > 1 else Fraction(0)
    if bits + 1 < 0x7F800000:
        upper = Fraction(_float32_from_bits(bits + 1))
    else:
        upper = exact + (exact - lower)
    low, high = (exact + lower) / 2, (exact + upper) / 2
    inclusive = bits % 2 == 0  # round-half-even: midpoints go to the even neighbour

    def reads_back(candidate: Decimal) -> bool:
        value = Fraction(candidate)
        if inclusive:
            return low <= value <= high
        return low < value < high

    for digits in range(1, 10):
        candidates = {
            Context(prec=digits, rounding=rounding).plus(Decimal(x))
            for rounding in (ROUND_FLOOR, ROUND_CEILING, ROUND_HALF_EVEN)
        }
        good = [c for c in candidates if reads_back(c)]
        if good:
            nearest = Context(prec=digits, rounding=ROUND_HALF_EVEN).plus(Decimal(x))
            return nearest if nearest in good else min(good, key=lambda c: abs(Fraction(c) - exact))
    return Decimal(x)  # unreachable: 9 digits always identify a float32


def _digits(x: float, bits: int) -> tuple[str, int]:
    """Shortest digits ``d`` and exponent ``e`` with |x| ≈ int(d) × 10**e (x ≠ 0)."""
    magnitude = abs(x)
    number = _shortest_float32(magnitude) if bits == 32 else Decimal(repr(magnitude))
    _, digit_tuple, exponent = number.normalize().as_tuple()
    if not isinstance(exponent, int):  # NaN or an infinity: x is finite
        raise ValueError(f"{x!r} has no digits")
    return "".join(map(str, digit_tuple)), exponent


def format_float(x: float, bits: int, style: JsonStyle) -> str:
    """``x`` as the Go JSON writer prints a float of ``bits`` (32 for FLOAT, 64 for DOUBLE).

    A DOUBLE from 1e-4 up to 1e16 is ``repr``'s text without its ``.0``: ``repr`` writes the
    same shortest digits without an exponent there, where Go writes none either. A FLOAT that
    is a whole number 0 < |x| < 2^24 is its own digits: any other number of as few digits
    differs by at least 1, more than half the gap to a float32 neighbour.
    """
    if type(x) is float:
        if bits == 64 and _REPR_LOW <= abs(x) < _REPR_HIGH:
            return repr(x).removesuffix(".0")
        if bits == 32 and x.is_integer() and 0 < abs(x) < _F32_WHOLE:
            return str(int(x))
    if bits == 32:
        x = _float32(x)
    sign = "-" if x < 0 or (x == 0 and str(x).startswith("-")) else ""
    if x == 0:
        return sign + "0"
    digits, exponent = _digits(x, bits)
    magnitude = abs(x)
    # Go compares in the float's own width: float32(abs) < 1e-6 converts the constant too.
    small, large = (_F32_SMALL, _F32_LARGE) if bits == 32 else (1e-6, 1e21)
    if magnitude < small or magnitude >= large:
        point = exponent + len(digits) - 1
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exp_text = f"{abs(point):02d}"
        if style is JsonStyle.GO_STD and point < 0 and exp_text.startswith("0"):
            exp_text = exp_text[1:]  # encoding/json cleans e-07 to e-7; jsoniter does not
        return f"{sign}{mantissa}e{'-' if point < 0 else '+'}{exp_text}"
    return sign + _positional(digits, exponent)


def _positional(digits: str, exponent: int) -> str:
    if exponent >= 0:
        return digits + "0" * exponent
    whole = len(digits) + exponent
    if whole > 0:
        return f"{digits[:whole]}.{digits[whole:]}"
    return f"0.{'0' * -whole}{digits}"


def format_float_positional(x: float, bits: int) -> str:
    """Go ``strconv.FormatFloat(x, 'f', -1, bits)``: shortest digits, never an exponent."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if bits == 32:
        x = _float32(x)
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0"
    return sign + _positional(*_digits(x, bits))
