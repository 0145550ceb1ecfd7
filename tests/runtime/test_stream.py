"""Streaming stream functions in the loop (message_start/update/end), and the tool-arguments parser."""

from __future__ import annotations

from typing import Any

import pytest

from scriptgate import AgentContext, AgentLoopConfig, UserMessage, run_agent_loop
from scriptgate.runtime.loop import ModelContext, StreamOptions
from scriptgate.runtime.stream import AssistantMessageEvent, parse_tool_arguments
from scriptgate.runtime.types import AssistantMessage, MessageUpdateEvent, TextContent


def partial(text: str) -> AssistantMessage:
    return AssistantMessage(content=(TextContent(text),) if text else (), api="t", model="t")


async def streaming_model(
    model: Any, context: ModelContext, options: StreamOptions
) -> AssistantMessage:
    assert options.on_event is not None
    await options.on_event(AssistantMessageEvent("start", partial("")))
    await options.on_event(AssistantMessageEvent("text_start", partial(""), 0))
    await options.on_event(AssistantMessageEvent("text_delta", partial("Hel"), 0, "Hel"))
    await options.on_event(AssistantMessageEvent("text_delta", partial("Hello"), 0, "lo"))
    await options.on_event(AssistantMessageEvent("text_end", partial("Hello"), 0))
    return partial("Hello")


@pytest.mark.anyio
async def test_stream_events_become_message_start_update_end() -> None:
    events: list[Any] = []
    await run_agent_loop(
        [UserMessage("hi", timestamp=0)],
        AgentContext(system_prompt="sys"),
        AgentLoopConfig(stream_fn=streaming_model),
        events.append,
    )
    kinds = [e.type for e in events]
    assert kinds == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_update", "message_update", "message_update", "message_update",
        "message_end", "turn_end", "agent_end",
    ]  # fmt: skip
    updates = [e for e in events if isinstance(e, MessageUpdateEvent)]
    assert [u.assistant_message_event.type for u in updates] == [
        "text_start", "text_delta", "text_delta", "text_end",
    ]  # fmt: skip
    assert updates[2].message.content == (TextContent("Hello"),)
    assert events[4].message.content == ()  # message_start carries the empty partial
    assert events[9].message.content == (TextContent("Hello"),)


@pytest.mark.anyio
async def test_stream_listener_failure_propagates_and_is_not_a_provider_error() -> None:
    seen: list[str] = []

    async def model(m: Any, context: ModelContext, options: StreamOptions) -> AssistantMessage:
        try:
            return await streaming_model(m, context, options)
        except Exception:  # a provider adapter's catch-all must not see the listener's error
            seen.append("caught")
            raise

    def emit(event: Any) -> None:
        if event.type == "message_update":
            raise RuntimeError("listener broke")

    with pytest.raises(RuntimeError, match="listener broke"):
        await run_agent_loop(
            [UserMessage("hi", timestamp=0)], AgentContext(), AgentLoopConfig(stream_fn=model), emit
        )
    assert seen == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ("", {}),
        ("   \n", {}),
        ('{"path": "C:\\dir"}', {"path": "C:\\dir"}),  # invalid escape doubled
        ('{"text": "two\nlines"}', {"text": "two\nlines"}),  # raw control character
    ],
)
def test_stream_parse_tool_arguments_accepts_and_repairs(
    text: str, expected: dict[str, Any]
) -> None:
    assert parse_tool_arguments(text) == (expected, None)


def test_stream_parse_tool_arguments_reports_bad_text() -> None:
    arguments, error = parse_tool_arguments('{"a": ')
    assert arguments == {}
    assert error is not None
    head, received = error.split("\n\nReceived arguments:\n")
    assert head.startswith("Expecting value")
    assert received == '{"a": '
    assert parse_tool_arguments('"x"') == (
        {},
        'Tool arguments must be a JSON object\n\nReceived arguments:\n"x"',
    )
