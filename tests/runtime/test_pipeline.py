"""The three steps of one call (pi §3.2–3.4, §3.7, §3.12): prepare, execute, finalize."""

from __future__ import annotations

import threading
import types
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from pydantic import BaseModel

from scriptgate.runtime import pipeline
from scriptgate.runtime.abort import AbortController, AbortSignal
from scriptgate.runtime.pipeline import (
    PreparedToolCall,
    ToolCallOutcome,
    execute_prepared_tool_call,
    prepare_tool_call,
    run_tool_call,
)
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
    Usage,
)

SCHEMA = {
    "type": "object",
    "properties": {"value": {"type": "string"}},
    "required": ["value"],
}


class Recorder:
    """A tool that records what ``execute`` received."""

    def __init__(self, name: str = "echo", schema: Any = SCHEMA) -> None:
        self.params: list[Any] = []
        self.tool = AgentTool(name=name, parameters=schema, execute=self.execute)

    async def execute(
        self, call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        self.params.append(params)
        return AgentToolResult.text("ok", details={"seen": True})


def text(outcome: ToolCallOutcome) -> str:
    return outcome.result.text_content()


# ----------------------------------------------------------------------------- prepare


@pytest.mark.anyio
async def test_pipeline_unknown_tool_never_reaches_before_hook() -> None:
    seen: list[str] = []
    out = await prepare_tool_call(
        ToolCall("1", "Echo", {"value": "x"}),
        tools=[Recorder().tool],
        before_tool_call=lambda ctx, s: seen.append("hook"),
    )
    assert isinstance(out, ToolCallOutcome)
    assert text(out) == "Tool Echo not found"  # exact, case-sensitive name
    assert seen == []


@pytest.mark.anyio
async def test_pipeline_validation_failure_never_reaches_before_hook() -> None:
    seen: list[str] = []
    out = await prepare_tool_call(
        ToolCall("1", "echo", {}),
        tools=[Recorder().tool],
        before_tool_call=lambda ctx, s: seen.append("hook"),
    )
    assert isinstance(out, ToolCallOutcome)
    assert out.is_error is True
    assert text(out).startswith('Validation failed for tool "echo":\n  - value: missing')
    assert seen == []


@pytest.mark.anyio
async def test_pipeline_before_hook_mutated_args_reach_execute_without_revalidation() -> None:
    rec = Recorder()

    def before(ctx: BeforeToolCallContext, signal: AbortSignal | None) -> None:
        ctx.args["value"] = 123  # not a string: must not be revalidated

    out = await run_tool_call(
        ToolCall("1", "echo", {"value": "x"}), tools=[rec.tool], before_tool_call=before
    )
    assert out.is_error is False
    assert rec.params == [{"value": 123}]


@pytest.mark.anyio
async def test_pipeline_prepare_arguments_rewrites_legacy_arguments_for_validation() -> None:
    schema = {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}},
                },
            }
        },
        "required": ["edits"],
    }
    rec = Recorder("edit", schema)

    def shim(raw: dict[str, Any]) -> Any:
        if "oldText" in raw:
            return {"edits": [{"oldText": raw["oldText"], "newText": raw["newText"]}]}
        return raw

    rec.tool.prepare_arguments = shim
    call = ToolCall("1", "edit", {"oldText": "before", "newText": "after"})
    out = await run_tool_call(call, tools=[rec.tool])
    assert out.is_error is False
    assert [p["edits"] for p in rec.params] == [[{"oldText": "before", "newText": "after"}]]
    assert out.tool_call is call
    assert call.arguments == {"oldText": "before", "newText": "after"}


@pytest.mark.anyio
async def test_pipeline_prepare_arguments_same_object_changes_nothing() -> None:
    rec = Recorder()
    seen: list[Any] = []

    def shim(raw: dict[str, Any]) -> Any:
        seen.append(raw)
        return raw

    rec.tool.prepare_arguments = shim
    call = ToolCall("1", "echo", {"value": "x"})
    out = await run_tool_call(call, tools=[rec.tool])
    assert seen[0] is call.arguments
    assert out.is_error is False


@pytest.mark.anyio
async def test_pipeline_prepare_arguments_exception_is_immediate_error() -> None:
    rec = Recorder()

    def shim(raw: dict[str, Any]) -> Any:
        raise ValueError("cannot convert legacy arguments")

    rec.tool.prepare_arguments = shim
    out = await run_tool_call(ToolCall("1", "echo", {"value": "x"}), tools=[rec.tool])
    assert out.is_error is True
    assert text(out) == "cannot convert legacy arguments"
    assert out.duration_ms is None
    assert rec.params == []


@pytest.mark.anyio
@pytest.mark.parametrize("reason", [None, ""])
async def test_pipeline_block_default_text(reason: str | None) -> None:
    rec = Recorder()
    out = await run_tool_call(
        ToolCall("1", "echo", {"value": "x"}),
        tools=[rec.tool],
        before_tool_call=lambda ctx, s: BeforeToolCallResult(block=True, reason=reason),
    )
    assert text(out) == "Tool execution was blocked"
    assert out.is_error is True
    assert out.blocked is True
    assert out.result.details == {}
    assert out.result.terminate is False
    assert rec.params == []


@pytest.mark.anyio
async def test_pipeline_block_with_terminate_sets_terminate_on_result() -> None:
    out = await run_tool_call(
        ToolCall("1", "echo", {"value": "x"}),
        tools=[Recorder().tool],
        before_tool_call=lambda ctx, s: BeforeToolCallResult(
            block=True, reason="Blocked by policy", terminate=True
        ),
    )
    assert text(out) == "Blocked by policy"
    assert out.result.terminate is True


@pytest.mark.anyio
async def test_pipeline_abort_checked_after_before_hook_even_if_it_blocked() -> None:
    controller = AbortController()
    rec = Recorder()

    async def before(
        ctx: BeforeToolCallContext, signal: AbortSignal | None
    ) -> BeforeToolCallResult:
        assert signal is controller.signal
        controller.abort()
        return BeforeToolCallResult(block=True, reason="blocked")

    out = await run_tool_call(
        ToolCall("1", "echo", {"value": "x"}),
        tools=[rec.tool],
        before_tool_call=before,
        signal=controller.signal,
    )
    assert text(out) == "Operation aborted"
    assert out.aborted is True
    assert out.blocked is False
    assert rec.params == []


@pytest.mark.anyio
async def test_pipeline_hooks_receive_context_assistant_message_and_validated_args() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    rec = Recorder("count", schema)
    assistant = AssistantMessage()
    context = AgentContext()
    seen: list[Any] = []

    def before(ctx: BeforeToolCallContext, signal: AbortSignal | None) -> None:
        seen.append((ctx.assistant_message, ctx.context, ctx.args, ctx.tool_call.arguments))

    def after(ctx: AfterToolCallContext, signal: AbortSignal | None) -> None:
        seen.append((ctx.assistant_message, ctx.context, ctx.args, ctx.is_error, ctx.result))

    await run_tool_call(
        ToolCall("1", "count", {"n": "42"}),
        tools=[rec.tool],
        before_tool_call=before,
        after_tool_call=after,
        assistant_message=assistant,
        context=context,
    )
    assert seen[0] == (assistant, context, {"n": 42}, {"n": "42"})
    assert seen[1][:4] == (assistant, context, {"n": 42}, False)
    assert seen[1][4] == AgentToolResult.text("ok", details={"seen": True})


@pytest.mark.anyio
async def test_pipeline_before_hook_wrong_return_type_is_error_result() -> None:
    out = await run_tool_call(
        ToolCall("1", "echo", {"value": "x"}),
        tools=[Recorder().tool],
        before_tool_call=lambda ctx, s: {"block": True},  # type: ignore[arg-type,return-value]
    )
    assert out.is_error is True
    assert "before_tool_call must return a BeforeToolCallResult or None, got dict" in text(out)


# ----------------------------------------------------------------------------- execute


class FakeClock:
    """A perf_counter_ns that only advances when a test says so."""

    def __init__(self) -> None:
        self.now = 1_000_000_000

    def advance_ms(self, ms: float) -> None:
        self.now += round(ms * 1_000_000)

    def perf_counter_ns(self) -> int:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    fake = FakeClock()
    monkeypatch.setattr(
        pipeline, "time", types.SimpleNamespace(perf_counter_ns=fake.perf_counter_ns)
    )
    return fake


@pytest.mark.anyio
async def test_pipeline_duration_covers_execute_alone_excluding_hooks(clock: FakeClock) -> None:
    async def execute(*_: Any) -> AgentToolResult:
        clock.advance_ms(30)
        return AgentToolResult.text("done")

    async def before(ctx: Any, signal: Any) -> None:
        clock.advance_ms(100)

    async def after(ctx: Any, signal: Any) -> None:
        clock.advance_ms(100)

    tool = AgentTool(name="slow", execute=execute)
    out = await run_tool_call(
        ToolCall("1", "slow", {}), tools=[tool], before_tool_call=before, after_tool_call=after
    )
    assert out.duration_ms == 30


@pytest.mark.anyio
@pytest.mark.parametrize(("elapsed", "expected"), [(29.5, 30), (29.4999, 29), (0.4, 0), (0.5, 1)])
async def test_pipeline_duration_is_rounded_half_up(
    clock: FakeClock, elapsed: float, expected: int
) -> None:
    async def execute(*_: Any) -> AgentToolResult:
        clock.advance_ms(elapsed)
        return AgentToolResult.text("done")

    out = await run_tool_call(ToolCall("1", "t", {}), tools=[AgentTool(name="t", execute=execute)])
    assert out.duration_ms == expected


@pytest.mark.anyio
async def test_pipeline_thrown_tool_keeps_duration(clock: FakeClock) -> None:
    async def execute(*_: Any) -> AgentToolResult:
        clock.advance_ms(7)
        raise RuntimeError("tool exploded")

    out = await run_tool_call(ToolCall("1", "t", {}), tools=[AgentTool(name="t", execute=execute)])
    assert out.duration_ms == 7
    assert out.is_error is True
    assert out.result == AgentToolResult(content=(TextContent("tool exploded"),), details={})


@pytest.mark.anyio
async def test_pipeline_exception_without_message_uses_class_name() -> None:
    async def execute(*_: Any) -> AgentToolResult:
        raise KeyError

    out = await run_tool_call(ToolCall("1", "t", {}), tools=[AgentTool(name="t", execute=execute)])
    assert text(out) == "KeyError"


@pytest.mark.anyio
async def test_pipeline_is_error_result_keeps_details_and_structured_content() -> None:
    async def execute(*_: Any) -> AgentToolResult:
        return AgentToolResult(
            content=(TextContent("bad"),),
            details={"why": "x"},
            structured_content={"code": 7},
            is_error=True,
        )

    out = await run_tool_call(ToolCall("1", "t", {}), tools=[AgentTool(name="t", execute=execute)])
    assert out.is_error is True
    assert out.result.details == {"why": "x"}
    assert out.result.structured_content == {"code": 7}
    assert out.duration_ms is not None


@pytest.mark.anyio
async def test_pipeline_on_update_after_settle_is_ignored() -> None:
    kept: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update("during")
        kept.append(on_update)
        return AgentToolResult.text("done")

    got: list[Any] = []
    await run_tool_call(
        ToolCall("1", "t", {}), tools=[AgentTool(name="t", execute=execute)], on_update=got.append
    )
    kept[0]("late")
    assert got == ["during"]


@pytest.mark.anyio
async def test_pipeline_async_update_sink_delivered_before_outcome(clock: FakeClock) -> None:
    delivered: list[str] = []

    async def sink(partial: Any) -> None:
        clock.advance_ms(50)  # time spent delivering updates is not the tool's
        await anyio.lowlevel.checkpoint()
        delivered.append(partial)

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update("one")
        on_update("two")
        clock.advance_ms(3)
        return AgentToolResult.text("done")

    out = await run_tool_call(
        ToolCall("1", "t", {}), tools=[AgentTool(name="t", execute=execute)], on_update=sink
    )
    assert delivered == ["one", "two"]
    assert out.duration_ms == 3


@pytest.mark.anyio
async def test_pipeline_tool_without_listener_may_call_on_update() -> None:
    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        on_update(AgentToolResult(details={"progress": 1}))
        return AgentToolResult.text("done")

    out = await run_tool_call(ToolCall("1", "t", {}), tools=[AgentTool(name="t", execute=execute)])
    assert out.is_error is False


@pytest.mark.anyio
async def test_pipeline_sync_tool_runs_in_worker_thread_and_delivers_updates() -> None:
    loop_thread = threading.get_ident()
    threads: list[int] = []

    def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        threads.append(threading.get_ident())
        on_update("from worker")
        return AgentToolResult.text(f"sync {params['value']}")

    got: list[tuple[Any, int]] = []
    tool = AgentTool(name="s", parameters=SCHEMA, execute=execute)
    out = await run_tool_call(
        ToolCall("1", "s", {"value": "v"}),
        tools=[tool],
        on_update=lambda p: got.append((p, threading.get_ident())),
    )
    assert text(out) == "sync v"
    assert threads[0] != loop_thread
    assert got == [("from worker", loop_thread)]
    assert out.duration_ms is not None


@pytest.mark.anyio
async def test_pipeline_tool_returning_non_result_is_error() -> None:
    def execute(*_: Any) -> Any:
        return "just a string"

    out = await run_tool_call(ToolCall("1", "s", {}), tools=[AgentTool(name="s", execute=execute)])
    assert out.is_error is True
    assert text(out) == "Tool s returned str instead of an AgentToolResult"
    assert out.duration_ms is not None


@pytest.mark.anyio
async def test_pipeline_pydantic_parameters_give_execute_a_model_instance() -> None:
    class Params(BaseModel):
        value: str

    got: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        got.append(params)
        return AgentToolResult.text(params.value)

    tool = AgentTool(name="p", parameters=Params, execute=execute)
    out = await run_tool_call(ToolCall("1", "p", {"value": 5}), tools=[tool])
    assert text(out) == "5"
    assert got == [Params(value="5")]


@pytest.mark.anyio
async def test_pipeline_execute_receives_id_and_signal() -> None:
    seen: list[Any] = []
    controller = AbortController()

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        seen.append((call_id, signal))
        return AgentToolResult.text("x")

    prepared = PreparedToolCall(ToolCall("id-9", "t", {}), AgentTool(name="t", execute=execute), {})
    executed = await execute_prepared_tool_call(prepared, signal=controller.signal)
    assert seen == [("id-9", controller.signal)]
    assert executed.is_error is False


# ----------------------------------------------------------------------------- finalize


@pytest.mark.anyio
async def test_pipeline_after_hook_overrides_fields_individually() -> None:
    usage = Usage(input=3, output=4, total_tokens=7)

    def after(ctx: AfterToolCallContext, signal: Any) -> AfterToolCallResult:
        return AfterToolCallResult(is_error=True, usage=usage, terminate=True)

    out = await run_tool_call(
        ToolCall("1", "echo", {"value": "x"}), tools=[Recorder().tool], after_tool_call=after
    )
    assert out.is_error is True
    assert out.result.usage == usage
    assert out.result.terminate is True
    assert out.result.details == {"seen": True}
    assert text(out) == "ok"


@pytest.mark.anyio
async def test_pipeline_after_hook_can_clear_error_flag() -> None:
    async def execute(*_: Any) -> AgentToolResult:
        raise RuntimeError("x")

    out = await run_tool_call(
        ToolCall("1", "t", {}),
        tools=[AgentTool(name="t", execute=execute)],
        after_tool_call=lambda ctx, s: AfterToolCallResult(
            is_error=False, content=(TextContent("recovered"),)
        ),
    )
    assert out.is_error is False
    assert text(out) == "recovered"


@pytest.mark.anyio
async def test_pipeline_after_hook_returning_none_keeps_result() -> None:
    rec = Recorder()
    out = await run_tool_call(
        ToolCall("1", "echo", {"value": "x"}), tools=[rec.tool], after_tool_call=lambda c, s: None
    )
    assert out.result == AgentToolResult.text("ok", details={"seen": True})


@pytest.mark.anyio
async def test_pipeline_cancellation_propagates_out_of_execute() -> None:
    started = anyio.Event()

    async def execute(*_: Any) -> AgentToolResult:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    tool = AgentTool(name="t", execute=execute)
    outcomes: list[Any] = []
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            outcomes.append(await run_tool_call(ToolCall("1", "t", {}), tools=[tool]))

        tg.start_soon(run)
        await started.wait()
        tg.cancel_scope.cancel()
    assert outcomes == []
