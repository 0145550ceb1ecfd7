"""openai_chat against a local Chat Completions server (SSE): text, several tool calls,
malformed arguments, length stops, HTTP errors, aborts, and the loop around it."""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.to_thread
import pytest

from scriptgate import (
    AgentContext,
    AgentLoopConfig,
    SystemMessage,
    UserMessage,
    run_agent_loop,
    tool,
)
from scriptgate.models import openai_chat
from scriptgate.runtime import AbortController, length_truncated_text
from scriptgate.runtime.loop import ModelContext, StreamOptions
from scriptgate.runtime.stream import AssistantMessageEvent
from scriptgate.runtime.types import TextContent, ToolCall

pytestmark = pytest.mark.anyio


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> Any:
    data: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "test-model",
        "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    data.update(extra)
    return (None, data)


def usage_chunk(prompt: int, completion: int, cached: int = 0) -> Any:
    return chunk(
        None,
        usage={
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        },
    )


def text_exchange(*parts: str, finish: str = "stop", hold: bool = False) -> Any:
    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": p}) for p in parts]
    if not hold:
        events += [chunk({}, finish), usage_chunk(12, 5, cached=2)]
    return {"events": events, "hold": hold, "done_marker": True}


def tool_delta(
    index: int, *, id: str | None = None, name: str | None = None, args: str = ""
) -> Any:
    call: dict[str, Any] = {"index": index, "function": {"arguments": args}}
    if id is not None:
        call["id"] = id
        call["type"] = "function"
        call["function"]["name"] = name
    return chunk({"tool_calls": [call]})


def model_for(server: Any, **options: Any) -> Any:
    return openai_chat(
        "test-model", base_url=f"{server.url}/v1", api_key="sk-test", max_retries=0, **options
    )


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


def user(text: str) -> UserMessage:
    return UserMessage(text, timestamp=0)


@tool
def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


async def test_openai_chat_streams_text_deltas_usage_and_sends_the_system_prompt(
    server: Any,
) -> None:
    server.script(text_exchange("Hel", "lo", " world"))
    context = ModelContext((user("hi"),), system_prompt="Be brief.", tools=(read,))
    message, events = await stream(model_for(server), context)
    assert message.stop_reason == "stop"
    assert message.content == (TextContent("Hello world"),)
    assert message.api == "openai-completions"
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (10, 5, 2)
    assert message.usage.total_tokens == 17
    assert [e.type for e in events] == [
        "start", "text_start", "text_delta", "text_delta", "text_delta", "text_end",
    ]  # fmt: skip
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hel", "lo", " world"]
    assert events[3].partial.content == (TextContent("Hello"),)
    request = server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert request.body["stream"] is True
    assert request.body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]
    assert [t["function"]["name"] for t in request.body["tools"]] == ["read"]
    assert request.body["tools"][0]["function"]["parameters"]["required"] == ["path"]


async def test_openai_chat_assembles_several_tool_calls_from_argument_deltas(server: Any) -> None:
    server.script(
        dict(
            events=[
                chunk({"role": "assistant", "content": "Reading."}),
                tool_delta(0, id="call_a", name="read", args='{"pa'),
                tool_delta(0, args='th": "a.txt"}'),
                tool_delta(1, id="call_b", name="read", args=""),
                tool_delta(1, args='{"path": "b.txt"}'),
                chunk({}, "tool_calls"),
            ],
            done_marker=True,
        )
    )
    message, events = await stream(model_for(server), ModelContext((user("go"),)))
    assert message.stop_reason == "toolUse"
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    assert [(c.id, c.name, c.arguments, c.arguments_error) for c in calls] == [
        ("call_a", "read", {"path": "a.txt"}, None),
        ("call_b", "read", {"path": "b.txt"}, None),
    ]
    deltas = [(e.content_index, e.delta) for e in events if e.type == "toolcall_delta"]
    assert deltas == [(1, '{"pa'), (1, 'th": "a.txt"}'), (2, '{"path": "b.txt"}')]
    assert [e.type for e in events].count("toolcall_end") == 2


async def test_openai_chat_malformed_arguments_become_arguments_error(server: Any) -> None:
    server.script(
        dict(
            events=[
                tool_delta(0, id="call_x", name="read", args='{"path": "a.txt"'),
                tool_delta(1, id="call_y", name="read", args="[1, 2]"),
                chunk({}, "tool_calls"),
            ],
            done_marker=True,
        )
    )
    message, _ = await stream(model_for(server), ModelContext((user("go"),)))
    first, second = message.content
    assert first.arguments == {}
    assert first.arguments_error.endswith('\n\nReceived arguments:\n{"path": "a.txt"')
    assert first.arguments_error.splitlines()[0].startswith("Expecting")
    assert (
        second.arguments_error
        == "Tool arguments must be a JSON object\n\nReceived arguments:\n[1, 2]"
    )


async def test_openai_chat_length_stop_takes_the_truncation_path_in_the_loop(server: Any) -> None:
    ran: list[str] = []

    @tool
    def write(path: str, content: str) -> str:
        """Write a file."""
        ran.append(path)
        return "ok"

    server.script(
        dict(
            events=[
                tool_delta(0, id="call_w", name="write", args='{"path": "a", "content": "abc'),
                chunk({}, "length"),
            ],
            done_marker=True,
        ),
        text_exchange("Sorry, retrying later."),
    )
    seen: list[Any] = []
    messages = await run_agent_loop(
        [user("write it")],
        AgentContext(tools=[write]),
        AgentLoopConfig(stream_fn=model_for(server)),
        seen.append,
    )
    assistant = next(m for m in messages if getattr(m, "role", None) == "assistant")
    assert assistant.stop_reason == "length"
    result = next(m for m in messages if getattr(m, "role", None) == "toolResult")
    assert result.is_error
    assert result.content[0].text == length_truncated_text("write")
    assert ran == []
    # the next request carries the truncated call and its error result
    second = server.requests[1].body["messages"]
    assert second[-1]["role"] == "tool"
    assert second[-1]["tool_call_id"] == "call_w"


async def test_openai_chat_http_error_is_an_error_message_not_an_exception(server: Any) -> None:
    server.script(
        dict(
            status=400,
            body={
                "error": {
                    "message": "The model `x` does not exist",
                    "type": "invalid_request_error",
                }
            },
        )
    )
    message, _ = await stream(model_for(server), ModelContext((user("hi"),)))
    assert message.stop_reason == "error"
    assert message.error_message == "openai error 400: The model `x` does not exist"


async def test_openai_chat_unreachable_server_is_a_one_line_error(server: Any) -> None:
    url = server.url
    server.close()
    model = openai_chat("m", base_url=f"{url}/v1", api_key="k", max_retries=0)
    message, _ = await stream(model, ModelContext((user("hi"),)))
    assert message.stop_reason == "error"
    assert message.error_message.startswith("openai error: Connection error")
    assert "\n" not in message.error_message


async def test_openai_chat_abort_cancels_the_http_request(server: Any) -> None:
    server.script(text_exchange("partial ", "answer", hold=True))
    controller = AbortController()

    def on(event: AssistantMessageEvent) -> None:
        if event.type == "text_delta" and event.delta == "answer":
            controller.abort()

    with anyio.fail_after(10):
        message, _ = await stream(
            model_for(server), ModelContext((user("hi"),)), controller.signal, on
        )
    assert message.stop_reason == "aborted"
    assert message.error_message == "Request was aborted"
    assert message.content == (TextContent("partial answer"),)
    assert await anyio.to_thread.run_sync(server.disconnected.wait, 10)


async def test_openai_chat_already_aborted_signal_sends_no_request(server: Any) -> None:
    signal = AbortController.aborted_signal()
    message, events = await stream(model_for(server), ModelContext((user("hi"),)), signal)
    assert message.stop_reason == "aborted"
    assert server.requests == []
    assert events == []


async def test_openai_chat_loop_emits_streamed_message_events_and_runs_tools(server: Any) -> None:
    server.script(
        dict(
            events=[
                tool_delta(0, id="call_1", name="read", args='{"path": "n.txt"}'),
                chunk({}, "tool_calls"),
            ],
            done_marker=True,
        ),
        text_exchange("It says ", "hello."),
    )
    events: list[Any] = []
    messages = await run_agent_loop(
        [user("read n.txt")],
        AgentContext(tools=[read], system_prompt="sys"),
        AgentLoopConfig(stream_fn=model_for(server)),
        events.append,
    )
    kinds = [e.type for e in events]
    assert kinds[:4] == ["agent_start", "turn_start", "message_start", "message_end"]
    first_assistant = kinds.index("message_update") - 1
    assert kinds[first_assistant] == "message_start"
    assert kinds.count("message_update") >= 4
    assert messages[-1].content == (TextContent("It says hello."),)
    second = server.requests[1].body
    assert second["messages"][0] == {"role": "system", "content": "sys"}
    assert second["messages"][-2]["tool_calls"][0]["function"] == {
        "name": "read",
        "arguments": json.dumps({"path": "n.txt"}),
    }
    assert second["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_1",
        "content": "contents of n.txt",
    }
    # declarations come from the transcript's system message
    assert isinstance(messages[0], SystemMessage)
    assert [t["function"]["name"] for t in second["tools"]] == ["read"]
