"""Kubernetes resource quantities (``resource.Quantity``), parsed exactly.

Values are exact ``Fraction`` objects; nothing goes through float arithmetic. Parsing follows
apimachinery's scanner, so it accepts the same odd corners upstream accepts (``"."``, ``"+"``,
``"k"`` all parse as zero) and reports the same three error texts.

Deliberate limits, reached only by absurd input: a decimal exponent beyond ``10**4`` in
magnitude and a mantissa too long for Python's int conversion are reported as numeric errors
instead of being computed, and integer results are exact Python ints (upstream's int64
overflow behaviour is not reproduced).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from kubesched.api.errors import FieldError

ERR_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

_NANO = 10**9
_MAX_INT64 = 2**63 - 1
_MAX_DECIMAL_EXPONENT = 10_000

_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIX_OF = {exp: suffix for suffix, exp in _DECIMAL_SI.items()}
_BINARY_SUFFIX_OF = {exp // 10: suffix for suffix, exp in _BINARY_SI.items()}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_GO_INT64 = re.compile(r"[+-]?[0-9]+")


class _Invalid(Exception):
    """Internal: a parse failure carrying upstream's error text."""


def _digits_end(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _DIGITS:
        pos += 1
    return pos


def _scan(text: str) -> tuple[bool, str, str, str, str]:
    """Split ``text`` into (positive, number text, integer digits, fraction digits, suffix)."""
    end = len(text)
    positive = not text.startswith("-")
    pos = 1 if text[:1] in ("+", "-") else 0
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return positive, "0", "0", "", ""
    start, pos = pos, _digits_end(text, pos)
    if pos == end:
        return positive, text, text[start:], "", ""
    num = text[start:pos] or "0"
    denom = ""
    if text[pos] == ".":
        start, pos = pos + 1, _digits_end(text, pos + 1)
        denom = text[start:pos]
        if pos == end:
            return positive, text, num, denom, ""
    number, suffix_start = text[:pos], pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in ("+", "-"):
        pos += 1
    if _digits_end(text, pos) != end:
        raise _Invalid(ERR_FORMAT_WRONG)
    return positive, number, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, bool]:
    """Return (base, exponent, is_binary) for a suffix, as upstream's suffixer does."""
    if suffix in _DECIMAL_SI:
        return 10, _DECIMAL_SI[suffix], False
    if suffix in _BINARY_SI:
        return 2, _BINARY_SI[suffix], True
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT64.fullmatch(suffix[1:]):
        exponent = int(suffix[1:])
        if -(2**63) <= exponent <= _MAX_INT64:
            return 10, (exponent + 2**31) % 2**32 - 2**31, False  # Go truncates to int32
    raise _Invalid(ERR_SUFFIX)


def _digitless_slow_path(number: str, exponent: int, binary: bool) -> bool:
    """True when upstream skips its int64 fast path for a number with no digits (so it fails)."""
    if any(c in _DIGITS for c in number):
        return False
    if binary:
        return exponent * 3 // 10 > 13  # upstream's precision estimate turns negative (Pi, Ei)
    return exponent < -9  # finer than nano units


@lru_cache(maxsize=8192)
def _parse_text(text: str) -> Fraction:
    if not text:
        raise _Invalid(ERR_FORMAT_WRONG)
    positive, number, num, denom, suffix = _scan(text)
    base, exponent, binary = _interpret(suffix)
    if _digitless_slow_path(number, exponent, binary) or abs(exponent) > _MAX_DECIMAL_EXPONENT:
        raise _Invalid(ERR_NUMERIC)
    try:
        mantissa = int(num + denom)
    except ValueError as exc:  # longer than Python's int-from-str limit
        raise _Invalid(ERR_NUMERIC) from exc
    amount = Fraction(mantissa, 10 ** len(denom)) * Fraction(base) ** exponent
    if amount.denominator != 1 and _NANO % amount.denominator != 0:
        # Anything finer than a nano unit rounds up to the next nano unit.
        amount = Fraction(math.ceil(amount * _NANO), _NANO)
    if binary and amount > _MAX_INT64:
        amount = Fraction(_MAX_INT64)
    return amount if positive else -amount


def parse_quantity(value: str | int | float, *, field: str = "") -> Fraction:
    """Parse a quantity to its exact value; raise ``FieldError`` naming ``field`` when malformed."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Fraction(value)
    try:
        return _parse_text(value if isinstance(value, str) else str(value))
    except _Invalid as exc:
        raise FieldError(field, value, str(exc)) from None


def to_units(amount: Fraction) -> int:
    """Whole units of an exact amount, rounded away from zero (upstream ``Value``)."""
    return math.ceil(amount) if amount >= 0 else math.floor(amount)


def to_milli(amount: Fraction) -> int:
    """Thousandths of an exact amount, rounded away from zero (upstream ``MilliValue``)."""
    return to_units(amount * 1000)


def milli_value(value: str | int | float, *, field: str = "") -> int:
    """The quantity in thousandths, rounded away from zero: ``"100m"`` -> 100, ``"1.5"`` -> 1500."""
    return to_milli(parse_quantity(value, field=field))


def int_value(value: str | int | float, *, field: str = "") -> int:
    """The quantity in whole units, rounded away from zero: ``"1Ki"`` -> 1024, ``"100m"`` -> 1."""
    return to_units(parse_quantity(value, field=field))


def _strip_factors(mantissa: int, base: int, limit: int | None = None) -> tuple[int, int]:
    times = 0
    while abs(mantissa) >= base and mantissa % base == 0 and (limit is None or times < limit):
        mantissa //= base
        times += 1
    return mantissa, times


def _format_decimal(mantissa: int, exponent: int) -> str:
    if mantissa == 0:
        return "0"
    mantissa, times = _strip_factors(mantissa, 10)
    exponent += times
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    return f"{mantissa}{_DECIMAL_SUFFIX_OF.get(exponent, f'e{exponent}')}"


def format_milli_cpu(m: int) -> str:
    """Canonical DecimalSI text for ``m`` thousandths: 1500 -> ``"1500m"``, 2000 -> ``"2"``."""
    return _format_decimal(m, -3)


def format_bytes(b: int) -> str:
    """Canonical BinarySI text for ``b`` units: 1073741824 -> ``"1Gi"``, 1536 -> ``"1536"``.

    As upstream, magnitudes under 1024 fall back to DecimalSI, so 1000 renders as ``"1k"``.
    """
    if -1024 < b < 1024:
        return _format_decimal(b, 0)
    mantissa, times = _strip_factors(b, 1024, limit=len(_BINARY_SUFFIX_OF))
    return f"{mantissa}{_BINARY_SUFFIX_OF.get(times, '')}"
