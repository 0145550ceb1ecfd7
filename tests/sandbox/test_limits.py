"""Limits: every budget ends the script with ``error.kind == "limit"`` and cannot be caught."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

OPEN = {"type": "object", "additionalProperties": True}


def _echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent("x" * params.get("n", 1)),))


async def _hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")  # pragma: no cover


TOOLS = [
    AgentTool(name="echo", description="", parameters=OPEN, execute=_echo),
    AgentTool(name="other", description="", parameters=OPEN, execute=_echo),
    AgentTool(name="hang", description="", parameters=OPEN, execute=_hang),
]


async def run(source: str, **limits: Any) -> ScriptResult:
    return await Sandbox(TOOLS, limits=Limits(**limits)).run(source)


def _limit(result: ScriptResult, text: str) -> None:
    assert result.error is not None, result.value
    assert result.error.kind == "limit", result.error
    assert text in result.error.message, result.error


@pytest.mark.anyio
@pytest.mark.parametrize("source", ["while True:\n    pass", "while True:\n    await gather()"])
async def test_limits_timeout_stops_busy_loop(source: str) -> None:
    result = await run(source, timeout=0.2, max_steps=None)
    _limit(result, "timed out after 0.2 s")


@pytest.mark.anyio
@pytest.mark.parametrize("source", ["hang()", "await hang()"])
async def test_limits_timeout_cancels_running_tool_call(source: str) -> None:
    result = await run(source, timeout=0.2)
    _limit(result, "timed out")
    assert [c.status for c in result.calls] == ["cancelled"]


@pytest.mark.anyio
async def test_limits_no_deadline_when_timeout_is_none() -> None:
    result = await run("total = 0\nfor i in range(20000):\n    total += i\ntotal", timeout=None)
    assert result.value == sum(range(20000))


@pytest.mark.anyio
async def test_limits_max_steps() -> None:
    _limit(await run("i = 0\nwhile True:\n    i += 1", max_steps=5000), "step limit (5000 steps)")
    ok = await run("for i in range(1000):\n    pass\ni", max_steps=5000)
    assert ok.value == 999


@pytest.mark.anyio
async def test_limits_max_tool_calls_overall_and_per_tool() -> None:
    result = await run("for i in range(10):\n    echo()", max_tool_calls=3)
    _limit(result, "tool-call limit (3 calls)")
    assert len(result.calls) == 3
    per_tool = await run(
        "other()\nfor i in range(10):\n    echo()", max_tool_calls_per_tool={"echo": 2}
    )
    _limit(per_tool, 'limit of 2 calls to tool "echo"')
    assert [c.tool for c in per_tool.calls] == ["other", "echo", "echo"]


@pytest.mark.anyio
async def test_limits_output_cap_keeps_output_up_to_the_cap() -> None:
    result = await run("for i in range(100):\n    print('abcdefghi')", max_output_chars=25)
    _limit(result, "output exceeded the limit of 25 characters")
    assert result.output == "abcdefghi\nabcdefghi\nabcde"


@pytest.mark.anyio
async def test_limits_max_recursion() -> None:
    source = "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\ndepth({})"
    assert (await run(source.format(49), max_recursion=50)).value == 49
    _limit(await run(source.format(50), max_recursion=50), "recursion limit (50 nested calls)")


@pytest.mark.anyio
async def test_limits_result_bytes_for_value_and_tool_results() -> None:
    _limit(await run("'x' * 2000", max_result_bytes=1000), "more than the limit of 1000 bytes")
    result = await run(
        "try:\n    echo(n=5000)\nexcept ToolError as e:\n    r = str(e)\nr", max_result_bytes=1000
    )
    assert result.ok
    assert "more than the limit of 1000 bytes" in result.value


@pytest.mark.anyio
async def test_limits_source_size() -> None:
    result = await run("x = 1\n" * 100, max_source_bytes=100)
    assert result.error is not None
    assert result.error.kind == "rejected"
    assert "more than the limit of 100 bytes" in result.error.message


@pytest.mark.anyio
@pytest.mark.parametrize(
    "handler",
    [
        "except Exception:\n    pass",
        "except:\n    pass",
        "except BaseException:\n    pass",
        "finally:\n    x = 1",
    ],
)
async def test_limits_cannot_be_swallowed(handler: str) -> None:
    source = "for attempt in range(3):\n    try:\n        while True:\n            pass\n    " + (
        handler.replace("\n", "\n    ")
    )
    result = await run(source + "\n'survived'", max_steps=2000)
    _limit(result, "step limit")
    assert result.value is None


@pytest.mark.anyio
async def test_limits_limit_from_tool_quota_cannot_be_caught() -> None:
    result = await run(
        "n = 0\nwhile n < 10:\n    try:\n        echo()\n    except:\n        pass\n    n += 1\nn",
        max_tool_calls=2,
    )
    _limit(result, "tool-call limit")


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
@pytest.mark.parametrize(
    "code",
    ["10**5000", "[1, 10**5000]", "{'a': (10**5000,)}"],
    ids=["int", "list", "nested"],
)
async def test_limits_value_with_an_int_too_long_for_text(isolation: Any, code: str) -> None:
    # the value has no JSON text (Python refuses to
    # convert ints of more than 4300 digits); it used to raise ValueError out of run()
    # in-process and end the worker ("sandbox") under process isolation
    async with Sandbox([], isolation=isolation) as sandbox:
        result = await sandbox.run(code)
        assert result.error is not None
        assert (result.error.kind, result.error.type) == ("runtime", "ValueError")
        assert "int too long to convert to text" in result.error.message
        ok = await sandbox.run("[10**4000, -(10**4000)]")  # within the limit: plain data
        assert ok.ok
        assert ok.value == [10**4000, -(10**4000)]


@pytest.mark.anyio
async def test_limits_straight_line_code_past_the_deadline_is_a_timeout() -> None:
    # No budget check runs between the C operations of straight-line code, so a
    # script of slow ones ends past its deadline; it is reported as the timeout it is
    # (process isolation would have killed it), not as a success.
    line = "t = s.upper()\n"  # milliseconds of C each (big-int divisions now check first)
    code = "s = 'a' * 10_000_000\n" + line * 200 + "1"
    result = await run(code, timeout=0.2)
    assert result.error is not None
    assert (result.error.kind, result.error.type) == ("limit", "LimitExceeded")
    assert result.error.message == "Script timed out after 0.2 s"
    fast = await run("1 + 1", timeout=5.0)
    assert fast.ok


def test_engine_memory_system_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """findings14 A12: a C call's lost MemoryError (a ``SystemError`` "returned NULL without
    setting an exception") is the memory limit only under an address-space limit (a worker:
    the attack suite's f7-deque-one-call in process mode; scripts cannot name SystemError)."""
    import resource

    from scriptgate.sandbox import engine

    lost = SystemError("<class 'collections.deque'> returned NULL without setting an exception")
    assert not engine._lost_memory_error(SystemError("something else"))
    unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    monkeypatch.setattr(resource, "getrlimit", lambda which: unlimited)
    assert not engine._lost_memory_error(lost)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (1 << 30, resource.RLIM_INFINITY))
    assert engine._lost_memory_error(lost)
    assert engine._lost_memory_error(SystemError("error return without exception set"))
