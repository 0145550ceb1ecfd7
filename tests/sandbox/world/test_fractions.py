"""The ``fractions`` stand-in in both modes: bounded Fraction.

findings16 F04: ``limit_denominator`` of a large denominator (a big-int division a bit, in
host Python) ends at the deadline (in-process: process mode kills the worker on time) and
gives plain Python's result.
"""

from __future__ import annotations

from sandbox_support import ends_at_the_deadline, refused, same_as_python, value

from scriptgate.sandbox.sandbox import Sandbox


def test_fractions_arithmetic_matches_cpython(sandbox: Sandbox) -> None:
    from fractions import Fraction

    src = (
        "from fractions import Fraction\nfrom decimal import Decimal\n"
        "f = Fraction(1, 3) + Fraction(1, 6)\n"
        "[str(f), str(Fraction('3.14159').limit_denominator(100)), str(Fraction(2, 3) ** 3),"
        " str(Fraction(Decimal('1.25'))), str(Fraction(0.5)), isinstance(f * 2, Fraction),"
        " Fraction(7, 2).as_integer_ratio(), round(Fraction(7, 2))]"
    )
    expected = [
        str(Fraction(1, 3) + Fraction(1, 6)),
        str(Fraction("3.14159").limit_denominator(100)),
        "8/27",
        "5/4",
        "1/2",
        True,
        [7, 2],
        4,
    ]
    assert value(sandbox, src) == expected


def test_fractions_huge_results_are_refused(sandbox: Sandbox) -> None:
    refused(sandbox, "from fractions import Fraction\nFraction(3, 7) ** 10**7", "too large")
    refused(sandbox, "from fractions import Fraction\nFraction('1e999999999')", "exponent")
    src = "from fractions import Fraction\nf = Fraction(3, 7)\nfor i in range(40):\n    f = f * f\n"
    refused(sandbox, src, "too large")


def test_fractions_limit_denominator_of_a_large_denominator_ends_at_the_deadline() -> None:
    # 3-7 s of host-Python continued fraction with no tick (13-16 s past 1 s for 3**120000)
    ends_at_the_deadline(
        "from fractions import Fraction\n"
        "f = Fraction(3**40000 + 1, 5**27000 + 3)\ng = f * f\n"
        "g.limit_denominator(g.denominator - 1)\n",
        1.0,
    )


def test_fractions_limit_denominator_ok(sandbox: Sandbox) -> None:
    # the checked loop (denominators past 4096 bits) gives plain Python's convergents
    same_as_python(
        sandbox,
        "from fractions import Fraction\n"
        "f = Fraction(3**3000 + 1, 5**2000 + 3)\ng = -f * f\n"
        "r = [g.limit_denominator(m) for m in (1, 7, 10**50, 10**900, g.denominator - 1,"
        " g.denominator)]\n"
        "[(x.numerator, x.denominator) for x in r] + [type(r[0]).__name__,"
        " str(Fraction('3.141592653589793').limit_denominator(100)), round(g), str(round(g, 30))]",
    )
