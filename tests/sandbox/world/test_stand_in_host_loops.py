"""Stand-in methods written in host Python observe the run's budget (findings15 E05-E07).

- E05: ``Counter``'s operators (``+ - | &``, their in-place forms, unary ``+``/``-``) and a
  small Counter's ``update``/``subtract`` of a large one are host-Python loops with no tick
  inside; ``OrderedDict | OrderedDict`` is C work of the same size. A loop of them must end
  at the deadline (in-process: process mode kills the worker on time).
- E06: ``random.shuffle`` (and ``sample``/``choices``) loop in host Python: checked before
  each call, ``shuffle`` in pieces, with plain Python's order for the same seed.
- E07: a Decimal never converts an int (or a Fraction's terms) above the ``Decimal(x)``
  bound: every operator, comparison (also reflected, as C calls it) and method refuses it.
"""

from __future__ import annotations

import pytest
from sandbox_support import ends_at_the_deadline, refused, same_as_python

from scriptgate.sandbox.sandbox import Sandbox

_COUNTERS = (
    "import collections\n"
    "a = collections.Counter(range(100000))\n"
    "b = collections.Counter(range(1, 100001))\n"
)


@pytest.mark.parametrize(
    "step", ["a - b", "a + b", "a | b", "a & b", "+a", "a += b", "a |= b", "a -= b", "-n"]
)
def test_counter_operator_loop_ends_at_the_deadline(step: str) -> None:
    # unticked, 200 of each ran 2-6 s past a 0.3 s deadline (`-n` makes a Counter of n's
    # negative counts; `-a` of positive ones is a cheap loop)
    negative = "n = collections.Counter(dict.fromkeys(range(100000), -1))\n" if step == "-n" else ""
    ends_at_the_deadline(_COUNTERS + negative + f"for _ in range(200):\n    {step}\n", 1.2)


@pytest.mark.parametrize("method", ["subtract", "update"])
def test_counter_small_receiver_method_of_a_large_counter_ends_at_the_deadline(
    method: str,
) -> None:
    # the receiver is small, so the attribute read saw nothing large: 6 s past 1 s
    ends_at_the_deadline(
        _COUNTERS + f"for _ in range(200):\n    c = collections.Counter([1])\n    c.{method}(b)\n",
        1.2,
    )


def test_ordered_dict_union_loop_ends_at_the_deadline() -> None:
    # C work, but 100 unions of 300,000 items ran 8.8 s past a 1 s deadline
    ends_at_the_deadline(
        "import collections\n"
        "a = collections.OrderedDict.fromkeys(range(300000))\n"
        "b = collections.OrderedDict.fromkeys(range(1, 300001))\n"
        "for _ in range(100):\n    a | b\n",
        1.2,
    )


def test_counter_operators_ok(sandbox: Sandbox) -> None:
    same_as_python(
        sandbox,
        "import collections\n"
        "a = collections.Counter('abracadabra'); b = collections.Counter({'a': 7, 'z': -2})\n"
        "c = collections.Counter(range(3000)); d = collections.Counter(range(1500, 4500))\n"
        "e = collections.Counter(a); e.subtract(b); f = collections.Counter([1]); f.update(c)\n"
        "g = collections.Counter(a); g += b; g -= a; g |= b; g &= a\n"
        "collections.Counter.update(f, d)\n"
        "x = 5; y = -2.5; z = 3j\n"
        "str((a - b, a + b, a | b, a & b, +b, -b, e, g, -x, +y, -z, -(x + 1), -True,"
        " len(c - d), len(c + d), len(c | d), len(c & d), len(+c), len(-c), sum(f.values())))",
    )


def test_unary_minus_keeps_its_errors_ok(sandbox: Sandbox) -> None:
    refused(sandbox, "x = 'a'\n-x", "bad operand type for unary -: 'str'")
    refused(sandbox, "x = [1]\n+x", "bad operand type for unary +: 'list'")


def test_chain_map_union_ok(sandbox: Sandbox) -> None:
    # `ChainMap(d) | {}` was turned into `list | dict` by the set-operator guard
    same_as_python(
        sandbox,
        "import collections\n"
        "a = collections.ChainMap({1: 2}, {3: 4, 1: 9})\n"
        "r = (a | {5: 6}, {0: 1, 1: 0} | a)\n"
        "a |= {7: 8}\n"
        "repr((r, a, dict(a)))",
    )


def test_random_shuffle_loop_ends_at_the_deadline() -> None:
    # one shuffle of a million items was 0.6-0.9 s with no check: 50 ran 43.5 s past 1 s
    ends_at_the_deadline(
        "import random\nL = list(range(10**6))\nfor _ in range(10):\n    random.shuffle(L)\n",
        1.0,
    )


@pytest.mark.parametrize(
    ("call", "within"),
    [
        ("random.choices(L, k=10**6)", 1.2),
        ("r.choices(L, k=10**6)", 0.8),  # about 1 s a call: in pieces, it ends at the deadline
        ("r.sample(L, 300000)", 1.5),  # a Random's own methods were never checked
    ],
)
def test_random_draws_loop_ends_at_the_deadline(call: str, within: float) -> None:
    ends_at_the_deadline(
        "import random\nL = list(range(10**6)); r = random.Random(1)\n"
        f"for _ in range(20):\n    {call}\n",
        within,
    )


def test_random_choices_in_pieces_same_as_python_ok(sandbox: Sandbox) -> None:
    # 40,000 draws: three pieces, unweighted, weighted and cumulative
    same_as_python(
        sandbox,
        "import random\n"
        "random.seed(11)\n"
        "P = list(range(100)); W = [i % 7 for i in range(100)]\n"
        "a = random.choices(P, k=40000); b = random.choices(P, W, k=40000)\n"
        "c = random.choices(P, cum_weights=list(range(1, 101)), k=40000)\n"
        "(sum(a), a[-3:], sum(b), b[:3], sum(c), c[-3:], random.random())",
    )
    refused(sandbox, "import random\nrandom.choices([1, 2], [1], k=40000)", "does not match")


def test_random_shuffle_same_order_as_python_ok(sandbox: Sandbox) -> None:
    # several pieces of SHUFFLE_PIECE swaps, a small list, an empty and a one-item list
    same_as_python(
        sandbox,
        "import random\n"
        "random.seed(7)\n"
        "L = list(range(50000)); random.shuffle(L)\n"
        "r = random.Random(3); M = list('abcdefghij'); r.shuffle(M)\n"
        "E = []; random.shuffle(E); O = [1]; random.shuffle(O)\n"
        "(L[:5], L[-5:], sum(i * v for i, v in enumerate(L)), M, E, O, random.random())",
    )


_BIG = "from decimal import Decimal\nfrom fractions import Fraction\nx = 1 << 999_000\n"


@pytest.mark.parametrize(
    "expression",
    [
        "x in [Decimal(1)] * 20",
        "[Decimal(1)].count(x)",
        "Decimal(1) in [x] * 20",
        "sorted([Decimal(1), x] * 5)",
        "Decimal(1) == x",
        "x < Decimal(1)",
        "Decimal(1) + x",
        "x - Decimal(1)",
        "divmod(Decimal(7), x)",
        "Decimal(1).compare(x)",
        "Decimal(1).max(x)",
        "Decimal(1).compare_total(x)",
        "Decimal(1) == Fraction(x)",
    ],
)
def test_decimal_big_int_operand_is_refused(sandbox: Sandbox, expression: str) -> None:
    # C converted the int in quadratic time first: 1.4 s each, 27.7 s for the `in`
    refused(sandbox, _BIG + expression, "limit", "int of 999001 bits")


def test_decimal_int_operands_ok(sandbox: Sandbox) -> None:
    same_as_python(
        sandbox,
        "from decimal import Decimal\nfrom fractions import Fraction\n"
        "d = Decimal(2); y = 1 << 30000\n"
        "str((hash(d) == hash(2), d == 2, d != 3, d < 3, 3 > d, d <= 2, 2 >= d, d + 1, 1 - d,"
        " d * 3, 7 // d, 7 % d, d ** 3, pow(d, 3, 5), d.compare(5), d.max(1), d == y, d < y,"
        " {d: 1}[2], 2 in [d], d == Fraction(4, 2), d < Fraction(7, 3), sorted([3, d, 1]),"
        " Fraction(1, 3) == 1 << 999_000, Decimal(1) == 1.0))",
    )
