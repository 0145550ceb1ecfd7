"""A code-mode Agent turn end to end against local provider servers: the model streams a
``python`` call, the script calls real tools through the pipeline, the model answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scriptgate import Agent, file_tools
from scriptgate.models import anthropic_messages, openai_chat
from scriptgate.runtime.types import TextContent

pytestmark = pytest.mark.anyio

SCRIPT = (
    "names = [e['name'] for e in ls(path='.')['entries']]\n"
    "total = sum(len(read(path=n)['content']) for n in names)\n"
    "total"
)


def chat_chunk(delta: dict[str, Any] | None, finish: str | None = None) -> Any:
    return (
        None,
        {
            "id": "c",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "finish_reason": finish}],
        },
    )


def chat_python_call(code: str, call_id: str) -> dict[str, Any]:
    arguments = json.dumps({"code": code})
    half = len(arguments) // 2
    return {
        "events": [
            chat_chunk(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": "python", "arguments": arguments[:half]},
                        }
                    ],
                }
            ),
            chat_chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]}),
            chat_chunk({}, "tool_calls"),
        ],
        "done_marker": True,
    }


def chat_text(text: str) -> dict[str, Any]:
    return {"events": [chat_chunk({"content": text}), chat_chunk({}, "stop")], "done_marker": True}


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("12345", encoding="utf-8")
    (tmp_path / "b.txt").write_text("123", encoding="utf-8")
    return tmp_path


async def test_agent_code_mode_turn_end_to_end_with_openai_chat(server: Any, notes: Path) -> None:
    server.script(
        chat_python_call(SCRIPT, "call_1"),
        chat_text("The notes hold 8 characters."),
        chat_python_call("total * 2", "call_2"),
        chat_text("Doubled: 16."),
    )
    model = openai_chat("m", base_url=f"{server.url}/v1", api_key="k", max_retries=0)
    agent = Agent(
        model, tools=file_tools(notes, read_only=True), system_prompt="Answer with python."
    )
    updates: list[str] = []
    agent.subscribe(lambda e: updates.append(e.type) if e.type == "message_update" else None)
    answer = await agent.prompt("How many characters are in the notes?")
    assert answer is not None
    assert answer.content == (TextContent("The notes hold 8 characters."),)
    assert updates  # the answer streamed
    first = server.requests[0].body
    assert first["messages"][0] == {"role": "system", "content": "Answer with python."}
    (declared,) = first["tools"]
    assert declared["function"]["name"] == "python"
    assert "def read(" in declared["function"]["description"]
    tool_message = server.requests[1].body["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"].startswith("Script completed")
    assert tool_message["content"].endswith("Output:\n8")
    # the session keeps `total` for the next turn
    again = await agent.prompt("Double it.")
    assert again is not None
    assert server.requests[3].body["messages"][-1]["content"].endswith("Output:\n16")
    await agent.aclose()


def an_ev(kind: str, **data: Any) -> Any:
    return (kind, {"type": kind, **data})


def anthropic_exchange(blocks: list[Any], stop: str) -> dict[str, Any]:
    events = [
        an_ev(
            "message_start",
            message={
                "id": "m",
                "type": "message",
                "role": "assistant",
                "model": "c",
                "content": [],
                "stop_reason": None,
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        )
    ]
    for index, block in enumerate(blocks):
        if isinstance(block, str):
            events.append(
                an_ev(
                    "content_block_start", index=index, content_block={"type": "text", "text": ""}
                )
            )
            events.append(
                an_ev(
                    "content_block_delta", index=index, delta={"type": "text_delta", "text": block}
                )
            )
        else:
            call_id, code = block
            events.append(
                an_ev(
                    "content_block_start",
                    index=index,
                    content_block={
                        "type": "tool_use",
                        "id": call_id,
                        "name": "python",
                        "input": {},
                    },
                )
            )
            events.append(
                an_ev(
                    "content_block_delta",
                    index=index,
                    delta={"type": "input_json_delta", "partial_json": json.dumps({"code": code})},
                )
            )
        events.append(an_ev("content_block_stop", index=index))
    events.append(an_ev("message_delta", delta={"stop_reason": stop}, usage={"output_tokens": 3}))
    events.append(an_ev("message_stop"))
    return {"events": events}


async def test_agent_code_mode_turn_end_to_end_with_anthropic(server: Any, notes: Path) -> None:
    server.script(
        anthropic_exchange(["Let me count.", ("toolu_1", SCRIPT)], "tool_use"),
        anthropic_exchange(["8 characters."], "end_turn"),
    )
    model = anthropic_messages("c", base_url=server.url, api_key="k", max_retries=0)
    async with Agent(model, tools=file_tools(notes, read_only=True), system_prompt="sys") as agent:
        answer = await agent.prompt("count")
    assert answer is not None
    assert answer.content == (TextContent("8 characters."),)
    second = server.requests[1].body
    assert second["system"] == "sys"
    result = second["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"][0]["text"].endswith("Output:\n8")


async def test_agent_abort_mid_stream_cancels_the_request_and_ends_the_run(server: Any) -> None:
    import anyio.to_thread

    server.script({"events": [chat_chunk({"content": "Thinking about"})], "hold": True})
    model = openai_chat("m", base_url=f"{server.url}/v1", api_key="k", max_retries=0)
    agent = Agent(model, code_mode="off")

    def on(event: Any) -> None:
        delta = getattr(event, "assistant_message_event", None)
        if delta is not None and delta.type == "text_delta":
            agent.abort()

    agent.subscribe(on)
    with anyio.fail_after(10):
        answer = await agent.prompt("hi")
    assert answer is not None
    assert answer.stop_reason == "aborted"
    assert answer.content == (TextContent("Thinking about"),)
    assert agent.messages[-1] is answer
    assert await anyio.to_thread.run_sync(server.disconnected.wait, 10)
