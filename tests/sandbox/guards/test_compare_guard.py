"""Comparisons, membership tests and hashed keys at the compiled sites (``_restricted``).

The policy runs every ``==``/``<``/``in``…, every dict and set display key,
comprehension key and subscript key whose operand is not provably scalar
behind an inline type test that calls dagguard (``_cmpok_``, ``_in_``,
``_hkey_``, ``_cval_``) only for containers. Each site is tested in every kind
of place the policy compiles differently (a function, the module, a class body,
a generator expression, a comprehension iterable, a lambda): ordinary values
give what plain Python gives — results, exceptions, evaluation order, each
operand evaluated once — and a value standing for 2**40 items through shared
references is refused with a size limit instead of stalling the host.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

from scriptgate.sandbox.compile.cache import CompiledScript, CompileFailure, compile_script
from scriptgate.sandbox.compile.policy import TEMP_PREFIX
from scriptgate.sandbox.guards.attributes import Budget, make_guards
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

LIMITS = Limits(timeout=10, max_steps=2_000_000)

PRELUDE = (
    "seen = []\n"
    "def f(x):\n"
    "    seen.append('object' if isinstance(x, (Odd, Never, Box)) else x)\n"
    "    return x\n"
    "class Odd:\n"
    "    def __eq__(self, other):\n"
    "        return 'odd-eq'\n"
    "    def __lt__(self, other):\n"
    "        return 0\n"
    "class Never:\n"
    "    def __eq__(self, other):\n"
    "        return NotImplemented\n"
    "class Box:\n"
    "    def __init__(self, v):\n"
    "        self.v = v\n"
    "    def __eq__(self, other):\n"
    "        return isinstance(other, Box) and self.v == other.v\n"
    "    def __contains__(self, item):\n"
    "        return item == self.v\n"
    "x = [1]\n"
    "def h():\n"
    "    global x\n"
    "    x = [9]\n"
    "    return [9]\n"
)
"""Script helpers: ``f`` logs each evaluation; classes with their own comparisons; ``h``
rebinds the global ``x``."""

CONTEXTS = {
    "module": "result = ({e})\n",
    "function": "def g():\n    return ({e})\nresult = g()\n",
    "class-body": "class C:\n    r = ({e})\nresult = C.r\n",
    "generator": "result = list(({e}) for _ in [0])[0]\n",
    "comprehension-iterable": "result = [x for x in [({e})]][0]\n",
    "comprehension-element": "result = [({e}) for _ in [0]][0]\n",
    "lambda": "result = (lambda: ({e}))()\n",
}
"""Every kind of place the policy compiles differently (temporaries, lambda, ``_cval_``)."""

EXPRESSIONS = [
    # comparisons: scalars, containers, mixed, script classes, NotImplemented fallbacks
    "f(1) == f(1)",
    "f(1) != f(2.0)",
    "f([1, 2]) == f([1, 2])",
    "f([1]) != f([2])",
    "f((1, 2)) < f((1, 3))",
    "f({'a': [1]}) == f({'a': [1]})",
    "f([1]) >= f([1])",
    "f('ab') <= f('b')",
    "f(Odd()) == f([1])",
    "f([1]) == f(Odd())",
    "f(Never()) == f(Never())",
    "f(Never()) != f([1])",
    "f(Box([1])) == f(Box([1]))",
    # chains: the middle operand once, a falsy link ends it with its own value
    "f(1) < f(2) < f(3)",
    "f(1) < f(0) < f(3)",
    "f([1]) < f([1]) < f([2])",
    "f([0]) < f([1]) <= f([1]) != f([2])",
    "f(Odd()) < f([1]) < f([2])",
    "f(0) <= f([1])[0] < f(10)",
    "f(1) is f(1) == f(1)",
    # a name is read before the next operand runs (h() rebinds x)
    "x == h()",
    "[0] < x < h()",
    "x in [h()]",
    "[[0]] < [x] < [h()] < [x]",
    # membership
    "f('a') in f({'a': 1})",
    "f((1, 2)) in f({(1, 2)})",
    "f([1]) in f([[1], 2])",
    "f([1]) not in f([[2]])",
    "f((1,)) in f([(1,)])",
    "f((1,)) not in f(((1,), 2))",
    "f(2) in f(Box(2))",
    "f([2]) in f(Box([2]))",
    "f('b') in f('abc')",
    "f([1]) in f({'k': [1]}.values())",
    "f(('k', [1])) in f({'k': [1]}.items())",
    # hashed keys
    "{f((1, 2)): f(3), f('a'): f([4])}",
    "{f((1,)), f(2), f('x')}",
    "{k: v for k, v in f([((1,), 2), ('a', 3)])}",
    "{k for k in f([(1,), (2, (3,)), 'z'])}",
    "f({(1, 2): 'x'})[f((1, 2))]",
    "f({'a': 1})[f('a')]",
    "f([10, 20])[f(1)]",
    "f([10, 20, 30])[f(1):f(3)]",
    "f({(1, (2,)): 5})[f(1), f((2,))]",
]


def run(source: str) -> ScriptResult:
    return anyio.run(Sandbox([], limits=LIMITS).run, source)


def plain(source: str) -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(source, namespace)
    return namespace


def compiled_names(source: str) -> set[str]:
    compiled = compile_script(source)
    assert isinstance(compiled, CompiledScript)
    names: set[str] = set()
    stack = [compiled.code]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return names


def same_as_python(source: str) -> None:
    """The script's ``repr([result, seen])`` is plain Python's, or both raise the same error."""
    script = PRELUDE + source
    raised: Exception | None = None
    try:
        namespace = plain(script)
    except Exception as exc:
        raised = exc
    if raised is not None:
        result = run(script)
        assert result.error is not None, result.value
        assert result.error.kind == "runtime"
        assert (result.error.type, result.error.message) == (type(raised).__name__, str(raised))
        return
    result = run(script + "repr([result, seen])")
    assert result.ok, result.error
    assert result.value == repr([namespace["result"], namespace["seen"]])


# ----------------------------------------------------------------------------- parity


@pytest.mark.parametrize("context", list(CONTEXTS))
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_compare_guard_gives_what_python_gives(expression: str, context: str) -> None:
    same_as_python(CONTEXTS[context].format(e=expression))


RAISING = [
    "f([1]) < f(1)",
    "f(1) < f(2) < f('a')",
    "f({}) in f({})",
    "f([1]) in f({1})",
    "f([1]) in f(3)",
    "f((1, [2])) in f({1: 2})",
    "{f([1]): 1}",
    "{f(1), f([2])}",
    "{k: 1 for k in f([[1]])}",
    "{k for k in f([(1, [2])])}",
    "f({})[f([1])]",
    "f({})[f((1, 2))]",
    "f([1])[f('a')]",
    "f(missing) == f(1)",
    "f(1) == f(missing)",
    "f(1) < f(2) < f(missing)",
]


@pytest.mark.parametrize("context", list(CONTEXTS))
@pytest.mark.parametrize("expression", RAISING)
def test_compare_guard_raises_what_python_raises(expression: str, context: str) -> None:
    same_as_python(CONTEXTS[context].format(e=expression))


STATEMENTS = [
    "d = {}\nd[f((1, 2))] = f(3)\nd[f('k')] = f([4])\nresult = d",
    "d = {(1, 2): 1, 'k': 2}\ndel d[f((1, 2))]\nresult = d",
    "d = {(1, 2): 1}\nd[f((1, 2))] += f(10)\nresult = d",
    "d = {(1, 2): [1]}\nd[f((1, 2))] += f([2])\nresult = d",
    "d = {}\nd[f((1, 2))] += f(10)\nresult = d",
    "d = {}\ndel d[f((1,))]\nresult = d",
    "xs = [0, 0]\nxs[f(1)] = f(5)\nresult = xs",
    "d = {}\nfor d[f((1,))] in f([1, 2]):\n    pass\nresult = d",
    "d = {}\nr = [1 for d[(1, 2)] in f([3])]\nresult = [d, r]",
    "d = {}\n(d[f((1,))], d[f((2,))]) = f((5, 6))\nresult = d",
    "assert f([1]) == f([1]), 'no'\nresult = 1",
    "assert f([1]) == f([2]), f('differs')\nresult = 1",
    "n = 0\nwhile f([n]) < f([3]):\n    n += 1\nresult = n",
    "result = 'yes' if f((1,)) in f({(1,): 0}) else 'no'",
]


@pytest.mark.parametrize("where", ["module", "function", "class-body"])
@pytest.mark.parametrize("statements", STATEMENTS)
def test_compare_guard_statements_give_what_python_gives(statements: str, where: str) -> None:
    if where == "function":
        body = "\n".join("    " + line for line in statements.splitlines())
        source = f"def g():\n{body}\n    return result\nresult = g()\n"
    elif where == "class-body":
        body = "\n".join("    " + line for line in statements.splitlines())
        source = f"class C:\n{body}\nresult = C.result\n"
    else:
        source = statements + "\n"
    same_as_python(source)


def test_compare_guard_match_literal_patterns_give_what_python_gives() -> None:
    source = (
        "def kind(x):\n"
        "    match x:\n"
        "        case 1 | 2.5 | -3 | 'a' | b'b' | None | True:\n"
        "            return 'literal'\n"
        "        case [0, [1, 2], *rest]:\n"
        "            return ['sequence', rest]\n"
        "        case {'k': (1, 2), **rest}:\n"
        "            return ['mapping', rest]\n"
        "        case 1 + 2j:\n"
        "            return 'complex'\n"
        "        case _:\n"
        "            return 'other'\n"
        "result = [kind(v) for v in [1, 'a', None, [0, [1, 2], 3], {'k': (1, 2), 'z': [1]}, "
        "1 + 2j, [0], {'k': [1, 2]}, (0, [1, 2])]]\n"
    )
    same_as_python(source)


def test_compare_guard_operands_evaluated_once_left_first() -> None:
    # every operand's evaluation is logged: the order and the count are Python's
    source = (
        "def g(a):\n"
        "    r1 = f(a) == f([a]) == f([a])\n"
        "    r2 = f([a]) in f([[a]]) and f((a,)) in f({(a,): 1})\n"
        "    r3 = {f((a,)): f([a]), f((a, a)): f(a)}\n"
        "    d = {}\n"
        "    d[f((a,))] = f(a)\n"
        "    d[f((a,))] += f(a)\n"
        "    r4 = d[f((a,))]\n"
        "    return [r1, r2, r3, r4]\n"
        "result = g(1)\n"
    )
    same_as_python(source)


# ----------------------------------------------------------------------------- compiled code


@pytest.mark.parametrize(
    "source",
    [
        "def g(x):\n    return x == 1 or 'a' != x or x < 2.5 or x is None or x > -1",
        "def g(x):\n    return 'a' in (x, 'b') or 1 not in [x] or x in 'abc'",
        "def g(xs, n):\n    total = 0\n    for i in range(n):\n        if i < len(xs) and i != total:\n            total += i\n    return total",
        "def g(x):\n    return f'{x}' == x",
        "def g(d, i, j):\n    return d['k'], d[1], d[-1], d[1:2], d[::2], d[1, 'a']",
        "def g(d):\n    d['k'] = 1\n    del d['k']\n    d['n'] += 1",
        "def g(x):\n    return {'a': x, 1: x}, {1, 'b', None}, {i: x for i in range(3)}",
        "def g(x):\n    match x:\n        case 1:\n            return 1\n        case {'k': 2}:\n            return 2",
    ],
)
def test_compare_guard_nothing_where_an_operand_is_provably_scalar(source: str) -> None:
    names = compiled_names(source)
    assert not names & {"_cmpok_", "_in_", "_hkey_", "_skey_", "_cval_", "_scalar_"}, names


@pytest.mark.parametrize(
    ("source", "guard"),
    [
        ("def g(a, b):\n    return a == b", "_cmpok_"),
        ("def g(a, b, c):\n    return 1 < a < b", "_cmpok_"),
        ("def g(a, b):\n    return a in b", "_in_"),
        ("def g(a, b):\n    return a not in b", "_in_"),
        # a small literal needle still meets a range or an iterator (findings15 E02)
        ("def g(b):\n    return 0.5 in b", "_in_"),
        ("def g(b):\n    return 'a' not in b", "_inok_"),
        ("def g(d, k):\n    return d[k]", "_skey_"),
        ("def g(d, k):\n    d[k] = 1", "_hkey_"),
        ("def g(d, k):\n    del d[k]", "_hkey_"),
        ("def g(d, k):\n    d[k] += 1", "_hkey_"),
        ("def g(k):\n    return {k: 1}", "_hkey_"),
        ("def g(k):\n    return {k}", "_hkey_"),
        ("def g(xs):\n    return {k: 1 for k in xs}", "_hkey_"),
        ("def g(xs):\n    return {k for k in xs}", "_hkey_"),
        ("def g(d, a, b):\n    return d[a, b]", "_skey_"),
        ("class C:\n    def m(self):\n        pass\n    r = [1] < [2] < [3]", "_cval_"),
        # a script class's __eq__ may return any value: a comparison proves no number
        ("x = [1] == [1]\ny = x\nx == y", "_cmpok_"),
    ],
)
def test_compare_guard_where_nothing_is_proved(source: str, guard: str) -> None:
    assert guard in compiled_names(source)


def test_compare_guard_temporaries_do_not_leak() -> None:
    source = "class C:\n    r = [1] == [1]\n    s = [x == [1] for x in [[1]]]\nz = [2] in [[2]]\n"
    compiled = compile_script(source)
    assert isinstance(compiled, CompiledScript)
    namespace: dict[str, Any] = make_guards(Budget(LIMITS), print_fn=print)
    namespace["__builtins__"] = {"__build_class__": __builtins__["__build_class__"]}  # type: ignore[index]
    exec(compiled.code, namespace)
    namespace["__script__"]()
    temporary = re.compile(re.escape(TEMP_PREFIX) + r"\d+_")
    assert not [name for name in namespace if temporary.fullmatch(name)]
    assert not [name for name in vars(namespace["C"]) if temporary.fullmatch(name)]
    assert [namespace["C"].r, namespace["C"].s, namespace["z"]] == [True, [True], True]


# ----------------------------------------------------------------------------- refusals

_DAGS = (
    "a = [0]\nb = [0]\nt = 0\nfor i in range(40):\n    a = [a, a]\n    b = [b, b]\n    t = (t, t)\n"
)
"""``a`` and ``b``: equal lists, ``t`` a tuple, each standing for 2**40 items."""

REFUSED = [
    "a == b",
    "a != b",
    "a < b",
    "a >= b",
    "[0] != a == b",
    "a in [b]",
    "a not in [1, b]",
    "t in {1}",
    "t not in {1: 2}",
    "{t: 1}",
    "{1: 2, t: 1}",
    "{1, t}",
    "{k: 1 for k in [t]}",
    "{k for k in [t]}",
    "{}.get(1, {}[t])",
    "{}.get(1, {}[1, t])",
]


@pytest.mark.parametrize("context", list(CONTEXTS))
@pytest.mark.parametrize("expression", REFUSED)
def test_compare_guard_refuses_shared_reference_values(expression: str, context: str) -> None:
    result = run(_DAGS + CONTEXTS[context].format(e=expression))
    assert result.error is not None, result.value
    assert result.error.kind == "limit"
    assert result.error.type == "LimitExceeded"
    assert "shared references" in result.error.message


@pytest.mark.parametrize(
    "statements",
    [
        "d = {}\nd[t] = 1",
        "d = {}\ndel d[t]",
        "d = {}\nd[t] += 1",
        "d = {t: 1}",
        "d = {}\nfor d[t] in [1]:\n    pass",
        "assert a != b",
        "while a == b:\n    pass",
        "if a == b:\n    pass",
        "def g(x=a == b):\n    pass",
        "r = [x for x in [a] if x == b]",
        "g = lambda x: x <= b\ng(a)",
        "try:\n    a == b\nexcept Exception:\n    pass",
    ],
)
def test_compare_guard_refuses_shared_reference_values_in_statements(statements: str) -> None:
    for source in (statements, "def g():\n    " + statements.replace("\n", "\n    ") + "\ng()"):
        result = run(_DAGS + source)
        assert result.error is not None, (source, result.value)
        assert result.error.kind == "limit", (source, result.error)
        assert "shared references" in result.error.message


def test_compare_guard_refuses_a_script_eq_returning_shared_references() -> None:
    # `x = (A() == 0)` proves no number: __eq__ returned a DAG, and comparing two is refused
    source = (
        _DAGS + "class A:\n"
        "    def __init__(self, v):\n"
        "        self.v = v\n"
        "    def __eq__(self, other):\n"
        "        return self.v\n"
        "x = A(a) == 0\n"
        "y = A(b) == 0\n"
        "x == y"
    )
    result = run(source)
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "shared references" in result.error.message


def test_compare_guard_refuses_deep_nesting_before_c_recursion() -> None:
    result = run("t = ()\nfor i in range(20000):\n    t = (t,)\n{t: 1}")
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "too deep" in result.error.message


def test_compare_guard_identical_and_unshared_values_stay_allowed() -> None:
    # `a == a` compares items by identity first; large data without sharing is linear
    source = (
        _DAGS + "rows = [[i, str(i)] for i in range(200000)]\n"
        "same = [r[:] for r in rows]\n"
        "[a == a, t is t, rows == same, (1, rows[0][1]) in {(1, '0')}, a == [0]]"
    )
    result = run(source)
    assert result.ok, result.error
    assert result.value == [True, True, True, True, False]


@pytest.mark.parametrize(
    ("source", "needle"),
    [
        (
            "class K:\n    v = 1\nmatch [1]:\n    case [K.v] | [2]:\n        pass",
            "Value patterns must be",
        ),
        (
            "class K:\n    v = 1\nmatch 1:\n    case [K.v, 2]:\n        pass",
            "Value patterns must be",
        ),
        (
            "class K:\n    v = 1\nmatch {}:\n    case {K.v: 1}:\n        pass",
            "Mapping pattern keys",
        ),
    ],
)
def test_compare_guard_match_named_values_refused_at_compile_time(source: str, needle: str) -> None:
    compiled = compile_script(source)
    assert isinstance(compiled, CompileFailure)
    assert compiled.kind == "rejected"
    assert needle in compiled.message
    assert compiled.line is not None
