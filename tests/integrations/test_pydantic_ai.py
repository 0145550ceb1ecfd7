"""pydantic-ai both ways, offline: its ``FunctionModel``/``TestModel`` drive the ``python`` tool.

An ``Agent.run`` needs asyncio (pydantic-ai starts asyncio tasks), so the tests that run
an agent are asyncio-only; pydantic-ai tools brought into a script run on both backends.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry, RunContext, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

import scriptgate
from scriptgate import Policy, Rule
from scriptgate.integrations.pydantic_ai import (
    from_pydantic_ai,
    to_pydantic_ai,
    to_pydantic_ai_toolset,
)

pytestmark = pytest.mark.anyio

asyncio_only = pytest.mark.parametrize(
    "anyio_backend", ["asyncio"]
)  # reason: pydantic-ai's Agent.run creates asyncio tasks (no trio support)


def _adder(seen: list[dict[str, Any]]) -> scriptgate.AgentTool:
    @scriptgate.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        seen.append({"a": a, "b": b})
        return a + b

    return add


def _script_model(*codes: str | dict[str, Any]) -> FunctionModel:
    """A model that calls ``python`` with each of ``codes`` in turn, then answers with the
    outcome and content of every tool return it received."""
    pending = list(codes)

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if pending:
            step = pending.pop(0)
            args = step if isinstance(step, dict) else {"code": step}
            return ModelResponse(
                parts=[ToolCallPart("python", args, tool_call_id=f"c{len(pending)}")]
            )
        returns = [
            part
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        return ModelResponse(
            parts=[TextPart(json.dumps([[p.outcome, str(p.content)] for p in returns]))]
        )

    return FunctionModel(respond)


@asyncio_only
async def test_pydantic_ai_agent_runs_a_script_that_calls_a_tool() -> None:
    seen: list[dict[str, Any]] = []
    python = scriptgate.codemode_tool([_adder(seen)])
    agent = Agent(_script_model("add(a=2, b='40')"), tools=[to_pydantic_ai(python)])
    result = await agent.run("add them")
    [[outcome, text]] = json.loads(result.output)
    assert outcome == "success"
    assert text.startswith("Script completed")
    assert text.rstrip().endswith("42")
    assert seen == [{"a": 2, "b": 40}]  # coerced by scriptgate's validator inside the script


@asyncio_only
async def test_pydantic_ai_return_metadata_carries_the_call_details() -> None:
    python = scriptgate.codemode_tool([_adder([])])
    agent = Agent(_script_model("add(a=1, b=2)"), tools=[to_pydantic_ai(python)])
    result = await agent.run("go")
    [part] = [
        p
        for m in result.all_messages()
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    assert [call["name"] for call in part.metadata["calls"]] == ["add"]


@asyncio_only
@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ("1/0", "ZeroDivisionError"),
        ('# @options: {"bogus": 1}\nadd(a=1, b=2)', "@options only supports"),
        ({}, 'Validation failed for tool "python"'),
        ({"code": "   "}, "Expected Python source text"),
    ],
)
async def test_pydantic_ai_error_results_arrive_as_failed_tool_returns(
    step: str | dict[str, Any], expected: str
) -> None:
    python = scriptgate.codemode_tool([_adder([])])
    agent = Agent(_script_model(step), tools=[to_pydantic_ai(python)])
    result = await agent.run("go")  # never raises: the failure is a tool result
    [[outcome, text]] = json.loads(result.output)
    assert outcome == "failed"
    assert expected in text


@asyncio_only
async def test_pydantic_ai_test_model_calls_the_python_tool_and_the_run_ends() -> None:
    python = scriptgate.codemode_tool([_adder([])])
    model = TestModel(call_tools=["python"])
    agent = Agent(model, toolsets=[to_pydantic_ai_toolset([python])])
    result = await agent.run("go")
    [part] = [
        p
        for m in result.all_messages()
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    # TestModel's generated code is not a valid script: a failed result, not an exception.
    assert part.tool_name == "python"
    assert part.outcome == "failed"
    assert "Script failed" in str(part.content)
    [definition] = model.last_model_request_parameters.function_tools  # type: ignore[union-attr]
    assert definition.parameters_json_schema["required"] == ["code"]


@asyncio_only
async def test_pydantic_ai_outer_hooks_see_the_python_call() -> None:
    python = scriptgate.codemode_tool([_adder([])])
    policy = Policy(
        [Rule(tool="python", action="deny", reason="no scripts today")], default="allow"
    )
    agent = Agent(
        _script_model("add(a=1, b=2)"),
        tools=[to_pydantic_ai(python, before_tool_call=policy.before_tool_call)],
    )
    [[outcome, text]] = json.loads((await agent.run("go")).output)
    assert outcome == "failed"
    assert text == "Denied by policy: no scripts today"


# ----------------------------------------------------------------------------- their tools in


@dataclass
class Shop:
    prices: dict[str, int]


class Quote(BaseModel):
    item: str
    total: int


def _shop_tools(deleted: list[str]) -> list[scriptgate.AgentTool]:
    def quote(ctx: RunContext[Shop], item: str, count: int) -> Quote:
        """Price ``count`` units of ``item``."""
        if item not in ctx.deps.prices:
            raise ModelRetry(f"unknown item {item!r}")
        return Quote(item=item, total=ctx.deps.prices[item] * count)

    def delete_item(item: str) -> str:
        """Delete an item from the catalogue."""
        deleted.append(item)
        return "deleted"

    shop = Shop(prices={"apple": 3})
    return [
        from_pydantic_ai(quote, deps=shop),
        from_pydantic_ai(Tool(delete_item), deps=shop),
    ]


_SHOP_SCRIPT = """
q = quote(item="apple", count="4")
out = [q["total"]]
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


async def test_pydantic_ai_tools_run_in_a_script_with_validation_and_a_deny_policy() -> None:
    deleted: list[str] = []
    policy = Policy([Rule(tool="delete_*", action="deny", reason="read-only")], default="allow")
    sandbox = scriptgate.Sandbox(_shop_tools(deleted), before_tool_call=policy.before_tool_call)
    result = await sandbox.run(_SHOP_SCRIPT)
    assert result.ok, result.error
    assert result.value == [
        12,  # structured (the return schema), count coerced from "4"
        "unknown item 'pear'",  # ModelRetry became an error result
        'Validation failed for tool "quote":',  # scriptgate's validator, before pydantic-ai's
        "denied: Denied by policy: read-only",
    ]
    assert deleted == []
    assert [c.status for c in result.calls] == ["ok", "error", "error", "blocked"]


@asyncio_only
async def test_pydantic_ai_agent_drives_a_script_over_pydantic_ai_tools() -> None:
    deleted: list[str] = []
    python = scriptgate.codemode_tool(_shop_tools(deleted))
    assert "def quote(*, item: str, count: int) -> QuoteResult:" in python.description
    agent = Agent(
        _script_model('quote(item="apple", count=2)["total"] + 1'),
        tools=[to_pydantic_ai(python)],
    )
    [[outcome, text]] = json.loads((await agent.run("price it")).output)
    assert outcome == "success"
    assert text.rstrip().endswith("\n7")


def test_pydantic_ai_string_tools_stay_text_for_scripts() -> None:
    deleted: list[str] = []
    tools = _shop_tools(deleted)
    assert tools[0].output_schema is not None
    assert tools[1].output_schema is None  # a str return: the script gets the text
    result = scriptgate.Sandbox(tools).run_sync('delete_item(item="x")')
    assert result.value == "deleted"
    assert deleted == ["x"]


def test_pydantic_ai_tool_needing_approval_is_refused() -> None:
    def wipe() -> str:
        """Wipe everything."""
        return "wiped"

    with pytest.raises(scriptgate.ConfigurationError, match="requires approval"):
        from_pydantic_ai(Tool(wipe, requires_approval=True))
