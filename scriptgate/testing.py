"""Deterministic stand-ins for tests, notebooks and examples.

:class:`FakeModel` is a scripted model usable as ``AgentLoopConfig.stream_fn``;
:func:`assistant_with_tool_calls`, :func:`assistant_text` and :func:`tool_call`
build the assistant messages it returns.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeAlias

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.loop import ModelContext, StreamOptions
from scriptgate.runtime.types import (
    AssistantMessage,
    StopReason,
    TextContent,
    ToolCall,
    Usage,
)

__all__ = [
    "FakeModel",
    "FakeResponse",
    "ToolCallSpec",
    "assistant_text",
    "assistant_with_tool_calls",
    "tool_call",
]

FakeResponse: TypeAlias = (
    AssistantMessage | Callable[[ModelContext], "AssistantMessage | Awaitable[AssistantMessage]"]
)
"""A scripted answer: a message, or a function of the request's context returning one."""

ToolCallSpec: TypeAlias = (
    ToolCall | tuple[str, Mapping[str, Any]] | tuple[str, str, Mapping[str, Any]] | str
)
"""A tool call, ``(name, arguments)``, ``(id, name, arguments)`` or a bare name."""

_ids = itertools.count(1)


def tool_call(
    name: str, arguments: Mapping[str, Any] | None = None, *, id: str | None = None
) -> ToolCall:
    """A :class:`ToolCall` block; ``id`` defaults to a fresh ``call-<n>``."""
    return ToolCall(
        id=id if id is not None else f"call-{next(_ids)}",
        name=name,
        arguments=dict(arguments or {}),
    )


def _to_call(spec: ToolCallSpec) -> ToolCall:
    if isinstance(spec, ToolCall):
        return spec
    if isinstance(spec, str):
        return tool_call(spec)
    if isinstance(spec, tuple) and len(spec) == 2:
        name, arguments = spec
        return tool_call(str(name), arguments)
    if isinstance(spec, tuple) and len(spec) == 3:
        call_id, name, arguments = spec
        return tool_call(str(name), arguments, id=str(call_id))
    raise TypeError(f"not a tool call spec: {spec!r}")


def assistant_with_tool_calls(
    *calls: ToolCallSpec,
    text: str | None = None,
    stop_reason: StopReason = "toolUse",
    usage: Usage | None = None,
    model: str = "fake",
) -> AssistantMessage:
    """An assistant message that calls tools (``stop_reason="toolUse"`` by default)."""
    content: list[Any] = []
    if text is not None:
        content.append(TextContent(text))
    content.extend(_to_call(spec) for spec in calls)
    return AssistantMessage(
        content=tuple(content),
        api="fake",
        provider="fake",
        model=model,
        usage=usage or Usage(),
        stop_reason=stop_reason,
    )


def assistant_text(
    text: str,
    *,
    stop_reason: StopReason = "stop",
    error_message: str | None = None,
    model: str = "fake",
) -> AssistantMessage:
    """An assistant message with one text block (``stop_reason="stop"`` by default)."""
    return AssistantMessage(
        content=(TextContent(text),) if text else (),
        api="fake",
        provider="fake",
        model=model,
        stop_reason=stop_reason,
        error_message=error_message,
    )


class FakeModel:
    """A scripted model: answers requests from a list, or with a function of the context.

    Use it as ``AgentLoopConfig(stream_fn=FakeModel([...]))``. Each request's
    :class:`ModelContext` is recorded in :attr:`contexts`. A request made with an
    aborted signal gets an ``aborted`` message (as a provider would). Asking a
    list-scripted model for more answers than it has raises
    :class:`~scriptgate.errors.ConfigurationError`.
    """

    def __init__(
        self,
        responses: Sequence[FakeResponse] | Callable[[ModelContext], Any],
    ) -> None:
        self._responses = responses
        #: The context of every request, in order.
        self.contexts: list[ModelContext] = []
        #: The ``model`` argument of every request.
        self.models: list[Any] = []
        #: The options of every request (``None`` when none were given).
        self.options: list[StreamOptions | None] = []

    @property
    def calls(self) -> int:
        """How many requests were made."""
        return len(self.contexts)

    async def __call__(
        self, model: Any, context: ModelContext, options: StreamOptions | None = None
    ) -> AssistantMessage:
        """Answer one request."""
        index = len(self.contexts)
        self.contexts.append(context)
        self.models.append(model)
        self.options.append(options)
        signal = options.signal if options is not None else None
        if signal is not None and signal.aborted:
            return assistant_text("", stop_reason="aborted", error_message="Request was aborted")
        responses = self._responses
        response: Any
        if callable(responses) and not isinstance(responses, Sequence):
            response = responses
        else:
            if index >= len(responses):
                raise ConfigurationError(
                    f"FakeModel has no response for request {index + 1} "
                    f"(it was scripted with {len(responses)})"
                )
            response = responses[index]
        if not isinstance(response, AssistantMessage):
            response = response(context)
            if inspect.isawaitable(response):
                response = await response
        if not isinstance(response, AssistantMessage):
            raise ConfigurationError(
                f"FakeModel response {index + 1} is {type(response).__name__}, "
                "not an AssistantMessage"
            )
        return response
