"""One tool call, the way pi 1.6.0 runs it (pi §3.2–3.4, §4).

The pipeline has three steps, shared by :func:`run_tool_call` (nested and
scripted calls: no events, no messages) and by the batch code in
:mod:`scriptgate.runtime.batch` (model-issued calls):

1. :func:`prepare_tool_call` — abort check, lookup by exact name, the
   ``prepare_arguments`` shim, validation, path resolution (a tool's declared
   ``paths``, :mod:`scriptgate.runtime.paths`), ``before_tool_call``. It returns
   either a :class:`PreparedToolCall` or an *immediate* :class:`ToolCallOutcome`
   (an error result that never ran ``execute``).
2. :func:`execute_prepared_tool_call` — ``execute`` under a monotonic clock;
   partial results are forwarded only while ``execute`` runs.
3. :func:`finalize_executed_tool_call` — ``after_tool_call`` with field-level
   replacement (pi §3.7).

Tool failures never raise out of these steps: they come back as error results
(``details == {}``, the message as text). Cancellation (anyio) does propagate.

The observers of a composed before hook (an audit log) are told, on the slow
paths only, of calls the hooks never see (:mod:`scriptgate.runtime.observe`):
unknown tool, invalid arguments, an abort, and a call cut off while it ran.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import anyio
import anyio.from_thread
import anyio.to_thread

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.observe import notify_cut_off, notify_refused
from scriptgate.runtime.paths import resolve_arguments
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallHook,
    AfterToolCallResult,
    AgentContext,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallHook,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
)
from scriptgate.runtime.validation import validate_tool_arguments

__all__ = [
    "ABORTED_TEXT",
    "BLOCKED_TEXT",
    "CUT_OFF_TEXT",
    "ExecutedToolCall",
    "PreparedToolCall",
    "ToolCallOutcome",
    "ToolList",
    "UpdateSink",
    "error_message",
    "execute_prepared_tool_call",
    "finalize_executed_tool_call",
    "find_tool",
    "not_found_text",
    "prepare_tool_call",
    "run_tool_call",
]

ABORTED_TEXT = "Operation aborted"
"""The text of the error result of a call made (or left) after an abort."""

BLOCKED_TEXT = "Tool execution was blocked"
"""The default text of a call blocked by ``before_tool_call`` without a reason."""

ToolList: TypeAlias = Sequence[AgentTool] | Mapping[str, AgentTool]
"""The tools a call resolves against: a sequence (first exact name wins) or a name map."""

UpdateSink: TypeAlias = Callable[[Any], object]
"""Receives partial results; may return an awaitable, which is awaited before the call ends."""


def not_found_text(name: str) -> str:
    """pi's text for an unknown tool: ``Tool <name> not found`` (no quotes)."""
    return f"Tool {name} not found"


@dataclass(frozen=True, slots=True)
class ToolCallOutcome:
    """The outcome of one tool call (pi ``AgentToolCallOutcome``, §1.4).

    - ``tool_call``: the call as given (before any ``prepare_arguments`` rewrite);
    - ``result``: the finalized result (after ``after_tool_call``);
    - ``is_error``: whether the model sees it as an error;
    - ``duration_ms``: how long ``execute`` alone took, rounded; ``None`` when it
      never ran.

    Additions to pi's shape: ``blocked`` is True when ``before_tool_call`` blocked
    the call, ``aborted`` when the call got ``Operation aborted``.
    """

    tool_call: ToolCall
    result: AgentToolResult
    is_error: bool
    duration_ms: int | None = None
    blocked: bool = False
    aborted: bool = False


@dataclass(slots=True)
class PreparedToolCall:
    """A call that passed preflight: the original call, its tool and the validated ``args``.

    ``args`` is the very object ``before_tool_call`` saw, so its mutations reach
    ``execute`` without revalidation (pi §3.2).
    """

    tool_call: ToolCall
    tool: AgentTool
    args: Any
    before_tool_call: BeforeToolCallHook | None = None
    """The before hook that gated the call (its observers hear of a cut-off)."""


CUT_OFF_TEXT = "The call was cut off (cancelled, aborted or timed out) before it finished"
"""What observers are told about a call cancelled while it ran."""


@dataclass(slots=True)
class ExecutedToolCall:
    """What ``execute`` produced, before ``after_tool_call``."""

    result: AgentToolResult
    is_error: bool
    duration_ms: int | None


def error_message(exc: BaseException) -> str:
    """The model-facing text of a raised exception (pi: ``Error.message``).

    ``str(exc)``; the class name when that is empty.
    """
    text = str(exc)
    return text if text else type(exc).__name__


async def _run_sync_tool(
    tool: AgentTool, call_id: str, params: Any, signal: AbortSignal | None, callback: Any
) -> Any:
    """A sync ``execute``: inline when the tool is ``blocking=False``, else in a worker thread.

    The thread is abandoned when the call is cancelled (a deadline, an abort): the
    caller goes on at once and the call ends ``cancelled``; the thread finishes on
    its own (its result is dropped), so a stuck tool cannot hold a deadline.
    """
    if not getattr(tool, "blocking", True):
        return tool.execute(call_id, params, signal, callback)
    return await anyio.to_thread.run_sync(
        tool.execute, call_id, params, signal, callback, abandon_on_cancel=True
    )


def _error_result(text: str) -> AgentToolResult:
    return AgentToolResult(content=(TextContent(text),), details={})


def _immediate(tool_call: ToolCall, text: str, *, aborted: bool = False) -> ToolCallOutcome:
    return ToolCallOutcome(tool_call, _error_result(text), True, None, aborted=aborted)


def _refused(before_tool_call: Any, tool_call: ToolCall, text: str, status: str) -> ToolCallOutcome:
    """The immediate outcome of a call that never reached the gate; its observers are told."""
    if before_tool_call is not None:
        notify_refused(before_tool_call, tool_call, status, text)
    return _immediate(tool_call, text, aborted=status == "aborted")


def find_tool(tools: ToolList, name: str) -> AgentTool | None:
    """The tool named exactly ``name`` (first match in a sequence), or ``None``."""
    if not isinstance(tools, (list, tuple)) and isinstance(tools, Mapping):
        return tools.get(name)
    for candidate in tools:
        if candidate.name == name:
            return candidate
    return None


def _shimmed(tool: AgentTool, tool_call: ToolCall) -> ToolCall:
    """``tool_call`` with the tool's argument shim applied (pi §3.2 step 1)."""
    shim = tool.prepare_arguments
    if shim is not None:
        shimmed = shim(tool_call.arguments)
        if shimmed is not tool_call.arguments:
            return dataclasses.replace(tool_call, arguments=shimmed)
    return tool_call


def _blocked(tool_call: ToolCall, decision: Any) -> ToolCallOutcome | None:
    """The outcome of a ``before_tool_call`` decision that blocks the call, else None."""
    if not isinstance(decision, BeforeToolCallResult):
        raise TypeError(
            "before_tool_call must return a BeforeToolCallResult or None, "
            f"got {type(decision).__name__}"
        )
    if not decision.block:
        return None
    result = AgentToolResult(
        content=(TextContent(decision.reason or BLOCKED_TEXT),),
        details={},
        terminate=decision.terminate is True,
    )
    return ToolCallOutcome(tool_call, result, True, None, blocked=True)


async def prepare_tool_call(
    tool_call: ToolCall,
    *,
    tools: ToolList,
    before_tool_call: BeforeToolCallHook | None = None,
    signal: AbortSignal | None = None,
    assistant_message: AssistantMessage | None = None,
    context: AgentContext | None = None,
) -> PreparedToolCall | ToolCallOutcome:
    """Preflight one call (pi §3.2); an immediate outcome means ``execute`` must not run."""
    if signal is not None and signal.aborted:
        return _refused(before_tool_call, tool_call, ABORTED_TEXT, "aborted")
    tool = find_tool(tools, tool_call.name)
    if tool is None:
        return _refused(before_tool_call, tool_call, not_found_text(tool_call.name), "invalid")
    try:
        args = validate_tool_arguments(tool, _shimmed(tool, tool_call))
        if tool.paths is not None:
            args = resolve_arguments(tool.paths, args)
    except Exception as exc:
        return _refused(before_tool_call, tool_call, error_message(exc), "invalid")
    try:
        if before_tool_call is not None:
            decision: Any = before_tool_call(
                BeforeToolCallContext(assistant_message, tool_call, args, context), signal
            )
            if inspect.isawaitable(decision):
                decision = await decision
            if signal is not None and signal.aborted:
                notify_cut_off(before_tool_call, tool_call, "aborted", ABORTED_TEXT)
                return _immediate(tool_call, ABORTED_TEXT, aborted=True)
            if decision is not None:
                blocked = _blocked(tool_call, decision)
                if blocked is not None:
                    return blocked
    except Exception as exc:
        return _immediate(tool_call, error_message(exc))
    return PreparedToolCall(tool_call, tool, args, before_tool_call)


def _ignore_update(partial: Any) -> None:
    """The ``on_update`` a tool gets when nobody listens."""


class _Updates:
    """Forwards partial results to a sink while ``execute`` runs (pi §3.3, #5573).

    Calls from the event-loop thread are delivered at once; calls from a worker
    thread (a sync tool) are delivered on the loop thread. Awaitables the sink
    returns are awaited, in order, before the call ends.
    """

    __slots__ = ("accepting", "loop_thread", "pending", "sink")

    def __init__(self, sink: UpdateSink) -> None:
        self.sink = sink
        self.accepting = True
        self.pending: list[Awaitable[Any]] = []
        self.loop_thread = threading.get_ident()

    def _deliver(self, partial: Any) -> None:
        if not self.accepting:
            return
        returned = self.sink(partial)
        if inspect.isawaitable(returned):
            self.pending.append(returned)

    def __call__(self, partial: Any) -> None:
        if not self.accepting:
            return
        if threading.get_ident() == self.loop_thread:
            self._deliver(partial)
            return
        try:
            anyio.from_thread.run_sync(self._deliver, partial)
        except RuntimeError:
            # Not an anyio worker thread (a thread the tool started itself), or the
            # loop is gone: there is no safe way to deliver, so the update is dropped.
            return

    async def drain(self) -> None:
        self.accepting = False
        pending, self.pending = self.pending, []
        for awaitable in pending:
            await awaitable


def _elapsed_ms(start_ns: int) -> int:
    """Rounded milliseconds since ``start_ns`` (JS ``Math.round``: halves go up)."""
    return (time.perf_counter_ns() - start_ns + 500_000) // 1_000_000


async def execute_prepared_tool_call(
    prepared: PreparedToolCall,
    *,
    signal: AbortSignal | None = None,
    on_update: UpdateSink | None = None,
) -> ExecutedToolCall:
    """Run ``execute`` (pi §3.3); a raised exception becomes an error result.

    ``duration_ms`` covers ``execute`` alone and is measured before pending
    update deliveries are awaited.
    """
    tool = prepared.tool
    call_id = prepared.tool_call.id
    updates = _Updates(on_update) if on_update is not None else None
    callback: Callable[[Any], None] = updates if updates is not None else _ignore_update
    try:
        params = tool.build_params(prepared.args)
    except Exception as exc:
        if updates is not None:
            await updates.drain()
        return ExecutedToolCall(_error_result(error_message(exc)), True, None)
    start = time.perf_counter_ns()
    try:
        if tool.is_async:
            result: Any = await tool.execute(call_id, params, signal, callback)  # type: ignore[misc]
        else:
            result = await _run_sync_tool(tool, call_id, params, signal, callback)
            if inspect.isawaitable(result):
                result = await result
    except Exception as exc:
        duration = _elapsed_ms(start)
        if updates is not None:
            await updates.drain()
        return ExecutedToolCall(_error_result(error_message(exc)), True, duration)
    except BaseException:  # cancelled (a deadline, an abort): the observers log the cut-off
        notify_cut_off(prepared.before_tool_call, prepared.tool_call, "cancelled", CUT_OFF_TEXT)
        raise
    duration = _elapsed_ms(start)
    if updates is not None:
        await updates.drain()
    if not isinstance(result, AgentToolResult):
        text = f"Tool {tool.name} returned {type(result).__name__} instead of an AgentToolResult"
        return ExecutedToolCall(_error_result(text), True, duration)
    return ExecutedToolCall(result, result.is_error is True, duration)


def _merge(result: AgentToolResult, override: AfterToolCallResult) -> AgentToolResult:
    """pi §3.7: each field replaced when not ``None``; ``structured_content`` dropped
    when only ``content`` is replaced."""
    if override.structured_content is not None:
        structured = override.structured_content
    elif override.content is not None:
        structured = None
    else:
        structured = result.structured_content
    return AgentToolResult(
        content=override.content if override.content is not None else result.content,
        details=override.details if override.details is not None else result.details,
        structured_content=structured,
        usage=override.usage if override.usage is not None else result.usage,
        is_error=override.is_error if override.is_error is not None else result.is_error,
        terminate=override.terminate if override.terminate is not None else result.terminate,
    )


async def finalize_executed_tool_call(
    prepared: PreparedToolCall,
    executed: ExecutedToolCall,
    *,
    after_tool_call: AfterToolCallHook | None = None,
    signal: AbortSignal | None = None,
    assistant_message: AssistantMessage | None = None,
    context: AgentContext | None = None,
) -> ToolCallOutcome:
    """Apply ``after_tool_call`` (pi §3.4); a raising hook gives an error result.

    ``duration_ms`` is kept in every case.
    """
    result = executed.result
    is_error = executed.is_error
    if after_tool_call is not None:
        try:
            override: Any = after_tool_call(
                AfterToolCallContext(
                    assistant_message,
                    prepared.tool_call,
                    prepared.args,
                    result,
                    is_error,
                    context,
                ),
                signal,
            )
            if inspect.isawaitable(override):
                override = await override
            if override is not None:
                if not isinstance(override, AfterToolCallResult):
                    raise TypeError(
                        "after_tool_call must return an AfterToolCallResult or None, "
                        f"got {type(override).__name__}"
                    )
                result = _merge(result, override)
                if override.is_error is not None:
                    is_error = override.is_error
        except Exception as exc:
            result = _error_result(error_message(exc))
            is_error = True
        except BaseException:  # cancelled inside an after hook
            notify_cut_off(prepared.before_tool_call, prepared.tool_call, "cancelled", CUT_OFF_TEXT)
            raise
    return ToolCallOutcome(prepared.tool_call, result, is_error, executed.duration_ms)


async def run_tool_call(
    tool_call: ToolCall,
    *,
    tools: ToolList,
    before_tool_call: BeforeToolCallHook | None = None,
    after_tool_call: AfterToolCallHook | None = None,
    signal: AbortSignal | None = None,
    on_update: UpdateSink | None = None,
    assistant_message: AssistantMessage | None = None,
    context: AgentContext | None = None,
) -> ToolCallOutcome:
    """Run one call through the same steps as a model-issued call (pi §4).

    No events, no messages, no ``execution_mode`` or terminate handling. It never
    raises for a tool failure: an aborted signal, an unknown tool, bad arguments,
    a block, or an exception from the tool or a hook all come back as an outcome
    with ``is_error=True``. ``on_update`` receives the tool's partial results
    (sync or async; it is not called after ``execute`` settles).

    The three steps (:func:`prepare_tool_call`, :func:`execute_prepared_tool_call`,
    :func:`finalize_executed_tool_call`) run here as one coroutine, their code
    written out in the same order (a script's tool calls all come through here, and
    three nested coroutines called with keywords cost more than a fast tool):
    keep both in step. ``tests/runtime/test_run_tool_call_steps.py`` runs every
    path both ways and compares the outcomes.
    """
    # -- prepare_tool_call
    if signal is not None and signal.aborted:
        return _refused(before_tool_call, tool_call, ABORTED_TEXT, "aborted")
    tool = find_tool(tools, tool_call.name)
    if tool is None:
        return _refused(before_tool_call, tool_call, not_found_text(tool_call.name), "invalid")
    try:
        args = validate_tool_arguments(tool, _shimmed(tool, tool_call))
        if tool.paths is not None:
            args = resolve_arguments(tool.paths, args)
    except Exception as exc:
        return _refused(before_tool_call, tool_call, error_message(exc), "invalid")
    try:
        if before_tool_call is not None:
            decision: Any = before_tool_call(
                BeforeToolCallContext(assistant_message, tool_call, args, context), signal
            )
            if inspect.isawaitable(decision):
                decision = await decision
            if signal is not None and signal.aborted:
                notify_cut_off(before_tool_call, tool_call, "aborted", ABORTED_TEXT)
                return _immediate(tool_call, ABORTED_TEXT, aborted=True)
            if decision is not None:
                blocked = _blocked(tool_call, decision)
                if blocked is not None:
                    return blocked
    except Exception as exc:
        return _immediate(tool_call, error_message(exc))
    # -- execute_prepared_tool_call
    updates = _Updates(on_update) if on_update is not None else None
    callback: Callable[[Any], None] = updates if updates is not None else _ignore_update
    executed: Any
    duration: int | None
    try:
        if type(tool).build_params is _BUILD_PARAMS and tool.params_model is None:
            params = args  # (what AgentTool.build_params returns)
        else:
            params = tool.build_params(args)
    except Exception as exc:
        if updates is not None:
            await updates.drain()
        executed, is_error, duration = _error_result(error_message(exc)), True, None
    else:
        start = time.perf_counter_ns()
        try:
            if tool.is_async:
                executed = await tool.execute(tool_call.id, params, signal, callback)  # type: ignore[misc]
            else:
                executed = await _run_sync_tool(tool, tool_call.id, params, signal, callback)
                if inspect.isawaitable(executed):
                    executed = await executed
        except Exception as exc:
            duration = _elapsed_ms(start)
            if updates is not None:
                await updates.drain()
            executed, is_error = _error_result(error_message(exc)), True
        except BaseException:  # cancelled (a deadline, an abort): the observers log the cut-off
            notify_cut_off(before_tool_call, tool_call, "cancelled", CUT_OFF_TEXT)
            raise
        else:
            duration = _elapsed_ms(start)
            if updates is not None:
                await updates.drain()
            if not isinstance(executed, AgentToolResult):
                text = (
                    f"Tool {tool.name} returned {type(executed).__name__} "
                    "instead of an AgentToolResult"
                )
                executed, is_error = _error_result(text), True
            else:
                is_error = executed.is_error is True
    # -- finalize_executed_tool_call
    result: AgentToolResult = executed
    if after_tool_call is not None:
        try:
            override: Any = after_tool_call(
                AfterToolCallContext(assistant_message, tool_call, args, result, is_error, context),
                signal,
            )
            if inspect.isawaitable(override):
                override = await override
            if override is not None:
                if not isinstance(override, AfterToolCallResult):
                    raise TypeError(
                        "after_tool_call must return an AfterToolCallResult or None, "
                        f"got {type(override).__name__}"
                    )
                result = _merge(result, override)
                if override.is_error is not None:
                    is_error = override.is_error
        except Exception as exc:
            result = _error_result(error_message(exc))
            is_error = True
        except BaseException:  # cancelled inside an after hook
            notify_cut_off(before_tool_call, tool_call, "cancelled", CUT_OFF_TEXT)
            raise
    return _outcome(tool_call, result, is_error, duration)


_BUILD_PARAMS = AgentTool.build_params
_new = object.__new__
(_SET_CALL, _SET_RESULT, _SET_IS_ERROR, _SET_DURATION, _SET_BLOCKED, _SET_ABORTED) = (
    ToolCallOutcome.__dict__[f.name].__set__ for f in dataclasses.fields(ToolCallOutcome)
)


def _outcome(
    tool_call: ToolCall, result: AgentToolResult, is_error: bool, duration_ms: int | None
) -> ToolCallOutcome:
    """``ToolCallOutcome(tool_call, result, is_error, duration_ms)`` without its ``__init__``.

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``;
    its slots' own setters make the same object for a fraction of the cost (the
    class has no ``__post_init__``).
    """
    outcome: ToolCallOutcome = _new(ToolCallOutcome)
    _SET_CALL(outcome, tool_call)
    _SET_RESULT(outcome, result)
    _SET_IS_ERROR(outcome, is_error)
    _SET_DURATION(outcome, duration_ms)
    _SET_BLOCKED(outcome, False)
    _SET_ABORTED(outcome, False)
    return outcome
