"""The script's ``list`` and ``tuple`` stand-ins behave as CPython's types, in both modes.

``world/sequence_types`` makes the names classes whose calls read iterators with a checked
growth (issue 13); the attack side (``f = list; f(range(10**8))``) is in
``tests/sandbox/attacks_onecall.py``.
"""

from __future__ import annotations

from sandbox_support import value

from scriptgate.sandbox.sandbox import Sandbox


def test_sequence_types_isinstance_issubclass_and_type(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "[isinstance([], list), isinstance((), tuple), isinstance([], tuple),"
        " isinstance((1,), (list, tuple)), issubclass(list, list), issubclass(tuple, list),"
        " type([]) is list, type(()) is tuple, [].__class__ is list, (1,).__class__ is tuple,"
        " type(list(range(3))) is list, type(tuple('ab')) is tuple]",
    )
    assert got == [True, True, False, True, True, False, True, True, True, True, True, True]


def test_sequence_types_values_as_cpython(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "f = list\ng = tuple\n"
        "def gen():\n    yield 1\n    yield 2\n"
        "[f(range(3)), g(range(2)), f(gen()), g(x for x in 'ab'), f(), g(), f({'k': 1}),"
        " g({3}), f('xy'), list(map(list, [(1, 2), range(2)])), [list][0](range(2)),"
        " list[int](range(2)), tuple.count((1, 1, 2), 1), list.index([5, 6], 6)]",
    )
    assert got == [
        [0, 1, 2], [0, 1], [1, 2], ["a", "b"], [], [], ["k"],
        [3], ["x", "y"], [[1, 2], [0, 1]], [0, 1], [0, 1], 2, 1,
    ]  # fmt: skip


def test_sequence_types_tuple_of_a_tuple_is_the_same_object(sandbox: Sandbox) -> None:
    assert value(
        sandbox, "t = (1, 2)\nf = tuple\n[tuple(t) is t, f(t) is t, list(t) == [1, 2]]"
    ) == [
        True,
        True,
        True,
    ]


def test_sequence_types_unbound_methods_and_factories(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "from collections import defaultdict\n"
        "d = defaultdict(list)\nd['a'].append(1)\nlist.append(d['a'], 2)\n"
        "rows = sorted([(2, 'b'), (1, 'a')], key=tuple)\n"
        "[dict(d), type(d['a']) is list, rows, list(zip((1, 2), 'ab'))]",
    )
    assert got == [{"a": [1, 2]}, True, [[1, "a"], [2, "b"]], [[1, "a"], [2, "b"]]]


def test_sequence_types_subclasses_build_and_behave(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "class L(list):\n    def total(self):\n        return sum(self)\n"
        "class T(tuple):\n    def first(self):\n        return self[0]\n"
        "class P(list):\n    def __init__(self, n):\n        super().__init__(range(n))\n"
        "x = L(range(4))\nx.append(10)\nt = T(x for x in 'zy')\n"
        "[x.total(), t.first(), isinstance(x, list), issubclass(T, tuple), type(x).__name__,"
        " list(x), P(2), type(P(2)) is P, len(L())]",
    )
    assert got == [16, "z", True, True, "L", [0, 1, 2, 3, 10], [0, 1], True, 0]


def test_sequence_types_subclass_with_its_own_iter_is_read_through_it(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "class L(list):\n    def __iter__(self):\n        return iter([7, 8])\n"
        "x = L([1, 2, 3])\nf = list\n[list(x), f(x), tuple(x)]",
    )
    assert got == [[7, 8], [7, 8], [7, 8]]


def test_sequence_types_wrong_arguments_raise_the_real_errors(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "out = []\nf = list\n"
        "for call in (lambda: f(5), lambda: tuple(1, 2), lambda: f(x=1)):\n"
        "    try:\n        call()\n    except TypeError as e:\n        out.append(str(e))\nout",
    )
    assert got == [
        "'int' object is not iterable",
        "tuple expected at most 1 argument, got 2",
        "list() takes no keyword arguments",
    ]


def test_sequence_types_match_class_patterns(sandbox: Sandbox) -> None:
    got = value(
        sandbox,
        "def kind(v):\n    match v:\n        case list():\n            return 'list'\n"
        "        case tuple():\n            return 'tuple'\n        case _:\n            return 'other'\n"
        "[kind([1]), kind((1,)), kind('s')]",
    )
    assert got == ["list", "tuple", "other"]
