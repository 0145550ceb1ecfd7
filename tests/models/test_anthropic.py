"""anthropic_messages against a local Messages server (SSE): text, several tool calls,
malformed arguments, max_tokens stops, HTTP errors, aborts, and the loop around it."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
import pytest

from scriptgate import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop, tool
from scriptgate.models import anthropic_messages
from scriptgate.runtime import AbortController, length_truncated_text
from scriptgate.runtime.loop import ModelContext, StreamOptions
from scriptgate.runtime.stream import AssistantMessageEvent
from scriptgate.runtime.types import SystemMessage, TextContent, ToolCall

pytestmark = pytest.mark.anyio


def ev(kind: str, **data: Any) -> Any:
    return (kind, {"type": kind, **data})


def start(input_tokens: int = 20, cache_read: int = 3) -> Any:
    return ev(
        "message_start",
        message={
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": 1,
                "cache_read_input_tokens": cache_read,
                "cache_creation_input_tokens": 0,
            },
        },
    )


def text_block(index: int, *parts: str, close: bool = True) -> list[Any]:
    events = [ev("content_block_start", index=index, content_block={"type": "text", "text": ""})]
    events += [
        ev("content_block_delta", index=index, delta={"type": "text_delta", "text": p})
        for p in parts
    ]
    if close:
        events.append(ev("content_block_stop", index=index))
    return events


def tool_block(index: int, id: str, name: str, *parts: str) -> list[Any]:
    events = [
        ev(
            "content_block_start",
            index=index,
            content_block={"type": "tool_use", "id": id, "name": name, "input": {}},
        )
    ]
    events += [
        ev(
            "content_block_delta",
            index=index,
            delta={"type": "input_json_delta", "partial_json": p},
        )
        for p in parts
    ]
    events.append(ev("content_block_stop", index=index))
    return events


def end(reason: str, output_tokens: int = 7) -> list[Any]:
    return [
        ev(
            "message_delta",
            delta={"stop_reason": reason, "stop_sequence": None},
            usage={"output_tokens": output_tokens},
        ),
        ev("message_stop"),
    ]


def model_for(server: Any) -> Any:
    return anthropic_messages("claude-test", base_url=server.url, api_key="ak-test", max_retries=0)


def user(text: str) -> UserMessage:
    return UserMessage(text, timestamp=0)


async def stream(
    fn: Any, context: ModelContext, signal: Any = None, on: Any = None
) -> tuple[Any, list[AssistantMessageEvent]]:
    events: list[AssistantMessageEvent] = []

    async def on_event(event: AssistantMessageEvent) -> None:
        events.append(event)
        if on is not None:
            on(event)

    message = await fn(None, context, StreamOptions(signal=signal, on_event=on_event))
    return message, events


@tool
def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


async def test_anthropic_streams_text_and_usage_and_sends_system_and_tools(server: Any) -> None:
    server.script({"events": [start(), *text_block(0, "Hi", " there"), *end("end_turn")]})
    context = ModelContext(
        (SystemMessage("Transcript rule.", timestamp=0), user("hello")),
        system_prompt="Be brief.",
        tools=(read,),
    )
    message, events = await stream(model_for(server), context)
    assert message.stop_reason == "stop"
    assert message.content == (TextContent("Hi there"),)
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (20, 7, 3)
    assert message.usage.total_tokens == 30
    assert [e.type for e in events] == [
        "start", "text_start", "text_delta", "text_delta", "text_end",
    ]  # fmt: skip
    request = server.requests[0]
    assert request.path == "/v1/messages"
    # the SDK sends the key as x-api-key or (newer releases) as a bearer token
    sent_key = request.headers.get("x-api-key") or request.headers["authorization"]
    assert sent_key.removeprefix("Bearer ") == "ak-test"
    assert request.body["system"] == "Be brief.\n\nTranscript rule."
    assert request.body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]}
    ]
    # a transcript with a system message but no declarations declares no tools
    assert "tools" not in request.body


async def test_anthropic_assembles_several_tool_calls(server: Any) -> None:
    server.script(
        {
            "events": [
                start(),
                *text_block(0, "Reading both."),
                *tool_block(1, "toolu_a", "read", '{"path":', ' "a.txt"}'),
                *tool_block(2, "toolu_b", "read", '{"path": "b.txt"}'),
                *end("tool_use"),
            ]
        }
    )
    message, events = await stream(model_for(server), ModelContext((user("go"),), tools=(read,)))
    assert message.stop_reason == "toolUse"
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    assert [(c.id, c.arguments) for c in calls] == [
        ("toolu_a", {"path": "a.txt"}),
        ("toolu_b", {"path": "b.txt"}),
    ]
    assert [e.delta for e in events if e.type == "toolcall_delta"] == [
        '{"path":', ' "a.txt"}', '{"path": "b.txt"}',
    ]  # fmt: skip
    assert server.requests[0].body["tools"][0]["input_schema"]["required"] == ["path"]


async def test_anthropic_malformed_arguments_become_arguments_error(server: Any) -> None:
    server.script(
        {"events": [start(), *tool_block(0, "toolu_x", "read", '{"path": '), *end("tool_use")]}
    )
    message, _ = await stream(model_for(server), ModelContext((user("go"),)))
    (call,) = message.content
    assert call.arguments == {}
    assert call.arguments_error.endswith('\n\nReceived arguments:\n{"path": ')


async def test_anthropic_max_tokens_is_length_and_calls_do_not_run(server: Any) -> None:
    ran: list[str] = []

    @tool
    def write(path: str, content: str) -> str:
        """Write a file."""
        ran.append(path)
        return "ok"

    server.script(
        {
            "events": [
                start(),
                *tool_block(0, "toolu_w", "write", '{"path": "a", "cont'),
                *end("max_tokens"),
            ]
        },
        {"events": [start(), *text_block(0, "ok"), *end("end_turn")]},
    )
    messages = await run_agent_loop(
        [user("write")],
        AgentContext(tools=[write]),
        AgentLoopConfig(stream_fn=model_for(server)),
        lambda e: None,
    )
    assistant = next(m for m in messages if getattr(m, "role", None) == "assistant")
    assert assistant.stop_reason == "length"
    result = next(m for m in messages if getattr(m, "role", None) == "toolResult")
    assert result.content[0].text == length_truncated_text("write")
    assert ran == []
    # the follow-up request answers the tool_use with an error tool_result
    follow_up = server.requests[1].body["messages"]
    assert follow_up[-1]["role"] == "user"
    assert follow_up[-1]["content"][0]["type"] == "tool_result"
    assert follow_up[-1]["content"][0]["is_error"] is True


async def test_anthropic_http_error_is_an_error_message(server: Any) -> None:
    server.script(
        {
            "status": 529,
            "body": {
                "type": "error",
                "error": {"type": "overloaded_error", "message": "Overloaded"},
            },
        }
    )
    message, _ = await stream(model_for(server), ModelContext((user("hi"),)))
    assert message.stop_reason == "error"
    assert message.error_message == "anthropic error 529: Overloaded"


async def test_anthropic_error_event_mid_stream_keeps_the_partial_text(server: Any) -> None:
    server.script(
        {
            "events": [
                start(),
                *text_block(0, "Half", close=False),
                (
                    "error",
                    {
                        "type": "error",
                        "error": {"type": "overloaded_error", "message": "Overloaded"},
                    },
                ),
            ]
        }
    )
    message, _ = await stream(model_for(server), ModelContext((user("hi"),)))
    assert message.stop_reason == "error"
    assert "Overloaded" in message.error_message
    assert "\n" not in message.error_message
    assert message.content == (TextContent("Half"),)


async def test_anthropic_abort_cancels_the_http_request(server: Any) -> None:
    server.script({"events": [start(), *text_block(0, "so far", close=False)], "hold": True})
    controller = AbortController()

    def on(event: AssistantMessageEvent) -> None:
        if event.type == "text_delta":
            controller.abort()

    with anyio.fail_after(10):
        message, _ = await stream(
            model_for(server), ModelContext((user("hi"),)), controller.signal, on
        )
    assert message.stop_reason == "aborted"
    assert message.content == (TextContent("so far"),)
    assert await anyio.to_thread.run_sync(server.disconnected.wait, 10)


async def test_anthropic_loop_round_trip_sends_tool_results(server: Any) -> None:
    server.script(
        {
            "events": [
                start(),
                *tool_block(0, "toolu_1", "read", '{"path": "n.txt"}'),
                *end("tool_use"),
            ]
        },
        {"events": [start(), *text_block(0, "Done."), *end("end_turn")]},
    )
    messages = await run_agent_loop(
        [user("read")],
        AgentContext(tools=[read]),
        AgentLoopConfig(stream_fn=model_for(server)),
        lambda e: None,
    )
    assert messages[-1].content == (TextContent("Done."),)
    second = server.requests[1].body["messages"]
    assert second[1] == {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "n.txt"}}
        ],
    }
    assert second[2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": "contents of n.txt"}],
            }
        ],
    }
    assert [t["name"] for t in server.requests[1].body["tools"]] == ["read"]
