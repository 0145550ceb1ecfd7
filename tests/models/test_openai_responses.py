"""openai_responses against a local Responses server (SSE): text, several tool calls,
malformed arguments, max_output_tokens stops, failures, HTTP errors and aborts."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.to_thread
import pytest

from scriptgate import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop, tool
from scriptgate.models import from_spec, openai_responses
from scriptgate.runtime import AbortController
from scriptgate.runtime.loop import ModelContext, StreamOptions
from scriptgate.runtime.stream import AssistantMessageEvent
from scriptgate.runtime.types import TextContent, ToolCall

pytestmark = pytest.mark.anyio

_seq = iter(range(10**6))


def ev(kind: str, **data: Any) -> Any:
    return (kind, {"type": kind, "sequence_number": next(_seq), **data})


def response(status: str = "in_progress", **extra: Any) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": status,
        "output": [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **extra,
    }


USAGE = {
    "input_tokens": 30,
    "output_tokens": 9,
    "total_tokens": 39,
    "input_tokens_details": {"cached_tokens": 4},
    "output_tokens_details": {"reasoning_tokens": 0},
}


def created() -> Any:
    return ev("response.created", response=response())


def message_item(item_id: str, *parts: str, close: bool = True) -> list[Any]:
    item = {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    events = [ev("response.output_item.added", output_index=0, item=item)]
    events += [
        ev(
            "response.output_text.delta",
            item_id=item_id,
            output_index=0,
            content_index=0,
            delta=p,
            logprobs=[],
        )
        for p in parts
    ]
    if close:
        done = {
            **item,
            "status": "completed",
            "content": [{"type": "output_text", "text": "".join(parts), "annotations": []}],
        }
        events.append(ev("response.output_item.done", output_index=0, item=done))
    return events


def call_item(index: int, item_id: str, call_id: str, name: str, *parts: str) -> list[Any]:
    item = {
        "id": item_id,
        "type": "function_call",
        "call_id": call_id,
        "name": name,
        "arguments": "",
        "status": "in_progress",
    }
    events = [ev("response.output_item.added", output_index=index, item=item)]
    events += [
        ev("response.function_call_arguments.delta", item_id=item_id, output_index=index, delta=p)
        for p in parts
    ]
    events.append(
        ev(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            arguments="".join(parts),
            name=name,
        )
    )
    events.append(
        ev(
            "response.output_item.done",
            output_index=index,
            item={**item, "arguments": "".join(parts), "status": "completed"},
        )
    )
    return events


def completed(**extra: Any) -> Any:
    return ev("response.completed", response=response("completed", usage=USAGE, **extra))


def model_for(server: Any) -> Any:
    return openai_responses(
        "gpt-test", base_url=f"{server.url}/v1", api_key="sk-test", max_retries=0
    )


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


async def test_openai_responses_streams_text_and_sends_instructions_and_tools(server: Any) -> None:
    server.script({"events": [created(), *message_item("msg_1", "Hel", "lo"), completed()]})
    message, events = await stream(
        model_for(server), ModelContext((user("hi"),), system_prompt="Be brief.", tools=(read,))
    )
    assert message.stop_reason == "stop"
    assert message.api == "openai-responses"
    assert message.content == (TextContent("Hello"),)
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (26, 9, 4)
    assert [e.type for e in events] == [
        "start",
        "text_start",
        "text_delta",
        "text_delta",
        "text_end",
    ]
    body = server.requests[0].body
    assert server.requests[0].path == "/v1/responses"
    assert body["instructions"] == "Be brief."
    assert body["store"] is False
    assert body["input"] == [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]
    assert [(t["type"], t["name"]) for t in body["tools"]] == [("function", "read")]


async def test_openai_responses_assembles_several_tool_calls(server: Any) -> None:
    server.script(
        {
            "events": [
                created(),
                *call_item(0, "fc_a", "call_a", "read", '{"path"', ': "a.txt"}'),
                *call_item(1, "fc_b", "call_b", "read", '{"path": "b.txt"}'),
                completed(),
            ]
        }
    )
    message, _ = await stream(model_for(server), ModelContext((user("go"),)))
    assert message.stop_reason == "toolUse"
    assert [(c.id, c.name, c.arguments) for c in message.content if isinstance(c, ToolCall)] == [
        ("call_a", "read", {"path": "a.txt"}),
        ("call_b", "read", {"path": "b.txt"}),
    ]


async def test_openai_responses_malformed_arguments_become_arguments_error(server: Any) -> None:
    server.script(
        {"events": [created(), *call_item(0, "fc_x", "call_x", "read", '{"path": "a'), completed()]}
    )
    message, _ = await stream(model_for(server), ModelContext((user("go"),)))
    (call,) = message.content
    assert call.arguments == {}
    assert call.arguments_error.endswith('\n\nReceived arguments:\n{"path": "a')


async def test_openai_responses_max_output_tokens_is_length(server: Any) -> None:
    incomplete = ev(
        "response.incomplete",
        response=response(
            "incomplete", usage=USAGE, incomplete_details={"reason": "max_output_tokens"}
        ),
    )
    server.script(
        {"events": [created(), *call_item(0, "fc_w", "call_w", "read", '{"pa'), incomplete]}
    )
    message, _ = await stream(model_for(server), ModelContext((user("go"),)))
    assert message.stop_reason == "length"


async def test_openai_responses_failed_response_and_http_error_are_error_messages(
    server: Any,
) -> None:
    failed = ev(
        "response.failed",
        response=response(
            "failed", error={"code": "server_error", "message": "The server had an error"}
        ),
    )
    server.script(
        {"events": [created(), failed]},
        {"status": 401, "body": {"error": {"message": "Incorrect API key provided"}}},
    )
    first, _ = await stream(model_for(server), ModelContext((user("hi"),)))
    assert first.stop_reason == "error"
    assert first.error_message == "openai error: The server had an error"
    second, _ = await stream(model_for(server), ModelContext((user("hi"),)))
    assert second.error_message == "openai error 401: Incorrect API key provided"


async def test_openai_responses_abort_cancels_the_http_request(server: Any) -> None:
    server.script(
        {"events": [created(), *message_item("msg_1", "partial", close=False)], "hold": True}
    )
    controller = AbortController()

    def on(event: AssistantMessageEvent) -> None:
        if event.type == "text_delta":
            controller.abort()

    with anyio.fail_after(10):
        message, _ = await stream(
            model_for(server), ModelContext((user("hi"),)), controller.signal, on
        )
    assert message.stop_reason == "aborted"
    assert message.content == (TextContent("partial"),)
    assert await anyio.to_thread.run_sync(server.disconnected.wait, 10)


async def test_openai_responses_loop_sends_function_call_outputs(server: Any) -> None:
    server.script(
        {
            "events": [
                created(),
                *call_item(0, "fc_1", "call_1", "read", '{"path": "n.txt"}'),
                completed(),
            ]
        },
        {"events": [created(), *message_item("msg_2", "Done."), completed()]},
    )
    model = from_spec(
        "openai-responses:gpt-test", base_url=f"{server.url}/v1", api_key="k", max_retries=0
    )
    messages = await run_agent_loop(
        [user("read")], AgentContext(tools=[read]), AgentLoopConfig(stream_fn=model), lambda e: None
    )
    assert messages[-1].content == (TextContent("Done."),)
    items = server.requests[1].body["input"]
    assert items[1] == {
        "type": "function_call",
        "call_id": "call_1",
        "name": "read",
        "arguments": '{"path": "n.txt"}',
    }
    assert items[2] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "contents of n.txt",
    }
