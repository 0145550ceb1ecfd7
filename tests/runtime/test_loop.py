"""The agent loop (pi §3.1, §3.6, §3.9, §6.3; checklist §8.1)."""

from __future__ import annotations

import types
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

import anyio
import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime import loop as loop_module
from scriptgate.runtime import pipeline
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.loop import (
    AgentLoopConfig,
    FinishTurnContext,
    FinishTurnResult,
    ModelContext,
    NextTurn,
    NextTurnContext,
    PreparedRequest,
    RequestContext,
    StreamOptions,
    agent_loop,
    agent_loop_continue,
    run_agent_loop,
    run_agent_loop_continue,
    set_default_stream_fn,
)
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentEndEvent,
    AgentEvent,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallResult,
    MessageEndEvent,
    SystemMessage,
    TextContent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolResultMessage,
    TurnEndEvent,
    Usage,
    UserMessage,
)
from scriptgate.runtime.wire import to_wire
from scriptgate.testing import FakeModel, assistant_text, assistant_with_tool_calls

SCHEMA = {
    "type": "object",
    "properties": {"value": {"type": "string"}},
    "required": ["value"],
}


def echo_tool(executed: list[Any] | None = None, name: str = "echo", **kwargs: Any) -> AgentTool:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        if executed is not None:
            executed.append(params["value"] if isinstance(params, dict) else params)
        return AgentToolResult.text(f"echo {params['value']}", details={"value": params["value"]})

    return AgentTool(name=name, parameters=SCHEMA, execute=execute, **kwargs)


async def collect(stream: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    return [event async for event in stream]


def types_of(events: list[AgentEvent]) -> list[str]:
    return [e.type for e in events]


def roles(messages: Any) -> list[str]:
    return [m.role for m in messages]


def final_messages(events: list[AgentEvent]) -> list[Any]:
    end = events[-1]
    assert isinstance(end, AgentEndEvent)
    return list(end.messages)


def text_of(message: Any) -> str:
    return "\n".join(b.text for b in message.content if isinstance(b, TextContent))


def prompt(text: str = "hi") -> UserMessage:
    return UserMessage(text, timestamp=1)


# ----------------------------------------------------------------------------- basics


@pytest.mark.anyio
async def test_loop_uses_the_configured_default_when_stream_fn_is_omitted() -> None:
    model = FakeModel([assistant_text("hello")])
    set_default_stream_fn(model)
    try:
        events = await collect(agent_loop([prompt()], AgentContext(), AgentLoopConfig()))
    finally:
        set_default_stream_fn(None)
    assert model.calls == 1
    assert types_of(events)[-1] == "agent_end"


@pytest.mark.anyio
async def test_loop_without_any_stream_fn_raises_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="stream_fn is not set"):
        await collect(agent_loop([prompt()], AgentContext(), AgentLoopConfig()))


@pytest.mark.anyio
async def test_loop_emits_events_with_agent_message_types() -> None:
    model = FakeModel([assistant_text("hello")])
    events = await collect(agent_loop([prompt()], AgentContext(), AgentLoopConfig(stream_fn=model)))
    assert roles(final_messages(events)) == ["user", "assistant"]
    assert types_of(events) == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]


@pytest.mark.anyio
async def test_loop_builds_provider_context_exclusively_from_transcript_messages() -> None:
    model = FakeModel([assistant_text("hello")])
    system = SystemMessage("You are terse.", timestamp=0)
    context = AgentContext(messages=[system])
    await collect(agent_loop([prompt()], context, AgentLoopConfig(model="m-1", stream_fn=model)))
    sent = model.contexts[0]
    assert isinstance(sent, ModelContext)
    assert [f for f in sent.__dataclass_fields__] == ["messages", "system_prompt", "tools"]
    assert sent.messages[0] is system
    assert sent.system_prompt is None
    assert sent.tools == ()
    assert model.models == ["m-1"]
    assert context.messages == [system]  # the caller's context is not mutated


@pytest.mark.anyio
async def test_loop_handles_custom_message_types_via_convert_to_llm() -> None:
    notification = types.SimpleNamespace(role="notification", text="build done")
    model = FakeModel([assistant_text("ok")])
    converted: list[Any] = []

    def convert(messages: list[Any]) -> list[Any]:
        kept = [m for m in messages if getattr(m, "role", None) != "notification"]
        converted.extend(kept)
        return kept

    context = AgentContext(messages=[notification])  # type: ignore[list-item]
    await collect(
        agent_loop([prompt()], context, AgentLoopConfig(stream_fn=model, convert_to_llm=convert))
    )
    assert roles(converted) == ["user"]
    assert roles(model.contexts[0].messages) == ["user"]


@pytest.mark.anyio
async def test_loop_applies_transform_context_before_convert_to_llm() -> None:
    model = FakeModel([assistant_text("ok")])
    received: list[int] = []

    async def transform(messages: list[Any], signal: Any) -> list[Any]:
        return messages[-2:]

    def convert(messages: list[Any]) -> list[Any]:
        received.append(len(messages))
        return messages

    history = [prompt("one"), assistant_text("two"), prompt("three")]
    await collect(
        agent_loop(
            [prompt("four")],
            AgentContext(messages=list(history)),
            AgentLoopConfig(stream_fn=model, transform_context=transform, convert_to_llm=convert),
        )
    )
    assert received == [2]
    assert [
        text_of(m) if not isinstance(m.content, str) else m.content
        for m in model.contexts[0].messages
    ] == ["three", "four"]


# ----------------------------------------------------------------------------- tools


@pytest.mark.anyio
async def test_loop_handles_tool_calls_and_results() -> None:
    executed: list[Any] = []
    tool_usage = Usage(input=5, output=6, total_tokens=11)
    patched = Usage(input=1, output=1, total_tokens=2)
    seen_usage: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        executed.append(params["value"])
        return AgentToolResult.text("echoed", usage=tool_usage)

    def after(ctx: AfterToolCallContext, signal: Any) -> AfterToolCallResult:
        seen_usage.append(ctx.result.usage)
        return AfterToolCallResult(usage=patched)

    tool = AgentTool(name="echo", parameters=SCHEMA, execute=execute)
    model = FakeModel(
        [assistant_with_tool_calls(("t1", "echo", {"value": "hello"})), assistant_text("done")]
    )
    events = await collect(
        agent_loop(
            [prompt()],
            AgentContext(tools=[tool]),
            AgentLoopConfig(stream_fn=model, after_tool_call=after),
        )
    )
    assert executed == ["hello"]
    assert "tool_execution_start" in types_of(events)
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert len(ends) == 1
    assert ends[0].is_error is False
    assert seen_usage == [tool_usage]
    result = next(m for m in final_messages(events) if isinstance(m, ToolResultMessage))
    assert result.usage == patched


@pytest.mark.anyio
async def test_loop_does_not_execute_tool_calls_from_a_length_truncated_message() -> None:
    executed: list[Any] = []
    model = FakeModel(
        [
            assistant_with_tool_calls(("t1", "echo", {"value": "x"}), stop_reason="length"),
            assistant_text("retry later"),
        ]
    )
    events = await collect(
        agent_loop(
            [prompt()], AgentContext(tools=[echo_tool(executed)]), AgentLoopConfig(stream_fn=model)
        )
    )
    assert executed == []
    end = next(e for e in events if isinstance(e, ToolExecutionEndEvent))
    assert end.is_error is True
    assert "output token limit" in text_of(end.result)
    assert model.calls == 2
    assert final_messages(events)[-1].role == "assistant"


class FakeClock:
    def __init__(self) -> None:
        self.now = 0

    def advance_ms(self, ms: float) -> None:
        self.now += round(ms * 1_000_000)

    def perf_counter_ns(self) -> int:
        return self.now


@pytest.mark.anyio
async def test_loop_records_how_long_execute_took_excluding_hooks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(
        pipeline, "time", types.SimpleNamespace(perf_counter_ns=clock.perf_counter_ns)
    )

    async def execute(*_: Any) -> AgentToolResult:
        clock.advance_ms(30)
        return AgentToolResult.text("slow")

    async def before(ctx: BeforeToolCallContext, signal: Any) -> BeforeToolCallResult | None:
        clock.advance_ms(100)
        if ctx.tool_call.id == "blocked":
            return BeforeToolCallResult(block=True)
        return None

    tool = AgentTool(name="slow", execute=execute)
    model = FakeModel(
        [
            assistant_with_tool_calls(("ran", "slow", {}), ("blocked", "slow", {})),
            assistant_text("done"),
        ]
    )
    events = await collect(
        agent_loop(
            [prompt()],
            AgentContext(tools=[tool]),
            AgentLoopConfig(stream_fn=model, before_tool_call=before),
        )
    )
    results = {
        m.tool_call_id: m for m in final_messages(events) if isinstance(m, ToolResultMessage)
    }
    ends = {e.tool_call_id: e for e in events if isinstance(e, ToolExecutionEndEvent)}
    assert results["ran"].duration_ms == 30
    assert ends["ran"].duration_ms == 30
    assert results["blocked"].is_error is True
    assert "durationMs" not in to_wire(results["blocked"])
    assert "durationMs" not in to_wire(ends["blocked"])
    wire = to_wire(results["ran"])
    keys = list(wire)
    assert keys.index("durationMs") == keys.index("isError") + 1
    assert keys.index("timestamp") == keys.index("durationMs") + 1


@pytest.mark.anyio
async def test_loop_executes_mutated_before_tool_call_args_without_revalidation() -> None:
    executed: list[Any] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        ctx.args["value"] = 123

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        executed.append(params["value"])
        return AgentToolResult.text("ok")

    tool = AgentTool(name="echo", parameters=SCHEMA, execute=execute)
    model = FakeModel(
        [assistant_with_tool_calls(("t", "echo", {"value": "hello"})), assistant_text("done")]
    )
    await collect(
        agent_loop(
            [prompt()],
            AgentContext(tools=[tool]),
            AgentLoopConfig(stream_fn=model, before_tool_call=before),
        )
    )
    assert executed == [123]


@pytest.mark.anyio
async def test_loop_prepares_tool_arguments_for_validation() -> None:
    schema = {
        "type": "object",
        "properties": {"edits": {"type": "array", "items": {"type": "object"}}},
        "required": ["edits"],
    }
    executed: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        executed.append(params["edits"])
        return AgentToolResult.text("edited")

    def shim(raw: dict[str, Any]) -> Any:
        if "oldText" in raw:
            return {"edits": [{"oldText": raw["oldText"], "newText": raw["newText"]}]}
        return raw

    tool = AgentTool(name="edit", parameters=schema, execute=execute, prepare_arguments=shim)
    model = FakeModel(
        [
            assistant_with_tool_calls(("t", "edit", {"oldText": "before", "newText": "after"})),
            assistant_text("done"),
        ]
    )
    events = await collect(
        agent_loop([prompt()], AgentContext(tools=[tool]), AgentLoopConfig(stream_fn=model))
    )
    assert executed == [[{"oldText": "before", "newText": "after"}]]
    start = next(e for e in events if isinstance(e, ToolExecutionStartEvent))
    assert start.args == {"oldText": "before", "newText": "after"}


@pytest.mark.anyio
async def test_loop_emits_end_in_completion_order_but_persists_results_in_source_order() -> None:
    second_started = anyio.Event()

    async def first(*_: Any) -> AgentToolResult:
        await second_started.wait()
        return AgentToolResult.text("first")

    async def second(*_: Any) -> AgentToolResult:
        second_started.set()
        return AgentToolResult.text("second")

    tools = [AgentTool(name="first", execute=first), AgentTool(name="second", execute=second)]
    model = FakeModel(
        [
            assistant_with_tool_calls(("tool-1", "first", {}), ("tool-2", "second", {})),
            assistant_text("done"),
        ]
    )
    with anyio.fail_after(10):
        events = await collect(
            agent_loop([prompt()], AgentContext(tools=tools), AgentLoopConfig(stream_fn=model))
        )
    assert [e.tool_call_id for e in events if isinstance(e, ToolExecutionEndEvent)] == [
        "tool-2",
        "tool-1",
    ]
    persisted = [
        e.message.tool_call_id
        for e in events
        if isinstance(e, MessageEndEvent) and isinstance(e.message, ToolResultMessage)
    ]
    assert persisted == ["tool-1", "tool-2"]
    turn_end = next(e for e in events if isinstance(e, TurnEndEvent))
    assert [m.tool_call_id for m in turn_end.tool_results] == ["tool-1", "tool-2"]


@pytest.mark.anyio
async def test_loop_injects_queued_messages_after_all_tool_calls_complete() -> None:
    executed: list[Any] = []
    queue: list[Any] = []
    steering = UserMessage("steer!", timestamp=2)

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        executed.append(call_id)
        if call_id == "tool-1":
            queue.append(steering)
        return AgentToolResult.text("ok")

    def poll() -> list[Any]:
        out = list(queue)
        queue.clear()
        return out

    tool = AgentTool(name="t", execute=execute)
    model = FakeModel(
        [
            assistant_with_tool_calls(("tool-1", "t", {}), ("tool-2", "t", {})),
            assistant_text("done"),
        ]
    )
    events = await collect(
        agent_loop(
            [prompt()],
            AgentContext(tools=[tool]),
            AgentLoopConfig(
                stream_fn=model, tool_execution="sequential", get_steering_messages=poll
            ),
        )
    )
    assert executed == ["tool-1", "tool-2"]
    ends = [e for e in events if isinstance(e, ToolExecutionEndEvent)]
    assert [e.is_error for e in ends] == [False, False]
    messages = final_messages(events)
    index = messages.index(steering)
    assert roles(messages[index - 2 : index]) == ["toolResult", "toolResult"]
    assert steering in model.contexts[1].messages


def mode_tools(log: list[str], slow_mode: Any, fast_mode: Any) -> list[AgentTool]:
    async def slow(*_: Any) -> AgentToolResult:
        log.append("slow start")
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()
        log.append("slow end")
        return AgentToolResult.text("slow")

    async def fast(*_: Any) -> AgentToolResult:
        log.append("fast start")
        return AgentToolResult.text("fast")

    return [
        AgentTool(name="slow", execute=slow, execution_mode=slow_mode),
        AgentTool(name="fast", execute=fast, execution_mode=fast_mode),
    ]


async def run_modes(slow_mode: Any, fast_mode: Any) -> tuple[list[str], list[AgentEvent]]:
    log: list[str] = []
    model = FakeModel(
        [
            assistant_with_tool_calls(("tool-1", "slow", {}), ("tool-2", "fast", {})),
            assistant_text("done"),
        ]
    )
    events = await collect(
        agent_loop(
            [prompt()],
            AgentContext(tools=mode_tools(log, slow_mode, fast_mode)),
            AgentLoopConfig(stream_fn=model),
        )
    )
    return log, events


@pytest.mark.anyio
async def test_loop_forces_sequential_execution_when_a_tool_has_execution_mode_sequential() -> None:
    log, events = await run_modes("sequential", "sequential")
    assert log == ["slow start", "slow end", "fast start"]
    results = [m.tool_call_id for m in final_messages(events) if isinstance(m, ToolResultMessage)]
    assert results == ["tool-1", "tool-2"]


@pytest.mark.anyio
async def test_loop_forces_sequential_execution_when_one_of_multiple_tools_is_sequential() -> None:
    log, _ = await run_modes("sequential", None)
    assert log == ["slow start", "slow end", "fast start"]


@pytest.mark.anyio
async def test_loop_allows_parallel_execution_when_all_tools_are_parallel() -> None:
    log, _ = await run_modes("parallel", "parallel")
    assert log.index("fast start") < log.index("slow end")


# ----------------------------------------------------------------------------- finish_turn


@pytest.mark.anyio
async def test_loop_runs_finish_turn_after_tool_result_messages_and_before_turn_end() -> None:
    order: list[str] = []
    seen: list[FinishTurnContext] = []

    def emit_marker(event: AgentEvent) -> None:
        if isinstance(event, MessageEndEvent):
            order.append(f"message_end:{event.message.role}")
        elif event.type == "turn_end":
            order.append("turn_end")

    def finish(ctx: FinishTurnContext) -> None:
        seen.append(ctx)
        order.append("finishTurn")

    model = FakeModel([assistant_with_tool_calls(("t", "echo", {"value": "x"}))])
    await run_agent_loop(
        [prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(
            stream_fn=model,
            finish_turn=lambda ctx: (finish(ctx), FinishTurnResult("end"))[1],
        ),
        emit_marker,
    )
    assert order[-3:] == ["message_end:toolResult", "finishTurn", "turn_end"]
    assert len(seen[0].tool_results) == 1
    assert seen[0].context.messages[-1].role == "toolResult"


class Counters:
    def __init__(
        self, steering: list[list[Any]] | None = None, follow_ups: list[list[Any]] | None = None
    ) -> None:
        self.steering_polls = 0
        self.follow_up_polls = 0
        self.finish_calls = 0
        self.next_turn_calls = 0
        self._steering = steering or []
        self._follow_ups = follow_ups or []

    def steering(self) -> list[Any]:
        self.steering_polls += 1
        return self._steering.pop(0) if self._steering else []

    def follow_up(self) -> list[Any]:
        self.follow_up_polls += 1
        return self._follow_ups.pop(0) if self._follow_ups else []


@pytest.mark.anyio
@pytest.mark.parametrize("stop_reason", ["error", "aborted"])
async def test_loop_runs_finish_turn_for_a_failed_assistant_without_changing_the_hard_exit(
    stop_reason: Any,
) -> None:
    counters = Counters()
    order: list[str] = []

    def finish(ctx: FinishTurnContext) -> FinishTurnResult:
        order.append("finishTurn")
        return FinishTurnResult("continue")

    model = FakeModel([assistant_text("", stop_reason=stop_reason), assistant_text("never")])
    await run_agent_loop(
        [prompt()],
        AgentContext(),
        AgentLoopConfig(
            stream_fn=model,
            finish_turn=finish,
            get_steering_messages=counters.steering,
            get_follow_up_messages=counters.follow_up,
        ),
        lambda e: order.append(e.type) if e.type == "turn_end" else None,
    )
    assert order == ["finishTurn", "turn_end"]
    assert model.calls == 1
    assert counters.steering_polls == 1
    assert counters.follow_up_polls == 0


@pytest.mark.anyio
async def test_loop_action_end_skips_queue_polling_and_next_turn_preparation() -> None:
    counters = Counters(steering=[[], [prompt("steer")]])
    prepared: list[Any] = []
    model = FakeModel(
        [assistant_with_tool_calls(("t", "echo", {"value": "x"})), assistant_text("never")]
    )
    await run_agent_loop(
        [prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(
            stream_fn=model,
            finish_turn=lambda ctx: FinishTurnResult("end"),
            get_steering_messages=counters.steering,
            get_follow_up_messages=counters.follow_up,
            prepare_next_turn=lambda ctx: prepared.append(ctx),
        ),
        lambda e: None,
    )
    assert model.calls == 1
    assert counters.steering_polls == 1
    assert counters.follow_up_polls == 0
    assert prepared == []


@pytest.mark.anyio
async def test_loop_action_end_receives_finalized_turn_context_and_exact_event_sequence() -> None:
    captured: list[FinishTurnContext] = []

    def finish(ctx: FinishTurnContext) -> FinishTurnResult:
        captured.append(ctx)
        return FinishTurnResult("end")

    model = FakeModel([assistant_with_tool_calls(("t", "echo", {"value": "x"}))])
    events = await collect(
        agent_loop(
            [prompt()],
            AgentContext(tools=[echo_tool()]),
            AgentLoopConfig(stream_fn=model, finish_turn=finish),
        )
    )
    assert types_of(events) == [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "message_start",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "agent_end",
    ]
    assert roles(captured[0].context.messages) == ["system", "user", "assistant", "toolResult"]
    assert roles(final_messages(events)) == ["system", "user", "assistant", "toolResult"]


def continue_once() -> Any:
    calls: list[int] = []

    def finish(ctx: FinishTurnContext) -> FinishTurnResult | None:
        calls.append(1)
        return FinishTurnResult("continue") if len(calls) == 1 else None

    return finish, calls


@pytest.mark.anyio
async def test_loop_makes_exactly_one_context_only_request_when_no_natural_request_continues() -> (
    None
):
    finish, calls = continue_once()
    model = FakeModel([assistant_text("first"), assistant_text("second")])
    await run_agent_loop(
        [prompt()],
        AgentContext(),
        AgentLoopConfig(stream_fn=model, finish_turn=finish),
        lambda e: None,
    )
    assert model.calls == 2
    assert len(calls) == 2
    assert len(model.contexts[1].messages) == len(model.contexts[0].messages) + 1


@pytest.mark.anyio
async def test_loop_lets_a_natural_tool_result_request_satisfy_continuation() -> None:
    finish, calls = continue_once()
    model = FakeModel(
        [assistant_with_tool_calls(("t", "echo", {"value": "x"})), assistant_text("done")]
    )
    await run_agent_loop(
        [prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(stream_fn=model, finish_turn=finish),
        lambda e: None,
    )
    assert model.calls == 2
    assert len(calls) == 2


@pytest.mark.anyio
@pytest.mark.parametrize("queue", ["steering", "follow_up"])
async def test_loop_lets_a_natural_queued_request_satisfy_continuation(queue: str) -> None:
    finish, calls = continue_once()
    queued = UserMessage("queued text", timestamp=3)
    counters = Counters(
        steering=[[], [queued]] if queue == "steering" else None,
        follow_ups=[[queued]] if queue == "follow_up" else None,
    )
    model = FakeModel([assistant_text("first"), assistant_text("second")])
    await run_agent_loop(
        [prompt()],
        AgentContext(),
        AgentLoopConfig(
            stream_fn=model,
            finish_turn=finish,
            get_steering_messages=counters.steering,
            get_follow_up_messages=counters.follow_up,
        ),
        lambda e: None,
    )
    assert model.calls == 2
    assert len(calls) == 2
    assert queued in model.contexts[1].messages
    assert queued not in model.contexts[0].messages


# ----------------------------------------------------------------------------- prepare_next_turn


@pytest.mark.anyio
async def test_loop_uses_prepare_next_turn_snapshot_before_continuing() -> None:
    injected = SystemMessage("Remember: be brief.", timestamp=9)
    calls: list[NextTurnContext] = []

    def prepare(ctx: NextTurnContext) -> NextTurn:
        calls.append(ctx)
        return NextTurn(messages=[injected])

    model = FakeModel(
        [assistant_with_tool_calls(("t", "echo", {"value": "x"})), assistant_text("done")]
    )
    await run_agent_loop(
        [prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(stream_fn=model, prepare_next_turn=prepare),
        lambda e: None,
    )
    assert injected in model.contexts[1].messages
    assert len(calls) == 1


@pytest.mark.anyio
async def test_loop_picks_up_steering_queued_during_prepare_next_turn() -> None:
    queue: list[Any] = []
    steering = UserMessage("from prepare", timestamp=4)

    def prepare(ctx: NextTurnContext) -> None:
        queue.append(steering)

    def poll() -> list[Any]:
        out = list(queue)
        queue.clear()
        return out

    model = FakeModel(
        [assistant_with_tool_calls(("t", "echo", {"value": "x"})), assistant_text("done")]
    )
    await run_agent_loop(
        [prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(stream_fn=model, prepare_next_turn=prepare, get_steering_messages=poll),
        lambda e: None,
    )
    assert steering in model.contexts[1].messages


@pytest.mark.anyio
async def test_loop_context_update_replaces_executable_tools() -> None:
    def prepare(ctx: NextTurnContext) -> NextTurn:
        return NextTurn(context=AgentContext(messages=list(ctx.context.messages), tools=[]))

    model = FakeModel(
        [
            assistant_with_tool_calls(("t1", "echo", {"value": "x"})),
            assistant_with_tool_calls(("t2", "echo", {"value": "y"})),
            assistant_text("done"),
        ]
    )
    messages = await run_agent_loop(
        [prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(stream_fn=model, prepare_next_turn=prepare),
        lambda e: None,
    )
    results = [m for m in messages if isinstance(m, ToolResultMessage)]
    assert [r.is_error for r in results] == [False, True]
    assert text_of(results[1]) == "Tool echo not found"
    # the removal was declared before the second request
    removal = [m for m in messages if isinstance(m, SystemMessage) and m.tools_removed]
    assert [r.name for r in removal[0].tools_removed or ()] == ["echo"]


@pytest.mark.anyio
async def test_loop_prepares_the_initial_request_after_pending_messages_and_can_replace_state() -> (
    None
):
    order: list[str] = []
    steering = UserMessage("steer first", timestamp=2)
    replacement_system = SystemMessage("replaced", timestamp=0)
    calls: list[RequestContext] = []
    counters = Counters(steering=[[steering]])

    def prepare(ctx: RequestContext) -> PreparedRequest:
        calls.append(ctx)
        order.append("prepareRequest")
        return PreparedRequest(
            context=AgentContext(messages=[replacement_system, *ctx.context.messages]),
            model="other-model",
            thinking="high",
        )

    def emit(event: AgentEvent) -> None:
        if isinstance(event, MessageEndEvent):
            order.append(f"message_end:{event.message.role}")

    model = FakeModel([assistant_text("ok")])
    await run_agent_loop(
        [prompt()],
        AgentContext(),
        AgentLoopConfig(
            model="m",
            stream_fn=model,
            prepare_request=prepare,
            get_steering_messages=counters.steering,
        ),
        emit,
    )
    assert order[:3] == ["message_end:user", "message_end:user", "prepareRequest"]
    assert calls[0].context.messages[-1] is steering
    assert len(calls) == 1
    assert model.contexts[0].messages[0] is replacement_system
    assert model.models == ["other-model"]
    options = model.options[0]
    assert options is not None
    assert options.thinking == "high"


@pytest.mark.anyio
async def test_loop_does_not_poll_steering_after_prepare_request() -> None:
    queued = UserMessage("queued inside prepareRequest", timestamp=2)
    queue: list[Any] = []
    polls: list[int] = []
    preparations: list[int] = []

    def prepare(ctx: RequestContext) -> None:
        preparations.append(1)
        if len(preparations) == 1:
            queue.append(queued)

    def poll() -> list[Any]:
        polls.append(1)
        out = list(queue)
        queue.clear()
        return out

    model = FakeModel([assistant_text("one"), assistant_text("two")])
    await run_agent_loop(
        [prompt()],
        AgentContext(),
        AgentLoopConfig(stream_fn=model, prepare_request=prepare, get_steering_messages=poll),
        lambda e: None,
    )
    included = [queued in c.messages for c in model.contexts]
    assert included == [False, True]
    assert len(preparations) == 2
    assert len(polls) == 3


# ----------------------------------------------------------------------------- terminate


@pytest.mark.anyio
async def test_loop_stops_after_a_batch_when_every_tool_result_sets_terminate() -> None:
    async def execute(*_: Any) -> AgentToolResult:
        return AgentToolResult.text("bye", terminate=True)

    tool = AgentTool(name="stop", execute=execute)
    model = FakeModel(
        [assistant_with_tool_calls(("1", "stop", {}), ("2", "stop", {})), assistant_text("never")]
    )
    events = await collect(
        agent_loop([prompt()], AgentContext(tools=[tool]), AgentLoopConfig(stream_fn=model))
    )
    assert model.calls == 1
    assert types_of(events).count("turn_end") == 1


@pytest.mark.anyio
async def test_loop_stops_after_a_blocked_call_when_before_tool_call_sets_terminate() -> None:
    executed: list[Any] = []
    model = FakeModel(
        [assistant_with_tool_calls(("1", "echo", {"value": "x"})), assistant_text("never")]
    )
    events = await collect(
        agent_loop(
            [prompt()],
            AgentContext(tools=[echo_tool(executed)]),
            AgentLoopConfig(
                stream_fn=model,
                before_tool_call=lambda ctx, s: BeforeToolCallResult(
                    block=True, reason="Blocked by policy", terminate=True
                ),
            ),
        )
    )
    assert executed == []
    assert model.calls == 1
    result = next(m for m in final_messages(events) if isinstance(m, ToolResultMessage))
    assert result.is_error is True
    assert text_of(result) == "Blocked by policy"


@pytest.mark.anyio
async def test_loop_continues_after_a_mixed_batch_with_one_terminating_blocked_call() -> None:
    executed: list[Any] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> BeforeToolCallResult | None:
        if ctx.tool_call.id == "first":
            return BeforeToolCallResult(block=True, terminate=True)
        return None

    model = FakeModel(
        [
            assistant_with_tool_calls(
                ("first", "echo", {"value": "first"}), ("second", "echo", {"value": "second"})
            ),
            assistant_text("done"),
        ]
    )
    await run_agent_loop(
        [prompt()],
        AgentContext(tools=[echo_tool(executed)]),
        AgentLoopConfig(stream_fn=model, before_tool_call=before),
        lambda e: None,
    )
    assert executed == ["second"]
    assert model.calls == 2


@pytest.mark.anyio
async def test_loop_continues_after_parallel_tool_calls_when_not_all_results_terminate() -> None:
    async def stop(*_: Any) -> AgentToolResult:
        return AgentToolResult.text("stop", terminate=True)

    tools = [AgentTool(name="stop", execute=stop), echo_tool()]
    model = FakeModel(
        [
            assistant_with_tool_calls(("1", "stop", {}), ("2", "echo", {"value": "x"})),
            assistant_text("done"),
        ]
    )
    messages = await run_agent_loop(
        [prompt()], AgentContext(tools=tools), AgentLoopConfig(stream_fn=model), lambda e: None
    )
    assert roles(messages) == [
        "system",
        "user",
        "assistant",
        "toolResult",
        "toolResult",
        "assistant",
    ]


@pytest.mark.anyio
async def test_loop_allows_after_tool_call_to_mark_a_batch_terminating() -> None:
    model = FakeModel(
        [assistant_with_tool_calls(("1", "echo", {"value": "x"})), assistant_text("never")]
    )
    await run_agent_loop(
        [prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(
            stream_fn=model, after_tool_call=lambda ctx, s: AfterToolCallResult(terminate=True)
        ),
        lambda e: None,
    )
    assert model.calls == 1


@pytest.mark.anyio
@pytest.mark.parametrize("stop_reason", ["error", "aborted"])
async def test_loop_failed_assistant_ends_the_run_without_running_its_tool_calls(
    stop_reason: Any,
) -> None:
    executed: list[Any] = []
    model = FakeModel(
        [assistant_with_tool_calls(("1", "echo", {"value": "x"}), stop_reason=stop_reason)]
    )
    events = await collect(
        agent_loop(
            [prompt()], AgentContext(tools=[echo_tool(executed)]), AgentLoopConfig(stream_fn=model)
        )
    )
    assert executed == []
    assert "tool_execution_start" not in types_of(events)
    turn_end = next(e for e in events if isinstance(e, TurnEndEvent))
    assert turn_end.tool_results == ()
    assert types_of(events)[-2:] == ["turn_end", "agent_end"]


@pytest.mark.anyio
async def test_loop_aborted_signal_gives_aborted_response_from_fake_model() -> None:
    model = FakeModel([assistant_text("never")])
    events = await collect(
        agent_loop(
            [prompt()],
            AgentContext(),
            AgentLoopConfig(stream_fn=model),
            AbortController.aborted_signal(),
        )
    )
    assistant = final_messages(events)[-1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.stop_reason == "aborted"


# ----------------------------------------------------------------------------- declarations


@pytest.mark.anyio
async def test_loop_declaring_tools_inserts_system_message_before_first_non_system_pending() -> (
    None
):
    model = FakeModel([assistant_text("ok")])
    caller_system = SystemMessage("sys", timestamp=0)
    messages = await run_agent_loop(
        [caller_system, prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(stream_fn=model),
        lambda e: None,
    )
    assert roles(messages) == ["system", "user", "assistant"]
    declared = messages[0]
    assert isinstance(declared, SystemMessage)
    assert declared.content == "sys"
    assert [d["name"] for d in declared.tools_added or ()] == ["echo"]


@pytest.mark.anyio
async def test_loop_pending_system_tool_intent_is_replaced_by_real_delta() -> None:
    model = FakeModel([assistant_text("ok")])
    intent = SystemMessage(
        "sys", tools_added=[{"name": "ghost", "description": "", "parameters": {}}], timestamp=0
    )
    messages = await run_agent_loop(
        [intent, prompt()],
        AgentContext(tools=[echo_tool()]),
        AgentLoopConfig(stream_fn=model),
        lambda e: None,
    )
    declared = messages[0]
    assert isinstance(declared, SystemMessage)
    assert [d["name"] for d in declared.tools_added or ()] == ["echo"]


@pytest.mark.anyio
async def test_loop_no_declaration_when_transcript_already_declares_the_tools() -> None:
    from scriptgate.runtime.declarations import to_tool_declaration

    tool = echo_tool()
    history = [SystemMessage("", tools_added=[to_tool_declaration(tool)], timestamp=0)]
    model = FakeModel([assistant_text("ok")])
    messages = await run_agent_loop(
        [prompt()],
        AgentContext(messages=list(history), tools=[tool]),
        AgentLoopConfig(stream_fn=model),
        lambda e: None,
    )
    assert roles(messages) == ["user", "assistant"]


# ----------------------------------------------------------------------------- continue


def test_loop_continue_throws_when_context_has_no_messages() -> None:
    with pytest.raises(ConfigurationError, match=r"^Cannot continue: no messages in context$"):
        agent_loop_continue(AgentContext(), AgentLoopConfig(stream_fn=FakeModel([])))


def test_loop_continue_throws_when_last_message_is_assistant() -> None:
    context = AgentContext(messages=[prompt(), assistant_text("done")])
    with pytest.raises(ConfigurationError, match=r"^Cannot continue from message role: assistant$"):
        agent_loop_continue(context, AgentLoopConfig(stream_fn=FakeModel([])))


@pytest.mark.anyio
async def test_loop_continue_from_existing_context_without_user_message_events() -> None:
    model = FakeModel([assistant_text("continued")])
    events = await collect(
        agent_loop_continue(AgentContext(messages=[prompt()]), AgentLoopConfig(stream_fn=model))
    )
    assert roles(final_messages(events)) == ["assistant"]
    assert types_of(events).count("message_end") == 1


@pytest.mark.anyio
async def test_loop_continue_allows_custom_message_types_as_last_message() -> None:
    custom = types.SimpleNamespace(role="notification", text="ping")
    model = FakeModel([assistant_text("ok")])
    messages = await run_agent_loop_continue(
        AgentContext(messages=[prompt(), custom]),  # type: ignore[list-item]
        AgentLoopConfig(stream_fn=model),
        lambda e: None,
    )
    assert roles(messages) == ["assistant"]
    assert custom not in model.contexts[0].messages  # the default conversion drops it


# ----------------------------------------------------------------------------- iterator behaviour


@pytest.mark.anyio
async def test_loop_iterator_reraises_stream_fn_exception_after_earlier_events() -> None:
    async def broken(model: Any, context: ModelContext, options: StreamOptions) -> AssistantMessage:
        raise RuntimeError("provider down")

    seen: list[str] = []

    async def consume() -> None:
        async for event in agent_loop(
            [prompt()], AgentContext(), AgentLoopConfig(stream_fn=broken)
        ):
            seen.append(event.type)

    with pytest.raises(RuntimeError, match="provider down"):
        await consume()
    assert seen[:2] == ["agent_start", "turn_start"]


@pytest.mark.anyio
async def test_loop_iterator_can_be_closed_early() -> None:
    cancelled: list[str] = []

    async def forever(*_: Any) -> AgentToolResult:
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.append("tool cancelled")
        raise AssertionError("unreachable")

    tool = AgentTool(name="forever", execute=forever)
    model = FakeModel([assistant_with_tool_calls(("1", "forever", {})), assistant_text("never")])
    with anyio.fail_after(10):
        async with aclosing(
            agent_loop([prompt()], AgentContext(tools=[tool]), AgentLoopConfig(stream_fn=model))
        ) as events:
            async for event in events:
                if event.type == "tool_execution_start":
                    break
    assert cancelled == ["tool cancelled"]
    assert model.calls == 1


@pytest.mark.anyio
async def test_loop_update_events_are_streamed_live() -> None:
    gate = anyio.Event()
    seen_update = anyio.Event()

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(details={"progress": 50}))
        await gate.wait()  # only released once the consumer saw the update
        return AgentToolResult.text("done")

    tool = AgentTool(name="slow", execute=execute)
    model = FakeModel([assistant_with_tool_calls(("1", "slow", {})), assistant_text("ok")])
    types_seen: list[str] = []
    with anyio.fail_after(10):
        async for event in agent_loop(
            [prompt()], AgentContext(tools=[tool]), AgentLoopConfig(stream_fn=model)
        ):
            types_seen.append(event.type)
            if event.type == "tool_execution_update":
                seen_update.set()
                gate.set()
    assert seen_update.is_set()
    assert types_seen.index("tool_execution_update") < types_seen.index("tool_execution_end")


def test_loop_module_exports() -> None:
    assert set(loop_module.__all__) >= {"agent_loop", "agent_loop_continue", "AgentLoopConfig"}
