"""Big-int divisions check the budget first (issue 13, findings9 F02/F05).

``a // b``, ``a % b``, ``divmod``, ``math.isqrt`` and ``round(x, -n)`` of ints of about a
million bits are one quadratic C call each (~0.5 s); a script loop of them was checked
only at its tick chunk's end, two minutes past a 1 s deadline, and ints parsed from hex
text (50 M bits) made one division of minutes. Three kinds of proof:

- deterministic: the guards call the run's charge hook (found through a script frame)
  before a big division, never before a small one, and refuse the ones past
  :data:`MAX_DIVISION_WORK` before any C work;
- the compiled forms: every spelling (``//``, ``%``, ``//=``, ``%=``, ``divmod``,
  ``operator``) gives plain Python's results, and the inline fast path stays for small
  divisors;
- end to end, both modes: a loop of big divisions under a short deadline ends ``timed
  out`` within a bounded wall time (unchecked it ran on for 256 divisions).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.errors import ScriptStop
from scriptgate.sandbox.guards.int_work import (
    CHECK_WORK,
    MAX_DIVISION_WORK,
    guarded_divmod,
    guarded_floordiv,
    guarded_ifloordiv,
    guarded_isqrt,
    guarded_round,
)
from scriptgate.sandbox.guards.ticking import TICK_STEPS
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Isolation, Sandbox

_BIG_A = (1 << 200_000) - 1
_BIG_B = (1 << 100_000) + 3
"""A division of ~11 M digit operations: well past :data:`CHECK_WORK`, ~10-20 ms of C."""
_HUGE = (1 << 4_000_000) - 1
_HALF_HUGE = (1 << 2_000_000) + 7


class _Charged(Exception):
    pass


def _in_script_frame(call: Callable[[], Any], charges: list[Any]) -> Any:
    """Run ``call`` from a frame that looks like a script's (so ``run_charge`` finds the hook)."""

    def charge(value: Any) -> Any:
        charges.append(value)
        return value

    namespace: dict[str, Any] = {"__charge__": charge, "_call": call}
    exec(compile("def _f():\n    return _call()\n", FILENAME, "exec"), namespace)
    return namespace["_f"]()


@pytest.mark.parametrize(
    "call",
    [
        lambda: guarded_floordiv(_BIG_A, _BIG_B),
        lambda: guarded_ifloordiv(_BIG_A, _BIG_B),
        lambda: guarded_divmod(_BIG_A, _BIG_B),
        lambda: guarded_isqrt(_BIG_A),
        lambda: guarded_round(_BIG_A, -59_000),
    ],
    ids=["floordiv", "ifloordiv", "divmod", "isqrt", "round"],
)
def test_int_division_big_checks_the_budget_first(call: Callable[[], Any]) -> None:
    charges: list[Any] = []
    _in_script_frame(call, charges)
    assert charges
    assert set(map(id, charges)) == {id(TICK_STEPS)}


def test_int_division_big_remainder_checks_the_budget_first() -> None:
    from scriptgate.sandbox.guards.attributes import guarded_mod

    charges: list[Any] = []
    assert _in_script_frame(lambda: guarded_mod(_BIG_A, _BIG_B), charges) == _BIG_A % _BIG_B
    assert charges == [TICK_STEPS]


def test_int_division_a_stopped_budget_stops_before_the_division() -> None:
    def call() -> Any:
        return guarded_floordiv((1 << 999_000) - 1, (1 << 500_000) + 3)

    namespace: dict[str, Any] = {}

    def charge(value: Any) -> Any:
        raise _Charged

    namespace.update({"__charge__": charge, "_call": call})
    exec(compile("def _f():\n    return _call()\n", FILENAME, "exec"), namespace)
    start = time.monotonic()
    with pytest.raises(_Charged):
        namespace["_f"]()
    assert time.monotonic() - start < 0.1  # the 0.3 s division never ran


def test_int_division_big_products_check_the_budget_first() -> None:
    from scriptgate.sandbox.guards.attributes import guarded_mul

    charges: list[Any] = []
    a, b = (1 << 400_000) - 1, (1 << 400_000) + 1
    assert _in_script_frame(lambda: guarded_mul(a, b), charges) == a * b
    assert charges == [TICK_STEPS]
    small: list[Any] = []
    assert _in_script_frame(lambda: guarded_mul(1 << 40, 3 << 40), small) == 3 << 80
    assert small == []


@pytest.mark.parametrize(
    ("a", "b"),
    [(10**50, 7), (_BIG_A, 3), (_BIG_A, -(1 << 40)), (5, _BIG_A), ((1 << 900) + 1, 2.5), (17, 5)],
    ids=["50-digits-by-7", "big-by-3", "big-by-2**40", "small-by-big", "big-by-float", "small"],
)
def test_int_division_small_or_linear_divisions_are_not_checked(a: Any, b: Any) -> None:
    charges: list[Any] = []
    assert _in_script_frame(lambda: guarded_divmod(a, b), charges) == divmod(a, b)
    assert charges == []


@pytest.mark.parametrize(
    "call",
    [
        lambda: guarded_floordiv(_HUGE, _HALF_HUGE),
        lambda: guarded_divmod(_HUGE, _HALF_HUGE),
        lambda: guarded_isqrt(_HUGE),
        lambda: guarded_round(_HUGE, -300_000),
        lambda: guarded_round(_HUGE, -1_200_000),
    ],
    ids=["floordiv", "divmod", "isqrt", "round", "round-power"],
)
def test_int_division_past_the_work_bound_is_refused_before_c(call: Callable[[], Any]) -> None:
    start = time.monotonic()
    with pytest.raises(ScriptStop, match=r"would (take too long in|be too large for) the sandbox"):
        _in_script_frame(call, [])
    assert time.monotonic() - start < 0.5  # the division of minutes never ran


def test_int_division_bounds_are_ordered() -> None:
    million = (1_000_000 + 29) // 30
    assert CHECK_WORK < (million // 2) ** 2 <= MAX_DIVISION_WORK  # 1 M by 500 k bits passes


@pytest.mark.parametrize(
    ("number", "ndigits"),
    [
        (5, -(10**7)),
        (-5, -1),
        (15, -1),
        (25, -1),
        (True, -1),
        (1234567, -3),
        (7, 0),
        (7, 5),
        (2.675, 2),
        (10**40 + 5 * 10**20, -21),
        (-(10**40) - 5 * 10**20, -21),
        (99, -2),
        (50, -2),
        (150, -2),
    ],
    ids=str,
)
def test_int_division_round_matches_python(number: Any, ndigits: int) -> None:
    if ndigits < -1000:
        assert guarded_round(number, ndigits) == 0  # plain Python builds 10**10**7 first
    else:
        result = guarded_round(number, ndigits)
        assert result == round(number, ndigits)
        assert type(result) is type(round(number, ndigits))


_CASES = """
import operator
class I(int):
    pass
def f(a, b):
    out = [a // b, a % b, divmod(a, b), operator.floordiv(a, b), operator.mod(a, b)]
    c = a
    c //= b
    d = a
    d %= b
    out.append(c)
    out.append(d)
    return out
big = 2 ** 3000 + 12345
rows = [
    f(17, 5), f(-17, 5), f(17, -5), f(17.5, 2), f(17, 2.5), f(True, 1), f(I(17), I(5)),
    f(big, 3), f(big, 2 ** 1500 - 1), f(3, big), f(-big, 2 ** 1400 + 1), f(10 ** 40, 10 ** 20),
]
n = 12345
for i in range(1, 40):
    rows.append([n // i, n % i, i // 7, i % 7, (i * 3) // i, n // (i + 1)])
rows.append(['%d-%s' % (4, 'x'), 'a%sb' % 5])
rows.append([round(5, -10 ** 7), round(123456, -2), divmod(7, 2)])
tmp = 100
tmp //= 7
rows.append(tmp)
rows
"""


def _plain(source: str) -> Any:
    namespace: dict[str, Any] = {}
    body, _, last = source.strip().rpartition("\n")
    exec(body.replace("round(5, -10 ** 7)", "0"), namespace)
    return eval(last, namespace)


def _json(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_json(v) for v in value]
    return value


@pytest.fixture(scope="module", params=["in_process", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    isolation: Isolation = request.param
    box = Sandbox(limits=Limits(timeout=0.3), isolation=isolation)
    yield box
    box.close()


def test_int_division_every_spelling_matches_python(sandbox: Sandbox) -> None:
    box = Sandbox(isolation=sandbox.isolation)
    try:
        result = box.run_sync(_CASES)
    finally:
        box.close()
    assert result.ok, result.error
    assert result.value == _json(_plain(_CASES))


_LOOPS = {
    "floordiv": "q = x // y",
    "mod": "q = x % y",
    "number-mod": "q = (x + 0) % y",
    "divmod": "q = divmod(x, y)",
    "ifloordiv": "z = x\n    z //= y",
    "imod": "z = x\n    z %= y",
    "operator-floordiv": "q = operator.floordiv(x, y)",
    "operator-mod": "q = operator.mod(x, y)",
    "isqrt": "q = math.isqrt(x)",
    "round": "q = round(x, -150_000)",
    "list-items": "q = pair[0] // pair[1]",
    "product": "q = x * y",
}


@pytest.mark.parametrize("name", sorted(_LOOPS))
def test_int_division_loop_of_big_divisions_ends_at_the_deadline(
    sandbox: Sandbox, name: str
) -> None:
    source = (
        "import math, operator\n"
        "x = int('f' * 150_000, 16)\ny = int('e' * 75_000, 16)\npair = [x, y]\n"  # dense digits
        f"for i in range(300):\n    {_LOOPS[name]}\n"
    )
    start = time.monotonic()
    result = sandbox.run_sync(source)
    elapsed = time.monotonic() - start
    assert result.error is not None, "ran to the end"
    assert result.error.kind == "limit", result.error
    # unchecked, the first budget check came after 256 divisions of 0.1-0.2 s: 25 s or more
    assert elapsed < 4.0, f"{elapsed:.1f} s under a 0.3 s deadline"


def test_int_division_huge_hex_ints_are_refused_not_run(sandbox: Sandbox) -> None:
    source = "x = int('f' * 1_000_000, 16)\ny = int('f' * 500_000, 16)\nx // y"
    start = time.monotonic()
    result = sandbox.run_sync(source)
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "would take too long in the sandbox" in result.error.message
    assert time.monotonic() - start < 2.0  # the division is about 8 s of C
