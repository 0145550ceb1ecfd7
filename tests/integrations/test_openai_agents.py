"""The OpenAI Agents SDK both ways, offline: its ``agents.testing.ScriptedModel`` drives ``python``.

``Runner.run`` needs asyncio (the SDK's run loop is asyncio code), so the tests that run an
agent are asyncio-only; SDK tools brought into a script run on both backends.
Every run has tracing disabled, so nothing is exported.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, FunctionTool, RunConfig, Runner, function_tool
from agents.strict_schema import ensure_strict_json_schema
from agents.testing import ScriptedModel, assistant_message, function_call
from pydantic import BaseModel

import scriptgate
from scriptgate import Policy, Rule
from scriptgate.integrations.openai_agents import (
    from_openai_agents,
    strict_parameters,
    to_openai_agents,
)

pytestmark = pytest.mark.anyio

asyncio_only = pytest.mark.parametrize(
    "anyio_backend", ["asyncio"]
)  # reason: the SDK's Runner is asyncio-only (no trio support)

NO_TRACING = RunConfig(tracing_disabled=True)


def _adder(seen: list[dict[str, Any]]) -> scriptgate.AgentTool:
    @scriptgate.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        seen.append({"a": a, "b": b})
        return a + b

    return add


def _calling(arguments: str | dict[str, Any]) -> ScriptedModel:
    """A model that calls ``python`` once with ``arguments``, then says ``done``."""
    return ScriptedModel(
        [[function_call("python", arguments, call_id="call-1")], [assistant_message("done")]]
    )


def _tool_outputs(model: ScriptedModel) -> list[str]:
    """The function-call outputs the SDK sent back to the model on its last call."""
    last = model.last_call
    assert last is not None
    items = last.input if isinstance(last.input, list) else []
    return [str(item["output"]) for item in items if item.get("type") == "function_call_output"]


@asyncio_only
async def test_openai_agents_runner_runs_a_script_that_calls_a_tool() -> None:
    seen: list[dict[str, Any]] = []
    python = scriptgate.codemode_tool([_adder(seen)])
    model = _calling({"code": "add(a=2, b='40')"})
    agent = Agent(name="coder", model=model, tools=[to_openai_agents(python)])
    result = await Runner.run(agent, "add them", run_config=NO_TRACING)
    assert result.final_output == "done"
    [output] = _tool_outputs(model)
    assert output.startswith("Script completed")
    assert output.rstrip().endswith("42")
    assert seen == [{"a": 2, "b": 40}]
    model.assert_complete()


@asyncio_only
async def test_openai_agents_python_tool_is_declared_strict() -> None:
    python = scriptgate.codemode_tool([_adder([])])
    model = _calling({"code": "add(a=1, b=2)"})
    agent = Agent(name="coder", model=model, tools=[to_openai_agents(python)])
    await Runner.run(agent, "go", run_config=NO_TRACING)
    first = model.first_call
    assert first is not None
    [declared] = first.tools
    assert isinstance(declared, FunctionTool)
    assert declared.strict_json_schema is True
    schema = declared.params_json_schema
    assert schema["additionalProperties"] is False
    # the SDK's own strict check leaves it unchanged
    assert ensure_strict_json_schema(json.loads(json.dumps(schema))) == schema


@asyncio_only
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"code": "1/0"}, "ZeroDivisionError"),
        ({"code": '# @options: {"bogus": 1}\nadd(a=1, b=2)'}, "@options only supports"),
        ("{not json", "arguments are not valid JSON"),
        ({"code": "   "}, "Expected Python source text"),
    ],
)
async def test_openai_agents_error_results_reach_the_model_as_the_tool_output(
    arguments: str | dict[str, Any], expected: str
) -> None:
    python = scriptgate.codemode_tool([_adder([])])
    model = _calling(arguments)
    agent = Agent(name="coder", model=model, tools=[to_openai_agents(python)])
    result = await Runner.run(agent, "go", run_config=NO_TRACING)  # never raises
    assert result.final_output == "done"
    [output] = _tool_outputs(model)
    assert expected in output


@asyncio_only
async def test_openai_agents_outer_hook_blocks_the_python_call() -> None:
    python = scriptgate.codemode_tool([_adder([])])
    policy = Policy([Rule(tool="python", action="deny", reason="no scripts")], default="allow")
    model = _calling({"code": "add(a=1, b=2)"})
    tool = to_openai_agents(python, before_tool_call=policy.before_tool_call)
    agent = Agent(name="coder", model=model, tools=[tool])
    await Runner.run(agent, "go", run_config=NO_TRACING)
    assert _tool_outputs(model) == ["Denied by policy: no scripts"]


def test_openai_agents_strictness_never_changes_a_schema_meaning() -> None:
    optional = {"type": "object", "properties": {"a": {"type": "string"}}, "required": []}
    assert strict_parameters(optional) is None
    tool = scriptgate.AgentTool(
        name="opt", parameters=optional, execute=lambda *a: scriptgate.AgentToolResult.text("x")
    )
    assert to_openai_agents(tool).strict_json_schema is False
    with pytest.raises(scriptgate.ConfigurationError, match="cannot be made strict"):
        to_openai_agents(tool, strict=True)
    assert to_openai_agents(_adder([])).strict_json_schema is True


# ----------------------------------------------------------------------------- their tools in


class Quote(BaseModel):
    item: str
    total: int


def _sdk_tools(deleted: list[str]) -> list[scriptgate.AgentTool]:
    @function_tool(failure_error_function=None)
    def quote(item: str, count: int) -> Quote:
        """Price ``count`` units of ``item``."""
        if item != "apple":
            raise LookupError(f"unknown item {item!r}")
        return Quote(item=item, total=3 * count)

    @function_tool
    async def delete_item(item: str) -> str:
        """Delete an item from the catalogue."""
        deleted.append(item)
        return "deleted"

    return [from_openai_agents(quote), from_openai_agents(delete_item)]


_SHOP_SCRIPT = """
q = quote(item="apple", count="4")
out = [q]
try:
    quote(item="pear", count=1)
except ToolError as err:
    out.append(str(err))
try:
    quote(item="apple", count="many")
except ToolError as err:
    out.append(str(err).splitlines()[0])
try:
    delete_item(item="apple")
except ToolDenied as err:
    out.append("denied: " + str(err))
out
"""


async def test_openai_agents_tools_run_in_a_script_with_validation_and_a_deny_policy() -> None:
    deleted: list[str] = []
    policy = Policy([Rule(tool="delete_*", action="deny", reason="read-only")], default="allow")
    sandbox = scriptgate.Sandbox(_sdk_tools(deleted), before_tool_call=policy.before_tool_call)
    result = await sandbox.run(_SHOP_SCRIPT)
    assert result.ok, result.error
    quote_text, *rest = result.value
    assert json.loads(quote_text) == {"item": "apple", "total": 12}  # count coerced from "4"
    assert rest == [
        "unknown item 'pear'",  # the tool raised: an error result
        'Validation failed for tool "quote":',  # scriptgate's validator, before the SDK's
        "denied: Denied by policy: read-only",
    ]
    assert deleted == []
    assert [c.status for c in result.calls] == ["ok", "error", "error", "blocked"]


async def test_openai_agents_allowed_tool_runs_and_returns_text() -> None:
    deleted: list[str] = []
    result = await scriptgate.Sandbox(_sdk_tools(deleted)).run('delete_item(item="x")')
    assert result.value == "deleted"
    assert deleted == ["x"]


@asyncio_only
async def test_openai_agents_runner_drives_a_script_over_sdk_tools() -> None:
    python = scriptgate.codemode_tool(_sdk_tools([]))
    assert "def quote(*, item: str, count: int) -> str:" in python.description
    model = _calling({"code": 'import json\njson.loads(quote(item="apple", count=2))["total"]'})
    agent = Agent(name="coder", model=model, tools=[to_openai_agents(python)])
    await Runner.run(agent, "price it", run_config=NO_TRACING)
    [output] = _tool_outputs(model)
    assert output.startswith("Script completed")
    assert output.rstrip().endswith("\n6")


def test_openai_agents_tool_needing_approval_is_refused() -> None:
    @function_tool(needs_approval=True)
    def wipe() -> str:
        """Wipe everything."""
        return "wiped"

    with pytest.raises(scriptgate.ConfigurationError, match="approvals or guardrails"):
        from_openai_agents(wipe)
