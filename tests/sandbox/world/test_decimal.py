"""The ``decimal`` stand-in in both modes: Decimal under a per-run bounded context."""

from __future__ import annotations

from sandbox_support import refused, value

from scriptgate.sandbox.sandbox import Sandbox


def test_decimal_arithmetic_matches_cpython(sandbox: Sandbox) -> None:
    src = (
        "from decimal import Decimal, getcontext, localcontext, ROUND_HALF_UP\n"
        "getcontext().prec = 50\n"
        "x = Decimal(1) / Decimal(7)\n"
        "with localcontext() as c:\n"
        "    c.prec = 5\n"
        "    y = Decimal(1) / 7\n"
        "z = Decimal('2.675').quantize(Decimal('0.01'), rounding=ROUND_HALF_UP)\n"
        "[str(x), str(y), str(Decimal('1.1') + Decimal('2.2')), isinstance(x, Decimal),"
        " str(Decimal(2).sqrt()), str(z), int(Decimal('12.7')), getcontext().prec]"
    )
    import decimal

    with decimal.localcontext() as ctx:
        ctx.prec = 50
        x = decimal.Decimal(1) / decimal.Decimal(7)
        root = decimal.Decimal(2).sqrt()
    assert value(sandbox, src) == [str(x), "0.14286", "3.3", True, str(root), "2.68", 12, 50]


def test_decimal_context_is_the_runs_not_the_hosts(sandbox: Sandbox) -> None:
    import decimal

    before = decimal.getcontext().prec
    assert value(sandbox, "from decimal import getcontext\ngetcontext().prec = 7\n1") == 1
    assert decimal.getcontext().prec == before
    # a new run starts from the default precision again
    assert value(sandbox, "from decimal import getcontext\ngetcontext().prec") == 28


def test_decimal_huge_values_are_refused(sandbox: Sandbox) -> None:
    refused(sandbox, "from decimal import Decimal\nint(Decimal('1e999999'))", "exponent")
    refused(sandbox, "from decimal import getcontext\ngetcontext().prec = 10**6", "precision")
    refused(sandbox, "from decimal import Decimal\nDecimal(2) ** 10**7", "Emax")
    refused(sandbox, "from decimal import Decimal\nint(Decimal('1e50000'))", "int")
    refused(sandbox, "from decimal import Decimal\nDecimal('9' * 20000)", "digits")


def test_decimal_results_never_leave_the_runs_class(sandbox: Sandbox) -> None:
    src = (
        "from decimal import Decimal\nd = Decimal('2.5')\n"
        "vals = [d + 1, 1 + d, d * d, d / 3, d ** 2, -d, abs(d), d.sqrt(), d.exp(), d.ln(),"
        " d.copy_abs(), d.quantize(Decimal('1')), d.to_integral_value(), divmod(d, 2)[0],"
        " Decimal.from_float(0.5), d.max(Decimal(3)), d.radix()]\n"
        "all(type(v) is Decimal for v in vals)"
    )
    assert value(sandbox, src) is True
