"""Messages, tool results, tool events and hook contracts (pi §1).

Every record is a frozen, slotted dataclass with pythonic field names. The JSON
wire form (pi's camelCase keys in pi's key order) is produced and parsed by
:mod:`scriptgate.runtime.wire`; field order here *is* the wire key order.

``None`` stands for JavaScript ``undefined``: an optional field that is ``None``
is omitted from the wire form.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from scriptgate.runtime.content import (
    AgentToolResult,
    Content,
    Cost,
    ImageContent,
    JsonValue,
    TextContent,
    Usage,
)

if TYPE_CHECKING:
    from scriptgate.runtime.abort import AbortSignal
    from scriptgate.runtime.tool import AgentTool

__all__ = [
    "AfterToolCallContext",
    "AfterToolCallHook",
    "AfterToolCallResult",
    "AgentContext",
    "AgentEndEvent",
    "AgentEvent",
    "AgentMessage",
    "AgentStartEvent",
    "AgentToolResult",
    "AssistantContent",
    "AssistantMessage",
    "BeforeToolCallContext",
    "BeforeToolCallHook",
    "BeforeToolCallResult",
    "Content",
    "Cost",
    "ImageContent",
    "JsonValue",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "StopReason",
    "SystemMessage",
    "TextContent",
    "ThinkingContent",
    "ToolCall",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "ToolRemoval",
    "ToolResultMessage",
    "TurnEndEvent",
    "TurnStartEvent",
    "Usage",
    "UserMessage",
    "now_ms",
]


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch (pi's ``Date.now()``), for timestamps."""
    return time.time_ns() // 1_000_000


# --------------------------------------------------------------------------- content


@dataclass(frozen=True, slots=True)
class ThinkingContent:
    """A reasoning block of an assistant message."""

    thinking: str
    thinking_signature: str | None = None
    type: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call: a content block of an assistant message (pi §1.1).

    ``arguments`` is always a JSON object. ``arguments_error`` is set by a parser
    when the model's complete argument text was not a JSON object; ``arguments``
    is then ``{}`` and validation fails with
    ``Invalid arguments for tool "<name>": <arguments_error>``.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    arguments_error: str | None = None
    type: Literal["toolCall"] = "toolCall"


AssistantContent: TypeAlias = TextContent | ThinkingContent | ImageContent | ToolCall


# --------------------------------------------------------------------------- messages

StopReason: TypeAlias = Literal["stop", "length", "toolUse", "error", "aborted"]


@dataclass(frozen=True, slots=True)
class ToolRemoval:
    """A ``{name}`` entry of ``SystemMessage.tools_removed``."""

    name: str


@dataclass(frozen=True, slots=True)
class SystemMessage:
    """A transcript system message; it can declare tool additions and removals (pi §6)."""

    content: str = ""
    sections: Mapping[str, str | None] | None = None
    tools_added: Sequence[Mapping[str, Any]] | None = None
    tools_removed: Sequence[ToolRemoval] | None = None
    timestamp: int = field(default_factory=now_ms)
    role: Literal["system"] = "system"


@dataclass(frozen=True, slots=True)
class UserMessage:
    """A user prompt: a string or content blocks."""

    content: str | Sequence[Content]
    timestamp: int = field(default_factory=now_ms)
    role: Literal["user"] = "user"


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """A model response: text, thinking and tool-call blocks, and why it stopped."""

    content: Sequence[AssistantContent] = ()
    api: str = ""
    provider: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    timestamp: int = field(default_factory=now_ms)
    role: Literal["assistant"] = "assistant"

    @property
    def tool_calls(self) -> list[ToolCall]:
        """The tool-call blocks, in source order."""
        return [block for block in self.content if isinstance(block, ToolCall)]


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """The transcript record of one tool result (pi §1.5; wire key order as emitted).

    ``structured_content`` and ``terminate`` are never copied here; ``duration_ms``
    is present only when ``execute`` ran.
    """

    tool_call_id: str
    tool_name: str
    content: Sequence[Content] = ()
    details: Any = None
    usage: Usage | None = None
    is_error: bool = False
    duration_ms: int | None = None
    timestamp: int = field(default_factory=now_ms)
    role: Literal["toolResult"] = "toolResult"


AgentMessage: TypeAlias = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage


@dataclass(slots=True)
class AgentContext:
    """What the loop passes around: the transcript and the executable tools."""

    messages: list[AgentMessage] = field(default_factory=list)
    tools: list[AgentTool] = field(default_factory=list)
    system_prompt: str | None = None


# --------------------------------------------------------------------------- events


@dataclass(frozen=True, slots=True)
class AgentStartEvent:
    """The loop started."""

    type: Literal["agent_start"] = "agent_start"


@dataclass(frozen=True, slots=True)
class AgentEndEvent:
    """The loop ended; ``messages`` are the messages it added."""

    messages: Sequence[AgentMessage] = ()
    type: Literal["agent_end"] = "agent_end"


@dataclass(frozen=True, slots=True)
class TurnStartEvent:
    """A turn (one model request and its tool batch) started."""

    type: Literal["turn_start"] = "turn_start"


@dataclass(frozen=True, slots=True)
class TurnEndEvent:
    """A turn ended; ``tool_results`` are in assistant source order."""

    message: AgentMessage
    tool_results: Sequence[ToolResultMessage] = ()
    type: Literal["turn_end"] = "turn_end"


@dataclass(frozen=True, slots=True)
class MessageStartEvent:
    """A message starts (for tool results: right before ``message_end``)."""

    message: AgentMessage
    type: Literal["message_start"] = "message_start"


@dataclass(frozen=True, slots=True)
class MessageUpdateEvent:
    """A streaming update of an assistant message: ``message`` is the partial
    message, ``assistant_message_event`` the provider event that produced it (a
    :class:`scriptgate.runtime.stream.AssistantMessageEvent`, when streamed)."""

    message: AgentMessage
    assistant_message_event: Any = None
    type: Literal["message_update"] = "message_update"


@dataclass(frozen=True, slots=True)
class MessageEndEvent:
    """A message is complete and part of the transcript."""

    message: AgentMessage
    type: Literal["message_end"] = "message_end"


@dataclass(frozen=True, slots=True)
class ToolExecutionStartEvent:
    """A tool call starts; ``args`` are the raw arguments (not coerced, not shimmed)."""

    tool_call_id: str
    tool_name: str
    args: Any
    type: Literal["tool_execution_start"] = "tool_execution_start"


@dataclass(frozen=True, slots=True)
class ToolExecutionUpdateEvent:
    """A partial result the tool passed to ``on_update`` while it ran."""

    tool_call_id: str
    tool_name: str
    args: Any
    partial_result: Any
    type: Literal["tool_execution_update"] = "tool_execution_update"


@dataclass(frozen=True, slots=True)
class ToolExecutionEndEvent:
    """A tool call finished; ``result`` is finalized (after ``after_tool_call``).

    ``duration_ms`` is ``None`` (and absent from the wire form) when the tool never ran.
    """

    tool_call_id: str
    tool_name: str
    result: AgentToolResult
    is_error: bool
    duration_ms: int | None = None
    type: Literal["tool_execution_end"] = "tool_execution_end"


AgentEvent: TypeAlias = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)


# --------------------------------------------------------------------------- hooks


@dataclass(frozen=True, slots=True)
class BeforeToolCallContext:
    """What ``before_tool_call`` sees (pi §1.7).

    ``tool_call`` is the original (pre-shim) call; ``args`` the validated,
    coerced arguments — the very object ``execute`` will receive, so a hook may
    mutate it (without revalidation, as in pi).
    """

    assistant_message: AssistantMessage | None
    tool_call: ToolCall
    args: Any
    context: AgentContext | None


@dataclass(frozen=True, slots=True)
class BeforeToolCallResult:
    """``block`` the call with ``reason`` (default ``Tool execution was blocked``)."""

    block: bool = False
    reason: str | None = None
    terminate: bool = False


@dataclass(frozen=True, slots=True)
class AfterToolCallContext:
    """What ``after_tool_call`` sees: the result before any override."""

    assistant_message: AssistantMessage | None
    tool_call: ToolCall
    args: Any
    result: AgentToolResult
    is_error: bool
    context: AgentContext | None


@dataclass(frozen=True, slots=True)
class AfterToolCallResult:
    """Field-level overrides of a result (pi §3.7); ``None`` means "keep".

    ``structured_content`` is dropped when ``content`` is replaced and no new
    ``structured_content`` is given.
    """

    content: Sequence[Content] | None = None
    details: Any = None
    structured_content: Any = None
    is_error: bool | None = None
    usage: Usage | None = None
    terminate: bool | None = None


BeforeToolCallHook: TypeAlias = Callable[
    [BeforeToolCallContext, "AbortSignal | None"],
    "BeforeToolCallResult | Awaitable[BeforeToolCallResult | None] | None",
]
"""``before_tool_call(ctx, signal)``: sync or async; return ``None`` to allow."""

AfterToolCallHook: TypeAlias = Callable[
    [AfterToolCallContext, "AbortSignal | None"],
    "AfterToolCallResult | Awaitable[AfterToolCallResult | None] | None",
]
"""``after_tool_call(ctx, signal)``: sync or async; return ``None`` to keep the result."""
