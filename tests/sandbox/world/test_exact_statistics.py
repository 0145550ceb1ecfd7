"""Exact statistics are bounded by the bits of their numbers (findings16 F01/F02).

``statistics.mean``/``variance``/``stdev``… add the items as exact fractions and square
the deviations in host Python with no deadline check: three ints of 16 M bits ran 35 s
under a 2 s deadline (F01), and 1,000 small Fractions of distinct 4,000-bit denominators
grew the partial sum's denominator to millions of bits, 28 s (F02). Ints, Fraction
numerators and denominators and Decimal digits weigh their bits (at most 1 M in all),
distinct Fraction denominators at most 300,000 bits, and each call checks the budget first.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_support import MODES, ends_at_the_deadline, refused, same_as_python

from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Isolation, Sandbox
from scriptgate.sandbox.world.modules.statistics import exact_bits


@pytest.fixture(scope="module", params=MODES)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    mode: Isolation = request.param
    sandbox = Sandbox(isolation=mode, limits=Limits(timeout=20))
    yield sandbox
    sandbox.close()


_BIG = "n = 4_000_000\nxs = [int('f' * n, 16), int('7' * n, 16), int('3' * n, 16)]\n"
_FRACTIONS = "from fractions import Fraction\nd = int('d' * 1000, 16)\n"
_ATTACKS = {
    "variance-of-big-ints": "import statistics\n" + _BIG + "statistics.variance(xs)",
    "pvariance-of-big-ints": "import statistics\n" + _BIG + "statistics.pvariance(xs)",
    "stdev-of-big-ints": "import statistics\n" + _BIG + "statistics.stdev(xs)",
    "mean-of-distinct-denominators": "import statistics\n"
    + _FRACTIONS
    + "statistics.mean([Fraction(1, d + 2 * i + 1) for i in range(240)])",
    "harmonic-mean-of-big-ints": "import statistics\n" + _BIG + "statistics.harmonic_mean(xs)",
    "decimal-digits": "import statistics\nfrom decimal import Decimal\n"
    "statistics.mean([Decimal('1e-90000')] * 4)",
}


@pytest.mark.parametrize("name", sorted(_ATTACKS))
def test_exact_statistics_of_large_numbers_are_refused(box: Sandbox, name: str) -> None:
    refused(box, _ATTACKS[name], "limit", "use statistics.fmean")


_FOREIGN = {
    # findings18 B07: statistics called the data's own class with the host's real
    # Fraction (T(value)), which the script then held and raised to a huge power
    "script-class-with-ratio": (
        "class V:\n    def __init__(self, v=1):\n        self.v = v\n"
        "    def as_integer_ratio(self):\n        return (1, 3)\nstatistics.mean([V(), V()])"
    ),
    # findings18 B08: a script class's ratios weighed nothing in the size check
    "script-class-with-big-ratios": (
        "class V:\n    def __init__(self, i):\n        self.i = i\n"
        "    def as_integer_ratio(self):\n        return (1, 2 ** 4000 + 2 * self.i + 1)\n"
        "statistics.mean([V(i) for i in range(600)])"
    ),
    "int-subclass": "class I(int):\n    pass\nstatistics.variance([I(1), I(2), I(4)])",
}


@pytest.mark.parametrize("name", sorted(_FOREIGN))
def test_exact_statistics_take_only_the_number_types(box: Sandbox, name: str) -> None:
    refused(box, "import statistics\n" + _FOREIGN[name], "runtime", "convert the values first")


def test_exact_statistics_loop_of_calls_ends_at_the_deadline() -> None:
    source = (
        "import statistics\n"
        + _FRACTIONS
        + "for k in range(300):\n    statistics.mean([Fraction(1, d + 2 * i + 1) for i in range(70)])"
    )
    ends_at_the_deadline(source, 3.0)


def test_exact_statistics_ok(box: Sandbox) -> None:
    same_as_python(
        box,
        "import statistics\nfrom fractions import Fraction\nfrom decimal import Decimal\n"
        "[statistics.mean([1, 2, 3, 4]), statistics.variance([1.5, 2.5, 2.5, 2.75, 3.25, 4.75]), "
        "str(statistics.mean([Fraction(1, 3), Fraction(2, 3)])), statistics.pstdev([2, 4, 4, 5]), "
        "statistics.harmonic_mean([40, 60]), str(statistics.mean([Decimal('0.5'), Decimal('1.25')])), "
        "str(statistics.mean([Fraction(1, i) for i in range(1, 2001)]))[:30], "
        "statistics.pvariance([2 ** 60 + i for i in range(1000)])]",
    )


def test_exact_statistics_bits_read_the_base_types() -> None:
    from fractions import Fraction

    assert exact_bits([1, 2, 3]) == (1 + 2 + 2, 0)
    assert exact_bits([Fraction(1, 3), Fraction(2, 3), 0.5]) == (1 + 2 + 2 + 2, 2)
    assert exact_bits([1.0e300, True]) == (1, 0)
