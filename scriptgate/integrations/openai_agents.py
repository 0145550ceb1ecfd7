"""The OpenAI Agents SDK, both directions (extra ``scriptgate[openai-agents]``).

- :func:`to_openai_agents` hands an :class:`~scriptgate.AgentTool` — above all the
  code-mode tool of :func:`~scriptgate.codemode_tool` — to an ``agents.Agent`` as a
  ``FunctionTool``. The schema is made strict (``additionalProperties: false``,
  as the SDK's strict mode demands) when that does not change its meaning, i.e.
  when every property is already required; ``{code: string}`` always qualifies.
  Each call runs through :func:`~scriptgate.run_tool_call` (scriptgate's
  validation and hooks). The SDK's idiom for a failed function tool is an error
  message returned as the tool's output (what its own ``failure_error_function``
  does), so an error result — a failed script, bad arguments, a bad
  ``# @options:`` line, a blocked call — returns its text and never raises out of
  the run.
- :func:`from_openai_agents` turns a ``FunctionTool`` into an ``AgentTool`` a
  script can call: its ``params_json_schema`` goes through scriptgate's validator
  and hooks, then the SDK's ``on_invoke_tool`` runs with a ``ToolContext``. An
  exception from ``on_invoke_tool`` becomes an error result. A tool built with
  ``@function_tool`` catches its own exceptions and returns the text of its
  ``failure_error_function``, which is indistinguishable from a success; build
  it with ``failure_error_function=None`` to get error results instead.

Owns only the translation; it uses the public API of scriptgate and of the SDK.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from scriptgate import AbortSignal, AgentTool, AgentToolResult, ConfigurationError
from scriptgate.integrations._common import (
    AfterHook,
    BeforeHook,
    missing_extra,
    on_asyncio,
    result_from_value,
    run_for_framework,
)

try:
    from agents import FunctionTool, ToolOutputText, UserError
    from agents.strict_schema import ensure_strict_json_schema
    from agents.tool_context import ToolContext
except ImportError as exc:
    raise missing_extra("openai-agents", "openai-agents") from exc

__all__ = ["from_openai_agents", "strict_parameters", "to_openai_agents"]


def _all_properties_required(node: Any) -> bool:
    """Whether every object schema in ``node`` requires all of its properties."""
    if isinstance(node, list):
        return all(_all_properties_required(item) for item in node)
    if not isinstance(node, dict):
        return True
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        required = node.get("required", [])
        if not isinstance(required, list) or set(required) != set(properties):
            return False
    return all(_all_properties_required(value) for value in node.values())


def strict_parameters(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` in the SDK's strict form, or ``None`` when strictness would change it.

    Strict mode requires every property and closes every object; a schema with an
    optional property, or one the SDK rejects (open ``additionalProperties``, ...),
    is left as it is and the tool is declared non-strict.
    """
    if not _all_properties_required(dict(schema)):
        return None
    try:
        return ensure_strict_json_schema(copy.deepcopy(dict(schema)))
    except (UserError, TypeError, ValueError):
        return None


def to_openai_agents(
    tool: AgentTool,
    *,
    before_tool_call: BeforeHook | None = None,
    after_tool_call: AfterHook | None = None,
    strict: bool | None = None,
) -> FunctionTool:
    """``tool`` as an OpenAI Agents SDK ``FunctionTool``.

    ``strict=None`` declares the schema strict whenever :func:`strict_parameters`
    can (always for the code-mode tool); ``True`` insists (raising
    :class:`~scriptgate.ConfigurationError` when it cannot); ``False`` keeps the
    schema as it is. The output is the result text,
    an error's text included (the SDK's idiom for a failed function tool).
    """
    if not isinstance(tool, AgentTool):
        raise ConfigurationError(f"to_openai_agents needs an AgentTool, got {tool!r}")
    schema: dict[str, Any] = copy.deepcopy(dict(tool.parameters_schema))
    strict_schema = strict_parameters(schema) if strict is not False else None
    if strict is True and strict_schema is None:
        raise ConfigurationError(
            f"the parameters of tool {tool.name!r} cannot be made strict "
            "(every property must be required and every object closed)"
        )

    async def on_invoke_tool(ctx: ToolContext[Any], input_json: str) -> str:
        outcome = await run_for_framework(
            tool,
            input_json,
            tool_call_id=ctx.tool_call_id,
            before_tool_call=before_tool_call,
            after_tool_call=after_tool_call,
        )
        return outcome.result.text_content()

    return FunctionTool(
        name=tool.name,
        description=tool.description,
        params_json_schema=strict_schema if strict_schema is not None else schema,
        on_invoke_tool=on_invoke_tool,
        strict_json_schema=strict_schema is not None,
    )


def _output_value(output: Any) -> Any:
    """The SDK's structured text outputs as plain text; anything else unchanged."""
    if isinstance(output, ToolOutputText):
        return output.text
    if isinstance(output, list) and all(isinstance(item, ToolOutputText) for item in output):
        return "\n".join(item.text for item in output)
    return output


async def _invoke(tool: FunctionTool, ctx: ToolContext[Any], arguments: str) -> Any:
    return await tool.on_invoke_tool(ctx, arguments)


def from_openai_agents(tool: FunctionTool, *, context: Any = None) -> AgentTool:
    """An :class:`~scriptgate.AgentTool` that runs an OpenAI Agents ``FunctionTool``.

    The SDK's ``on_invoke_tool`` gets a ``ToolContext`` whose ``context`` is
    ``context`` (the run context object of an SDK run), with the call id, the
    tool name and the validated arguments as JSON. A string output is the result
    text; with ``output_json_schema`` set on the tool, a structured output is also
    the result's ``structured_content``, so a script receives the data. The SDK
    needs asyncio: under trio the tool runs on its own asyncio loop in a worker
    thread. A tool with ``needs_approval`` or tool guardrails is refused
    (:class:`~scriptgate.ConfigurationError`): the SDK's Runner enforces those, and a
    script's call does not pass through it; scriptgate's hooks do that job here.
    """
    if not isinstance(tool, FunctionTool):
        raise ConfigurationError(f"from_openai_agents needs an agents.FunctionTool, got {tool!r}")
    if (
        tool.needs_approval is not False
        or tool.tool_input_guardrails
        or tool.tool_output_guardrails
    ):
        raise ConfigurationError(
            f"function tool {tool.name!r} has approvals or guardrails, which only the SDK's "
            "Runner enforces; in a script, use scriptgate hooks (a Policy, after_tool_call) instead"
        )
    output_schema = tool.output_json_schema

    async def execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: object
    ) -> AgentToolResult:
        arguments = json.dumps(params, ensure_ascii=False)
        ctx: ToolContext[Any] = ToolContext(
            context,
            tool_name=tool.name,
            tool_call_id=tool_call_id,
            tool_arguments=arguments,
        )
        output = _output_value(await on_asyncio(lambda: _invoke(tool, ctx, arguments)))
        return result_from_value(output, structured=output_schema is not None)

    return AgentTool(
        name=tool.name,
        description=tool.description,
        parameters=copy.deepcopy(tool.params_json_schema),
        output_schema=copy.deepcopy(output_schema) if output_schema is not None else None,
        execute=execute,
    )
