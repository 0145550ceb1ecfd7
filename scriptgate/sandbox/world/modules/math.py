"""The ``math`` stand-in: the real functions, with reductions ticking and big ints capped.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. Products, ``lcm`` and ``gcd`` of many ints are
one C call whose steps grow with the result (``math.lcm(*range(1, 200000))`` ran
11 s unchecked): they are reduced pairwise, every item ticking. ``fsum`` reads its
input in ticked pieces (findings15 E01: ``fsum(range(10**8))`` is one C loop).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.int_work import check_gcd, guarded_isqrt
from scriptgate.sandbox.guards.ticking import read_ticked
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "math"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "pi", "e", "tau", "inf", "nan", "sqrt", "isqrt", "floor", "ceil", "trunc", "log",
    "log2", "log10", "log1p", "exp", "expm1", "pow", "sin", "cos", "tan", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "hypot", "dist", "fabs", "fmod", "modf",
    "frexp", "ldexp", "copysign", "isclose", "isfinite", "isinf", "isnan", "gcd", "lcm",
    "degrees", "radians", "fsum", "prod", "factorial", "comb", "perm",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (beyond numbers)."""

_MAX_FACTORIAL = 5_000


def _capped(fn: Callable[..., Any], limit: int, name: str) -> Callable[..., Any]:
    def wrapper(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, int) and abs(arg) > limit:
                refuse_size(f"math.{name} argument above {limit} refused in the sandbox")
        return fn(*args)

    wrapper.__name__ = name
    return wrapper


def _lcm_checked(a: Any, b: Any) -> Any:
    from scriptgate.sandbox.guards.attributes import MAX_INT_BITS

    check_gcd(a, b, "math.lcm")
    result = math.lcm(a, b)
    if result.bit_length() > MAX_INT_BITS:
        refuse_size("an int lcm would be too large for the sandbox")
    return result


def _gcd_checked(a: Any, b: Any) -> Any:
    check_gcd(a, b, "math.gcd")  # quadratic C code (findings7 F12)
    return math.gcd(a, b)


def _mul_checked(a: Any, b: Any) -> Any:
    from scriptgate.sandbox.guards.attributes import guarded_mul

    return guarded_mul(a, b)


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run (test_modules_math_reductions_stop_at_the_deadline)."""
    charge, ticking = run.charge, run.ticking
    return {
        **{name: getattr(math, name) for name in MEMBERS},
        # findings15 E01: a range is charged its length up front, one deadline check
        "fsum": lambda data: math.fsum(read_ticked(charge(data), charge)),
        "prod": lambda data, *, start=1: functools.reduce(
            _mul_checked, ticking(iter(charge(data))), start
        ),
        "lcm": lambda *integers: functools.reduce(_lcm_checked, ticking(iter(integers)), 1),
        "gcd": lambda *integers: functools.reduce(_gcd_checked, ticking(iter(integers)), 0),
        "factorial": _capped(math.factorial, _MAX_FACTORIAL, "factorial"),
        "comb": _capped(math.comb, _MAX_FACTORIAL, "comb"),
        "perm": _capped(math.perm, _MAX_FACTORIAL, "perm"),
        "pow": math.pow,
        "isqrt": guarded_isqrt,  # quadratic in the bits (guards.int_work)
    }
