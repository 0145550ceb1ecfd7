"""Bounds on the big-int C calls whose time grows with the square of the size.

Part of ``guards/`` (the bottom): imports only :mod:`.errors` and :mod:`.ticking`.
``math.gcd``/``lcm`` and
``Fraction(a, b)`` (which reduces by the gcd) are quadratic C code the deadline cannot
interrupt: two 4.1 M-bit ints ran 65 s under a 1 s deadline, 1 M bits 3.3 s (findings7
F12). :func:`check_gcd` refuses, before the call, a pair whose larger size squared passes
:data:`GCD_WORK` (about 0.1-0.2 s of C on a loaded machine); :func:`check_from_bytes`
keeps ``int.from_bytes`` inside the sandbox's int size bound like ``*`` and ``**``.

Division is quadratic too: ``a // b``, ``a % b``, ``divmod``, ``math.isqrt`` and
``round(x, -n)`` of ints of about a million bits are one C call of ~0.5 s each, and a
script loop over them was checked only at its tick chunk's end, every 256 iterations: two
minutes past a 1 s deadline (findings9 F02/F05); ints parsed from hex text reach 50 M bits,
whose division is one C call of minutes. :func:`check_division` estimates the work in
CPython's 30-bit digits (divisor digits x quotient digits) before the call: past
:data:`CHECK_WORK` (about a millisecond) the run's budget is checked first (deadline,
abort, steps), so a loop of big divisions stops within one division of its deadline; past
:data:`MAX_DIVISION_WORK` (two ints of a million bits, about 0.5 s) the call is refused.
Divisions by a small divisor are linear and never checked. Big products (Karatsuba, ~10 ms
for two 500 k-bit ints) check the budget the same way (:func:`check_product`).
"""

from __future__ import annotations

import math
import operator
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.ticking import TICK_STEPS, run_charge

__all__ = [
    "CHECK_WORK",
    "GCD_WORK",
    "MAX_DIVISION_WORK",
    "MAX_FROM_BYTES",
    "MAX_ROUND_POWER_BITS",
    "check_division",
    "check_from_bytes",
    "check_gcd",
    "check_host_work",
    "check_product",
    "guarded_divmod",
    "guarded_floordiv",
    "guarded_ifloordiv",
    "guarded_isqrt",
    "guarded_round",
]

GCD_WORK = 40_000_000_000
"""Most ``bits(larger)**2`` one gcd may cost (ints of up to ~200,000 bits)."""
MAX_FROM_BYTES = 125_000
"""Most bytes ``int.from_bytes`` reads: 1,000,000 bits (the sandbox's int size bound)."""


def check_gcd(a: Any, b: Any, what: str) -> None:
    """Refuse (a size limit) a gcd of two ints whose quadratic cost passes :data:`GCD_WORK`."""
    if isinstance(a, int) and isinstance(b, int):
        bits = max(int.bit_length(a), int.bit_length(b))
        if bits * bits > GCD_WORK:
            refuse_size(
                f"{what} of ints of {bits} bits would take too long in the sandbox "
                f"(at most {int(GCD_WORK**0.5)} bits)"
            )


def check_from_bytes(length: int) -> None:
    """Refuse ``int.from_bytes`` of more than :data:`MAX_FROM_BYTES` bytes."""
    if length > MAX_FROM_BYTES:
        refuse_size(
            f"int.from_bytes of {length} bytes would be too large for the sandbox "
            f"(at most {MAX_FROM_BYTES} bytes: 1,000,000 bits)"
        )


CHECK_WORK = 1 << 20
"""Digit operations (30-bit digits) past which a division checks the run's budget first."""
PRODUCT_CHECK_WORK = 1 << 22
"""Digit pairs (30-bit digits) past which a product checks the run's budget first (~1 ms)."""
MAX_DIVISION_WORK = 300_000_000
"""Most digit operations one division may cost: a 1,000,000-bit int by a 500,000-bit one."""
MAX_ROUND_POWER_BITS = 1_000_000
"""Largest power of ten ``round(x, -n)`` of an int may build (the sandbox's int size bound)."""
_POWER_CHECK_BITS = 1 << 16
_LOG2_10 = math.log2(10)


def _digits(bits: int) -> int:
    return (bits + 29) // 30


def _division_cost(a_bits: int, b_bits: int, what: str) -> None:
    """Check the budget before, or refuse, a division of an ``a_bits`` int by a ``b_bits`` one."""
    dividend, divisor = _digits(a_bits), _digits(b_bits)
    if divisor < 2 or dividend < divisor:
        return  # one-digit divisors are linear; a smaller dividend is no work
    work = divisor * (dividend - divisor + 1)
    if work <= CHECK_WORK:
        return
    if work > MAX_DIVISION_WORK:
        refuse_size(
            f"{what} would take too long in the sandbox (ints of {a_bits:,} and {b_bits:,} "
            "bits; at most about 1,000,000 by 500,000 bits)"
        )
    _check_budget()


def _check_budget() -> None:
    charge = run_charge()
    if charge is not None:
        charge(TICK_STEPS)  # the deadline and the abort, before a C call of milliseconds


def check_product(a_bits: int, b_bits: int) -> None:
    """Before ``a * b`` of ints of these sizes: check the budget when it is milliseconds of C.

    A product of two 500 k-bit ints is ~10 ms of Karatsuba; a loop of them was checked
    only at its tick chunk's end (256 products: seconds past the deadline).
    """
    if _digits(a_bits) * _digits(b_bits) > PRODUCT_CHECK_WORK:
        _check_budget()


def check_host_work(bits: int) -> None:
    """Before host code whose work grows with the square of ``bits`` (Fraction arithmetic):
    check the budget when it is milliseconds of C (findings11 F08)."""
    if _digits(bits) ** 2 > PRODUCT_CHECK_WORK:
        _check_budget()


def check_division(a: object, b: object, what: str = "an int division") -> None:
    """Before ``a // b``, ``a % b`` or ``divmod(a, b)``: refuse or check the budget for big ints."""
    if isinstance(a, int) and isinstance(b, int):
        _division_cost(int.bit_length(a), int.bit_length(b), what)  # int's own: no lying


def guarded_floordiv(a: object, b: object) -> object:
    """``a // b`` (and ``operator.floordiv``) with big int divisions checked (:func:`check_division`)."""
    check_division(a, b)
    return operator.floordiv(a, b)


def guarded_ifloordiv(a: object, b: object) -> object:
    """``a //= b`` with big int divisions checked."""
    check_division(a, b)
    return operator.ifloordiv(a, b)  # type: ignore[no-untyped-call]


def guarded_divmod(a: object, b: object) -> object:
    """``divmod(a, b)`` with big int divisions checked."""
    check_division(a, b, "divmod")
    return divmod(a, b)  # type: ignore[operator]


def guarded_isqrt(n: object) -> int:
    """``math.isqrt(n)``: about one division of ``n`` by its square root (checked so)."""
    if isinstance(n, int):
        bits = int.bit_length(n)
        _division_cost(bits, bits // 2, "math.isqrt")
    return math.isqrt(n)  # type: ignore[arg-type]  # math raises TypeError as it would


_INT_ROUND = int.__round__


def guarded_round(number: object, ndigits: object = None) -> object:
    """``round(x, -n)`` of an int divides it by ``10**n``: C builds that power first.

    ``round(5, -10**7)`` built a 33 M-bit power of ten in one C call of 11 s. An int whose
    magnitude is below half of ``10**n`` rounds to 0 (returned without the power); any
    other is one checked division.
    """
    if ndigits is None:
        return round(number)  # type: ignore[call-overload]
    if (
        isinstance(number, int)
        and getattr(type(number), "__round__", None) is _INT_ROUND
        and isinstance(ndigits, int)
        and int.__index__(ndigits) < 0  # int's own value: a subclass's `<` may lie (F11)
    ):
        places = -int.__index__(ndigits)  # int's own value, as round() reads it
        bits = int.bit_length(number)
        if 3 * places >= bits + 1:  # 10**n >= 8**n >= 2 * |number|: rounds to 0
            return 0
        power_bits = int(places * _LOG2_10) + 1
        if power_bits > MAX_ROUND_POWER_BITS:
            refuse_size(
                f"round() of an int to a multiple of 10**{places:,} would be too large for "
                "the sandbox (at most 10**300,000)"
            )
        if power_bits > _POWER_CHECK_BITS:
            _check_budget()  # C builds 10**n first: milliseconds of multiplications
        _division_cost(bits, power_bits, "round()")
    return round(number, ndigits)  # type: ignore[call-overload]
