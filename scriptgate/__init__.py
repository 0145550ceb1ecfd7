"""scriptgate: code mode for agents, with every scripted tool call gated like a direct one.

The most used names are re-exported here; the layers are :mod:`scriptgate.runtime`
(tools, validation, one call and one batch, hooks, policy, audit),
:mod:`scriptgate.sandbox` (running model-written Python) and :mod:`scriptgate.tools`
(file tools, MCP).
"""

from __future__ import annotations

from typing import Any

from scriptgate.agent import Agent
from scriptgate.errors import (
    ConfigurationError,
    SchemaCompileError,
    ScriptgateError,
    ToolArgumentsError,
    ToolDefinitionError,
)
from scriptgate.runtime.abort import AbortController, AbortError, AbortSignal
from scriptgate.runtime.audit import AuditLog
from scriptgate.runtime.batch import ToolBatch, execute_tool_calls
from scriptgate.runtime.hooks import compose_hooks
from scriptgate.runtime.loop import AgentLoopConfig, agent_loop, run_agent_loop
from scriptgate.runtime.paths import PathArguments, ResolvedPath
from scriptgate.runtime.pipeline import ToolCallOutcome, run_tool_call
from scriptgate.runtime.policy import Policy, Rule
from scriptgate.runtime.schema import compile_schema
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
from scriptgate.runtime.validation import validate_tool_arguments
from scriptgate.runtime.wire import from_wire, to_wire
from scriptgate.sandbox import (
    CallRecord,
    Limits,
    RunEvent,
    Sandbox,
    SandboxSession,
    ScriptError,
    ScriptResult,
    ToolDenied,
    ToolError,
    codemode_tool,
    render_stubs,
)
from scriptgate.tools.files import file_tools

__version__ = "0.1.0"


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext scriptgate``: register the ``%%scriptgate`` cell magic."""
    from scriptgate.jupyter import load_ipython_extension as load

    load(ipython)


__all__ = [
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AfterToolCallContext",
    "AfterToolCallResult",
    "Agent",
    "AgentContext",
    "AgentLoopConfig",
    "AgentTool",
    "AgentToolResult",
    "AssistantMessage",
    "AuditLog",
    "BeforeToolCallContext",
    "BeforeToolCallResult",
    "CallRecord",
    "ConfigurationError",
    "ImageContent",
    "Limits",
    "PathArguments",
    "Policy",
    "ResolvedPath",
    "Rule",
    "RunEvent",
    "Sandbox",
    "SandboxSession",
    "SchemaCompileError",
    "ScriptError",
    "ScriptResult",
    "ScriptgateError",
    "SystemMessage",
    "TextContent",
    "ToolArgumentsError",
    "ToolBatch",
    "ToolCall",
    "ToolCallOutcome",
    "ToolDefinitionError",
    "ToolDenied",
    "ToolError",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "__version__",
    "agent_loop",
    "codemode_tool",
    "compile_schema",
    "compose_hooks",
    "execute_tool_calls",
    "file_tools",
    "from_wire",
    "load_ipython_extension",
    "render_stubs",
    "run_agent_loop",
    "run_tool_call",
    "to_wire",
    "tool",
    "validate_tool_arguments",
]
