"""A call made from a script and the same call made through ``run_tool_call`` are identical:
same hook calls (order and arguments), same coerced arguments, same result."""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallResult,
    AgentToolResult,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
)
from scriptgate.sandbox.bridge import HostToolBridge
from scriptgate.sandbox.sandbox import Sandbox

SCHEMA = {
    "type": "object",
    "properties": {
        "n": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["n"],
}


def _make() -> tuple[AgentTool, list[Any], Any, Any]:
    seen: list[Any] = []

    def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        seen.append(("execute", params))
        return AgentToolResult(
            content=(TextContent(f"n={params['n']}"),),
            structured_content={"double": params["n"] * 2},
        )

    def before(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
        seen.append(("before", ctx.tool_call.name, ctx.tool_call.arguments, ctx.args))
        if ctx.args["n"] == 13:
            return BeforeToolCallResult(block=True, reason="unlucky")
        return None

    def after(ctx: Any, signal: Any) -> AfterToolCallResult | None:
        seen.append(
            ("after", ctx.tool_call.name, ctx.args, ctx.is_error, ctx.result.structured_content)
        )
        if ctx.args["n"] == 7:
            return AfterToolCallResult(structured_content={"double": "rewritten"})
        return None

    tool = AgentTool(
        name="double",
        description="Double n.",
        parameters=SCHEMA,
        execute=execute,
        output_schema={"type": "object"},
    )
    return tool, seen, before, after


@pytest.mark.anyio
@pytest.mark.parametrize(
    "arguments",
    [{"n": 2}, {"n": "5"}, {"n": 7, "tags": "x"}, {"n": 13}, {"n": "not a number"}, {}],
    ids=["plain", "coerced", "after-rewrite", "blocked", "invalid", "missing"],
)
async def test_parity_script_call_matches_direct_call(arguments: dict[str, Any]) -> None:
    tool, seen_direct, before, after = _make()
    outcome = await run_tool_call(
        ToolCall(id="script/1", name="double", arguments=dict(arguments)),
        tools=[tool],
        before_tool_call=before,
        after_tool_call=after,
    )
    direct = HostToolBridge([tool]).convert("double", outcome)

    tool2, seen_script, before2, after2 = _make()
    sandbox = Sandbox([tool2], before_tool_call=before2, after_tool_call=after2)
    result = await sandbox.run(
        "try:\n    r = ['ok', double(**args)]\nexcept ToolError as e:\n    r = ['error', str(e)]\nr".replace(
            "args", repr(arguments)
        )
    )
    assert result.ok, result.error
    assert seen_script == seen_direct
    if direct.error is None:
        assert result.value == ["ok", direct.value]
    else:
        assert result.value == ["error", direct.error]
    assert result.calls[0].status == direct.status
    assert result.calls[0].arguments == arguments


@pytest.mark.anyio
async def test_parity_hooks_see_the_same_order_for_several_calls() -> None:
    tool, seen_direct, before, after = _make()
    for i, n in enumerate((1, 13, 2)):
        await run_tool_call(
            ToolCall(id=f"script/{i + 1}", name="double", arguments={"n": n}),
            tools=[tool],
            before_tool_call=before,
            after_tool_call=after,
        )
    tool2, seen_script, before2, after2 = _make()
    sandbox = Sandbox([tool2], before_tool_call=before2, after_tool_call=after2)
    result = await sandbox.run(
        "out = []\nfor n in (1, 13, 2):\n    try:\n        out.append(double(n=n))\n"
        "    except ToolDenied as e:\n        out.append(str(e))\nout"
    )
    assert result.value == [{"double": 2}, "unlucky", {"double": 4}]
    assert seen_script == seen_direct
