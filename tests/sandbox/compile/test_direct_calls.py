"""Numbers carried across direct calls (``guards.direct_calls`` and ``NumericNames``).

``fib(n - 1) + fib(n - 2)`` compiles to a plain ``+`` when every call of ``fib`` passes
numbers and every ``return`` of it gives one: the size guard of ``+`` is for sequences, and
two numbers cannot make one. These tests pin what is proved, and — in the attack style —
that every way a non-number could reach such a ``+`` keeps the guard, so a sequence still
cannot double past the size bound.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from scriptgate.sandbox.compile.cache import CompiledScript, compile_script
from scriptgate.sandbox.guards.direct_calls import MAX_FUNCTIONS, direct_functions
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

FIB = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
BIG = "'x' * 6000000"  # two of them make more than MAX_SEQUENCE


def guards_in(source: str, function: str, *, session: bool = False) -> set[str]:
    """The ``+`` guards the code of ``function`` calls."""
    compiled = compile_script(source, session=session)
    assert isinstance(compiled, CompiledScript), compiled
    stack = [compiled.code]
    while stack:
        code = stack.pop()
        if code.co_name == function:
            return {n for n in code.co_names if n in ("_add_", "_iadd_")}
        stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    raise AssertionError(f"no function {function}")


def run(source: str, mode: str = "in_process") -> ScriptResult:
    limits = Limits(timeout=10, memory_bytes=None if mode == "in_process" else 1 << 30)
    result: ScriptResult = anyio.run(Sandbox([], limits=limits, isolation=mode).run, source)
    return result


def too_large(result: ScriptResult) -> None:
    assert result.error is not None, result.value
    assert result.error.kind == "limit", result.error
    assert "too large" in result.error.message, result.error


# ----------------------------------------------------------------------------- proved


@pytest.mark.parametrize(
    ("source", "function"),
    [
        (FIB + "fib(20)", "fib"),
        (FIB + "x = 3\nfib(x)", "fib"),
        (FIB + "print(fib(10) + 1)", "fib"),
        # the statement form, annotations, a docstring and an import before it
        (
            '"""doc"""\nimport math\n'
            "def fib(n: int) -> int:\n    if n < 2:\n        return n\n"
            "    return fib(n - 1) + fib(n - 2)\nfib(10)",
            "fib",
        ),
        # mutual recursion, and a call from inside a comprehension
        (
            "def even(n):\n    return 1 if n == 0 else odd(n - 1) + 0\n"
            "def odd(n):\n    return 0 if n == 0 else even(n - 1) + 0\n"
            "[even(i) for i in range(5)]",
            "even",
        ),
        ("def add(a, b):\n    return a + b\nadd(1, 2.5)\nadd(len('x'), 3)", "add"),
    ],
)
def test_direct_calls_prove_numbers_across_calls(source: str, function: str) -> None:
    assert guards_in(source, function) == set()


def test_direct_calls_fib_runs_as_in_python() -> None:
    result = run(FIB + "[fib(i) for i in range(15)]")
    assert result.value == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377]


# ----------------------------------------------------------------------------- not proved


@pytest.mark.parametrize(
    "source",
    [
        # a call passes a string, a name nothing proves, keywords, a star, the wrong count
        FIB + "fib('ab')",
        FIB + "fib(unknown)",
        FIB + "fib(n=3)",
        FIB + "fib(*[3])",
        FIB + "fib(1, 2)",
        # the function is a value somewhere: host code or a dunder could call it
        FIB + "sorted([3, 1], key=fib)",
        FIB + "g = fib\nfib(3)",
        FIB + "fib.__name__\nfib(3)",
        FIB + "class A:\n    key = fib\nfib(3)",
        # its name is bound again, or shadowed anywhere
        FIB + "fib = len\nfib(3)",
        FIB + FIB + "fib(3)",
        FIB + "def g(fib):\n    return fib(3)\nfib(3)",
        FIB + "for fib in [1]:\n    pass\n",
        "import math as fib\n" + FIB + "fib(3)",
        # code runs before the def: a call of the name may reach a tool or a builtin
        "x = 1\n" + FIB + "fib(3)",
        "def g():\n    return fib(3)\ny = g()\n" + FIB + "fib(3)",
        # decorated, defaults, nested, a generator, async
        "@staticmethod\n" + FIB + "fib(3)",
        "def fib(n=1):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(3)",
        "def outer():\n    " + FIB.replace("\n", "\n    ") + "return fib(3)\nouter()",
        # exec/eval may rebind anything from a string the compiler never saw
        FIB + "fib(3)\nexec('fib = str')",
    ],
)
def test_direct_calls_keep_the_guard_where_nothing_is_proved(source: str) -> None:
    function = "fib"
    assert guards_in(source, function), "the + of fib should keep its guard"


@pytest.mark.parametrize(
    "source",
    [
        # a return that is not a number, or an end it can fall off (None)
        "def f(n):\n    if n:\n        return 'a'\n    return n\ndef g(n):\n    return f(n) + f(n)\ng(1)",
        "def f(n):\n    if n:\n        return 1\ndef g(n):\n    return f(n) + f(n)\ng(1)",
        # the parameter is bound again in the body, or through nonlocal
        "def g(n):\n    n = 'a'\n    return n + n\ng(1)",
        "def g(n):\n    def h():\n        nonlocal n\n        n = 'a'\n    h()\n    return n + n\ng(1)",
    ],
)
def test_direct_calls_false_facts_are_not_proved(source: str) -> None:
    assert guards_in(source, "g")


def test_direct_calls_prove_nothing_in_a_session() -> None:
    # a later run of the session may call fib with anything
    assert guards_in(FIB + "fib(3)", "fib", session=True)


def test_direct_calls_give_up_past_max_functions() -> None:
    import ast

    many = "".join(f"def f{i}(n):\n    return n\n" for i in range(MAX_FUNCTIONS + 1))
    assert direct_functions(ast.parse(many)) == {}
    assert len(direct_functions(ast.parse(many.split("def f1(")[0]))) == 1


# ----------------------------------------------------------------------------- attacks


LYING = (
    "class Small(list):\n"
    "    def __lt__(self, other):\n        return True\n"
    "class Big(list):\n"
    "    def __lt__(self, other):\n        return False\n"
    "    def __sub__(self, other):\n        return Small(self)\n"
)
"""A list that says it is below 2 after ``- 1``: ``fib`` of it returns ``Small + Small``."""


@pytest.mark.parametrize("mode", ["in_process", "process"])
@pytest.mark.parametrize(
    "tail",
    [
        # a script object passed to the recursive function
        "fib(Big([0] * 6000000))",
        # through a variable first
        "b = Big([0] * 6000000)\nfib(b)",
    ],
)
def test_direct_calls_attack_a_lying_list_still_meets_the_guard(mode: str, tail: str) -> None:
    # the class definitions come first: then fib's def follows code, so nothing is proved
    too_large(run(LYING + FIB + tail, mode))


@pytest.mark.parametrize("mode", ["in_process", "process"])
def test_direct_calls_attack_fib_defined_first_and_called_with_a_lying_list(mode: str) -> None:
    # fib's def comes first (a candidate), but one call passes a script object
    too_large(run(FIB + LYING + "fib(3)\nfib(Big([0] * 6000000))", mode))


@pytest.mark.parametrize("mode", ["in_process", "process"])
def test_direct_calls_attack_string_doubling_through_a_proved_looking_function(mode: str) -> None:
    source = f"def twice(s):\n    return s + s\ntwice(1)\ns = {BIG}\ntwice(s)"
    too_large(run(source, mode))


def test_direct_calls_attack_session_later_run_passes_a_lying_list() -> None:
    async def main() -> Any:
        sandbox = Sandbox([], limits=Limits(timeout=10, memory_bytes=None))
        session = sandbox.session()
        try:
            first = await session.run(FIB + "fib(10)")
            assert first.value == 55
            return await session.run(LYING + "fib(Big([0] * 6000000))")
        finally:
            await session.aclose()

    too_large(anyio.run(main))
