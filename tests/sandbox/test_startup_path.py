"""The in-process start-up path binds only what a script can reach (issue 14, speed).

A script that names no tool, ``tools`` or ``gather`` runs inline (no greenlet, no
task group); its namespace gets no tool functions either, since no name of the
script can reach them. A script that names one still gets them all.
"""

from __future__ import annotations

from typing import Any

import anyio

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
