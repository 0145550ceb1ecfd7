"""run_tool_call (pi §4): the same steps as a model-issued call, no events, never raises."""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate.runtime.abort import AbortController, AbortSignal
from scriptgate.runtime.pipeline import ToolCallOutcome, run_tool_call
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
)

SCHEMA = {
    "type": "object",
    "properties": {"value": {"type": "string"}},
    "required": ["value"],
}


def make_echo() -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(
            content=(TextContent(f"echo {params['value']}"),),
            details={"value": params["value"]},
            structured_content={"value": params["value"]},
        )

    return AgentTool(
        name="echo",
        description="Echo a value",
        parameters=SCHEMA,
        output_schema={"type": "object", "properties": {"value": {"type": "string"}}},
        execute=execute,
    )


def make_failing() -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(content=(TextContent("partial"),), details={}))
        return AgentToolResult(
            content=(TextContent("it failed"),), details={"partial": True}, is_error=True
        )

    return AgentTool(name="failing", parameters=SCHEMA, execute=execute)


def texts(outcome: ToolCallOutcome) -> str:
    return outcome.result.text_content()


@pytest.mark.anyio
async def test_run_tool_call_validates_runs_hooks_and_reports_failures_as_error_outcomes() -> None:
    tools = [make_echo(), make_failing()]
    order: list[str] = []
    updates: list[AgentToolResult] = []

    def before(ctx: BeforeToolCallContext, signal: AbortSignal | None) -> Any:
        order.append(f"before {ctx.tool_call.id}")
        if ctx.args.get("value") == "blocked":
            return BeforeToolCallResult(block=True, reason="nope")
        return None

    async def after(ctx: AfterToolCallContext, signal: AbortSignal | None) -> None:
        order.append(f"after {ctx.tool_call.id}")

    async def run(call: ToolCall) -> ToolCallOutcome:
        return await run_tool_call(
            call,
            tools=tools,
            before_tool_call=before,
            after_tool_call=after,
            on_update=updates.append,
        )

    a = await run(ToolCall("a", "echo", {"value": "a"}))
    assert a.is_error is False
    assert a.result.structured_content == {"value": "a"}
    assert texts(a) == "echo a"

    b = await run(ToolCall("b", "echo", {"value": {"nested": True}}))
    assert b.is_error is True
    assert texts(b).startswith(
        'Validation failed for tool "echo":\n  - value: expected string, got object'
    )
    assert b.duration_ms is None

    c = await run(ToolCall("c", "echo", {"value": "blocked"}))
    assert c.is_error is True
    assert texts(c) == "nope"
    assert c.blocked is True
    assert c.duration_ms is None

    d = await run(ToolCall("d", "missing", {}))
    assert d.is_error is True
    assert texts(d) == "Tool missing not found"
    assert d.result.details == {}

    e = await run(ToolCall("e", "failing", {"value": "x"}))
    assert e.is_error is True
    assert e.result.details == {"partial": True}
    assert texts(e) == "it failed"

    assert updates == [AgentToolResult(content=(TextContent("partial"),), details={})]
    assert order == ["before a", "after a", "before c", "before e", "after e"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (AfterToolCallResult(content=(TextContent("replaced"),)), None),
        (AfterToolCallResult(structured_content={"x": 1}), {"x": 1}),
        (AfterToolCallResult(content=(TextContent("r"),), structured_content={"y": 2}), {"y": 2}),
        (AfterToolCallResult(details={"d": 1}), {"value": "v"}),
    ],
    ids=["content-drops", "structured-replaces", "both-keeps-new", "details-keeps-original"],
)
async def test_run_tool_call_after_hook_replaces_structured_content_and_drops_it_for_content_only(
    override: AfterToolCallResult, expected: Any
) -> None:
    def after(ctx: AfterToolCallContext, signal: AbortSignal | None) -> AfterToolCallResult:
        return override

    outcome = await run_tool_call(
        ToolCall("1", "echo", {"value": "v"}), tools=[make_echo()], after_tool_call=after
    )
    assert outcome.result.structured_content == expected
    assert outcome.is_error is False


@pytest.mark.anyio
async def test_run_tool_call_outcome_has_duration_for_ran_call_and_none_for_missing_tool() -> None:
    ran = await run_tool_call(ToolCall("1", "echo", {"value": "v"}), tools=[make_echo()])
    assert isinstance(ran.duration_ms, int)
    assert ran.duration_ms >= 0
    missing = await run_tool_call(ToolCall("2", "nope", {}), tools=[make_echo()])
    assert missing.duration_ms is None


@pytest.mark.anyio
async def test_run_tool_call_aborted_signal_checked_before_lookup_and_hooks() -> None:
    calls: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: AbortSignal | None) -> None:
        calls.append("before")

    outcome = await run_tool_call(
        ToolCall("1", "missing", {}),
        tools=[make_echo()],
        before_tool_call=before,
        signal=AbortController.aborted_signal(),
    )
    assert outcome.is_error is True
    assert outcome.aborted is True
    assert texts(outcome) == "Operation aborted"
    assert calls == []


@pytest.mark.anyio
async def test_run_tool_call_returns_original_tool_call() -> None:
    tool = make_echo()
    tool.prepare_arguments = lambda raw: {"value": raw.get("legacy", "")}
    call = ToolCall("1", "echo", {"legacy": "old"})
    outcome = await run_tool_call(call, tools=[tool])
    assert outcome.tool_call is call
    assert texts(outcome) == "echo old"


@pytest.mark.anyio
async def test_run_tool_call_tool_exception_is_error_outcome_with_duration() -> None:
    async def execute(*_: Any) -> AgentToolResult:
        raise RuntimeError("kaboom")

    tool = AgentTool(name="boom", execute=execute)
    outcome = await run_tool_call(ToolCall("1", "boom", {}), tools=[tool])
    assert outcome.is_error is True
    assert texts(outcome) == "kaboom"
    assert outcome.result.details == {}
    assert outcome.duration_ms is not None


@pytest.mark.anyio
async def test_run_tool_call_before_hook_exception_is_error_outcome() -> None:
    def before(ctx: BeforeToolCallContext, signal: AbortSignal | None) -> None:
        raise PermissionError("policy says no")

    outcome = await run_tool_call(
        ToolCall("1", "echo", {"value": "v"}), tools=[make_echo()], before_tool_call=before
    )
    assert outcome.is_error is True
    assert texts(outcome) == "policy says no"
    assert outcome.duration_ms is None
    assert outcome.blocked is False


@pytest.mark.anyio
async def test_run_tool_call_after_hook_exception_is_error_outcome_keeping_duration() -> None:
    async def after(ctx: AfterToolCallContext, signal: AbortSignal | None) -> None:
        raise ValueError("after broke")

    outcome = await run_tool_call(
        ToolCall("1", "echo", {"value": "v"}), tools=[make_echo()], after_tool_call=after
    )
    assert outcome.is_error is True
    assert texts(outcome) == "after broke"
    assert outcome.result.details == {}
    assert outcome.duration_ms is not None


@pytest.mark.anyio
async def test_run_tool_call_accepts_a_name_mapping_of_tools() -> None:
    echo = make_echo()
    outcome = await run_tool_call(ToolCall("1", "echo", {"value": "m"}), tools={"echo": echo})
    assert texts(outcome) == "echo m"


@pytest.mark.anyio
async def test_run_tool_call_arguments_error_never_executes() -> None:
    ran: list[str] = []

    async def execute(*_: Any) -> AgentToolResult:
        ran.append("x")
        return AgentToolResult.text("x")

    tool = AgentTool(name="echo", parameters=SCHEMA, execute=execute)
    call = ToolCall("1", "echo", {}, arguments_error="Unexpected end of JSON input")
    outcome = await run_tool_call(call, tools=[tool])
    assert outcome.is_error is True
    assert texts(outcome) == 'Invalid arguments for tool "echo": Unexpected end of JSON input'
    assert ran == []
