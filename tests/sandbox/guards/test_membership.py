"""``in``, scalars weighed by their base type, and tuple prefixes (findings14 D01-D05).

Round D on session 10's tree found five one-call comparisons the guards measured by exact
type or named entry point only, each a C call of 6-42 s under a 1 s deadline:

- D01: ``b in d.values()``, ``b in iter(lst)``, ``reversed``, ``zip`` and
  ``operator.contains(iter(...))`` compared a megabyte string with 600,000 items in one
  call (``contains_ok`` passed anything that was not a list, tuple or deque). The
  compiled ``in`` now hands every non-trivial case to ``_in_`` (dagguard.contains),
  which checks a values view like a list and searches an iterator in Python, each
  comparison weighed and the budget checked;
- D02/D03: a ``bytearray``, or a script's ``class S(str)``/``bytes``/``int``
  subclass, weighed nothing in the comparison measure: weighed by the base type's
  ``__sizeof__`` now;
- D04: ``d1.items() & d2.items()`` (and ``set(...) & set(...)``) of equal long values
  passed as short tuples of scalars: their long scalars are weighed, and refused when
  shared by many tuples;
- D05: ``s.startswith(t)`` of a tuple of 600,000 long prefixes: long tuples go in pieces
  with the budget checked between two.

Round E (findings15) found the same class one step further:

- E02: a range compares a needle that is not an int with every item (``0.5 in
  range(10**8)``, ``range.count``/``index``), and a small needle went to C over any
  iterator: searched in pieces / in Python now, the deadline checked;
- E03: items whose comparison is host Python (``Fraction``): ``in``, ``count``, ``index``
  and ``remove`` of a long list search in pieces, and every search of 1,024 items or more
  checks the deadline first;
- E04: the guard's own walk of a needle (``fs in s`` of a 600,000-item frozenset, 200
  times) is charged.

Each attack is run in both modes (refusals) or under a short deadline (searches), and the
ordinary forms keep Python's answers, consumption and errors.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_support import MODES, ends_at_the_deadline, refused, same_as_python, value

from scriptgate.sandbox.guards import comparisons as dagguard
from scriptgate.sandbox.guards.errors import ScriptStop
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Isolation, Sandbox

_PAIR = "a = 'x' * 10**6\nb = 'x' * 999_999 + 'y'\n"
_MANY = _PAIR + "l = [a] * 600_000\n"
_SHARED = "shared references"


@pytest.fixture(scope="module", params=MODES)
def box(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    mode: Isolation = request.param
    sandbox = Sandbox(isolation=mode, limits=Limits(timeout=20, memory_bytes=1 << 30))
    yield sandbox
    sandbox.close()


# -- D01: `in` over views and iterators ------------------------------------------------------

_SEARCHES = {
    "iter": _MANY + "b in iter(l)",
    "reversed": _MANY + "b in reversed(l)",
    "zip-tuple-needle": _MANY + "(b,) in zip(l)",
    "zip-pairs": _MANY + "(0, b) in zip([0] * 600_000, l)",
    "operator-contains": _MANY + "import operator\noperator.contains(iter(l), b)",
    "not-in": _MANY + "b not in iter(l)",
    "script-iter-only": _MANY
    + "class C:\n    def __iter__(self):\n        return iter(l)\nb in C()",
    "in-a-comprehension": _MANY + "[x for x in [b] if x in iter(l)]",
}


@pytest.mark.parametrize("name", sorted(_SEARCHES))
def test_membership_search_of_an_iterator_ends_at_the_deadline(name: str) -> None:
    ends_at_the_deadline(_SEARCHES[name], 4.0)


def test_membership_values_view_is_checked_like_a_list(box: Sandbox) -> None:
    source = _PAIR + "d = dict.fromkeys(range(600_000), a)\n"
    refused(box, source + "b in d.values()", "limit", _SHARED)
    refused(box, source + "import operator\noperator.contains(d.values(), b)", "limit", _SHARED)


def test_membership_answers_consumption_and_errors_are_pythons(box: Sandbox) -> None:
    for source in (
        "it = iter([1, 2, 3])\n[2 in it, next(it)]",
        "big = 'x' * 1000\nit = iter(['a', big, 'b'])\n[big in it, next(it)]",
        "big = 'x' * 1000\nit = iter(['a', 'x' * 1000, 'b'])\n[big in it, list(it)]",
        "t = [[1, 2]] * 3\n[[1, 2] in iter(t), [3] in iter(t), [3] not in reversed(t)]",
        "d = {1: 'y' * 500, 2: [1]}\n['y' * 500 in d.values(), [1] in d.values(), 'z' in d.values()]",
        "g = (i * 'x' for i in range(600))\n['x' * 300 in g, next(g)]",
        "class C:\n    def __getitem__(self, i):\n        if i > 3:\n            raise IndexError\n"
        "        return 'q' * 300 * i\n['q' * 600 in C(), 'q' in C()]",
        "class C:\n    def __contains__(self, x):\n        return len(x) > 300\n['w' * 301 in C(), [0] in C()]",
        "(3, 'z' * 400) in zip(range(5), ['z' * 400] * 5)",
    ):
        same_as_python(box, source)


def test_membership_errors_keep_their_messages(box: Sandbox) -> None:
    refused(box, "[1] in 5", "argument of type 'int' is not iterable")
    refused(box, "'x' * 300 in None", "argument of type 'NoneType' is not iterable")
    source = "def g():\n    yield 1\n    raise ValueError('inside')\n['x' * 300] in g()"
    refused(box, source, "inside")


def test_membership_amplified_needle_is_bounded_by_each_item(box: Sandbox) -> None:
    # a needle of 2**40 paths compares in at most each item's size: found by identity here
    source = "t = [1]\nfor i in range(40):\n    t = [t, t]\n[t in iter([1, 'a', t]), t in iter([[1], [2]])]"
    assert value(box, source) == [True, False]


# -- D02/D03: scalars by their base type ------------------------------------------------------

_WEIGHED = {
    "bytearray-sorted": "a = bytearray(b'x' * 10**6)\nb = bytearray(b'x' * 999_999 + b'y')\n"
    "len(sorted([a, b] * 300_000))",
    "bytearray-in-list": "a = bytearray(b'x' * 10**6)\nb = bytes(b'x' * 999_999 + b'y')\n"
    "b in [a] * 600_000",
    "str-subclass-in-list": "class S(str):\n    pass\n" + _PAIR + "S(b) in [S(a)] * 600_000",
    "str-subclass-sorted": "class S(str):\n    pass\n"
    + _PAIR
    + "len(sorted([S(a), S(b)] * 300_000))",
    "bytes-subclass-tuples": "class B(bytes):\n    pass\na = B(b'x' * 10**6)\n"
    "b = B(b'x' * 999_999 + b'y')\n(b,) * 600_000 == (a,) * 600_000",
    "str-subclass-hash": "class S(str):\n    pass\nt = (S('x' * 10**6),) * 600_000\n{t: 1}",
    "lying-len": "class S(str):\n    def __len__(self):\n        return 0\n"
    + _PAIR
    + "S(b) in [S(a)] * 600_000",
}


@pytest.mark.parametrize("name", sorted(_WEIGHED))
def test_membership_scalar_subclasses_and_bytearrays_are_weighed(box: Sandbox, name: str) -> None:
    refused(box, _WEIGHED[name], "limit", _SHARED)


def test_membership_scalar_size_reads_the_base_type() -> None:
    class S(str):
        def __sizeof__(self) -> int:
            return 0

    assert dagguard.scalar_size(S("x" * 1000)) >= str.__sizeof__("x" * 1000)
    assert dagguard.scalar_size(bytearray(100)) == bytearray.__sizeof__(bytearray(100))
    assert dagguard.scalar_size(True) is not None
    assert dagguard.scalar_size([1]) is None
    assert dagguard.scalar_size(object()) is None


def test_membership_ordinary_subclass_and_bytearray_use_is_unchanged(box: Sandbox) -> None:
    same_as_python(
        box,
        "class S(str):\n    pass\nrows = [bytearray(b'b' * 300), bytearray(b'a' * 300)] * 100\n"
        "[len(sorted(rows)), S('k' * 300) in [S('k' * 300)] * 1000, sorted([S('b'), S('a')])]",
    )


# -- D04: set operators of items with long values ----------------------------------------------

_ITEMS = "a = 'x' * 10**6\nb = 'x' * 10**6\nd1 = dict.fromkeys(range(100_000), a)\n"


def test_membership_items_set_operators_weigh_shared_values(box: Sandbox) -> None:
    source = _ITEMS + "d2 = dict.fromkeys(range(100_000), b)\n"
    refused(box, source + "len(d1.items() & d2.items())", "limit", _SHARED)
    refused(box, source + "len(set(d1.items()) & set(d2.items()))", "limit", _SHARED)


def test_membership_a_set_of_shared_long_values_builds(box: Sandbox) -> None:
    # building compares only pairs with equal hashes (distinct keys): it is not refused
    assert value(box, _ITEMS + "len(set(d1.items()))") == 100_000
    same_as_python(
        box, "d = {i: 'v' * 400 for i in range(1000)}\nlen(d.items() & {(1, 'v' * 400)})"
    )


def test_membership_one_chunk_of_equal_long_tuples_is_bounded() -> None:
    # equal, distinct long strings in 256-item tuples: each pair compares 256 MB
    a, b = "x" * 10**6, "x" * 10**6
    with pytest.raises(ScriptStop, match=_SHARED):
        dagguard.scalars_ok([a] * 256 * 100)
    assert dagguard.scalars_ok([a, b, 1, 2])


# -- D05: startswith/endswith of a tuple ---------------------------------------------------------

_AFFIXES = {
    "str-startswith": "a = 'x' * 10**6\ns = 'x' * 500_000 + 'y' + 'x' * 499_999\n"
    "s.startswith(tuple([a] * 600_000))",
    "bytes-startswith": "a = b'x' * 10**6\ns = b'x' * 999_999 + b'y'\ns.startswith(tuple([a] * 600_000))",
    "bytearray-endswith": "a = b'x' * 10**6\ns = bytearray(b'y' + b'x' * 999_999)\n"
    "s.endswith(tuple([a] * 600_000))",
    "unbound": "a = 'x' * 10**6\ns = 'x' * 500_000 + 'y' + 'x' * 499_999\n"
    "str.startswith(s, tuple([a] * 600_000))",
    "stored-method": "a = b'x' * 10**6\ns = b'x' * 999_999 + b'y'\nf = s.startswith\n"
    "f(tuple([a] * 600_000))",
}


@pytest.mark.parametrize("name", sorted(_AFFIXES))
def test_membership_long_tuple_of_prefixes_ends_at_the_deadline(name: str) -> None:
    ends_at_the_deadline(_AFFIXES[name], 4.0)


def test_membership_prefix_tuples_keep_pythons_answers(box: Sandbox) -> None:
    same_as_python(
        box,
        "s = 'x' * 10**6\n[s.startswith(tuple(['y'] * 100_000 + ['x'])), s.endswith(('y', 'xx')), "
        "'abc'.startswith(('b', 'a'), 1), b'abc'.endswith((b'c',)), "
        "bytearray(b'ab').startswith(tuple([b'b'] * 5000)), s.startswith(tuple(['x'] * 9), 10**6 - 1)]",
    )
    refused(
        box,
        "s = 'x' * 10**6\ns.startswith(tuple(['y'] * 100_000 + [1]))",
        "tuple for startswith must only contain str, not int",
    )


# -- findings15 E02-E04: ranges, host-Python items, the walk itself ------------------------------

_ROUND_E = {
    "fraction-in-range": "from fractions import Fraction\nFraction(1, 3) in range(10**8)",
    "float-in-range": "0.5 in range(10**8)",
    "range-count": "range(10**8).count(None)",
    "range-index": "range(10**8).index(0.5)",
    "none-in-enumerate": "None in enumerate(range(10**8))",
    "float-in-reversed-range": "0.5 in reversed(range(10**8))",
    "operator-contains-range": "import operator\noperator.contains(range(10**8), 0.5)",
    "int-subclass-in-range": "class I(int):\n    pass\nI(-1) in range(10**8)",
    "loop-of-range-searches": "r = range(10**8)\n[0.5 in r for _ in range(3)]",
    "fractions-in-long-list": "from fractions import Fraction\nL = [Fraction(1, 3)] * 3_000_000\n"
    "0.5 in L",
    "fractions-count": "from fractions import Fraction\nL = [Fraction(1, 3)] * 3_000_000\n"
    "L.count(0.5)",
    "fractions-index": "from fractions import Fraction\nL = [Fraction(1, 3)] * 3_000_000\n"
    "L.index(0.5)",
    "loop-of-fraction-searches": "from fractions import Fraction\nL = [Fraction(1, 3)] * 60_000\n"
    "for _ in range(250):\n    0.5 in L",
    "loop-of-frozenset-walks": "fs = frozenset((i,) for i in range(300000))\ns = {1}\n"
    "for _ in range(200):\n    fs in s",
    "loop-of-needle-walks": "n = [[i] for i in range(300000)]\nfor _ in range(200):\n    n in [1]",
}


@pytest.mark.parametrize("name", sorted(_ROUND_E))
def test_membership_round_e_searches_end_at_the_deadline(name: str) -> None:
    ends_at_the_deadline(_ROUND_E[name], 4.0)


def test_membership_pieced_searches_keep_pythons_answers(box: Sandbox) -> None:
    for source in (
        "r = range(100)\n[5 in r, 5.0 in r, 0.5 in r, True in r, r.index(7), r.count(7.0), "
        "r.count(0.5), (2+0j) in r, None in r, 'a' not in r]",
        "L = list(range(100000))\n[L.index(99999), L.index(5, 3, 10), L.index(99990, -20), "
        "99998 in L, L.count(3), 99999.0 in L, -1 not in L, L.count(-1)]",
        "L = list(range(50000)) * 2\nL.remove(49999.0)\n[len(L), L.index(49999), L[49999]]",
        "import collections\nd = collections.deque(range(100000))\nd.remove(99999.0)\n"
        "[len(d), d.index(5.0), d.index(7, 2, 9), d.count(3), 99998 in d]",
        "t = tuple(range(70000))\n[t.index(69999), 69999.5 in t, t.count(1.0)]",
        "it = iter(range(10))\n[5.0 in it, next(it)]",
    ):
        same_as_python(box, source)
    for source, words in (
        ("list(range(70000)).index(0.5)", "0.5 is not in list"),
        ("tuple(range(70000)).index(0.5)", "tuple.index(x): x not in tuple"),
        ("list(range(70000)).remove(0.5)", "list.remove(x): x not in list"),
        ("range(10**6).index(0.5)", "sequence.index(x): x not in sequence"),
        ("range(10**6).index(5, 1)", "index() takes exactly one argument"),
        (
            "class E:\n    def __eq__(self, o):\n        raise KeyError('eq')\n"
            "[E()] * 70000 + [1]\nE() in list(range(70000))",
            "eq",
        ),
    ):
        refused(box, source, words)
