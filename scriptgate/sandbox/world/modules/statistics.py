"""The ``statistics`` stand-in: each function copies (and charges) its data first.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. The functions that sort (``median*``,
``quantiles``, a ranked ``correlation``) check their data's comparisons, those that count
(``mode``, ``multimode``) what they hash (issue 5). ``correlation``, ``covariance`` and
``linear_regression`` copy both series; ``linear_regression`` gives the real
``LinearRegression(slope, intercept)`` named tuple.
"""

from __future__ import annotations

import decimal
import fractions
import statistics
from collections.abc import Callable
from typing import Any

from scriptgate.sandbox.guards.attributes import fed
from scriptgate.sandbox.guards.comparisons import items_ok
from scriptgate.sandbox.guards.errors import refuse_size
from scriptgate.sandbox.guards.lengths import exact_int
from scriptgate.sandbox.guards.memory import charge_copy, growth_checked
from scriptgate.sandbox.guards.ticking import LARGE_INPUT, TickedList, check_budget
from scriptgate.sandbox.world.modules.common import RunWorld
from scriptgate.sandbox.world.modules.decimal import BoundedDecimal
from scriptgate.sandbox.world.modules.fractions import Fraction as SandboxFraction

__all__ = [
    "HOLDABLE",
    "MAX_DENOMINATOR_BITS",
    "MAX_EXACT_BITS",
    "MEMBERS",
    "NAME",
    "build",
    "exact_bits",
    "exact_items_ok",
]

NAME = "statistics"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low",
    "median_high", "mode", "multimode", "quantiles", "stdev", "pstdev", "variance",
    "pvariance", "correlation", "covariance", "linear_regression", "StatisticsError",
)  # fmt: skip
"""The members a script may use."""
_PAIRED_STATISTICS = frozenset({"correlation", "covariance", "linear_regression"})
"""statistics functions of two data series (``x``, ``y``): both are copied first."""

HOLDABLE: tuple[type, ...] = (statistics.StatisticsError, statistics.LinearRegression)
"""Value types this stand-in hands to scripts (beyond numbers)."""

_MAX_QUANTILES = 10_000
"""Most cut points ``statistics.quantiles`` may compute in one call."""

_EXACT_STATISTICS = frozenset({"mean", "variance", "pvariance", "stdev", "pstdev", "harmonic_mean"})
"""statistics functions whose host code adds (and squares) the items as exact fractions."""
MAX_EXACT_BITS = 1_000_000
"""Most bits the int, ``Fraction`` and ``Decimal`` items of an exact statistic may have in all.

The host's pure-Python ``_sum``/``_ss`` add the items as fractions and square the
deviations with no deadline check: three ints of 16 M bits (``variance``) ran 35 s under a
2 s deadline, and 1,000 Fractions of 4,000-bit distinct denominators (``mean``) grew a
partial sum's denominator to millions of bits, 28 s (findings16 F01/F02). Floats are exact
ratios over a power of two and weigh nothing."""
_numerator: Callable[[Any], int] = vars(fractions.Fraction)["numerator"].fget
_denominator: Callable[[Any], int] = vars(fractions.Fraction)["denominator"].fget
_as_tuple = decimal.Decimal.as_tuple
_PLAIN_NUMBERS = frozenset({int, bool})


MAX_DENOMINATOR_BITS = 300_000
"""Most bits the distinct ``Fraction`` denominators of an exact statistic may have in all.

Adding fractions of distinct denominators grows the sum's denominator to their lcm, and
each addition's gcd is quadratic in it: 240 denominators of 4,000 bits (960,000 in all)
took 2.6 s in one host call."""


def exact_bits(items: list[Any]) -> tuple[int, int]:
    """``(bits, denominator bits)`` of ``items``' ints, Fractions and Decimals.

    ``bits`` counts every int, a Fraction's numerator and denominator and a Decimal's
    digits and exponent; ``denominator bits`` the distinct Fraction denominators (an
    upper bound of their lcm's). Read through the base types (a script subclass's
    methods never run); floats and anything else weigh nothing (the host converts them
    exactly, over a power of two, or raises).
    """
    kinds = set(map(type, items))
    if kinds <= _PLAIN_NUMBERS:
        return sum(map(int.bit_length, items)), 0
    total = 0
    denominators: set[int] = set()
    for item in items:
        if isinstance(item, int):
            total += int.bit_length(item)
        elif isinstance(item, fractions.Fraction):
            denominator = _denominator(item)
            total += int.bit_length(_numerator(item)) + int.bit_length(denominator)
            denominators.add(denominator)
        elif isinstance(item, decimal.Decimal) and decimal.Decimal.is_finite(item):
            _sign, digits, exponent = _as_tuple(item)
            total += (len(digits) + abs(int(exponent))) * 10 // 3
    return total, sum(map(int.bit_length, denominators))


_EXACT_TYPES = frozenset({int, bool, float, fractions.Fraction, SandboxFraction, decimal.Decimal})
"""The item types an exact statistic takes (besides a run's own ``Decimal`` class)."""


def _exact_kind(kind: type) -> bool:
    # a run's Decimal class is made per run, directly on the bounded base; a script's
    # subclass of it (or of int, Fraction…) is not an exact kind
    return kind in _EXACT_TYPES or kind.__bases__ == (BoundedDecimal,)


def exact_items_ok(name: str, items: list[Any]) -> None:
    """Refuse data an exact statistic cannot take from a script (findings18 B07/B08).

    The host's ``_sum`` calls each item's ``as_integer_ratio()`` and then the data's own
    type with the host's real ``Fraction`` of the result (``T(value)``): a script class
    (or a subclass of a number) had its methods called with a host object it could then
    hold, and weighed nothing in :func:`exact_bits` whatever its ratios were.
    """
    for kind in set(map(type, items)):
        if not _exact_kind(kind):
            raise TypeError(
                f"statistics.{name} takes int, float, Fraction and Decimal values in the "
                f"sandbox, not {kind.__name__}: convert the values first (float(x), "
                "Fraction(...)), or use statistics.fmean"
            )


_COUNTING_STATISTICS = frozenset({"mode", "multimode"})
"""statistics functions that hash every item of their data (through a Counter)."""
_SORTING_STATISTICS = frozenset({"median", "median_low", "median_high", "quantiles"})
"""statistics functions that sort their data (the others add, or compare items with 0)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    charge = run.charge

    def eager_first(fn: Callable[..., Any]) -> Callable[..., Any]:
        hashes = fn.__name__ in _COUNTING_STATISTICS
        sorts = fn.__name__ in _SORTING_STATISTICS
        exact = fn.__name__ in _EXACT_STATISTICS

        def wrapper(data: Any, *args: Any, **kwargs: Any) -> Any:
            # the copy's growth is read (F08); the host's statistics loops are pure
            # Python: every pass over the data reads ticked pieces (findings7 F07)
            copied = growth_checked(charge(charge_copy(data, "list")), "list")
            if hashes:
                # mode()/multimode() count the items in a Counter: one hashing C call
                # (guards: hash feeding), fed in chunks like Counter(x), each chunk's
                # hashing bounded (guards.hashed_ok)
                return fn(fed(list(copied), "counter"), *args, **kwargs)
            items = TickedList(copied, charge)
            if exact:
                exact_items_ok(fn.__name__, items)
                if len(items) < LARGE_INPUT:
                    check_budget()  # one host computation a call: a loop of them stops
                    # (a large argument's call was checked by the stand-in's wrapper)
                bits, denominator_bits = exact_bits(items)
                if bits > MAX_EXACT_BITS or denominator_bits > MAX_DENOMINATOR_BITS:
                    refuse_size(
                        f"statistics.{fn.__name__} of numbers this large would take too long "
                        f"for the sandbox (more than {MAX_EXACT_BITS:,} bits in all, or "
                        f"{MAX_DENOMINATOR_BITS:,} bits of distinct Fraction denominators): use "
                        "statistics.fmean (floats), or scale the numbers down first"
                    )
            if sorts and len(items) > 1:
                items_ok(items)  # median()/quantiles() sort the data (dagguard)
            if fn.__name__ == "quantiles":
                # quantiles(data, n=10**7) built 10**7 cut points in one host call past the
                # deadline (test_boundary_statistics_quantiles_n_is_bounded)
                n = exact_int(kwargs.get("n", args[0] if args else 4))
                if type(n) is int and n > _MAX_QUANTILES:
                    refuse_size(f"statistics.quantiles n above {_MAX_QUANTILES} refused")
            return fn(items, *args, **kwargs)

        wrapper.__name__ = fn.__name__
        return wrapper

    def eager_pair(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(x: Any, y: Any, /, **kwargs: Any) -> Any:
            xs = list(charge(charge_copy(x, "list")))
            ys = list(charge(charge_copy(y, "list")))
            if kwargs.get("method") == "ranked":  # ranks by sorting both series (dagguard)
                for items in (xs, ys):
                    if len(items) > 1:
                        items_ok(items)
            return fn(xs, ys, **kwargs)

        wrapper.__name__ = fn.__name__
        return wrapper

    return {
        **{name: eager_pair(getattr(statistics, name)) for name in _PAIRED_STATISTICS},
        **{
            name: eager_first(getattr(statistics, name))
            for name in MEMBERS
            if name != "StatisticsError" and name not in _PAIRED_STATISTICS
        },
        "StatisticsError": statistics.StatisticsError,
    }
