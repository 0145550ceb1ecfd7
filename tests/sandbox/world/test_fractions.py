"""The ``fractions`` stand-in in both modes: bounded Fraction."""

from __future__ import annotations

from sandbox_support import refused, value

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
