"""The agent loop: model request → tool batch → next request (pi §3.1, §3.6, §6.3).

``agent_loop(prompts, context, config)`` is an async iterator of events;
:func:`run_agent_loop` is the same loop driven by an ``emit`` callback, returning
the messages it added. The model is a pluggable async ``stream_fn(model,
context, options)`` that returns the complete :class:`AssistantMessage` and may
stream its progress through ``options.on_event`` (:mod:`scriptgate.models` has
provider adapters; :class:`scriptgate.testing.FakeModel` is a scripted model).

A turn: ``turn_start``; pending messages (prompts, steering, follow-ups,
``prepare_next_turn`` messages — preceded by a tool-declaration system message
when the executable tools differ from the transcript's) are published; the
model is asked; its tool calls run as a batch; ``finish_turn``; ``turn_end``.
The loop ends after an ``error``/``aborted`` response, when a turn has no tool
calls (or its batch terminates) and no steering, continuation or follow-up is
queued, or when ``finish_turn`` returns ``"end"``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.batch import EmitFn, ToolExecutionMode, execute_tool_calls
from scriptgate.runtime.declarations import declare_tool_changes
from scriptgate.runtime.stream import AssistantMessageEvent
from scriptgate.runtime.types import (
    AfterToolCallHook,
    AgentContext,
    AgentEndEvent,
    AgentEvent,
    AgentMessage,
    AgentStartEvent,
    AssistantMessage,
    BeforeToolCallHook,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    SystemMessage,
    ToolResultMessage,
    TurnEndEvent,
    TurnStartEvent,
    UserMessage,
)

__all__ = [
    "AgentLoopConfig",
    "FinishTurnContext",
    "FinishTurnResult",
    "ModelContext",
    "NextTurn",
    "NextTurnContext",
    "OnAssistantEvent",
    "PreparedRequest",
    "RequestContext",
    "StreamFn",
    "StreamOptions",
    "agent_loop",
    "agent_loop_continue",
    "get_default_stream_fn",
    "run_agent_loop",
    "run_agent_loop_continue",
    "set_default_stream_fn",
]


@dataclass(frozen=True, slots=True)
class ModelContext:
    """What the model receives.

    - ``messages``: the transcript (tools are declared by its system messages; a
      provider reads them with :func:`~scriptgate.runtime.declarations.resolve_transcript_tools`);
    - ``system_prompt``: the context's system prompt;
    - ``tools``: the executable tools of the context (what the transcript declares,
      for a caller that builds a context without declaration messages).
    """

    messages: tuple[Any, ...]
    system_prompt: str | None = None
    tools: tuple[Any, ...] = ()


OnAssistantEvent: TypeAlias = Callable[[AssistantMessageEvent], Awaitable[None]]
"""Receives a stream function's :class:`AssistantMessageEvent` as it happens."""


@dataclass(frozen=True, slots=True)
class StreamOptions:
    """Per-request options handed to ``stream_fn``: the abort signal, the
    thinking level (``AgentLoopConfig.thinking`` or a ``prepare_request`` override)
    and ``on_event``, where a streaming model reports its progress (the loop
    turns the events into ``message_start`` / ``message_update``)."""

    signal: AbortSignal | None = None
    thinking: str | None = None
    on_event: OnAssistantEvent | None = None


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What ``prepare_request`` sees right before a model request: the loop's
    context (pending messages already appended), the model and the thinking level."""

    context: AgentContext
    model: Any
    thinking: str | None


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """``prepare_request``'s answer; ``None`` fields keep the current value.

    A replacement ``context`` becomes the loop's context (its messages are the
    transcript from now on, its tools the executable ones); ``model`` and
    ``thinking`` apply to this request only.
    """

    context: AgentContext | None = None
    model: Any = None
    thinking: str | None = None


StreamFn: TypeAlias = Callable[[Any, ModelContext, StreamOptions], Awaitable[AssistantMessage]]
"""``stream_fn(model, context, options)`` → the complete assistant message.

A streaming model awaits ``options.on_event(event)`` for each step (``start``
first); the loop emits ``message_start`` at the first event, ``message_update``
for every later one and ``message_end`` with the returned message. A model that
emits nothing gets ``message_start`` and ``message_end`` together. Provider
failures should come back as a message with ``stop_reason="error"`` (or
``"aborted"``); an exception propagates out of the loop.
"""


@dataclass(frozen=True, slots=True)
class FinishTurnContext:
    """What ``finish_turn`` sees: the assistant message, its tool results (source
    order) and the context after the results were appended."""

    message: AssistantMessage
    tool_results: tuple[ToolResultMessage, ...]
    context: AgentContext


@dataclass(frozen=True, slots=True)
class FinishTurnResult:
    """``action="end"`` stops after this turn (no queue polling, no next-turn
    preparation); ``"continue"`` makes sure one more request happens.
    Neither changes the hard exit after an ``error``/``aborted`` response."""

    action: Literal["continue", "end"] | None = None


@dataclass(frozen=True, slots=True)
class NextTurnContext:
    """What ``prepare_next_turn`` sees before the loop continues."""

    message: AssistantMessage
    tool_results: tuple[ToolResultMessage, ...]
    context: AgentContext


@dataclass(frozen=True, slots=True)
class NextTurn:
    """``prepare_next_turn``'s answer: ``messages`` to inject before the next
    request, and/or a replacement ``context`` (its tools become the executable ones)."""

    messages: Sequence[AgentMessage] = ()
    context: AgentContext | None = None


_Maybe: TypeAlias = Any  # a value or an awaitable of it


@dataclass
class AgentLoopConfig:
    """How the loop runs.

    - ``model``: passed through to ``stream_fn``;
    - ``stream_fn``: the model; defaults to :func:`set_default_stream_fn`'s;
    - ``tool_execution``: ``"parallel"`` (default) or ``"sequential"``;
    - ``before_tool_call`` / ``after_tool_call``: the hooks (pi §1.7);
    - ``transform_context(messages, signal)`` then ``convert_to_llm(messages)``
      build the request's messages (default: drop messages that are not
      system/user/assistant/toolResult records);
    - ``get_steering_messages()`` is polled at the start and after every turn,
      ``get_follow_up_messages()`` when the loop would otherwise stop;
    - ``finish_turn(ctx)`` runs after the tool results and before ``turn_end``
      (:class:`FinishTurnResult`);
    - ``prepare_next_turn(ctx)`` runs before a continuing turn (:class:`NextTurn`);
    - ``prepare_request(ctx)`` runs right before every model request, after the
      turn's pending messages are published (:class:`PreparedRequest`); steering
      queued inside it is picked up after the turn, not before this request;
    - ``thinking``: the thinking level passed in :class:`StreamOptions`.

    Every callable may be sync or async.
    """

    model: Any = None
    stream_fn: StreamFn | None = None
    tool_execution: ToolExecutionMode = "parallel"
    before_tool_call: BeforeToolCallHook | None = None
    after_tool_call: AfterToolCallHook | None = None
    convert_to_llm: Callable[[list[Any]], _Maybe] | None = None
    transform_context: Callable[[list[Any], AbortSignal | None], _Maybe] | None = None
    get_steering_messages: Callable[[], _Maybe] | None = None
    get_follow_up_messages: Callable[[], _Maybe] | None = None
    finish_turn: Callable[[FinishTurnContext], _Maybe] | None = None
    prepare_next_turn: Callable[[NextTurnContext], _Maybe] | None = None
    prepare_request: Callable[[RequestContext], _Maybe] | None = None
    thinking: str | None = None


_default_stream_fn: StreamFn | None = None


def set_default_stream_fn(fn: StreamFn | None) -> None:
    """Set the model used when a config has no ``stream_fn`` (``None`` clears it)."""
    global _default_stream_fn
    _default_stream_fn = fn


def get_default_stream_fn() -> StreamFn | None:
    """The model set by :func:`set_default_stream_fn`, if any."""
    return _default_stream_fn


async def _call(fn: Callable[..., Any], *args: Any) -> Any:
    value = fn(*args)
    if inspect.isawaitable(value):
        value = await value
    return value


_LLM_TYPES = (SystemMessage, UserMessage, AssistantMessage, ToolResultMessage)


def _default_convert(messages: list[Any]) -> list[Any]:
    return [m for m in messages if isinstance(m, _LLM_TYPES)]


class _Run:
    """The state of one loop run."""

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        signal: AbortSignal | None,
        emit: EmitFn,
    ) -> None:
        self.context = AgentContext(
            messages=list(context.messages),
            tools=list(context.tools),
            system_prompt=context.system_prompt,
        )
        self.config = config
        self.signal = signal
        self._emit = emit
        self.new_messages: list[AgentMessage] = []
        stream_fn = config.stream_fn or _default_stream_fn
        if stream_fn is None:
            raise ConfigurationError(
                "AgentLoopConfig.stream_fn is not set and no default stream function was "
                "set with set_default_stream_fn()"
            )
        self.stream_fn: StreamFn = stream_fn

    async def emit(self, event: AgentEvent) -> None:
        await _call(self._emit, event)

    async def poll(self, getter: Callable[[], Any] | None) -> list[AgentMessage]:
        if getter is None:
            return []
        return list(await _call(getter) or ())

    async def request(self) -> tuple[AssistantMessage, bool]:
        config = self.config
        model = config.model
        thinking = config.thinking
        if config.prepare_request is not None:
            prepared = await _call(
                config.prepare_request, RequestContext(self.context, model, thinking)
            )
            if prepared is not None:
                if not isinstance(prepared, PreparedRequest):
                    raise ConfigurationError(
                        "prepare_request must return a PreparedRequest or None, "
                        f"got {type(prepared).__name__}"
                    )
                if prepared.context is not None:
                    self.replace_context(prepared.context)
                if prepared.model is not None:
                    model = prepared.model
                if prepared.thinking is not None:
                    thinking = prepared.thinking
        messages: list[Any] = list(self.context.messages)
        if self.config.transform_context is not None:
            messages = list(await _call(self.config.transform_context, messages, self.signal))
        convert = self.config.convert_to_llm or _default_convert
        llm_messages = await _call(convert, messages)
        started = False
        failures: list[BaseException] = []

        async def on_event(event: AssistantMessageEvent) -> None:
            # A listener's failure must not look like the provider's: keep it for later.
            nonlocal started
            if failures:
                return
            try:
                if not started:
                    started = True
                    await self.emit(MessageStartEvent(event.partial))
                    if event.type == "start":
                        return
                await self.emit(MessageUpdateEvent(event.partial, event))
            except Exception as exc:
                failures.append(exc)

        model_context = ModelContext(
            tuple(llm_messages),
            system_prompt=self.context.system_prompt,
            tools=tuple(self.context.tools),
        )
        message = await self.stream_fn(
            model, model_context, StreamOptions(self.signal, thinking, on_event)
        )
        if failures:
            raise failures[0]
        if not isinstance(message, AssistantMessage):
            raise ConfigurationError(
                f"stream_fn must return an AssistantMessage, got {type(message).__name__}"
            )
        return message, started

    async def publish(self, message: AgentMessage, *, started: bool = False) -> None:
        if not started:
            await self.emit(MessageStartEvent(message))
        await self.emit(MessageEndEvent(message))
        self.context.messages.append(message)
        self.new_messages.append(message)

    async def run(self, pending: list[AgentMessage], *, first_turn_started: bool) -> None:
        config = self.config
        turn_started = first_turn_started
        pending = pending + await self.poll(config.get_steering_messages)
        force_next = False
        while True:
            has_more_tool_calls = True
            while has_more_tool_calls or pending:
                if not turn_started:
                    await self.emit(TurnStartEvent())
                turn_started = False
                force_next = False
                # Declare the executable tools whenever they differ from the transcript's.
                pending = declare_tool_changes(self.context.messages, pending, self.context.tools)
                for message in pending:
                    await self.publish(message)
                pending = []

                assistant, started = await self.request()
                await self.publish(assistant, started=started)
                if assistant.stop_reason in ("error", "aborted"):
                    await self.finish(assistant, ())
                    await self.emit(TurnEndEvent(assistant, ()))
                    return

                results: tuple[ToolResultMessage, ...] = ()
                has_more_tool_calls = False
                if assistant.tool_calls:
                    batch = await execute_tool_calls(
                        assistant,
                        tools=self.context.tools,
                        mode=config.tool_execution,
                        before_tool_call=config.before_tool_call,
                        after_tool_call=config.after_tool_call,
                        signal=self.signal,
                        emit=self._emit,
                        context=self.context,
                    )
                    results = batch.messages
                    for result in results:
                        self.context.messages.append(result)
                        self.new_messages.append(result)
                    has_more_tool_calls = not batch.terminate

                action = await self.finish(assistant, results)
                await self.emit(TurnEndEvent(assistant, results))
                if action == "end":
                    return
                force_next = action == "continue"
                if (has_more_tool_calls or force_next) and config.prepare_next_turn is not None:
                    await self.prepare_next(assistant, results, pending)
                pending.extend(await self.poll(config.get_steering_messages))
            follow_ups = await self.poll(config.get_follow_up_messages)
            if follow_ups:
                pending = follow_ups
            elif not force_next:
                return
            # else: finish_turn asked to continue and nothing else will: one
            # context-only request.

    async def prepare_next(
        self,
        assistant: AssistantMessage,
        results: tuple[ToolResultMessage, ...],
        pending: list[AgentMessage],
    ) -> None:
        hook = self.config.prepare_next_turn
        assert hook is not None
        prepared = await _call(hook, NextTurnContext(assistant, results, self.context))
        if prepared is None:
            return
        if not isinstance(prepared, NextTurn):
            raise ConfigurationError(
                f"prepare_next_turn must return a NextTurn or None, got {type(prepared).__name__}"
            )
        if prepared.context is not None:
            self.replace_context(prepared.context)
        pending.extend(prepared.messages)

    def replace_context(self, replacement: AgentContext) -> None:
        self.context = AgentContext(
            messages=list(replacement.messages),
            tools=list(replacement.tools),
            system_prompt=replacement.system_prompt,
        )

    async def finish(
        self, assistant: AssistantMessage, results: tuple[ToolResultMessage, ...]
    ) -> str | None:
        hook = self.config.finish_turn
        if hook is None:
            return None
        decision = await _call(hook, FinishTurnContext(assistant, results, self.context))
        if decision is None:
            return None
        if isinstance(decision, FinishTurnResult):
            return decision.action
        raise ConfigurationError(
            f"finish_turn must return a FinishTurnResult or None, got {type(decision).__name__}"
        )


async def run_agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    emit: EmitFn,
    signal: AbortSignal | None = None,
) -> list[AgentMessage]:
    """Run the loop for ``prompts``, sending every event to ``emit`` (sync or async).

    Returns the messages the run added (prompts included). ``context`` is not
    mutated.
    """
    run = _Run(context, config, signal, emit)
    await run.emit(AgentStartEvent())
    await run.emit(TurnStartEvent())
    await run.run(list(prompts), first_turn_started=True)
    await run.emit(AgentEndEvent(tuple(run.new_messages)))
    return run.new_messages


def _check_continuable(context: AgentContext) -> None:
    if not context.messages:
        raise ConfigurationError("Cannot continue: no messages in context")
    role = getattr(context.messages[-1], "role", None)
    if role == "assistant":
        raise ConfigurationError("Cannot continue from message role: assistant")


async def run_agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    emit: EmitFn,
    signal: AbortSignal | None = None,
) -> list[AgentMessage]:
    """Continue from the context's transcript (its last message must not be the assistant's)."""
    _check_continuable(context)
    run = _Run(context, config, signal, emit)
    await run.emit(AgentStartEvent())
    await run.emit(TurnStartEvent())
    await run.run([], first_turn_started=True)
    await run.emit(AgentEndEvent(tuple(run.new_messages)))
    return run.new_messages


async def _stream(
    start: Callable[[EmitFn], Awaitable[list[AgentMessage]]],
) -> AsyncIterator[AgentEvent]:
    send: MemoryObjectSendStream[AgentEvent]
    send, receive = anyio.create_memory_object_stream[AgentEvent](math.inf)
    failure: list[BaseException] = []

    async def producer() -> None:
        async with send:
            try:
                await start(send.send_nowait)
            except Exception as exc:
                failure.append(exc)

    closed_early = False
    async with anyio.create_task_group() as group:
        group.start_soon(producer)
        try:
            async for event in receive:
                yield event  # the producer never raises, so the group never cancels us
        except GeneratorExit:  # the consumer closed the iterator: stop the loop
            closed_early = True
            group.cancel_scope.cancel()
        finally:
            receive.close()
    if failure and not closed_early:
        raise failure[0]


def agent_loop(
    prompts: Sequence[AgentMessage],
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
) -> AsyncIterator[AgentEvent]:
    """Run the loop for ``prompts``; iterate the returned async iterator for its events.

    The loop runs in a task of its own and events are delivered live. Iterate to
    the end (the last event is ``agent_end``), or close the iterator
    (``contextlib.aclosing``) to stop early. An exception of ``stream_fn`` or a
    hook of the loop is re-raised by the iterator after the events before it.
    """

    async def start(emit: EmitFn) -> list[AgentMessage]:
        return await run_agent_loop(prompts, context, config, emit, signal)

    return _stream(start)


def agent_loop_continue(
    context: AgentContext,
    config: AgentLoopConfig,
    signal: AbortSignal | None = None,
) -> AsyncIterator[AgentEvent]:
    """Continue from ``context`` (pi ``agentLoopContinue``); no user message events.

    Raises :class:`ConfigurationError` at once for an empty context
    (``Cannot continue: no messages in context``) or one that ends with an
    assistant message (``Cannot continue from message role: assistant``).
    """
    _check_continuable(context)

    async def start(emit: EmitFn) -> list[AgentMessage]:
        return await run_agent_loop_continue(context, config, emit, signal)

    return _stream(start)
