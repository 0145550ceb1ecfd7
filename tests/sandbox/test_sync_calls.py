"""Sync scripts: tool calls from plain code run in a greenlet on the loop's thread."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

OPEN = {"type": "object", "additionalProperties": True}


def _tool(name: str, execute: Any) -> AgentTool:
    return AgentTool(name=name, description=name, parameters=OPEN, execute=execute)


async def _double(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult.text(str(params["n"] * 2))


def _double_sync(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult.text(str(params["n"] * 2))


@pytest.mark.anyio
@pytest.mark.parametrize("execute", [_double, _double_sync])
async def test_sync_calls_from_callbacks_generators_and_nested_functions(execute: Any) -> None:
    source = (
        "def twice(n):\n"
        "    return int(double(n=n))\n"
        "def gen(k):\n"
        "    for i in range(k):\n"
        "        yield twice(i)\n"
        "ordered = sorted([3, 1, 2], key=lambda n: -twice(n))\n"
        "listed = [twice(i) for i in range(3)]\n"
        "mapped = list(map(twice, [5, 6]))\n"
        "[ordered, listed, mapped, list(gen(3))]"
    )
    result = await Sandbox([_tool("double", execute)], limits=Limits(timeout=10)).run(source)
    assert result.ok, result.error
    assert result.value == [[3, 2, 1], [0, 2, 4], [10, 12], [0, 2, 4]]
    assert len(result.calls) == 11
    assert all(call.status == "ok" for call in result.calls)


@pytest.mark.anyio
async def test_sync_calls_of_parallel_runs_interleave_on_one_loop() -> None:
    # Each run's call waits for the other run's call: only possible if a sync
    # script waiting on a tool call leaves the event loop free.
    started = {"a": anyio.Event(), "b": anyio.Event()}

    async def meet(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        started[params["me"]].set()
        await started[params["other"]].wait()
        return AgentToolResult.text(params["me"])

    sandbox = Sandbox([_tool("meet", meet)], limits=Limits(timeout=10))
    values: dict[str, Any] = {}

    async def run(me: str, other: str) -> None:
        result = await sandbox.run(f"meet(me={me!r}, other={other!r}) + '!'")
        assert result.ok, result.error
        values[me] = result.value

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, "a", "b")
        tg.start_soon(run, "b", "a")
    assert values == {"a": "a!", "b": "b!"}


async def _hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")  # pragma: no cover


async def _ok(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult.text("ok")


HANDLERS = (
    "try:\n    hang()\nexcept Exception:\n    ok()\nfinally:\n    ok()\nok()",
    "try:\n    hang()\nexcept:\n    pass\nok()",
    "def f():\n    try:\n        return hang()\n    finally:\n        return ok()\nf()\nok()",
)


@pytest.mark.anyio
@pytest.mark.parametrize("source", HANDLERS)
async def test_sync_calls_deadline_during_a_call_cannot_be_swallowed(source: str) -> None:
    sandbox = Sandbox([_tool("hang", _hang), _tool("ok", _ok)], limits=Limits(timeout=0.2))
    result = await sandbox.run(source)
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert "timed out" in result.error.message
    assert [(c.tool, c.status) for c in result.calls] == [("hang", "cancelled")]


@pytest.mark.anyio
async def test_sync_calls_caller_cancellation_unwinds_the_script() -> None:
    entered = anyio.Event()
    finished: list[str] = []

    async def hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        signal.add_listener(lambda reason: finished.append("tool aborted"))
        entered.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    sandbox = Sandbox([_tool("hang", hang), _tool("ok", _ok)], limits=Limits(timeout=10))
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(sandbox.run, "try:\n    hang()\nfinally:\n    ok()")
            await entered.wait()
            scope.cancel()
    assert scope.cancelled_caught
    assert finished == ["tool aborted"]
    # the loop is healthy and the sandbox still runs scripts
    result = await sandbox.run("ok()")
    assert result.ok, result.error
    assert result.value == "ok"


@pytest.mark.anyio
async def test_sync_calls_script_outliving_the_deadline_in_c_is_a_timeout() -> None:
    # One C call (sum over a charged range) blocks the loop past the deadline; the
    # watchdog cannot run meanwhile, so the end of the run reports the timeout.
    sandbox = Sandbox([_tool("ok", _ok)], limits=Limits(timeout=0.05, max_steps=None))
    result = await sandbox.run("ok()\nsum(range(30_000_000))")
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert "timed out" in result.error.message
    assert [c.status for c in result.calls] == ["ok"]


def test_sync_calls_small_flat_arguments_are_only_provably_small_dicts() -> None:
    from scriptgate.sandbox.bridge import small_flat as _small_flat
    from scriptgate.sandbox.guards.sizes import MAX_RENDER, render_size

    assert _small_flat({"i": 1, "s": "x" * 1000, "f": 1.5, "b": True, "n": None})
    for raw in (
        {f"k{i}": 1 for i in range(17)},
        {"s": "x" * 1001},
        {"x" * 1001: 1},
        {"i": 1 << 63},
        {"l": [1]},
        {"d": {}},
        {1: 1},
    ):
        assert not _small_flat(raw), raw
    worst = {f"{i:x<1000}": "y" * 1000 for i in range(16)}
    assert _small_flat(worst)
    assert render_size(worst) < MAX_RENDER // 100


@pytest.mark.anyio
async def test_sync_calls_busy_script_lets_the_loop_run_an_abort() -> None:
    # The script computes forever after its first call; the abort comes from
    # another task of the same loop, which runs only because the script's budget
    # checks give the loop a turn.
    from scriptgate.runtime.abort import AbortController

    controller = AbortController()
    entered = anyio.Event()

    async def ready(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        entered.set()
        return AgentToolResult.text("go")

    sandbox = Sandbox([_tool("ready", ready)], limits=Limits(timeout=30, max_steps=None))
    box: dict[str, Any] = {}

    async def run() -> None:
        box["result"] = await sandbox.run(
            "ready()\nn = 0\nwhile True:\n    n += 1", signal=controller.signal
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await entered.wait()
        await anyio.lowlevel.checkpoint()
        controller.abort(RuntimeError("user pressed stop"))
    result = box["result"]
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("aborted", "user pressed stop")
