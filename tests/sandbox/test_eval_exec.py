"""``eval``/``exec`` of a string inside a script (issue 14): the same policy, the same world.

The string is compiled by the script's own pipeline and runs with the run's hooks and
budget (``scriptgate.sandbox.world.evaluate``), in both isolation modes. The attack-style
counterparts (hook overrides, dunders in the string, bombs, deadlines) are in
``attacks_boundary.py`` (``b-eval-*``), run in both modes by ``test_attack_suite.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from sandbox_support import EchoTool

from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Isolation, Sandbox
from scriptgate.sandbox.world.evaluate import MAX_EVAL_DEPTH, MAX_EVAL_SOURCE

_ECHO = EchoTool(key="said", text="ok")
_TOOL = _ECHO.tool

_LIMITS = Limits(timeout=5.0, max_recursion=100)

_DO_ALGEBRA = """
def do_algebra(operator, operand):
    expression = str(operand[0])
    for oprt, opn in zip(operator, operand[1:]):
        expression += oprt + str(opn)
    return eval(expression)
[do_algebra(['**', '*', '+'], [2, 3, 4, 5]), do_algebra(['+', '*', '-'], [2, 3, 4, 5]),
 do_algebra(['//', '*'], [7, 3, 4])]
"""


@pytest.fixture(scope="module", params=["in_process", "process"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    mode: Isolation = request.param
    box = Sandbox([_TOOL], limits=_LIMITS, isolation=mode)
    yield box
    box.close()


def _value(sandbox: Sandbox, source: str) -> Any:
    result = sandbox.run_sync(source)
    assert result.ok, result.error
    return result.value


def _error(sandbox: Sandbox, source: str) -> tuple[str, str, str]:
    result: ScriptResult = sandbox.run_sync(source)
    assert not result.ok, f"ran: {result.value!r}"
    assert result.error is not None
    return result.error.kind, result.error.type, result.error.message


def test_eval_exec_humaneval_160_style_expression(sandbox: Sandbox) -> None:
    assert _value(sandbox, _DO_ALGEBRA) == [
        2**3 * 4 + 5,
        2 + 3 * 4 - 5,
        7 // 3 * 4,
    ]


def test_eval_exec_defines_a_function_then_calls_it(sandbox: Sandbox) -> None:
    source = "exec('def twice(x):\\n    return [x, x]')\ntwice(21)"
    assert _value(sandbox, source) == [21, 21]


def test_eval_exec_into_a_dict_keeps_functions_that_see_each_other(sandbox: Sandbox) -> None:
    source = (
        "ns = {'base': 10}\n"
        "exec('def f(n):\\n    return g(n) + base', ns)\n"
        "exec('def g(n):\\n    return n * 2\\nmade = 1', ns)\n"
        "[ns['f'](5), sorted(ns)]"
    )
    assert _value(sandbox, source) == [20, ["base", "f", "g", "made"]]


def test_eval_exec_nested_in_the_same_dict_keeps_the_outer_names(sandbox: Sandbox) -> None:
    source = "ns = {}\nns['ns'] = ns\nexec('x = 1\\nexec(\"y = x + 1\", ns)\\nz = x + y', ns)\n"
    assert _value(sandbox, source + "[ns['x'], ns['y'], ns['z']]") == [1, 2, 3]


def test_eval_exec_class_with_a_loop_in_its_body_runs_in_a_given_dict(sandbox: Sandbox) -> None:
    source = (
        "ns = {}\n"
        "exec('class A:\\n    i = 0\\n    while i < 3:\\n        i += 1\\n"
        "    def get(self):\\n        return self.i', ns)\n"
        "ns['A']().get()"
    )
    assert _value(sandbox, source) == 3


def test_eval_exec_reads_the_callers_locals_and_globals(sandbox: Sandbox) -> None:
    source = (
        "k = 100\n"
        "def calc(a, b, op):\n    return eval(f'a {op} b + k')\n"
        "[calc(6, 7, '*'), [eval('x * 2') for x in range(3)]]"
    )
    assert _value(sandbox, source) == [142, [0, 2, 4]]


def test_eval_exec_writes_globals_at_top_level_and_not_a_functions_locals(
    sandbox: Sandbox,
) -> None:
    source = (
        "x = 1\nexec('x = 2\\ny = x + 1')\n"
        "def f():\n    z = 5\n    exec('z = 7')\n    return z\n"
        "[x, y, f()]"
    )
    assert _value(sandbox, source) == [2, 3, 5]


def test_eval_exec_separate_locals_receive_the_writes(sandbox: Sandbox) -> None:
    source = "g = {'a': 1}\nloc = {'b': 2}\nexec('c = a + b', g, loc)\n[g, loc, eval('b', g, loc)]"
    assert _value(sandbox, source) == [{"a": 1}, {"b": 2, "c": 3}, 2]


def test_eval_exec_string_calls_a_tool_through_the_run(sandbox: Sandbox) -> None:
    result = sandbox.run_sync("eval(\"echo(word='hi')\")")
    assert result.ok, result.error
    assert result.value == {"said": {"word": "hi"}}
    assert [call.tool for call in result.calls] == ["echo"]


def test_eval_exec_async_script_awaits_what_eval_returns(sandbox: Sandbox) -> None:
    source = 'import asyncio\nasync def main():\n    return await eval("echo(n=1)")\nawait main()'
    assert _value(sandbox, source) == {"said": {"n": 1}}


def test_eval_exec_syntax_error_is_catchable_with_the_strings_line(sandbox: Sandbox) -> None:
    source = (
        "out = []\n"
        "for text in ['1 +', 'x = 1\\ny = (', 'a.__subclasses__']:\n"
        "    try:\n        exec(text)\n"
        "    except SyntaxError as e:\n        out.append(str(e))\n"
        "out"
    )
    messages = _value(sandbox, source)
    assert messages[0] == "invalid syntax (in the exec() string, line 1)"
    assert messages[1] == "'(' was never closed (in the exec() string, line 2)"
    assert messages[2].startswith('Line 1: "__subclasses__" is an invalid attribute name')
    assert messages[2].endswith("(in the exec() string)")
    assert all("\n" not in m for m in messages)


def test_eval_exec_uncaught_syntax_error_is_a_runtime_error_not_a_rejection(
    sandbox: Sandbox,
) -> None:
    kind, type_, message = _error(sandbox, "x = 1\neval('x +')")
    assert (kind, type_) == ("runtime", "SyntaxError")
    assert "in the eval() string" in message


def test_eval_exec_refuses_await_and_non_strings_with_a_hint(sandbox: Sandbox) -> None:
    assert _error(sandbox, "eval('await f()')")[2].startswith(
        "'await' is not allowed in an eval() string in the sandbox"
    )
    assert _error(sandbox, "eval(b'1')") == (
        "runtime",
        "TypeError",
        "eval() arg 1 must be a string (not bytes) in the sandbox",
    )
    assert _error(sandbox, "class D(dict):\n    pass\nexec('x = 1', D())")[1] == "TypeError"


def test_eval_exec_compile_is_refused_with_what_to_write(sandbox: Sandbox) -> None:
    kind, type_, message = _error(sandbox, "compile('1', 'f', 'eval')")
    assert (kind, type_) == ("runtime", "NameError")
    assert "eval() or exec()" in message


def test_eval_exec_nesting_is_bounded(sandbox: Sandbox) -> None:
    source = "def nest(n):\n    return eval('nest(n - 1)') + 1 if n else 0\n"
    assert _value(sandbox, source + f"nest({MAX_EVAL_DEPTH})") == MAX_EVAL_DEPTH
    kind, type_, message = _error(sandbox, source + f"nest({MAX_EVAL_DEPTH + 1})")
    assert (kind, type_) == ("runtime", "RecursionError")
    assert f"{MAX_EVAL_DEPTH} deep" in message


def test_eval_exec_source_size_is_bounded(sandbox: Sandbox) -> None:
    assert _value(sandbox, "len(eval('[' + '1, ' * 2_000 + ']'))") == 2_000
    kind, type_, message = _error(sandbox, f"eval('1+' * {MAX_EVAL_SOURCE // 2} + '1')")
    assert (kind, type_) == ("runtime", "SyntaxError")
    assert f"more than the limit of {MAX_EVAL_SOURCE} bytes" in message


def test_eval_exec_functions_defined_in_a_dict_count_toward_the_recursion_limit(
    sandbox: Sandbox,
) -> None:
    source = "ns = {}\nexec('def down(n):\\n    return down(n - 1)', ns)\nns['down'](10**6)"
    kind, _, message = _error(sandbox, source)
    assert kind == "limit"
    assert "recursion limit (100 nested calls)" in message


def test_eval_exec_session_function_from_a_dict_is_charged_to_the_later_run() -> None:
    box = Sandbox(limits=Limits(timeout=0.5))
    try:
        session = box.session()
        first = session.run_sync(
            "ns = {}\nexec('def spin(n):\\n    i = 0\\n    while i < n:\\n        i += 1\\n"
            "    return i', ns)\nspin = ns['spin']\nspin(3)"
        )
        assert first.value == 3
        later = session.run_sync("spin(10**12)")
        assert later.error is not None
        assert (later.error.kind, later.error.message) == (
            "limit",
            "Script timed out after 0.5 s",
        )
        assert session.run_sync("spin(4)").value == 4
        kept = session.run_sync("e = eval\ne('1 + 1')")
        assert kept.value == 2
        stale = session.run_sync("e('spin(10**12)')")
        assert stale.error is not None
        assert (stale.error.kind, stale.error.message) == ("limit", "Script timed out after 0.5 s")
        assert session.run_sync("e('spin(5)')").value == 5
    finally:
        box.close()
