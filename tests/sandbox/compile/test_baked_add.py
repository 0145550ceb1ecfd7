"""The ``+`` test with ``type``/``int``/``float`` baked into the code (``compile.baked``).

``a + b`` compiles to ``_add_(a, b) if type(a) is not int and type(a) is not float else
a + b`` with the three builtins as code constants. These tests show that the constants
are the real builtins whatever the script names, that no script constant can turn into
one, and that a number on the left of ``+`` cannot double a sequence around the guard:
``int``/``float`` add only numbers, and whatever else runs (a script's ``__radd__``) is
script code under the same guards.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest
from sandbox_support import fresh_value, run_fresh

from scriptgate.sandbox.compile.cache import CompiledScript, compile_script
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

run = run_fresh
value = fresh_value


def code_objects(source: str) -> list[Any]:
    compiled = compile_script(source)
    assert isinstance(compiled, CompiledScript)
    found: list[Any] = []
    stack = [compiled.code]
    while stack:
        code = stack.pop()
        found.append(code)
        stack.extend(c for c in code.co_consts if hasattr(c, "co_consts"))
    return found


def test_baked_add_test_reads_builtins_as_constants() -> None:
    codes = code_objects("def f(a, b):\n    return a + b\nf('x', 'y')")
    names = {name for code in codes for name in code.co_names}
    assert not names & {"_type_", "_int_", "_float_"}
    (f,) = [code for code in codes if code.co_name == "f"]
    consts = [c for c in f.co_consts if isinstance(c, type)]
    assert type in consts
    assert int in consts
    assert float in consts
    # no placeholder is left anywhere: every float constant is a script's own
    assert not any(isinstance(c, float) and math.isnan(c) for code in codes for c in code.co_consts)


def test_baked_add_script_nan_constants_stay_the_scripts_own() -> None:
    # constant folding makes NaN constants; compile() merges equal constants, but a NaN
    # equals nothing, so none of these can be taken for a placeholder
    source = (
        "a = 1e999 - 1e999\n"
        "b = -(1e999 - 1e999)\n"
        "c = (1e999 - 1e999, 1e999 - 1e999)\n"
        "d = 2.0 in {1e999 - 1e999, 2.0}\n"
        "def f(x):\n"
        "    return (x + (1e999 - 1e999), 1 + x)\n"
        "[repr(a), repr(b), [repr(v) for v in c], d, [repr(v) for v in f(1.5)],"
        " type(a).__name__, a + 1 != a + 1]"
    )
    assert value(source) == ["nan", "nan", ["nan", "nan"], True, ["nan", "2.5"], "float", True]


def test_baked_add_ignores_the_scripts_own_type_int_float() -> None:
    # the script may rebind the builtins' names: the compiled test uses the real ones
    source = (
        "def type(x):\n"
        "    return int\n"
        "int = str\n"
        "float = list\n"
        "[1 + 2, 1.5 + 1, 'a' + 'b', [1] + [2]]"
    )
    assert value(source) == [3, 2.5, "ab", [1, 2]]
    for rebinding in ("def type(x):\n    return int\n", "int = str\n", "float = str\n"):
        result = run(rebinding + "s = 'x' * 1000\nwhile True:\n    s = s + s")
        assert result.error is not None
        assert result.error.kind == "limit"
        assert "too large" in result.error.message


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("1 + 'ab'", "unsupported operand type(s) for +: 'int' and 'str'"),
        ("1 + [1]", "unsupported operand type(s) for +: 'int' and 'list'"),
        ("1.5 + (1,)", "unsupported operand type(s) for +: 'float' and 'tuple'"),
        ("2 + b'x'", "unsupported operand type(s) for +: 'int' and 'bytes'"),
        ("True + [1]", "unsupported operand type(s) for +: 'bool' and 'list'"),
        (
            "class L(list):\n    pass\n1 + L([1])",
            "unsupported operand type(s) for +: 'int' and 'L'",
        ),
        (
            "class S(str):\n    pass\n1.0 + S('a')",
            "unsupported operand type(s) for +: 'float' and 'S'",
        ),
        (
            "class O:\n    pass\n1.0 + O()",
            "unsupported operand type(s) for +: 'float' and 'O'",
        ),
    ],
)
def test_baked_add_number_on_the_left_adds_no_sequence(source: str, expected: str) -> None:
    result = run(source)
    assert result.error is not None
    assert result.error.type == "TypeError"
    assert expected in result.error.message


@pytest.mark.parametrize(
    "source",
    [
        # a script's __radd__ behind a number runs as script code: its own `+` is guarded
        "class G:\n"
        "    def __init__(self, s):\n"
        "        self.s = s\n"
        "    def __radd__(self, other):\n"
        "        return G(self.s + self.s)\n"
        "g = G('x' * 1000)\n"
        "while True:\n"
        "    g = 1 + g",
        "class G:\n"
        "    def __init__(self, s):\n"
        "        self.s = s\n"
        "    def __radd__(self, other):\n"
        "        return G(self.s + self.s)\n"
        "g = G([0] * 1000)\n"
        "while True:\n"
        "    g = 1.0 + g",
        # a list subclass with __radd__: the fast path's `1 + x` calls it, it doubles itself
        "class L(list):\n"
        "    def __radd__(self, other):\n"
        "        return L(self + self)\n"
        "x = L([0] * 1000)\n"
        "while True:\n"
        "    x = 1 + x",
        # an int subclass on the left is not `int`: the guard runs (its own `__add__` is
        # refused when the class is made: tests/sandbox/attacks_onecall.py f11-lying-number-*)
        "class I(int):\n"
        "    def double(self, other):\n"
        "        return other + other\n"
        "s = 'x' * 1000\n"
        "while True:\n"
        "    s = I(1).double(s) + s",
        # bool is not `int` either
        "class B:\n"
        "    def __init__(self, s):\n"
        "        self.s = s\n"
        "    def __radd__(self, other):\n"
        "        return B(self.s + self.s)\n"
        "b = B(b'x' * 1000)\n"
        "while True:\n"
        "    b = True + b",
    ],
)
def test_baked_add_doubling_behind_a_number_still_refused(source: str) -> None:
    result = run(source)
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "too large" in result.error.message


def test_baked_add_same_results_as_python() -> None:
    source = (
        "def f(a, b):\n"
        "    return a + b\n"
        "def g(a, b):\n"
        "    return a + (b + 1)\n"  # a right side that is not duplicable: the temporary form
        "[f(1, 2), f(1.5, 2), f(2, 1.5), f(True, 1), f('a', 'b'), f((1,), (2,)),"
        " f(1 + 2j, 1), g(1, 2), g(1.5, 2), g([1], 2) if False else 0, f(2 ** 70, 1)]"
    )
    assert value(source) == [3, 3.5, 3.5, 2, "ab", [1, 2], "(2+2j)", 4, 4.5, 0, 2**70 + 1]


@pytest.mark.parametrize(
    ("limits", "text"),
    [
        (Limits(timeout=0.3, max_steps=None), "timed out after 0.3 s"),
        (Limits(timeout=10, max_steps=50_000), "step limit (50000 steps)"),
        (Limits(timeout=10, max_steps=None, max_recursion=40), "recursion limit (40 nested"),
    ],
)
def test_baked_add_loop_free_recursion_still_stops(limits: Limits, text: str) -> None:
    # fib's shape: calls, the inline `+` on two call results, no loop anywhere
    source = "def f(n):\n    return n if n < 2 else f(n - 1) + f(n - 2)\nf(60)"
    if "recursion" in text:  # 60 deep: the `+` of every level waits on the next
        source = "def f(n):\n    return 0 if n < 1 else f(n - 1) + f(0)\nf(60)"
    result = anyio.run(Sandbox([], limits=limits).run, source)
    assert result.error is not None
    assert result.error.kind == "limit"
    assert text in result.error.message
