"""pydantic-ai, both directions (extra ``scriptgate[pydantic-ai]``, on ``pydantic-ai-slim``).

- :func:`to_pydantic_ai` hands an :class:`~scriptgate.AgentTool` — above all the
  code-mode tool of :func:`~scriptgate.codemode_tool` — to a pydantic-ai ``Agent``
  as a ``pydantic_ai.Tool``; :func:`to_pydantic_ai_toolset` wraps several in a
  ``FunctionToolset``. Each call runs through :func:`~scriptgate.run_tool_call`
  (scriptgate's validation and hooks, on top of pydantic-ai's). A success returns a
  ``ToolReturn`` whose value is the result text and whose ``metadata`` is the result's
  ``details``; an error result (a failed script, bad arguments, a bad ``# @options:``
  line, a blocked call) raises ``ToolFailed``, pydantic-ai's way to give the model a
  failed tool result without a retry prompt and without ending the run.
- :func:`from_pydantic_ai` turns a pydantic-ai tool (a ``Tool`` or a plain function)
  into an ``AgentTool`` a script can call: its JSON schema goes through scriptgate's
  validator and hooks, then pydantic-ai's own validation and call run on a
  ``FunctionToolset``. ``ModelRetry`` and ``ToolFailed`` become error results.

Owns only the translation; it uses the public API of scriptgate and of pydantic-ai.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, cast

from scriptgate import AbortSignal, AgentTool, AgentToolResult, ConfigurationError, TextContent
from scriptgate.integrations._common import (
    AfterHook,
    BeforeHook,
    missing_extra,
    result_from_value,
    run_for_framework,
)

try:
    from pydantic_ai import FunctionToolset, ModelRetry, RunContext, Tool, ToolFailed, ToolReturn
    from pydantic_ai.models import Model
    from pydantic_ai.usage import RunUsage
except ImportError as exc:
    raise missing_extra("pydantic-ai", "pydantic-ai") from exc

__all__ = ["from_pydantic_ai", "to_pydantic_ai", "to_pydantic_ai_toolset"]


def to_pydantic_ai(
    tool: AgentTool,
    *,
    before_tool_call: BeforeHook | None = None,
    after_tool_call: AfterHook | None = None,
) -> Tool[Any]:
    """``tool`` as a pydantic-ai ``Tool`` (same name, description and JSON schema).

    The model's arguments run through :func:`~scriptgate.run_tool_call` with the
    given hooks (for the code-mode tool, the nested calls use the hooks given to
    :func:`~scriptgate.codemode_tool`). A success returns
    ``ToolReturn(return_value=<text>, metadata=<details>)``; an error result raises
    ``ToolFailed(<text>)``, so the model sees a failed tool result and the run goes on.
    """
    if not isinstance(tool, AgentTool):
        raise ConfigurationError(f"to_pydantic_ai needs an AgentTool, got {tool!r}")

    async def call(ctx: RunContext[Any], **arguments: Any) -> ToolReturn:
        outcome = await run_for_framework(
            tool,
            arguments,
            tool_call_id=ctx.tool_call_id,
            before_tool_call=before_tool_call,
            after_tool_call=after_tool_call,
        )
        text = outcome.result.text_content()
        if outcome.is_error:
            raise ToolFailed(text)
        return ToolReturn(return_value=text, metadata=outcome.result.details)

    return Tool.from_schema(
        call,
        name=tool.name,
        description=tool.description,
        json_schema=dict(tool.parameters_schema),
        takes_ctx=True,
        sequential=tool.execution_mode == "sequential",
    )


def to_pydantic_ai_toolset(
    tools: Iterable[AgentTool],
    *,
    before_tool_call: BeforeHook | None = None,
    after_tool_call: AfterHook | None = None,
) -> FunctionToolset[Any]:
    """Several tools (e.g. ``[codemode_tool(tools)]``) as one pydantic-ai ``FunctionToolset``."""
    return FunctionToolset(
        [
            to_pydantic_ai(t, before_tool_call=before_tool_call, after_tool_call=after_tool_call)
            for t in tools
        ]
    )


def _output_schema(tool: Tool[Any]) -> dict[str, Any] | None:
    """The return schema when it describes structured data (a string result stays text)."""
    schema = tool.tool_def.return_schema
    if not schema or schema.get("type") == "string":
        return None
    return dict(schema)


def _failed(message: str) -> AgentToolResult:
    return AgentToolResult(content=(TextContent(message),), details={}, is_error=True)


def from_pydantic_ai(
    tool: Tool[Any] | Callable[..., Any],
    *,
    deps: Any = None,
    model: Model | None = None,
) -> AgentTool:
    """An :class:`~scriptgate.AgentTool` that runs a pydantic-ai tool.

    ``tool`` is a ``pydantic_ai.Tool`` or a function pydantic-ai accepts as one
    (with or without a ``RunContext`` first parameter). Its parameters schema is
    the tool's JSON schema, validated by scriptgate (coercion, hooks, policy) before
    pydantic-ai validates and calls it. A tool that takes a context gets a
    ``RunContext`` with ``deps``, ``model`` (``None`` unless given: there is no
    agent run), the call id and the tool name. A non-string return value is the
    result's ``structured_content`` when the tool has a return schema, so a script
    receives the data. ``ModelRetry`` / ``ToolFailed`` become error results whose
    text is their message; other exceptions become error results as for any tool.
    A tool with ``requires_approval`` is refused (:class:`~scriptgate.ConfigurationError`):
    pydantic-ai enforces approval in the agent run, which a script's call does not pass
    through; a :class:`~scriptgate.Policy` ``ask`` rule is the scriptgate way.
    """
    pa_tool = tool if isinstance(tool, Tool) else Tool(tool)
    if pa_tool.requires_approval:
        raise ConfigurationError(
            f"pydantic-ai tool {pa_tool.name!r} requires approval, which only an agent run "
            "enforces; in a script, use a scriptgate Policy rule with action 'ask' instead"
        )
    toolset: FunctionToolset[Any] = FunctionToolset([pa_tool])
    name = pa_tool.name
    output_schema = _output_schema(pa_tool)

    async def execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: object
    ) -> AgentToolResult:
        ctx: RunContext[Any] = RunContext(
            deps=deps,
            model=cast(Any, model),
            usage=RunUsage(),
            tool_call_id=tool_call_id,
            tool_name=name,
        )
        available = await toolset.get_tools(ctx)
        toolset_tool = available.get(name)
        if toolset_tool is None:
            return _failed(f"Tool {name} is not available (its prepare function withheld it)")
        try:
            args = toolset_tool.args_validator.validate_python(params)
            value = await toolset.call_tool(name, args, ctx, toolset_tool)
        except (ModelRetry, ToolFailed) as exc:
            return _failed(exc.message)
        details: Any = None
        if isinstance(value, ToolReturn):
            details = value.metadata
            value = value.return_value
        result = result_from_value(value, structured=output_schema is not None)
        if details is None:
            return result
        return AgentToolResult(
            content=result.content, details=details, structured_content=result.structured_content
        )

    return AgentTool(
        name=name,
        description=pa_tool.description or "",
        parameters=dict(pa_tool.tool_def.parameters_json_schema),
        output_schema=output_schema,
        execution_mode="sequential" if pa_tool.sequential else None,
        execute=execute,
    )
