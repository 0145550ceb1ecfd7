"""scriptgate: code mode for agents, with every scripted tool call gated like a direct one."""

from __future__ import annotations

from scriptgate.errors import (
    ConfigurationError,
    SchemaCompileError,
    ScriptgateError,
    ToolArgumentsError,
    ToolDefinitionError,
)
from scriptgate.runtime.abort import AbortController, AbortError, AbortSignal
from scriptgate.runtime.tool import AgentTool, tool
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentContext,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallResult,
    ImageContent,
    SystemMessage,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from scriptgate.runtime.wire import from_wire, to_wire

__version__ = "0.1.0"

__all__ = [
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "AgentContext",
    "AgentTool",
    "AgentToolResult",
    "AssistantMessage",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "ConfigurationError",
    "ImageContent",
    "SchemaCompileError",
    "ScriptgateError",
    "SystemMessage",
    "TextContent",
    "ToolArgumentsError",
    "ToolCall",
    "ToolDefinitionError",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "__version__",
    "from_wire",
    "to_wire",
    "tool",
]
