"""``case K.x:`` at the top of a case: compiled to a capture and a guarded comparison.

The rewrite is in ``compile/policy.py`` (``visit_match_case``); named values nested in
other patterns stay refused (``tests/sandbox/guards/test_compare_guard.py``).
"""

from __future__ import annotations

import pytest

from scriptgate.sandbox.compile.cache import CompileFailure, compile_script
from scriptgate.sandbox.sandbox import Sandbox

SOURCE = (
    "class K:\n    A = 1\n    B = (2, 3)\n    C = 'c'\n"
    "def f(x):\n    match x:\n        case K.A:\n            return 'a'\n"
    "        case K.B | K.C if x != 'c':\n            return 'b'\n"
    "        case K.C:\n            return 'c'\n        case 7 | K.A:\n            return 'never'\n"
    "        case _:\n            return 'other'\n"
    "[f(1), f((2, 3)), f('c'), f(7), f(None), f([2, 3])]"
)


def _plain() -> object:
    *body, last = SOURCE.split("\n")
    scope: dict[str, object] = {}
    exec(compile("\n".join(body), "<plain>", "exec", dont_inherit=True), scope)
    return eval(last, scope)


def test_match_named_values_give_what_python_gives() -> None:
    result = Sandbox().run_sync(SOURCE)
    assert result.ok, result.error
    assert result.value == _plain()


def test_match_named_values_read_and_compare_through_the_guards() -> None:
    # the attribute read is the guarded one (a dunder is refused at run time by the
    # attribute guard, not compiled into a pattern) and the == is the bounded one
    sandbox = Sandbox()
    read = sandbox.run_sync("class K:\n    pass\nmatch 1:\n    case K.__class__:\n        1")
    assert read.error is not None
    assert read.error.kind == "runtime"
    assert "__class__" in read.error.message
    dag = (
        "a = [0] * 1000\nb = [0] * 1000\nfor i in range(4):\n    a = [a] * 1000\n"
        "    b = [b] * 1000\nclass K:\n    v = b\nmatch a:\n    case K.v:\n        1"
    )
    compared = sandbox.run_sync(dag)
    assert compared.error is not None
    assert compared.error.kind == "limit"


@pytest.mark.parametrize(
    "source",
    [
        "class K:\n    v = 1\nmatch [1]:\n    case [K.v]:\n        pass",
        "class K:\n    v = 1\nmatch (1, 2):\n    case (K.v, y):\n        pass",
    ],
)
def test_match_named_values_nested_stay_refused(source: str) -> None:
    compiled = compile_script(source)
    assert isinstance(compiled, CompileFailure)
    assert "capture and compare in a guard" in compiled.message
