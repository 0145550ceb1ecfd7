"""The ``fractions`` stand-in: ``Fraction`` with bounded numerators and denominators.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``Fraction`` is a subclass of the real class
(``isinstance`` works) whose arithmetic refuses, before computing, a result whose
numerator and denominator together would pass :data:`MAX_BITS` bits (``**`` with a
large exponent, repeated squaring), whose text form (``Fraction('1e99999999')``) is at
most :data:`MAX_TEXT` characters with an exponent of at most :data:`MAX_EXPONENT`,
and whose every result is this class again (the real class is never handed out).
``limit_denominator`` is CPython 3.11's continued-fraction loop with the budget checked
every step of it (about one big-int division a bit of the denominator: 13-16 s past a
1 s deadline for a 370,000-bit one, findings16 F04), and ``round()`` checks the budget
before its division as the arithmetic does.
"""

from __future__ import annotations

import decimal
import fractions
import numbers
import re
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.int_work import check_gcd, check_host_work
from scriptgate.sandbox.guards.lengths import exact_copy
from scriptgate.sandbox.guards.ticking import TICK_STEPS, run_charge
from scriptgate.sandbox.world.modules.common import RunWorld, own_methods

__all__ = ["HOLDABLE", "MAX_BITS", "MAX_EXPONENT", "MAX_TEXT", "MEMBERS", "NAME", "Fraction"]

NAME = "fractions"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("Fraction",)
"""The members a script may use."""
MAX_BITS = 1_000_000
"""The most bits a result's numerator and denominator may have together."""
MAX_TEXT = 10_000
"""The longest text ``Fraction`` parses."""
MAX_EXPONENT = 10_000
"""The largest exponent ``Fraction('1e…')`` takes."""

_REAL = fractions.Fraction
_EXPONENT = re.compile(r"[eE]\s*([-+]?\d+)")


def _exact(value: Any) -> Any:
    """``value`` with an int or float subclass replaced by the exact number it holds.

    Finding G08: the real arithmetic reads ``other.numerator`` (a property an int subclass may
    override) while a bound read ``abs(other)``; both now see the number C stores, read
    through ``int``'s and ``float``'s own methods, never the value's.
    """
    kind = type(value)
    if kind is int or kind is float or kind is bool:
        return value
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return value


def _bits(value: Any) -> int:
    if isinstance(value, int):
        return int.bit_length(int.__index__(value))
    if isinstance(value, _REAL):
        return _bits(value.numerator) + _bits(value.denominator)
    return 64


def _too_big(what: str) -> None:
    refuse_size(f"{what} of Fractions would be too large for the sandbox ({MAX_BITS} bits)")


def _lift(value: Any) -> Any:
    if type(value) is _REAL:
        return _REAL.__new__(Fraction, value.numerator, value.denominator)
    if type(value) is tuple:
        return tuple(_lift(item) for item in value)
    return value


class Fraction(_REAL):
    """A rational number (the real ``fractions.Fraction``, bounded)."""

    __slots__ = ()

    def __new__(cls, numerator: Any = 0, denominator: Any = None) -> Any:
        numerator, denominator = _exact(numerator), _exact(denominator)
        if isinstance(numerator, str):
            numerator = exact_copy(numerator)  # a str subclass's __len__ never answers
            if len(numerator) > MAX_TEXT:
                refuse_size(f"a Fraction text longer than {MAX_TEXT} characters is refused")
            found = _EXPONENT.search(numerator)
            if found is not None and abs(int(found.group(1)[:12])) > MAX_EXPONENT:
                refuse_size(f"a Fraction exponent above {MAX_EXPONENT} is refused in the sandbox")
        elif isinstance(numerator, decimal.Decimal) and numerator.is_finite():
            if abs(numerator.adjusted()) > MAX_EXPONENT:
                refuse_size(f"a Fraction exponent above {MAX_EXPONENT} is refused in the sandbox")
        elif (
            not isinstance(numerator, int | float | numbers.Rational | decimal.Decimal)
            and denominator is None
        ):
            raise TypeError("argument should be a string or a Rational instance")
        if _bits(numerator) + _bits(denominator) > 2 * MAX_BITS:
            _too_big("a Fraction")
        check_gcd(numerator, denominator, "a Fraction")  # reduced by a quadratic gcd (F12)
        return _lift(_REAL(numerator, denominator))

    @classmethod
    def from_float(cls, f: Any) -> Any:
        """The exact value of the float ``f``."""
        return _lift(_REAL.from_float(f))

    @classmethod
    def from_decimal(cls, dec: Any) -> Any:
        """The exact value of the Decimal ``dec``."""
        return cls(dec)

    def limit_denominator(self, max_denominator: Any = 1000000) -> Any:
        """The closest Fraction with a denominator at most ``max_denominator``."""
        max_denominator = _exact(max_denominator)
        if isinstance(max_denominator, int) and max_denominator.bit_length() > MAX_BITS:
            _too_big("limit_denominator")
        charge = run_charge()
        if (
            charge is None
            or not isinstance(max_denominator, int)
            or _stored(self)[1].bit_length() <= SMALL_BITS
        ):
            return _lift(_REAL.limit_denominator(self, max_denominator))
        return _limit_denominator(self, max_denominator, charge)

    def __pow__(self, other: Any, modulo: Any = None) -> Any:
        if modulo is not None:
            return NotImplemented
        other = _exact(other)
        if isinstance(other, int) and _bits(self) * abs(other) > MAX_BITS:
            _too_big("a power")
        if (
            isinstance(other, _REAL)
            and other.denominator == 1
            and _bits(self) * abs(other.numerator) > MAX_BITS
        ):
            _too_big("a power")
        return _lift(_REAL.__pow__(self, other))

    def __rpow__(self, other: Any) -> Any:
        other = _exact(other)
        if (
            isinstance(other, int)
            and self.denominator == 1
            and _bits(other) * abs(self.numerator) > MAX_BITS
        ):
            _too_big("a power")
        return _lift(_REAL.__rpow__(self, other))

    def __round__(self, ndigits: Any = None) -> Any:
        ndigits = _exact(ndigits)
        if isinstance(ndigits, int) and abs(ndigits) > MAX_EXPONENT:
            _too_big("round()")
        check_host_work(_bits(self))  # a divmod of the terms (findings16 F04)
        return _lift(_REAL.__round__(self, ndigits))

    def __reduce__(self) -> Any:
        return (Fraction, (str(self),))

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self


_NEW: Any = _REAL.__new__  # takes the real (untyped) `_normalize` keyword


def _stored(value: Any) -> tuple[int, int]:
    """The numerator and denominator stored in ``value`` (not a subclass's properties)."""
    return value._numerator, value._denominator


SMALL_BITS = 4096
"""Denominators up to this many bits are limited by the real method (milliseconds at most)."""


def _limit_denominator(value: Any, max_denominator: int, charge: Any) -> Any:
    """CPython 3.11's ``Fraction.limit_denominator`` with the run's budget checked every step.

    findings16 F04: the loop makes about one big-int division a bit of the denominator, in
    host Python. The same convergents, the same choice between the two bounds (compared by
    cross-multiplication, exactly as the real ``abs(bound2 - self) <= abs(bound1 - self)``,
    without its gcds), built unnormalized (a convergent is in lowest terms already).
    """
    if max_denominator < 1:
        raise ValueError("max_denominator should be at least 1")
    n0, d0 = _stored(value)
    if d0 <= max_denominator:
        return _NEW(Fraction, n0, d0, _normalize=False)
    p0, q0, p1, q1 = 0, 1, 1, 0
    n, d = n0, d0
    while True:
        charge(TICK_STEPS)  # the full check (deadline, steps, abort) each division
        a = n // d
        q2 = q0 + a * q1
        if q2 > max_denominator:
            break
        p0, q0, p1, q1 = p1, q1, p0 + a * p1, q2
        n, d = d, n - a * d
    k = (max_denominator - q0) // q1
    p_low, q_low = p0 + k * p1, q0 + k * q1
    # |p1/q1 - n0/d0| <= |p_low/q_low - n0/d0|, both sides times d0 * q1 * q_low
    if abs(p1 * d0 - n0 * q1) * q_low <= abs(p_low * d0 - n0 * q_low) * q1:
        return _NEW(Fraction, p1, q1, _normalize=False)
    return _NEW(Fraction, p_low, q_low, _normalize=False)


def _binary(name: str) -> Any:
    real = getattr(_REAL, name)

    def operator(self: Any, other: Any) -> Any:
        other = _exact(other)
        bits = _bits(self) + _bits(other)
        if bits > MAX_BITS:
            _too_big("an operation")
        check_host_work(bits)  # products, gcds, divisions of big ints in host code (F08)
        return _lift(real(self, other))

    operator.__name__ = name
    return operator


def _unary(name: str) -> Any:
    real = getattr(_REAL, name)

    def operator(self: Any) -> Any:
        return _lift(real(self))

    operator.__name__ = name
    return operator


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "divmod"):
    setattr(Fraction, f"__{_op}__", _binary(f"__{_op}__"))
    setattr(Fraction, f"__r{_op}__", _binary(f"__r{_op}__"))
for _op in ("__neg__", "__pos__", "__abs__"):
    setattr(Fraction, _op, _unary(_op))

own_methods(Fraction, ("as_integer_ratio",))
HOLDABLE: tuple[type, ...] = (Fraction,)
"""Value types this stand-in hands to scripts."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {"Fraction": Fraction}
