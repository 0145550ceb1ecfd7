"""What every framework bridge shares: one call through the pipeline, and results from values.

Owns the framework-neutral half of :mod:`scriptgate.integrations`: running an
:class:`~scriptgate.AgentTool` for a framework through :func:`~scriptgate.run_tool_call`
(so validation and the hooks always apply), and turning the value a framework's
tool returned into an :class:`~scriptgate.AgentToolResult`. It imports no framework
and only public scriptgate names.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from typing import Any, TypeAlias, TypeVar

import anyio.to_thread
import pydantic_core

from scriptgate import (
    AbortSignal,
    AfterToolCallContext,
    AfterToolCallResult,
    AgentTool,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ToolCall,
    ToolCallOutcome,
    run_tool_call,
)

__all__ = [
    "AfterHook",
    "BeforeHook",
    "missing_extra",
    "on_asyncio",
    "parse_arguments",
    "result_from_value",
    "run_for_framework",
]


BeforeHook: TypeAlias = Callable[
    [BeforeToolCallContext, "AbortSignal | None"],
    "BeforeToolCallResult | Awaitable[BeforeToolCallResult | None] | None",
]
"""A ``before_tool_call`` hook (sync or async), as :func:`scriptgate.run_tool_call` takes it."""

AfterHook: TypeAlias = Callable[
    [AfterToolCallContext, "AbortSignal | None"],
    "AfterToolCallResult | Awaitable[AfterToolCallResult | None] | None",
]
"""An ``after_tool_call`` hook (sync or async), as :func:`scriptgate.run_tool_call` takes it."""


T = TypeVar("T")


async def on_asyncio(start: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Await ``start()`` on asyncio, whatever loop runs the caller.

    Frameworks written against asyncio (their sync tools go through
    ``loop.run_in_executor``) need a running asyncio loop. Under asyncio the
    coroutine is awaited here; under another anyio backend (trio) it runs on its
    own asyncio loop in a worker thread. There, cancelling the caller abandons the
    thread: the framework's call finishes on its own.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return await anyio.to_thread.run_sync(asyncio.run, start(), abandon_on_cancel=True)
    return await start()


def missing_extra(framework: str, extra: str) -> ImportError:
    """The one-line error for an integration whose framework is not installed."""
    return ImportError(
        f"scriptgate's {framework} integration needs {framework}: pip install 'scriptgate[{extra}]'"
    )


def parse_arguments(raw: str | Mapping[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """A framework's tool arguments as ``(arguments, arguments_error)`` for a :class:`ToolCall`.

    A mapping is taken as is; a string must be a JSON object (else the arguments are
    ``{}`` and the error says why, which validation reports to the model as pi does).
    """
    if raw is None:
        return {}, None
    if isinstance(raw, Mapping):
        return dict(raw), None
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        return {}, f"arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, "arguments must be a JSON object"
    return value, None


async def run_for_framework(
    tool: AgentTool,
    arguments: str | Mapping[str, Any] | None,
    *,
    tool_call_id: str | None,
    before_tool_call: BeforeHook | None,
    after_tool_call: AfterHook | None,
    signal: AbortSignal | None = None,
) -> ToolCallOutcome:
    """Run ``tool`` once with a framework's arguments through the whole pipeline.

    Never raises for a tool failure (bad arguments, a bad ``@options`` line, a
    block, an exception from the tool): the outcome has ``is_error`` set.
    """
    args, error = parse_arguments(arguments)
    call = ToolCall(
        id=tool_call_id or f"{tool.name}-{uuid.uuid4().hex[:12]}",
        name=tool.name,
        arguments=args,
        arguments_error=error,
    )
    return await run_tool_call(
        call,
        tools=[tool],
        before_tool_call=before_tool_call,
        after_tool_call=after_tool_call,
        signal=signal,
    )


def result_from_value(value: Any, *, structured: bool) -> AgentToolResult:
    """The result of a framework tool that returned ``value``.

    The text is the value itself when it is a string, else its JSON (pydantic
    models, dataclasses and the like are converted the way pydantic serialises
    them). With ``structured`` the JSON-compatible value is also the result's
    ``structured_content``, so a script receives the data, not its text.
    """
    plain = pydantic_core.to_jsonable_python(value, fallback=repr)
    text = value if isinstance(value, str) else json.dumps(plain, ensure_ascii=False)
    return AgentToolResult.text(text, structured_content=plain if structured else None)
