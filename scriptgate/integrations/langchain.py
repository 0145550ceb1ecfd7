"""LangChain, both directions (extra ``scriptgate[langchain]``, on ``langchain-core``).

- :func:`to_langchain` hands an :class:`~scriptgate.AgentTool` — above all the
  code-mode tool of :func:`~scriptgate.codemode_tool` — to LangChain as a
  ``StructuredTool`` with ``response_format="content_and_artifact"``: invoked with a
  tool call it gives a ``ToolMessage`` whose content is the result text and whose
  ``artifact`` is the result's ``details``. Each call runs through
  :func:`~scriptgate.run_tool_call` (scriptgate's validation and hooks). An error
  result — a failed script, bad arguments, a bad ``# @options:`` line, a blocked
  call — raises ``ToolException`` inside the tool, which the tool handles
  (``handle_tool_error=True``): the caller gets a ``ToolMessage`` with
  ``status="error"``, LangChain's error idiom, and no exception.
- :func:`from_langchain` turns any LangChain ``BaseTool`` into an ``AgentTool`` a
  script can call: its tool-call schema (as LangChain sends it to a model) goes
  through scriptgate's validator and hooks, then the tool is invoked with a tool
  call. A ``ToolMessage`` with ``status="error"`` becomes an error result; an
  exception the tool does not handle becomes an error result too. A tool with
  ``response_format="content_and_artifact"`` gives scripts its artifact as data.

Owns only the translation; it uses the public API of scriptgate and of langchain-core.
"""

from __future__ import annotations

import concurrent.futures
import functools
from typing import Any

import anyio

from scriptgate import AbortSignal, AgentTool, AgentToolResult, ConfigurationError, TextContent
from scriptgate.integrations._common import (
    AfterHook,
    BeforeHook,
    missing_extra,
    on_asyncio,
    result_from_value,
    run_for_framework,
)

try:
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as exc:
    raise missing_extra("langchain", "langchain") from exc

__all__ = ["from_langchain", "to_langchain"]


def to_langchain(
    tool: AgentTool,
    *,
    before_tool_call: BeforeHook | None = None,
    after_tool_call: AfterHook | None = None,
) -> StructuredTool:
    """``tool`` as a LangChain ``StructuredTool`` (same name, description, JSON schema).

    ``ainvoke`` is the native path; sync ``invoke`` runs the call on its own event
    loop in a worker thread (so it works from synchronous code and under a
    running loop alike).
    """
    if not isinstance(tool, AgentTool):
        raise ConfigurationError(f"to_langchain needs an AgentTool, got {tool!r}")

    async def call(**arguments: Any) -> tuple[str, Any]:
        outcome = await run_for_framework(
            tool,
            arguments,
            tool_call_id=None,
            before_tool_call=before_tool_call,
            after_tool_call=after_tool_call,
        )
        text = outcome.result.text_content()
        if outcome.is_error:
            raise ToolException(text)
        return text, outcome.result.details

    def call_sync(**arguments: Any) -> tuple[str, Any]:
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(anyio.run, functools.partial(call, **arguments)).result()

    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=dict(tool.parameters_schema),
        func=call_sync,
        coroutine=call,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def _message_text(content: Any) -> str:
    """A ``ToolMessage``'s content as text (text blocks joined, other blocks dropped)."""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def from_langchain(tool: BaseTool) -> AgentTool:
    """An :class:`~scriptgate.AgentTool` that runs a LangChain tool.

    The parameters are the tool's schema as LangChain declares it to a model
    (``convert_to_openai_tool``; injected arguments are not part of it). The tool
    is invoked with ``ainvoke`` and a tool call, so its own error handling
    applies: ``status="error"`` becomes an error result with the message's text.
    LangChain runs sync tools through asyncio: under trio the tool runs on its own
    asyncio loop in a worker thread.
    """
    if not isinstance(tool, BaseTool):
        raise ConfigurationError(f"from_langchain needs a langchain_core BaseTool, got {tool!r}")
    declared = convert_to_openai_tool(tool)["function"]
    parameters = declared.get("parameters") or {"type": "object", "properties": {}}
    with_artifact = tool.response_format == "content_and_artifact"

    async def execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: object
    ) -> AgentToolResult:
        call = {"type": "tool_call", "id": tool_call_id, "name": tool.name, "args": params}
        output = await on_asyncio(lambda: tool.ainvoke(call))
        if not isinstance(output, ToolMessage):
            return result_from_value(output, structured=False)
        text = _message_text(output.content)
        if output.status == "error":
            return AgentToolResult(content=(TextContent(text),), details={}, is_error=True)
        if with_artifact:
            artifact = result_from_value(output.artifact, structured=True).structured_content
            return AgentToolResult(content=(TextContent(text),), structured_content=artifact)
        return AgentToolResult.text(text)

    return AgentTool(
        name=tool.name,
        description=str(declared.get("description") or tool.description),
        parameters=parameters,
        output_schema={} if with_artifact else None,
        execute=execute,
    )
