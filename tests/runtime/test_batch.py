"""Tool batches (pi §3.5–3.11): ordering, execution modes, terminate, truncation, aborts."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from scriptgate.runtime.abort import AbortController, AbortSignal
from scriptgate.runtime.batch import ToolBatch, execute_tool_calls, length_truncated_text
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentEvent,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallResult,
    MessageEndEvent,
    MessageStartEvent,
    TextContent,
    ToolCall,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolResultMessage,
)

SCHEMA = {
    "type": "object",
    "properties": {"value": {"type": "string"}},
    "required": ["value"],
}


def assistant(*calls: ToolCall, stop_reason: Any = "toolUse") -> AssistantMessage:
    return AssistantMessage(content=calls, stop_reason=stop_reason)


def call(i: int, name: str = "echo", **arguments: Any) -> ToolCall:
    return ToolCall(f"tool-{i}", name, arguments or {"value": str(i)})


class Log:
    """Collects events and free-form marks in one ordered list."""

    def __init__(self) -> None:
        self.items: list[Any] = []

    def emit(self, event: AgentEvent) -> None:
        self.items.append(event)

    def mark(self, text: str) -> None:
        self.items.append(text)

    def events(self) -> list[Any]:
        return [i for i in self.items if not isinstance(i, str)]

    def shape(self) -> list[str]:
        out = []
        for item in self.items:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, (MessageStartEvent, MessageEndEvent)):
                message = item.message
                assert isinstance(message, ToolResultMessage)
                out.append(f"{item.type}:{message.tool_call_id}")
            else:
                out.append(f"{item.type}:{item.tool_call_id}")
        return out

    def ends(self) -> list[ToolExecutionEndEvent]:
        return [e for e in self.items if isinstance(e, ToolExecutionEndEvent)]


def echo_tool(log: Log | None = None, **kwargs: Any) -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        if log is not None:
            log.mark(f"exec:{call_id}")
        return AgentToolResult.text(f"echo {params['value']}")

    return AgentTool(name="echo", parameters=SCHEMA, execute=execute, **kwargs)


def text(result: ToolResultMessage | AgentToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


@pytest.mark.anyio
async def test_batch_emits_end_in_completion_order_but_persists_results_in_source_order() -> None:
    log = Log()
    second_started = anyio.Event()

    async def slow(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await second_started.wait()  # the second call runs while this one is pending
        return AgentToolResult.text("slow")

    async def fast(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        second_started.set()
        return AgentToolResult.text("fast")

    tools = [AgentTool(name="slow", execute=slow), AgentTool(name="fast", execute=fast)]
    with anyio.fail_after(10):
        batch = await execute_tool_calls(
            assistant(ToolCall("tool-1", "slow", {}), ToolCall("tool-2", "fast", {})),
            tools=tools,
            emit=log.emit,
        )
    assert [e.tool_call_id for e in log.ends()] == ["tool-2", "tool-1"]
    assert [m.tool_call_id for m in batch.messages] == ["tool-1", "tool-2"]
    assert log.shape() == [
        "tool_execution_start:tool-1",
        "tool_execution_start:tool-2",
        "tool_execution_end:tool-2",
        "tool_execution_end:tool-1",
        "message_start:tool-1",
        "message_end:tool-1",
        "message_start:tool-2",
        "message_end:tool-2",
    ]


@pytest.mark.anyio
async def test_batch_parallel_preflight_runs_every_before_hook_before_any_execute() -> None:
    log = Log()

    def before(ctx: BeforeToolCallContext, signal: AbortSignal | None) -> None:
        log.mark(f"before:{ctx.tool_call.id}")

    await execute_tool_calls(
        assistant(call(1), call(2), call(3)),
        tools=[echo_tool(log)],
        before_tool_call=before,
        emit=log.emit,
    )
    shape = log.shape()
    assert shape[:6] == [
        "tool_execution_start:tool-1",
        "before:tool-1",
        "tool_execution_start:tool-2",
        "before:tool-2",
        "tool_execution_start:tool-3",
        "before:tool-3",
    ]
    assert sorted(s for s in shape[6:] if s.startswith("exec")) == [
        "exec:tool-1",
        "exec:tool-2",
        "exec:tool-3",
    ]


@pytest.mark.anyio
async def test_batch_parallel_immediate_outcome_ends_during_preflight() -> None:
    log = Log()
    await execute_tool_calls(
        assistant(call(1), call(2, name="missing")), tools=[echo_tool(log)], emit=log.emit
    )
    assert log.shape()[:3] == [
        "tool_execution_start:tool-1",
        "tool_execution_start:tool-2",
        "tool_execution_end:tool-2",
    ]


@pytest.mark.anyio
async def test_batch_sequential_config_finishes_each_call_before_the_next() -> None:
    log = Log()
    batch = await execute_tool_calls(
        assistant(call(1), call(2)), tools=[echo_tool(log)], mode="sequential", emit=log.emit
    )
    assert log.shape() == [
        "tool_execution_start:tool-1",
        "exec:tool-1",
        "tool_execution_end:tool-1",
        "message_start:tool-1",
        "message_end:tool-1",
        "tool_execution_start:tool-2",
        "exec:tool-2",
        "tool_execution_end:tool-2",
        "message_start:tool-2",
        "message_end:tool-2",
    ]
    assert [m.tool_call_id for m in batch.messages] == ["tool-1", "tool-2"]


def overlap_tools(log: Log, slow_mode: Any, fast_mode: Any) -> list[AgentTool]:
    async def slow(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        log.mark("slow start")
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()
        log.mark("slow end")
        return AgentToolResult.text("slow")

    async def fast(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        log.mark("fast start")
        log.mark("fast end")
        return AgentToolResult.text("fast")

    return [
        AgentTool(name="slow", execute=slow, execution_mode=slow_mode),
        AgentTool(name="fast", execute=fast, execution_mode=fast_mode),
    ]


@pytest.mark.anyio
async def test_batch_one_sequential_tool_forces_the_whole_batch_sequential() -> None:
    log = Log()
    batch = await execute_tool_calls(
        assistant(ToolCall("tool-1", "slow", {}), ToolCall("tool-2", "fast", {})),
        tools=overlap_tools(log, "sequential", None),
    )
    assert log.items == ["slow start", "slow end", "fast start", "fast end"]
    assert [m.tool_call_id for m in batch.messages] == ["tool-1", "tool-2"]


@pytest.mark.anyio
async def test_batch_execution_mode_sequential_on_the_second_tool_also_forces_sequential() -> None:
    log = Log()
    await execute_tool_calls(
        assistant(ToolCall("tool-1", "slow", {}), ToolCall("tool-2", "fast", {})),
        tools=overlap_tools(log, None, "sequential"),
    )
    assert log.items == ["slow start", "slow end", "fast start", "fast end"]


@pytest.mark.anyio
async def test_batch_all_parallel_tools_overlap() -> None:
    log = Log()
    await execute_tool_calls(
        assistant(ToolCall("tool-1", "slow", {}), ToolCall("tool-2", "fast", {})),
        tools=overlap_tools(log, "parallel", "parallel"),
    )
    assert log.items.index("fast start") < log.items.index("slow end")


@pytest.mark.anyio
async def test_batch_unknown_tool_does_not_force_anything() -> None:
    log = Log()
    batch = await execute_tool_calls(
        assistant(
            ToolCall("tool-1", "slow", {}),
            ToolCall("tool-2", "fast", {}),
            ToolCall("tool-3", "ghost", {}),
        ),
        tools=overlap_tools(log, None, None),
    )
    assert log.items.index("fast start") < log.items.index("slow end")
    assert text(batch.messages[2]) == "Tool ghost not found"


def terminating_tool(name: str, terminate: bool) -> AgentTool:
    async def execute(*_: Any) -> AgentToolResult:
        return AgentToolResult.text(name, terminate=terminate)

    return AgentTool(name=name, execute=execute)


@pytest.mark.anyio
async def test_batch_terminates_only_when_every_result_sets_terminate() -> None:
    tools = [terminating_tool("stop", True), terminating_tool("go", False)]
    both = await execute_tool_calls(
        assistant(ToolCall("1", "stop", {}), ToolCall("2", "stop", {})), tools=tools
    )
    assert both.terminate is True
    mixed = await execute_tool_calls(
        assistant(ToolCall("1", "stop", {}), ToolCall("2", "go", {})), tools=tools
    )
    assert mixed.terminate is False
    empty = await execute_tool_calls(assistant(), tools=tools)
    assert empty == ToolBatch((), False, ())


@pytest.mark.anyio
async def test_batch_errors_never_carry_terminate() -> None:
    tools = [terminating_tool("stop", True)]
    batch = await execute_tool_calls(
        assistant(ToolCall("1", "stop", {}), ToolCall("2", "ghost", {})), tools=tools
    )
    assert batch.terminate is False


@pytest.mark.anyio
async def test_batch_blocked_call_with_terminate_terminates() -> None:
    executed: list[str] = []

    async def execute(*_: Any) -> AgentToolResult:
        executed.append("x")
        return AgentToolResult.text("x")

    batch = await execute_tool_calls(
        assistant(ToolCall("1", "t", {})),
        tools=[AgentTool(name="t", execute=execute)],
        before_tool_call=lambda ctx, s: BeforeToolCallResult(
            block=True, reason="Blocked by policy", terminate=True
        ),
    )
    assert batch.terminate is True
    assert executed == []
    assert batch.messages[0].is_error is True
    assert text(batch.messages[0]) == "Blocked by policy"


@pytest.mark.anyio
async def test_batch_mixed_batch_with_one_terminating_blocked_call_continues() -> None:
    executed: list[str] = []

    async def execute(call_id: str, *_: Any) -> AgentToolResult:
        executed.append(call_id)
        return AgentToolResult.text("ran")

    def before(ctx: BeforeToolCallContext, signal: Any) -> BeforeToolCallResult | None:
        if ctx.tool_call.id == "first":
            return BeforeToolCallResult(block=True, terminate=True)
        return None

    batch = await execute_tool_calls(
        assistant(ToolCall("first", "t", {}), ToolCall("second", "t", {})),
        tools=[AgentTool(name="t", execute=execute)],
        before_tool_call=before,
    )
    assert executed == ["second"]
    assert batch.terminate is False


@pytest.mark.anyio
async def test_batch_after_hook_can_mark_the_batch_terminating() -> None:
    batch = await execute_tool_calls(
        assistant(call(1), call(2)),
        tools=[echo_tool()],
        after_tool_call=lambda ctx, s: AfterToolCallResult(terminate=True),
    )
    assert batch.terminate is True


@pytest.mark.anyio
async def test_batch_length_truncated_message_never_executes_validates_or_hooks() -> None:
    log = Log()
    hooks: list[str] = []
    batch = await execute_tool_calls(
        assistant(call(1, value={"bad": True}), call(2, name="ghost"), stop_reason="length"),
        tools=[echo_tool(log)],
        before_tool_call=lambda ctx, s: hooks.append("before"),
        after_tool_call=lambda ctx, s: hooks.append("after"),
        emit=log.emit,
    )
    assert hooks == []
    assert log.shape() == [
        "tool_execution_start:tool-1",
        "tool_execution_end:tool-1",
        "tool_execution_start:tool-2",
        "tool_execution_end:tool-2",
        "message_start:tool-1",
        "message_end:tool-1",
        "message_start:tool-2",
        "message_end:tool-2",
    ]
    assert batch.terminate is False
    first = batch.messages[0]
    assert first.is_error is True
    assert first.duration_ms is None
    assert text(first) == (
        'Tool call "echo" was not executed: the response hit the output token limit, so its '
        "arguments may be truncated. Re-issue the tool call with complete arguments."
    )
    assert text(batch.messages[1]) == length_truncated_text("ghost")
    start = log.events()[0]
    assert isinstance(start, ToolExecutionStartEvent)
    assert start.args == {"value": {"bad": True}}


@pytest.mark.anyio
async def test_batch_abort_during_preflight_gives_every_call_operation_aborted() -> None:
    log = Log()
    controller = AbortController()

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        controller.abort()

    batch = await execute_tool_calls(
        assistant(call(1), call(2), call(3)),
        tools=[echo_tool(log)],
        before_tool_call=before,
        signal=controller.signal,
        emit=log.emit,
    )
    assert [text(m) for m in batch.messages] == ["Operation aborted"] * 3
    assert all(m.is_error and m.duration_ms is None for m in batch.messages)
    starts = [e.tool_call_id for e in log.events() if isinstance(e, ToolExecutionStartEvent)]
    ends = [e.tool_call_id for e in log.ends()]
    assert starts == ends == ["tool-1", "tool-2", "tool-3"]
    assert not any(isinstance(i, str) and i.startswith("exec") for i in log.items)


@pytest.mark.anyio
async def test_batch_abort_after_parallel_preflight_finalizes_deferred_calls_without_execute() -> (
    None
):
    log = Log()
    controller = AbortController()
    after_calls: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        if ctx.tool_call.id == "tool-2":
            controller.abort()

    batch = await execute_tool_calls(
        assistant(call(1), call(2), call(3)),
        tools=[echo_tool(log)],
        before_tool_call=before,
        after_tool_call=lambda ctx, s: after_calls.append(ctx.tool_call.id),
        signal=controller.signal,
        emit=log.emit,
    )
    assert [text(m) for m in batch.messages] == ["Operation aborted"] * 3
    assert [o.aborted for o in batch.outcomes] == [True, True, True]
    assert after_calls == []
    assert not any(isinstance(i, str) and i.startswith("exec") for i in log.items)
    assert len(log.ends()) == 3


@pytest.mark.anyio
async def test_batch_sequential_abort_gives_remaining_calls_operation_aborted() -> None:
    controller = AbortController()
    ran: list[str] = []

    async def execute(call_id: str, *_: Any) -> AgentToolResult:
        ran.append(call_id)
        controller.abort()
        return AgentToolResult.text("first ran")

    batch = await execute_tool_calls(
        assistant(ToolCall("1", "t", {}), ToolCall("2", "t", {}), ToolCall("3", "t", {})),
        tools=[AgentTool(name="t", execute=execute)],
        mode="sequential",
        signal=controller.signal,
    )
    assert ran == ["1"]
    assert [text(m) for m in batch.messages] == [
        "first ran",
        "Operation aborted",
        "Operation aborted",
    ]


@pytest.mark.anyio
async def test_batch_after_hook_exception_becomes_error_result_and_batch_continues() -> None:
    def after(ctx: AfterToolCallContext, signal: Any) -> None:
        if ctx.tool_call.id == "tool-1":
            raise RuntimeError("after hook crashed")

    batch = await execute_tool_calls(
        assistant(call(1), call(2)), tools=[echo_tool()], after_tool_call=after, mode="sequential"
    )
    assert batch.messages[0].is_error is True
    assert text(batch.messages[0]) == "after hook crashed"
    assert batch.messages[0].details == {}
    assert batch.messages[0].duration_ms is not None
    assert batch.messages[1].is_error is False
    assert text(batch.messages[1]) == "echo 2"


@pytest.mark.anyio
async def test_batch_update_events_carry_raw_args_and_come_before_end() -> None:
    log = Log()

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(details={"step": 1}))
        return AgentToolResult.text("done")

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    await execute_tool_calls(
        assistant(ToolCall("tool-1", "t", {"n": "5"})),
        tools=[AgentTool(name="t", parameters=schema, execute=execute)],
        emit=log.emit,
    )
    assert log.shape()[:3] == [
        "tool_execution_start:tool-1",
        "tool_execution_update:tool-1",
        "tool_execution_end:tool-1",
    ]
    update = log.events()[1]
    assert isinstance(update, ToolExecutionUpdateEvent)
    assert update.args == {"n": "5"}
    assert update.tool_name == "t"
    assert update.partial_result == AgentToolResult(details={"step": 1})


@pytest.mark.anyio
async def test_batch_async_emit_is_awaited_in_order() -> None:
    seen: list[str] = []

    async def emit(event: AgentEvent) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(event.type)

    await execute_tool_calls(assistant(call(1)), tools=[echo_tool()], emit=emit)
    assert seen == ["tool_execution_start", "tool_execution_end", "message_start", "message_end"]


@pytest.mark.anyio
async def test_batch_result_message_fields_follow_the_transcript_rules() -> None:
    async def execute(*_: Any) -> AgentToolResult:
        return AgentToolResult(
            content=None,  # type: ignore[arg-type]
            details={"d": 1},
            structured_content={"s": 1},
            terminate=True,
        )

    log = Log()
    batch = await execute_tool_calls(
        assistant(ToolCall("1", "t", {})),
        tools=[AgentTool(name="t", execute=execute)],
        emit=log.emit,
    )
    message = batch.messages[0]
    assert message.content == ()
    assert message.details == {"d": 1}
    assert message.is_error is False
    assert message.duration_ms is not None
    assert not hasattr(message, "structured_content")
    end = log.ends()[0]
    assert end.result.structured_content == {"s": 1}
    assert end.result.terminate is True
    assert end.duration_ms == message.duration_ms
    assert batch.outcomes[0].duration_ms == message.duration_ms


@pytest.mark.anyio
async def test_batch_tools_default_to_context_tools() -> None:
    context = AgentContext(tools=[echo_tool()])
    batch = await execute_tool_calls(assistant(call(1)), context=context)
    assert text(batch.messages[0]) == "echo 1"


@pytest.mark.anyio
async def test_batch_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="mode must be"):
        await execute_tool_calls(assistant(call(1)), tools=[], mode="fast")  # type: ignore[arg-type]
