"""Size refusals are uncatchable ``limit`` errors (issue 5), in both isolation modes.

Every guard that refuses an operation whose result would be too large for the
sandbox ends the script through ``errors.refuse_size``: ``error.kind == "limit"``,
``error.type == "LimitExceeded"``, the guard's message and the line of the
refused operation. The stop trips the run's budget, so no ``except`` clause,
``finally: return``/``continue``, generator or coroutine can swallow it, and
nothing the script would run afterwards does.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.guards.attributes import Budget
from scriptgate.sandbox.guards.errors import STOP_NAME, ScriptStop, refuse_size, size_stop
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

OPEN = {"type": "object", "additionalProperties": True}
REPEAT = "a repeated sequence would be too large for the sandbox"
"""The message of ``'x' * 10**12`` (models read it: it must not change)."""


def _echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent("ok"),), structured_content={"n": len(params)})


def _flood(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent("y" * 50_000),))


TOOLS = [
    AgentTool(
        name="echo",
        description="",
        parameters=OPEN,
        execute=_echo,
        output_schema={"type": "object"},
    ),
    AgentTool(name="flood", description="", parameters=OPEN, execute=_flood),
]
LIMITS = Limits(timeout=10.0, max_steps=10**8, max_result_bytes=10_000)
"""Steps above 10M items: ``sum()`` of lists charges every item before its size check."""


@pytest.fixture(scope="module")
def in_process() -> Iterator[Sandbox]:
    sandbox = Sandbox(TOOLS, limits=LIMITS)
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def process() -> Iterator[Sandbox]:
    sandbox = Sandbox(TOOLS, limits=LIMITS, isolation="process")
    yield sandbox
    sandbox.close()


def _stopped(result: ScriptResult, text: str, line: int | None = None) -> None:
    """A size limit: kind, type and message; nothing printed after the refusal."""
    assert result.error is not None, result.value
    assert (result.error.kind, result.error.type) == ("limit", "LimitExceeded"), result.error
    assert text in result.error.message, result.error
    assert "after" not in result.output, result.output
    if line is not None:
        assert result.error.line == line, result.error


# ----------------------------------------------------------------------------- swallow attempts

_SWALLOW = {
    "except-memory-error": "try:\n    'x' * 10**12\nexcept MemoryError:\n    pass\nprint('after')",
    "except-memory-error-name-caught": (
        "try:\n    try:\n        'x' * 10**12\n    except MemoryError:\n        pass\n"
        "except NameError:\n    pass\nprint('after')"
    ),
    "except-exception": "try:\n    'x' * 10**12\nexcept Exception:\n    pass\nprint('after')",
    "bare-except": "try:\n    'x' * 10**12\nexcept:\n    pass\nprint('after')",
    "except-tuple": (
        "try:\n    'x' * 10**12\nexcept (ValueError, Exception) as e:\n    print('after', e)"
    ),
    "finally-return": (
        "def f():\n    try:\n        'x' * 10**12\n    finally:\n        return 1\n"
        "x = f()\nprint('after', x)"
    ),
    "finally-continue": (
        "for i in range(3):\n    try:\n        'x' * 10**12\n    finally:\n        continue\n"
        "print('after')"
    ),
    "finally-break": (
        "while True:\n    try:\n        'x' * 10**12\n    finally:\n        break\nprint('after')"
    ),
    "generator-except": (
        "def g():\n    try:\n        yield 'x' * 10**12\n    except Exception:\n"
        "        yield 'swallowed'\nprint('after', list(g()))"
    ),
    "generator-finally-return": (
        "def g():\n    try:\n        yield 'x' * 10**12\n    finally:\n        return\n"
        "print('after', list(g()))"
    ),
    "retry-loop": (
        "n = 0\nwhile n < 5:\n    try:\n        'x' * 10**12\n    except:\n        n += 1\n"
        "print('after', n)"
    ),
    "async-except": (
        "async def f():\n    try:\n        return 'x' * 10**12\n    except Exception:\n"
        "        return 1\nprint('after', await f())"
    ),
    "async-gather-return-exceptions": (
        "async def f():\n    return 'x' * 10**12\n"
        "r = await gather(f(), return_exceptions=True)\nprint('after', r)"
    ),
    "lambda-in-sorted-key": (
        "try:\n    sorted([1, 2], key=lambda v: 'x' * 10**12)\nexcept Exception:\n    pass\n"
        "print('after')"
    ),
}


@pytest.mark.parametrize("source", list(_SWALLOW.values()), ids=list(_SWALLOW))
def test_size_limits_cannot_be_swallowed(in_process: Sandbox, source: str) -> None:
    _stopped(in_process.run_sync(source), REPEAT)


@pytest.mark.anyio
@pytest.mark.parametrize("key", ["except-exception", "async-except", "finally-return"])
async def test_size_limits_cannot_be_swallowed_async(key: str) -> None:
    result = await Sandbox(TOOLS, limits=LIMITS).run(_SWALLOW[key])
    _stopped(result, REPEAT)


def test_size_limits_keep_the_message_and_the_line(in_process: Sandbox) -> None:
    result = in_process.run_sync("x = 1\ntry:\n    'x' * 10**12\nexcept Exception:\n    pass\n")
    assert result.error is not None
    assert result.error.message == REPEAT
    assert result.error.line == 3  # the refused operation, not the handler that re-raised it
    result = in_process.run_sync("def f():\n    return 1 << 10**11\n\nf()")
    assert result.error is not None
    assert (result.error.message, result.error.line) == (
        "an int shift would be too large for the sandbox",
        2,
    )


def test_size_limits_output_before_the_refusal_is_kept(in_process: Sandbox) -> None:
    result = in_process.run_sync("print('before')\ntry:\n    'x' * 10**12\nexcept:\n    pass\n")
    _stopped(result, REPEAT, line=3)
    assert result.output == "before\n"


# ----------------------------------------------------------------------------- every refusal

_REFUSALS = {
    "str-repeat": ("'x' * 10**12", "too large"),
    "list-repeat-reversed": ("10**12 * [0]", "too large"),
    "int-product": ("x = 1 << 600000\nx * x", "an int product"),
    "int-power": ("10 ** 10**9", "an int power"),
    "pow-builtin": ("pow(7, 10**9)", "an int power"),
    "int-shift": ("1 << 10**11", "an int shift"),
    "inplace-repeat": ("s = 'x'\ns *= 10**12", "too large"),
    "item-inplace-shift": ("d = {'k': 1}\nd['k'] <<= 10**11", "an int shift"),
    "str-center": ("'a'.center(10**12)", "str.center"),
    "str-expandtabs": ("('\\t' * 1000).expandtabs(10**7)", "str.expandtabs"),
    "str-replace": ("('a' * 1000).replace('a', 'b' * 10**5)", "str.replace"),
    "str-translate": ("('a' * 10**6).translate({97: 'b' * 100})", "str.translate"),
    "str-join": ("'-'.join(['x' * 10**6] * 11)", "str.join"),
    "str-format-total": ("'{}{}'.format('x' * 6000000, 'y' * 6000000)", "formatted string"),
    "format-width": ("format(1, '>10000000000')", "format width above"),
    "fstring-dynamic-width": ("w = 10**10\nf'{1:>{w}}'", "format width above"),
    "printf-width": ("'%99999999d' % 1", "% format width above"),
    "concat": ("s = 'x' * 6000000\ns + s", "a concatenated sequence"),
    "inplace-concat": ("s = [0] * 6000000\ns += s", "a concatenated sequence"),
    "list-extend": ("x = [0] * 6000000\nx.extend(x)", "list.extend"),
    "star-unpack": ("x = [0] * 1000\nwhile True:\n    x = [*x, *x]", "an unpacked sequence"),
    "fstring-field": ("s = 'x' * 1000\nwhile True:\n    s = f'{s}{s}'", "an f-string field"),
    "render-str": ("x = [1] * 10**6\ny = [x] * 100\nstr(y)", "str() of this value"),
    "render-repr": ("x = [1] * 10**6\ny = [x] * 100\nrepr(y)", "repr() of this value"),
    "render-ascii": ("ascii('\\U0001f600' * 2000000)", "ascii() of this value"),
    "render-percent": ("x = [1] * 10**6\ny = [x] * 100\n'%s' % (y,)", "% formatting"),
    "json-dumps": ("import json\nx = [1] * 10**6\njson.dumps([x] * 100)", "json.dumps"),
    "json-indent": ("import json\njson.dumps([1], indent=65)", "indent above 64"),
    "sum-lists": ("sum([[0] * 6000000, [0] * 6000000], [])", "sum() of these sequences"),
    "counter-elements": (
        "import collections\nlist(collections.Counter(a=10**18).elements())",
        "Counter.elements()",
    ),
    "re-sub": ("import re\nre.sub('a', 'b' * 100, 'a' * 10**6)", "regular expression replacement"),
    "random-choices": ("import random\nrandom.choices([1], k=10**9)", "random.choices k"),
    "math-factorial": ("import math\nmath.factorial(10**6)", "math.factorial argument"),
    "itertools-product": ("import itertools\nitertools.product([1], repeat=65)", "repeat above"),
    "range-cap": ("range(10**18)", "range of"),
    "tool-arguments": ("x = [1] * 10**6\necho(data=[x] * 100)", "these tool-call arguments"),
    # findings18 L10: 9.6 M characters of JSON, but 2.4 M dicts once decoded in the host
    "tool-arguments-many-dicts": (
        "echo(data=[{}] * 2_400_000)",
        "more than 2,000,000 items",
    ),
    "tool-arguments-shared-lists": (
        "b = [1]\nfor i in range(21):\n    b = [b, b]\necho(data=b)",
        "more than 200,000 lists and dicts",
    ),
    "tool-arguments-many-items": ("echo(data=[0] * 2_100_000)", "more than 2,000,000 items"),
}


@pytest.mark.parametrize(
    ("source", "text"), list(_REFUSALS.values()), ids=list(_REFUSALS)
)  # fmt: skip
def test_size_limits_every_refusal_is_a_final_limit(
    in_process: Sandbox, source: str, text: str
) -> None:
    # the refusal is attempted inside a handler that would swallow any exception
    body = "\n".join("    " + line for line in source.splitlines())
    wrapped = f"try:\n{body}\nexcept:\n    pass\nprint('after')"
    result = in_process.run_sync(wrapped)
    _stopped(result, text)
    assert all(call.tool != "echo" for call in result.calls)  # no oversized call went out


def test_size_limits_print_without_output_cap_is_a_limit() -> None:
    box = Sandbox([], limits=Limits(max_output_chars=None))
    try:
        result = box.run_sync(
            "x = [1] * 10**6\ntry:\n    print([x] * 100)\nexcept:\n    pass\nprint('after')"
        )
    finally:
        box.close()
    _stopped(result, "print() of these values")


# ----------------------------------------------------------------------------- not refusals


def test_size_limits_script_raised_memory_error_stays_catchable(in_process: Sandbox) -> None:
    # only the guards' own refusals changed: an exception the script raises itself is
    # an ordinary exception (MemoryError is not even bound in a script's namespace)
    result = in_process.run_sync(
        "try:\n    raise ValueError('too large for the sandbox')\nexcept ValueError as e:\n"
        "    r = str(e)\nr"
    )
    assert result.ok, result.error
    result = in_process.run_sync("len('x' * 10**6 + 'y')")
    assert result.ok, result.error


def test_size_limits_oversized_tool_result_stays_a_tool_error(in_process: Sandbox) -> None:
    # a tool returning more than max_result_bytes is the tool's doing, not the script's:
    # the script sees a catchable ToolError and may ask for less
    result = in_process.run_sync(
        "try:\n    flood()\nexcept ToolError as e:\n    r = str(e)\nr",
    )
    assert result.ok, result.error
    assert "more than the limit of 10000 bytes" in result.value
    assert [call.status for call in result.calls] == ["error"]


def test_size_limits_session_survives_a_refusal(in_process: Sandbox) -> None:
    session = in_process.session()
    assert session.run_sync("a = 41").ok
    _stopped(session.run_sync("try:\n    'x' * 10**12\nexcept:\n    a = 0\n"), REPEAT)
    result = session.run_sync("a + 1")
    assert (result.ok, result.value) == (True, 42)


# ----------------------------------------------------------------------------- the mechanism


def test_size_limits_stop_name_is_not_reachable_from_scripts(in_process: Sandbox) -> None:
    result = in_process.run_sync(STOP_NAME)
    assert result.error is not None
    assert result.error.kind == "rejected"


def test_size_limits_refusal_trips_the_given_budget() -> None:
    budget = Budget(Limits())
    with pytest.raises(ScriptStop) as caught:
        refuse_size("m would be too large for the sandbox", budget.trip)
    assert budget.stop is caught.value
    assert (caught.value.kind, caught.value.message) == ("limit", caught.value.message)
    with pytest.raises(ScriptStop) as again:
        budget.check()  # final: every later check re-raises it
    assert again.value is caught.value
    # a later refusal does not replace the first stop
    assert size_stop("another", budget.trip) is caught.value


def test_size_limits_refusal_outside_a_script_is_an_untripped_stop() -> None:
    stop = size_stop("n would be too large for the sandbox")
    assert isinstance(stop, ScriptStop)
    assert (stop.kind, stop.message, stop.line) == (
        "limit",
        "n would be too large for the sandbox",
        None,
    )


# ----------------------------------------------------------------------------- process mode

_PARITY = [
    _SWALLOW["except-exception"],
    _SWALLOW["finally-return"],
    _SWALLOW["generator-except"],
    _SWALLOW["async-except"],
    "x = [1] * 10**6\ny = [x] * 100\ntry:\n    str(y)\nexcept Exception:\n    pass\nprint('after')",
    "try:\n    echo(data=[[1] * 10**6] * 100)\nexcept Exception:\n    pass\nprint('after')",
    "print('before')\nfor i in range(10**18):\n    pass",
]


@pytest.mark.parametrize("source", _PARITY)
def test_size_limits_process_mode_gives_the_same_result(
    in_process: Sandbox, process: Sandbox, source: str
) -> None:
    here = in_process.run_sync(source)
    there = process.run_sync(source)
    assert here.error is not None
    assert here.error.kind == "limit"
    assert there.error == here.error
    assert (there.output, there.calls) == (here.output, here.calls)
