"""The tool calls of one assistant message, run as a batch (pi §3.5–3.11).

:func:`execute_tool_calls` emits pi's events (``tool_execution_start`` /
``_update`` / ``_end`` and ``message_start`` / ``message_end`` for every tool
result) and returns the tool result messages in assistant source order plus the
batch's terminate flag. Every call gets exactly one result, aborted or not.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import anyio

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.observe import notify_cut_off
from scriptgate.runtime.pipeline import (
    ABORTED_TEXT,
    PreparedToolCall,
    ToolCallOutcome,
    ToolList,
    execute_prepared_tool_call,
    finalize_executed_tool_call,
    find_tool,
    prepare_tool_call,
)
from scriptgate.runtime.types import (
    AfterToolCallHook,
    AgentContext,
    AgentEvent,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallHook,
    MessageEndEvent,
    MessageStartEvent,
    TextContent,
    ToolCall,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolResultMessage,
    now_ms,
)

__all__ = [
    "EmitFn",
    "ToolBatch",
    "ToolExecutionMode",
    "execute_tool_calls",
    "length_truncated_text",
    "tool_result_message",
]

ToolExecutionMode: TypeAlias = Literal["sequential", "parallel"]

EmitFn: TypeAlias = Callable[[AgentEvent], object]
"""Receives each event; may be sync or async (an awaitable it returns is awaited)."""


def length_truncated_text(name: str) -> str:
    """pi §3.10: the error text of a call from a length-truncated assistant message."""
    return (
        f'Tool call "{name}" was not executed: the response hit the output token limit, '
        "so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )


@dataclass(frozen=True, slots=True)
class ToolBatch:
    """The result of a batch: tool result messages in assistant source order.

    ``terminate`` is True only when there is at least one result and every
    finalized result set ``terminate`` (pi §3.9). ``outcomes`` are the
    per-call outcomes, in source order too.
    """

    messages: tuple[ToolResultMessage, ...]
    terminate: bool
    outcomes: tuple[ToolCallOutcome, ...] = ()


def tool_result_message(outcome: ToolCallOutcome) -> ToolResultMessage:
    """The transcript record of an outcome (pi §1.5): no ``structured_content``, no
    ``terminate``; ``content`` defaults to ``[]``."""
    result = outcome.result
    content = result.content
    return ToolResultMessage(
        tool_call_id=outcome.tool_call.id,
        tool_name=outcome.tool_call.name,
        content=tuple(content) if content is not None else (),
        details=result.details,
        usage=result.usage,
        is_error=outcome.is_error,
        duration_ms=outcome.duration_ms,
        timestamp=now_ms(),
    )


class _Emitter:
    __slots__ = ("emit",)

    def __init__(self, emit: EmitFn | None) -> None:
        self.emit = emit

    async def __call__(self, event: AgentEvent) -> None:
        if self.emit is None:
            return
        returned = self.emit(event)
        if inspect.isawaitable(returned):
            await returned

    def update_sink(self, tool_call: ToolCall) -> Callable[[Any], object] | None:
        emit = self.emit
        if emit is None:
            return None

        def sink(partial: Any) -> object:
            return emit(
                ToolExecutionUpdateEvent(tool_call.id, tool_call.name, tool_call.arguments, partial)
            )

        return sink


def _end_event(outcome: ToolCallOutcome) -> ToolExecutionEndEvent:
    call = outcome.tool_call
    return ToolExecutionEndEvent(
        call.id, call.name, outcome.result, outcome.is_error, outcome.duration_ms
    )


def _start_event(call: ToolCall) -> ToolExecutionStartEvent:
    return ToolExecutionStartEvent(call.id, call.name, call.arguments)


def _is_terminating(outcomes: Sequence[ToolCallOutcome]) -> bool:
    return len(outcomes) > 0 and all(o.result.terminate is True for o in outcomes)


async def _publish(emitter: _Emitter, outcomes: Sequence[ToolCallOutcome]) -> ToolBatch:
    messages: list[ToolResultMessage] = []
    for outcome in outcomes:
        message = tool_result_message(outcome)
        await emitter(MessageStartEvent(message))
        await emitter(MessageEndEvent(message))
        messages.append(message)
    return ToolBatch(tuple(messages), _is_terminating(outcomes), tuple(outcomes))


async def execute_tool_calls(
    assistant_message: AssistantMessage,
    *,
    tools: ToolList | None = None,
    mode: ToolExecutionMode = "parallel",
    before_tool_call: BeforeToolCallHook | None = None,
    after_tool_call: AfterToolCallHook | None = None,
    signal: AbortSignal | None = None,
    emit: EmitFn | None = None,
    context: AgentContext | None = None,
) -> ToolBatch:
    """Run the tool calls of ``assistant_message`` as pi's loop does (pi §3.5).

    - ``stop_reason == "length"``: no call runs; each fails with
      :func:`length_truncated_text` (pi §3.10).
    - sequential (``mode="sequential"`` or any called tool with
      ``execution_mode="sequential"``): each call is started, prepared, executed,
      finalized, ended and published before the next.
    - parallel: preflight in source order (an immediate outcome ends at once),
      then the prepared calls run concurrently; ``tool_execution_end`` in
      completion order; result messages after all settle, in source order.

    ``tools`` defaults to ``context.tools``.
    """
    if mode not in ("sequential", "parallel"):
        raise ValueError(f"mode must be 'sequential' or 'parallel', got {mode!r}")
    if tools is None:
        tools = context.tools if context is not None else ()
    calls = assistant_message.tool_calls
    emitter = _Emitter(emit)

    if assistant_message.stop_reason == "length":
        outcomes: list[ToolCallOutcome] = []
        for call in calls:
            await emitter(_start_event(call))
            outcome = ToolCallOutcome(
                call,
                AgentToolResult(
                    content=(TextContent(length_truncated_text(call.name)),), details={}
                ),
                True,
                None,
            )
            await emitter(_end_event(outcome))
            outcomes.append(outcome)
        batch = await _publish(emitter, outcomes)
        return ToolBatch(batch.messages, False, batch.outcomes)

    sequential = mode == "sequential"
    if not sequential:
        for call in calls:
            tool = find_tool(tools, call.name)
            if tool is not None and tool.execution_mode == "sequential":
                sequential = True
                break

    async def prepare(call: ToolCall) -> PreparedToolCall | ToolCallOutcome:
        return await prepare_tool_call(
            call,
            tools=tools,
            before_tool_call=before_tool_call,
            signal=signal,
            assistant_message=assistant_message,
            context=context,
        )

    async def run(prepared: PreparedToolCall) -> ToolCallOutcome:
        executed = await execute_prepared_tool_call(
            prepared, signal=signal, on_update=emitter.update_sink(prepared.tool_call)
        )
        return await finalize_executed_tool_call(
            prepared,
            executed,
            after_tool_call=after_tool_call,
            signal=signal,
            assistant_message=assistant_message,
            context=context,
        )

    if sequential:
        messages: list[ToolResultMessage] = []
        done: list[ToolCallOutcome] = []
        for call in calls:
            await emitter(_start_event(call))
            prepared = await prepare(call)
            outcome = prepared if isinstance(prepared, ToolCallOutcome) else await run(prepared)
            await emitter(_end_event(outcome))
            message = tool_result_message(outcome)
            await emitter(MessageStartEvent(message))
            await emitter(MessageEndEvent(message))
            messages.append(message)
            done.append(outcome)
        return ToolBatch(tuple(messages), _is_terminating(done), tuple(done))

    slots: list[ToolCallOutcome | None] = [None] * len(calls)
    deferred: list[tuple[int, PreparedToolCall]] = []
    for index, call in enumerate(calls):
        await emitter(_start_event(call))
        prepared = await prepare(call)
        if isinstance(prepared, ToolCallOutcome):
            slots[index] = prepared
            await emitter(_end_event(prepared))
        else:
            deferred.append((index, prepared))

    async def run_deferred(index: int, prepared: PreparedToolCall) -> None:
        if signal is not None and signal.aborted:
            notify_cut_off(before_tool_call, prepared.tool_call, "aborted", ABORTED_TEXT)
            outcome = ToolCallOutcome(
                prepared.tool_call,
                AgentToolResult(content=(TextContent(ABORTED_TEXT),), details={}),
                True,
                None,
                aborted=True,
            )
        else:
            outcome = await run(prepared)
        slots[index] = outcome
        await emitter(_end_event(outcome))

    if len(deferred) == 1:
        await run_deferred(*deferred[0])
    elif deferred:
        async with anyio.create_task_group() as group:
            for index, prepared in deferred:
                group.start_soon(run_deferred, index, prepared)

    finished: list[ToolCallOutcome] = []
    for slot in slots:
        if slot is None:  # pragma: no cover - every slot is filled above
            raise RuntimeError("internal error: a tool call of the batch has no outcome")
        finished.append(slot)
    return await _publish(emitter, finished)
