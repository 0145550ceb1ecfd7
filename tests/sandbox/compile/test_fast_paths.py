"""The inline fast paths of the compiled code (``_restricted.ScriptPolicy._inline_*``).

``+``, ``*``, item reads and attribute reads test for the common case inline and
call the full guard for everything else; ``+``/``*``/``%`` whose operands prove the
guard useless compile to the plain operator. Each test shows that a fast path
gives what plain Python gives, and that the attack its guard blocks is still
blocked when the fast path is taken around it.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

import anyio
import pytest
from sandbox_support import FRESH_LIMITS, fresh_value, run_fresh

from scriptgate.sandbox.compile.cache import CompiledScript, compile_script
from scriptgate.sandbox.compile.policy import TEMP_PREFIX
from scriptgate.sandbox.guards.attributes import Budget, make_guards
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

LIMITS = FRESH_LIMITS
run = run_fresh
value = fresh_value


def compiled_names(source: str) -> set[str]:
    """Every global and attribute name the compiled script's code objects use."""
    compiled = compile_script(source)
    assert isinstance(compiled, CompiledScript)
    names: set[str] = set()
    stack = [compiled.code]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return names


# ----------------------------------------------------------------------------- same results


SAME_AS_PYTHON = [
    "1 + 2",
    "1.5 + 2",
    "2 + 1.5",
    "True + True",
    "'ab' + 'cd'",
    "[1] + [2]",
    "(1,) + (2,)",
    "b'a' + b'b'",
    "3 * 4",
    "-3 * 4",
    "2.5 * 4",
    "'ab' * 3",
    "3 * [0]",
    "(2 ** 40) * (2 ** 40)",
    "17 % 5",
    "'%s-%d' % ('a', 3)",
    "[10, 20][1]",
    "{'a': 1}['a']",
    "'hello'[1]",
    "[[1, 2]][0][1]",
    "[1, 2].index(2)",
    "{'k': 2}.get('k')",
    "' a '.strip()",
    "str(42) + 'x'",
    "'n' + str(2.5)",
    "[f'item{i}' for i in range(3)]",
    "[('item%d' % i, '%d-%05.1f' % (i, i * 2)) for i in range(3)]",
    "[f'{i * 2}:{i!r}:{i!s}:{i!a}' for i in range(3)]",
    "[f'{x}|{x!r}' for x in [1, 2.5, True, None, 'ab', [1], (2,), -0.0]]",
]


@pytest.mark.parametrize("expression", SAME_AS_PYTHON)
def test_fast_paths_give_what_python_gives(expression: str) -> None:
    expected = eval(expression)
    assert value(f"repr({expression})") == repr(expected)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("1 + 'a'", "unsupported operand type(s) for +: 'int' and 'str'"),
        ("'a' + 1", 'can only concatenate str (not "int") to str'),
        ("None * 2", "unsupported operand type(s) for *: 'NoneType' and 'int'"),
        ("[1][5]", "list index out of range"),
        ("{}['x']", "'x'"),
        ("(5).nope", "'int' object has no attribute 'nope'"),
    ],
)
def test_fast_paths_raise_what_python_raises(source: str, expected: str) -> None:
    result = run(source)
    assert result.error is not None
    assert result.error.kind == "runtime"
    assert result.error.message == expected
    assert result.error.line == 1


def test_fast_paths_evaluate_each_operand_once_in_order() -> None:
    source = (
        "seen = []\n"
        "def f(x):\n"
        "    seen.append(x)\n"
        "    return x\n"
        "r = [f(1) + f(2), f('a') + f('b'), f(3) * f(4), f([5])[f(0)], f(2.5) + f(1)]\n"
        "r, seen"
    )
    assert value(source) == [[3, "ab", 12, 5, 3.5], [1, 2, "a", "b", 3, 4, [5], 0, 2.5, 1]]


def test_fast_paths_work_where_temporaries_cannot_go() -> None:
    # comprehension iterables (also inside a lambda there), class bodies and their
    # comprehensions, generator expressions, defaults and decorators
    source = (
        "rows = [{'a': 1, 'b': 2}, {'a': 3, 'b': 4}]\n"
        "class A:\n"
        "    x = [1, 2][0] + 1\n"
        "    y = [v['a'] * 2 for v in rows]\n"
        "    z = list(v['a'] + v['b'] for v in rows)\n"
        "    def m(self, d=rows[0]['a'] + 10):\n"
        "        return d + self.x\n"
        "it = [r for r in sorted(rows, key=lambda r: -r['a'] + r['b'] * 2)]\n"
        "gen = (r['a'] + r['b'] for r in rows if r['a'] * 1 > 0)\n"
        "[A.x, A.y, A.z, A().m(), [r['a'] for r in it], list(gen)]"
    )
    assert value(source) == [2, [2, 6], [3, 7], 13, [1, 3], [3, 7]]


def test_fast_paths_temporaries_stay_out_of_globals_and_classes() -> None:
    source = (
        "x = [1][0] + [2][0]\nclass A:\n    y = {'k': 1}['k']\ndef f(a):\n    return a[0] + a[1]\n"
    )
    compiled = compile_script(source)
    assert isinstance(compiled, CompiledScript)
    budget = Budget(LIMITS)
    namespace: dict[str, Any] = make_guards(budget, print_fn=print)
    namespace["__builtins__"] = {"__build_class__": __builtins__["__build_class__"]}  # type: ignore[index]
    exec(compiled.code, namespace)
    namespace["__script__"]()
    temporary = re.compile(re.escape(TEMP_PREFIX) + r"\d+_")
    assert not [name for name in namespace if temporary.fullmatch(name)]
    assert not [name for name in vars(namespace["A"]) if temporary.fullmatch(name)]
    assert namespace["f"]([3, 4]) == 7


def test_fast_paths_do_not_share_temporaries_between_generator_objects() -> None:
    # Inside a generator expression the temporaries would be cells of the enclosing
    # function, shared by every generator made from it; there the guards are called.
    source = (
        "def make(k):\n"
        "    return (x + k for x in [1, 2, 3])\n"
        "a = make(10)\n"
        "b = make(100)\n"
        "[next(a) + next(b), next(a) + next(b), next(a) + next(b)]"
    )
    assert value(source) == [112, 114, 116]
    assert "_add_" in compiled_names("def f(xs, k):\n    return list(x + k for x in xs)")


# ----------------------------------------------------------------------------- plain operators


def test_fast_paths_plain_operators_where_operands_prove_the_guard_useless() -> None:
    names = compiled_names(
        "total = 0\n"
        "for i in range(10):\n"
        "    total += i * i\n"
        "rows = [{'name': 'item' + str(i), 'score': i * 37 % 101} for i in range(10)]\n"
        "names = ['user%d' % i for i in range(10)]\n"
        "pairs = ['%d-%05.1f' % (i, i * 2) for i in range(3)]\n"
    )
    assert not names & {"_mul_", "_add_", "_mod_", "_iadd_"}
    assert "_str_" in names  # str() of a number calls the real str
    assert "_pctfast_" not in names  # a checked template of proven numbers: no test either


def test_fast_paths_printf_template_with_wide_conversions_keeps_the_guard() -> None:
    # findings12 F04/F09: the template is read with C's grammar and its widths summed
    # (a checked template gets the inline test — `_pctnum_` for a tuple, findings13 F01 —
    # any other only the guard)
    assert "_pctnum_" in compiled_names("def f(i):\n    return '%9999d|%5.d' % (i, i)")
    assert "_pctfast_" not in compiled_names("def f(i):\n    return '%1000000000.d' % i")
    wide = "%9999d" * 1001  # 10,008,999 padding characters: past the render bound
    assert "_pctfast_" not in compiled_names(f"def f(i):\n    return '{wide}' % i")


def test_fast_paths_fstring_fields_of_numbers_compile_plain() -> None:
    # `{i}` of a proven number needs no `_fmtv_` (its text is bounded, like `str(i)`)
    assert "_fmtv_" not in compiled_names("rows = [f'item{i}' for i in range(10)]")
    # an unproven field tests for a number inline and keeps `_fmtv_` for the rest
    names = compiled_names("def name(x):\n    return f'item{x}'")
    assert {"_numfast_", "_fmtv_"} <= names
    # a spec or a conversion on an unproven field always goes to `_fmtv_`
    assert "_numfast_" not in compiled_names("def name(x):\n    return f'{x!r}{x:>4}'")


@pytest.mark.parametrize(
    "source",
    [
        # f-string doubling through the inline field test (a string is no number)
        "def grow(s):\n    return f'{s}{s}'\ns = 'ab'\nwhile True:\n    s = grow(s)",
        "s = 'ab'\nwhile True:\n    s = f'{s}{s}'",
        # a big container's text through an unproven field
        "def show(x):\n    return f'{x}'\nshow([[0] * 10000] * 10000)",
    ],
)
def test_fast_paths_fstring_growth_still_refused(source: str) -> None:
    result = run(source)
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "too large" in result.error.message


@pytest.mark.parametrize(
    "source",
    [
        # a range item's name rebound to something else proves nothing
        "for i in range(3):\n    pass\ni = 'x' * 10\ni * i",
        # `range` or `str` rebound by the script
        "range = lambda n: ['ab']\nfor i in range(3):\n    i * i",
        "str = lambda n: 'ab'\n'x' + str(1) + 'y'",
        # the first iterable of a comprehension reads the enclosing name
        "i = 'ab'\n[i * i for i in range(len(i))]",
    ],
)
def test_fast_paths_guard_stays_where_nothing_is_proved(source: str) -> None:
    names = compiled_names(source)
    assert names & {"_mul_", "_add_"}, names


def test_fast_paths_session_globals_prove_nothing() -> None:
    sandbox = Sandbox([], limits=LIMITS)

    async def main() -> list[ScriptResult]:
        session = sandbox.session()
        first = await session.run("def range(n):\n    return ['x' * 1000] * 2\n")
        second = await session.run("out = []\nfor i in range(3):\n    out.append(i * 2)\nout")
        return [first, second]

    first, second = anyio.run(main)
    assert first.ok
    assert second.ok
    assert second.value == ["x" * 2000, "x" * 2000]


# ----------------------------------------------------------------------------- attacks


@pytest.mark.parametrize(
    "source",
    [
        # concatenation doubling, through every fast path of `+`
        "s = 'x' * 1000\nwhile True:\n    s = s + s",
        "x = [0] * 1000\nwhile True:\n    x = x + x",
        "def grow(s):\n    return s + s\ns = 'ab'\nwhile True:\n    s = grow(s)",
        "s = 'ab'\nwhile True:\n    s = [s][0] + [s][0]",
        "f = lambda s: s + s\ns = 'ab'\nwhile True:\n    s = f(s)",
        "s = ['ab']\nwhile True:\n    s = [s[0] + s[0] for _ in range(1)]",
        # repetition and repeated squaring, through every fast path of `*`
        "x = 3\nwhile True:\n    x = x * x",
        "def sq(x):\n    return x * x\nx = 3\nwhile True:\n    x = sq(x)",
        "x = 'ab'\nn = 10 ** 9\nx * n",
        "n = [10 ** 9][0]\n[0] * n",
        "for i in range(10 ** 9, 10 ** 9 + 1):\n    'x' * i",
    ],
)
def test_fast_paths_growth_attacks_still_refused(source: str) -> None:
    result = run(source)
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "too large" in result.error.message


def test_fast_paths_item_read_still_checks_the_value() -> None:
    # A host container holding something a script must never hold: the inline
    # value check calls the full check for any value that is not plain data.
    compiled = compile_script("box[0]")
    assert isinstance(compiled, CompiledScript)
    namespace: dict[str, Any] = make_guards(Budget(LIMITS), print_fn=print)
    namespace["__builtins__"] = {}
    namespace["box"] = [sys]
    exec(compiled.code, namespace)
    with pytest.raises(TypeError, match="not available in the sandbox"):
        namespace["__script__"]()


def test_fast_paths_attribute_read_keeps_the_guard_for_slow_names() -> None:
    names = compiled_names("x = [1]\nx.append(2)\nx.extend(x)\n'{0}'.format(1)")
    assert "_getattr_" in names  # extend and format keep the full guard
    tree = ast.parse("x.append(2)")
    assert tree  # the fast path itself is exercised by the SAME_AS_PYTHON cases
    result = run("x = [0] * 6000000\nx.extend(x)\nx.extend(x)")
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "too large" in result.error.message


def test_fast_paths_attribute_read_still_refuses_format() -> None:
    result = run("'{0.__class__}'.format(1)")
    assert result.error is not None
    assert result.ok is False


# ----------------------------------------------------------------------------- the tick statement


def test_fast_paths_tick_statement_calls_the_runs_ticker() -> None:
    # every function entry and while iteration runs `_tk_()`: `pop` of the run's
    # tick list between checks; a tripped budget swaps in a hook that raises
    budget = Budget(Limits(max_steps=None, timeout=None))
    namespace: dict[str, Any] = make_guards(budget, print_fn=print)
    namespace["__builtins__"] = {}
    budget.hooks = namespace
    compiled = compile_script("def f(n):\n    return n\nk = 0\nwhile k < 3:\n    k = f(k) + 1\nk")
    assert isinstance(compiled, CompiledScript)
    assert "_tk_" in compiled_names("def f():\n    pass")
    assert "_tk_" in compiled_names("f = lambda: 1")
    assert "_tick_" not in compiled_names("def f():\n    pass\nwhile True:\n    pass")
    exec(compiled.code, namespace)
    assert namespace["__script__"]() == 3
    assert budget.used == 0  # the ticks are charged when their chunk ends
    stop = budget.trip("limit", "Script exceeded the step limit (1 steps)")
    with pytest.raises(type(stop), match="step limit"):
        namespace["f"](1)
    with pytest.raises(type(stop), match="step limit"):
        namespace["__script__"]()


# ----------------------------------------------------------------------------- comparisons


def test_fast_paths_comprehension_targets_bind_nothing() -> None:
    # Python refuses `:=` in a comprehension's target: item reads and keys there keep the guards
    source = (
        "def g(d, xs, i):\n"
        "    return [v for d[xs[i]] in [5, 6] for v in [d[xs[i]]]]\n"
        "[g({}, ['k'], 0), list({k: 1 for k in [(1, 2)]})]"
    )
    assert value(source) == [[5, 6], [[1, 2]]]


def test_fast_paths_comparisons_plain_where_an_operand_is_a_number() -> None:
    names = compiled_names(
        "def count(xs, limit):\n"
        "    n = 0\n"
        "    i = 0\n"
        "    while i < len(xs):\n"
        "        if xs[i] > 0 and i != limit and n <= 100:\n"
        "            n += 1\n"
        "        i += 1\n"
        "    return n\n"
    )
    assert not names & {"_cmpok_", "_scalar_", "_hkey_"}, names


def test_fast_paths_comparisons_inline_the_scalar_test() -> None:
    # two unproved operands: the plain operator behind `type(x) in _scalar_`, dagguard
    # called only when both are containers
    names = compiled_names("def g(a, b):\n    return a == b, a in b, {a: b}, b[a]")
    assert {"_scalar_", "_cmpok_", "_in_", "_hkey_"} <= names
    assert value("def g(a, b):\n    return [a == b, a < b, a in [b], {a: 1}[a]]\ng('x', 'y')") == [
        False,
        True,
        False,
        1,
    ]


def test_fast_paths_comparison_results_prove_no_number() -> None:
    # a script class's __eq__ may return a list: `x + x` on its result keeps the size guard
    assert "_add_" in compiled_names("x = [1] == [2]\ny = x + x")
    assert "_add_" not in compiled_names("x = 1 in [2]\ny = x + x")
