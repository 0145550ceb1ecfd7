"""Agent (pi's Agent): transcript, turns, subscribers, code mode with a session, gating."""

from __future__ import annotations

import io
import json
from typing import Any

import anyio
import pytest

from scriptgate import Agent, AgentTool, ConfigurationError, Policy, tool
from scriptgate.runtime import AuditLog
from scriptgate.runtime.loop import ModelContext
from scriptgate.runtime.types import AssistantMessage, TextContent, ToolResultMessage
from scriptgate.testing import FakeModel, assistant_text, assistant_with_tool_calls

pytestmark = pytest.mark.anyio

NOTES = {"a.txt": "alpha", "b.txt": "beta"}


@tool
def read(path: str) -> str:
    """Read a note."""
    return NOTES[path]


@tool
def delete(path: str) -> str:
    """Delete a note."""
    return f"deleted {path}"


def python_call(code: str, call_id: str = "py-1") -> AssistantMessage:
    return assistant_with_tool_calls((call_id, "python", {"code": code}))


def last_result(context: ModelContext) -> ToolResultMessage:
    results = [m for m in context.messages if isinstance(m, ToolResultMessage)]
    return results[-1]


def result_text(context: ModelContext) -> str:
    return "".join(b.text for b in last_result(context).content if isinstance(b, TextContent))


async def test_agent_code_mode_only_runs_a_script_and_keeps_variables_across_turns() -> None:
    model = FakeModel(
        [
            python_call("texts = [read(path=p) for p in ['a.txt', 'b.txt']]\nlen(texts)", "py-1"),
            lambda ctx: assistant_text("read " + result_text(ctx).splitlines()[-1]),
            python_call("', '.join(texts)", "py-2"),
            lambda ctx: assistant_text(result_text(ctx).splitlines()[-1]),
        ]
    )
    agent = Agent(model, tools=[read], system_prompt="Use python.")
    assert [t.name for t in agent.tools] == ["python"]
    first = await agent.prompt("read both")
    assert first is not None
    assert first.content == (TextContent("read 2"),)
    second = await agent.prompt("join them")
    assert second is not None
    assert second.content == (TextContent("alpha, beta"),)
    # the model saw the system prompt and the python tool only
    assert model.contexts[0].system_prompt == "Use python."
    assert [t.name for t in model.contexts[0].tools] == ["python"]
    assert "State persists" in agent.tools[0].description
    roles = [m.role for m in agent.messages]
    assert roles == [
        "system", "user", "assistant", "toolResult", "assistant",
        "user", "assistant", "toolResult", "assistant",
    ]  # fmt: skip
    agent.reset()
    assert agent.messages == []
    await agent.aclose()


async def test_agent_code_mode_on_and_off_choose_the_exposed_tools() -> None:
    on = Agent(FakeModel([]), tools=[read, delete], code_mode="on")
    assert [t.name for t in on.tools] == ["python", "read", "delete"]
    off = Agent(FakeModel([]), tools=[read, delete], code_mode="off")
    assert [t.name for t in off.tools] == ["read", "delete"]
    assert off.codemode is None
    fresh = Agent(FakeModel([]), tools=[read], session=False)
    assert "Each script starts fresh" in fresh.tools[0].description
    with pytest.raises(ConfigurationError, match="code_mode must be"):
        Agent(FakeModel([]), code_mode="maybe")  # type: ignore[arg-type]
    python = AgentTool(
        name="python", description="x", parameters={"type": "object"}, execute=lambda *a: None
    )
    with pytest.raises(ConfigurationError, match="already named 'python'"):
        Agent(FakeModel([]), tools=[python])


async def test_agent_policy_and_audit_gate_nested_and_direct_calls() -> None:
    policy = Policy.from_dict(
        {
            "default": "allow",
            "rules": [{"tool": "delete", "action": "deny", "reason": "keep notes"}],
        }
    )
    log = io.StringIO()
    audit = AuditLog(log)
    script = (
        "try:\n    delete(path='a.txt')\nexcept ToolDenied as err:\n    print('denied:', err)\n"
        "read(path='a.txt')"
    )
    model = FakeModel(
        [
            python_call(script),
            assistant_with_tool_calls(("d-1", "delete", {"path": "b.txt"})),
            assistant_text("done"),
        ]
    )
    agent = Agent(model, tools=[read, delete], code_mode="on", policy=policy, audit=audit)
    await agent.prompt("clean up")
    script_result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    text = script_result.content[0].text
    assert "denied: Denied by policy: keep notes" in text
    assert not script_result.is_error
    direct = [m for m in agent.messages if isinstance(m, ToolResultMessage)][-1]
    assert direct.is_error
    assert direct.content[0].text == "Denied by policy: keep notes"
    lines = [json.loads(line) for line in log.getvalue().splitlines()]
    # nested delete, nested read, direct delete — the python call itself is not gated
    intents = [line["tool"] for line in lines if line["event"] == "intent"]
    outcomes = [(line["tool"], line["status"]) for line in lines if line["event"] == "outcome"]
    assert intents == ["delete", "read", "delete"]
    assert outcomes == [("delete", "blocked"), ("read", "ok"), ("delete", "blocked")]


async def test_agent_streams_events_to_subscribers_and_unsubscribes() -> None:
    seen: list[str] = []
    async_seen: list[str] = []

    async def async_listener(event: Any) -> None:
        async_seen.append(event.type)

    agent = Agent(FakeModel([assistant_text("hi"), assistant_text("again")]), code_mode="off")
    stop = agent.subscribe(lambda e: seen.append(e.type))
    agent.subscribe(async_listener)
    await agent.prompt("hello")
    assert seen == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end", "turn_end", "agent_end",
    ]  # fmt: skip
    assert async_seen == seen
    stop()
    await agent.prompt("more")
    assert len(seen) == 8
    assert len(async_seen) == 16


async def test_agent_abort_stops_the_run_and_a_second_prompt_is_refused() -> None:
    started = anyio.Event()
    release = anyio.Event()

    @tool
    async def wait_here() -> str:
        """Wait until released."""
        started.set()
        await release.wait()
        return "released"

    agent = Agent(
        FakeModel([assistant_with_tool_calls("wait_here"), assistant_text("never")]),
        tools=[wait_here],
        code_mode="off",
    )
    outcome: list[Any] = []

    async def run() -> None:
        outcome.append(await agent.prompt("go"))

    async with anyio.create_task_group() as group:
        group.start_soon(run)
        await started.wait()
        assert agent.is_running
        with pytest.raises(ConfigurationError, match="already processing"):
            await agent.prompt("again")
        agent.abort()
        release.set()
    assert outcome[0].stop_reason == "aborted"
    assert not agent.is_running


def test_agent_prompt_sync_runs_a_turn() -> None:
    agent = Agent(FakeModel([assistant_text("sync answer")]), code_mode="off")
    message = agent.prompt_sync("hi")
    assert message is not None
    assert message.content == (TextContent("sync answer"),)
    agent.close()


async def test_agent_accepts_a_model_spec() -> None:
    agent = Agent("openai:gpt-test", tools=[read])
    assert repr(agent.model).startswith("openai_chat('gpt-test'")
    with pytest.raises(ConfigurationError, match="unknown provider"):
        Agent("nope:x")
