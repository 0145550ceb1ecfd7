"""The caller's own cancel scope always propagates out of ``Sandbox.run``, in both modes.

findings18 L07: in-process, a cancel scope that fired while the script waited on a tool call
came back as an ``aborted`` *result*, so the caller's code after ``await sandbox.run(...)`` went on
inside a cancelled scope (process mode propagated). Structured concurrency: a cancellation of
the caller is never turned into a value, whatever the script is doing when it arrives.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from sandbox_support import MODES

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Isolation, Sandbox

OPEN = {"type": "object", "additionalProperties": True}
ENTERED: list[anyio.Event] = []


async def _hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    ENTERED[-1].set()
    await anyio.sleep_forever()
    raise AssertionError("unreachable")  # pragma: no cover


async def _mark(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    ENTERED[-1].set()
    return AgentToolResult.text("marked")


TOOLS = [
    AgentTool(name="hang", description="hang", parameters=OPEN, execute=_hang),
    AgentTool(name="mark", description="mark", parameters=OPEN, execute=_mark),
]

SCRIPTS = {
    "sync_call_pending": "hang()",
    "await_pending": "x = await hang()\n1",
    "gather_pending": "x = await gather(hang(), hang())\n1",
    "swallowing_loop_around_a_call": (
        "while True:\n    try:\n        hang()\n    except BaseException:\n        pass"
    ),
    "finally_runs_a_tool": "try:\n    hang()\nfinally:\n    mark()",
    "busy_loop_after_a_call": "mark()\nwhile True:\n    pass",
}


@pytest.fixture(scope="module", params=MODES)
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    isolation: Isolation = request.param
    box = Sandbox(TOOLS, isolation=isolation, limits=Limits(timeout=30))
    yield box
    box.close()


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(SCRIPTS))
async def test_caller_cancel_scope_propagates_out_of_run(sandbox: Sandbox, name: str) -> None:
    ENTERED.append(anyio.Event())
    after: list[object] = []
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:

            async def cancel_once_entered() -> None:
                await ENTERED[-1].wait()
                scope.cancel()

            tg.start_soon(cancel_once_entered)
            after.append(await sandbox.run(SCRIPTS[name]))
    assert scope.cancelled_caught
    assert after == []  # run() raised the cancellation, it returned no result
    # the sandbox is healthy afterwards
    result = await sandbox.run("1 + 1")
    assert result.ok, result.error
    assert result.value == 2


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", MODES)
async def test_caller_cancel_of_an_async_busy_loop_propagates_by_the_deadline(
    isolation: Isolation,
) -> None:
    # An async script's coroutine runs on the caller's loop in-process: a busy loop in it
    # gives the loop no turn, so the caller's cancel takes effect when the budget's deadline
    # stops the script; it still propagates (never an `aborted` or `limit` result). Process
    # mode: the loop is free, the cancel is immediate.
    ENTERED.append(anyio.Event())
    after: list[object] = []
    box = Sandbox(TOOLS, isolation=isolation, limits=Limits(timeout=1))
    try:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tg:

                async def cancel_once_entered() -> None:
                    await ENTERED[-1].wait()
                    scope.cancel()

                tg.start_soon(cancel_once_entered)
                after.append(await box.run("await mark()\nwhile True:\n    pass"))
        assert scope.cancelled_caught
        assert after == []
        assert (await box.run("1 + 1")).value == 2
    finally:
        box.close()
