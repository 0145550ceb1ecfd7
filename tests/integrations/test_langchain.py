"""LangChain both ways, offline: its fake chat models drive the ``python`` tool.

The agent is LangChain's tool-calling loop on ``langchain-core`` alone: the chat model's
``AIMessage.tool_calls`` are passed to ``tool.ainvoke(tool_call)`` (what LangGraph's
``ToolNode`` does) and the ``ToolMessage``\\ s go back to the model. LangChain's fake chat
models and its tool machinery are asyncio code, so the tests that run the loop are
asyncio-only; LangChain tools brought into a script run on both backends.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("langchain_core")

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, ToolException
from langchain_core.tools import tool as lc_tool
from langchain_core.utils.function_calling import convert_to_openai_tool

import scriptgate
from scriptgate import Policy, Rule
from scriptgate.integrations.langchain import from_langchain, to_langchain

pytestmark = pytest.mark.anyio

asyncio_only = pytest.mark.parametrize(
    "anyio_backend", ["asyncio"]
)  # reason: LangChain's chat models and tool runs use asyncio (no trio support)


def _adder(seen: list[dict[str, Any]]) -> scriptgate.AgentTool:
    @scriptgate.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        seen.append({"a": a, "b": b})
        return a + b

    return add


def _calls(arguments: dict[str, Any]) -> list[BaseMessage]:
    """A scripted conversation: one ``python`` call with ``arguments``, then ``done``."""
    return [
        AIMessage(
            content="",
            tool_calls=[{"name": "python", "args": arguments, "id": "call-1", "type": "tool_call"}],
        ),
        AIMessage(content="done"),
    ]


async def _run_agent(model: BaseChatModel, tools: list[BaseTool]) -> list[BaseMessage]:
    """LangChain's tool-calling loop: model, tools, model ... until no tool calls."""
    by_name = {t.name: t for t in tools}
    messages: list[BaseMessage] = [HumanMessage(content="go")]
    for _ in range(5):
        reply = await model.ainvoke(messages)
        assert isinstance(reply, AIMessage)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        for call in reply.tool_calls:
            messages.append(await by_name[call["name"]].ainvoke(call))
    raise AssertionError("the loop did not end")


def _tool_messages(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


@asyncio_only
async def test_langchain_agent_runs_a_script_that_calls_a_tool() -> None:
    seen: list[dict[str, Any]] = []
    python = to_langchain(scriptgate.codemode_tool([_adder(seen)]))
    model = FakeMessagesListChatModel(responses=_calls({"code": "add(a=2, b='40')"}))
    messages = await _run_agent(model, [python])
    assert messages[-1].content == "done"
    [message] = _tool_messages(messages)
    assert message.status == "success"
    assert message.tool_call_id == "call-1"
    assert isinstance(message.content, str)
    assert message.content.startswith("Script completed")
    assert message.content.rstrip().endswith("42")
    assert [c["name"] for c in message.artifact["calls"]] == ["add"]
    assert seen == [{"a": 2, "b": 40}]


@asyncio_only
async def test_langchain_generic_fake_model_drives_the_python_tool() -> None:
    python = to_langchain(scriptgate.codemode_tool([_adder([])]))
    model = GenericFakeChatModel(messages=iter(_calls({"code": "add(a=1, b=2) * 10"})))
    [message] = _tool_messages(await _run_agent(model, [python]))
    assert message.status == "success"
    assert isinstance(message.content, str)
    assert message.content.rstrip().endswith("\n30")


@asyncio_only
@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"code": "1/0"}, "ZeroDivisionError"),
        ({"code": '# @options: {"bogus": 1}\nadd(a=1, b=2)'}, "@options only supports"),
        ({}, 'Validation failed for tool "python"'),
        ({"code": {"x": 1}}, "code: expected string, got object"),
    ],
)
async def test_langchain_error_results_arrive_as_error_tool_messages(
    arguments: dict[str, Any], expected: str
) -> None:
    python = to_langchain(scriptgate.codemode_tool([_adder([])]))
    model = FakeMessagesListChatModel(responses=_calls(arguments))
    messages = await _run_agent(model, [python])  # never raises
    assert messages[-1].content == "done"
    [message] = _tool_messages(messages)
    assert message.status == "error"
    assert expected in str(message.content)


def test_langchain_declares_the_code_schema_and_runs_sync() -> None:
    python = to_langchain(scriptgate.codemode_tool([_adder([])]))
    declared = convert_to_openai_tool(python)["function"]
    assert declared["name"] == "python"
    assert declared["parameters"]["required"] == ["code"]
    assert declared["parameters"]["properties"]["code"]["type"] == "string"
    message = python.invoke(
        {"type": "tool_call", "id": "s1", "name": "python", "args": {"code": "add(a=3, b=4)"}}
    )
    assert isinstance(message, ToolMessage)
    assert str(message.content).rstrip().endswith("\n7")


@asyncio_only
async def test_langchain_outer_hook_blocks_the_python_call() -> None:
    policy = Policy([Rule(tool="python", action="deny", reason="no scripts")], default="allow")
    python = to_langchain(
        scriptgate.codemode_tool([_adder([])]), before_tool_call=policy.before_tool_call
    )
    model = FakeMessagesListChatModel(responses=_calls({"code": "add(a=1, b=2)"}))
    [message] = _tool_messages(await _run_agent(model, [python]))
    assert message.status == "error"
    assert message.content == "Denied by policy: no scripts"


# ----------------------------------------------------------------------------- their tools in


def _lc_tools(deleted: list[str]) -> list[scriptgate.AgentTool]:
    @lc_tool
    def quote(item: str, count: int) -> str:
        """Price ``count`` units of ``item``."""
        if item != "apple":
            raise ToolException(f"unknown item {item!r}")
        return json.dumps({"item": item, "total": 3 * count})

    quote.handle_tool_error = True

    @lc_tool(response_format="content_and_artifact")
    async def stock(item: str) -> tuple[str, dict[str, Any]]:
        """How many units of ``item`` are in stock."""
        return f"{item}: 7 in stock", {"item": item, "units": 7}

    @lc_tool
    def delete_item(item: str) -> str:
        """Delete an item from the catalogue."""
        deleted.append(item)
        return "deleted"

    return [from_langchain(quote), from_langchain(stock), from_langchain(delete_item)]


_SHOP_SCRIPT = """
import json
out = [json.loads(quote(item="apple", count="4"))["total"], stock(item="apple")["units"]]
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


async def test_langchain_tools_run_in_a_script_with_validation_and_a_deny_policy() -> None:
    deleted: list[str] = []
    policy = Policy([Rule(tool="delete_*", action="deny", reason="read-only")], default="allow")
    sandbox = scriptgate.Sandbox(_lc_tools(deleted), before_tool_call=policy.before_tool_call)
    result = await sandbox.run(_SHOP_SCRIPT)
    assert result.ok, result.error
    assert result.value == [
        12,  # count coerced from "4" by scriptgate's validator
        7,  # the artifact of a content_and_artifact tool is the script's data
        "unknown item 'pear'",  # status="error" became an error result
        'Validation failed for tool "quote":',
        "denied: Denied by policy: read-only",
    ]
    assert deleted == []
    assert [c.status for c in result.calls] == ["ok", "ok", "error", "error", "blocked"]


@asyncio_only
async def test_langchain_agent_drives_a_script_over_langchain_tools() -> None:
    python = scriptgate.codemode_tool(_lc_tools([]))
    assert "def stock(*, item: str)" in python.description
    model = FakeMessagesListChatModel(
        responses=_calls({"code": 'stock(item="apple")["units"] * 2'})
    )
    [message] = _tool_messages(await _run_agent(model, [to_langchain(python)]))
    assert message.status == "success"
    assert str(message.content).rstrip().endswith("\n14")
