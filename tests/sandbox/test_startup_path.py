"""The in-process start-up path binds only what a script can reach (issue 14, speed).

A script that names no tool, ``tools`` or ``gather`` runs inline (no task group, no
watchdog; a greenlet that only ever pauses, so the loop still gets a turn every pause
interval); its namespace gets no tool functions either, since no name of the script can
reach them. A script that names one still gets them all.
"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.engine import _Run
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox


def _echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent(str(params["i"])),), structured_content=params)


ECHO = AgentTool(
    name="echo",
    description="Echo i.",
    parameters={"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
    execute=_echo,
    output_schema={"type": "object"},
)


def _namespace(inline: bool) -> dict[str, Any]:
    sandbox = Sandbox([ECHO])
    run = _Run(
        bridge=sandbox._bridge(None),
        tools=sandbox.tool_specs,
        limits=Limits(),
        state=None,
        signal=None,
        call_id_prefix="t",
        is_async=False,
        inline=inline,
    )
    try:
        return dict(run.build_namespace())
    finally:
        run.release()


def test_startup_inline_namespace_binds_no_tools() -> None:
    inline = _namespace(inline=True)
    full = _namespace(inline=False)
    assert {"echo", "tools", "gather"} <= set(full)
    assert not {"echo", "tools", "gather"} & set(inline)
    assert set(inline) == set(full) - {"echo", "tools", "gather"}


def test_startup_scripts_that_name_a_tool_still_reach_it() -> None:
    async def go() -> list[Any]:
        sandbox = Sandbox([ECHO], limits=Limits(timeout=10))
        out = []
        for source in [
            "echo(i=1)['i']",
            "tools.echo(i=2)['i']",
            "f = echo\nf(i=3)['i']",
            "gather(echo(i=4))[0]['i']",
            "x = 1 + 2\nx",
        ]:
            result = await sandbox.run(source)
            assert result.ok, (source, result.error)
            out.append(result.value)
        return out

    assert anyio.run(go) == [1, 2, 3, 4, 3]


def test_startup_bridge_is_built_at_the_first_tool_call_only(monkeypatch: Any) -> None:
    from scriptgate.sandbox import bridge

    built: list[tuple[str, ...]] = []
    real_init = bridge.HostToolBridge.__init__

    def counting_init(self: Any, tools: Any, **options: Any) -> None:
        built.append(tuple(t.name for t in tools))
        real_init(self, tools, **options)

    monkeypatch.setattr(bridge.HostToolBridge, "__init__", counting_init)
    sandbox = Sandbox([ECHO])
    assert anyio.run(sandbox.run, "x = 1 + 2").ok
    assert built == []  # no tool call: no bridge
    result = anyio.run(sandbox.run, "[echo(i=1)['i'], echo(i=2)['i']]")
    assert result.ok, result.error
    assert result.value == [1, 2]
    assert built == [("echo",)]  # one bridge for the run's two calls


def test_startup_bridge_keeps_the_tools_the_run_started_with() -> None:
    other = AgentTool(
        name="echo",
        description="Another echo.",
        parameters=ECHO.parameters,
        execute=lambda *args: AgentToolResult(content=(TextContent("other"),)),
    )
    sandbox = Sandbox([ECHO])

    async def main() -> Any:
        bridge = sandbox._bridge(None)
        sandbox.tools[0] = other  # replaced after the run started, before its first call
        return await bridge.call("c/1", "echo", {"i": 5})

    reply = anyio.run(main)
    assert reply.status == "ok", reply
    assert reply.value == {"i": 5}


@pytest.mark.anyio
async def test_startup_inline_busy_script_yields_to_the_loop_and_is_cancelled() -> None:
    # findings18 L01: a script that names no tool ran without a loop turn, so the caller's
    # cancel scope (and every other task of the host) waited for the whole deadline
    import time

    sandbox = Sandbox(limits=Limits(timeout=20, max_steps=None))
    turns = 0

    async def other_task() -> None:
        nonlocal turns
        while True:
            turns += 1
            await anyio.lowlevel.checkpoint()

    started = time.monotonic()
    async with anyio.create_task_group() as tg:
        tg.start_soon(other_task)
        with anyio.move_on_after(0.3) as scope:
            await sandbox.run("while True:\n    pass")
        tg.cancel_scope.cancel()
    assert scope.cancelled_caught
    assert time.monotonic() - started < 10
    assert turns > 3  # the other task ran while the script was busy


@pytest.mark.anyio
async def test_startup_inline_busy_script_stops_on_an_abort_from_another_task() -> None:
    from scriptgate.runtime.abort import AbortController

    sandbox = Sandbox(limits=Limits(timeout=20, max_steps=None))
    controller = AbortController()

    async def abort_later() -> None:
        for _ in range(5):  # a few loop turns: the script is running by then
            await anyio.lowlevel.checkpoint()
        controller.abort()

    async with anyio.create_task_group() as tg:
        tg.start_soon(abort_later)
        result = await sandbox.run("while True:\n    pass", signal=controller.signal)
    assert result.error is not None
    assert result.error.kind == "aborted", result.error
