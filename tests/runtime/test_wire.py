"""The JSON wire form: pi's camelCase keys in pi's key order (pi §1.5–1.6), both ways."""

from __future__ import annotations

import json

import pytest

from scriptgate.runtime.types import (
    AgentEndEvent,
    AgentStartEvent,
    AgentToolResult,
    AssistantMessage,
    Cost,
    ImageContent,
    MessageEndEvent,
    MessageStartEvent,
    SystemMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    ToolRemoval,
    ToolResultMessage,
    TurnEndEvent,
    TurnStartEvent,
    Usage,
    UserMessage,
)
from scriptgate.runtime.wire import from_wire, to_wire


def test_wire_tool_result_message_key_order_matches_pi() -> None:
    message = ToolResultMessage(
        tool_call_id="c1",
        tool_name="echo",
        content=(TextContent("hi"),),
        details={"a": 1},
        usage=Usage(input=1),
        is_error=False,
        duration_ms=12,
        timestamp=5,
    )
    wire = to_wire(message)
    assert list(wire) == [
        "role",
        "toolCallId",
        "toolName",
        "content",
        "details",
        "usage",
        "isError",
        "durationMs",
        "timestamp",
    ]
    assert wire["usage"] == {
        "input": 1,
        "output": 0,
        "cacheRead": 0,
        "cacheWrite": 0,
        "totalTokens": 0,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
    }


def test_wire_duration_ms_is_absent_when_the_tool_never_ran() -> None:
    message = ToolResultMessage("c1", "echo", (TextContent("Tool echo not found"),), {}, None, True)
    wire = to_wire(message)
    assert "durationMs" not in wire
    # "isError" comes right before "timestamp" (the Rust port's serialisation assertion).
    keys = list(wire)
    assert keys.index("isError") + 1 == keys.index("timestamp")


def test_wire_duration_ms_sits_between_is_error_and_timestamp() -> None:
    keys = list(to_wire(ToolResultMessage("c", "t", duration_ms=3, timestamp=1)))
    assert keys[keys.index("isError") + 1] == "durationMs"
    assert keys[keys.index("durationMs") + 1] == "timestamp"


def test_wire_structured_content_and_terminate_are_never_in_the_message() -> None:
    wire = to_wire(ToolResultMessage("c", "t"))
    assert "structuredContent" not in wire
    assert "terminate" not in wire


def test_wire_tool_execution_end_event_carries_the_finalized_result() -> None:
    event = ToolExecutionEndEvent(
        tool_call_id="c1",
        tool_name="echo",
        result=AgentToolResult(
            content=(TextContent("ok"),), details={}, structured_content={"v": 1}, terminate=True
        ),
        is_error=False,
        duration_ms=4,
    )
    wire = to_wire(event)
    assert list(wire) == ["type", "toolCallId", "toolName", "result", "isError", "durationMs"]
    assert wire["result"] == {
        "content": [{"type": "text", "text": "ok"}],
        "details": {},
        "structuredContent": {"v": 1},
        "terminate": True,
    }


def test_wire_end_event_without_duration_has_no_duration_key() -> None:
    event = ToolExecutionEndEvent("c1", "x", AgentToolResult.error("Tool x not found"), True)
    assert "durationMs" not in to_wire(event)


def test_wire_tool_call_block() -> None:
    call = ToolCall("c1", "read", {"path": "a"})
    assert to_wire(call) == {
        "type": "toolCall",
        "id": "c1",
        "name": "read",
        "arguments": {"path": "a"},
    }
    broken = ToolCall("c2", "read", {}, arguments_error="Unexpected end")
    assert to_wire(broken)["argumentsError"] == "Unexpected end"


def test_wire_image_content_uses_mime_type_key() -> None:
    assert to_wire(ImageContent("QUJD", "image/png")) == {
        "type": "image",
        "data": "QUJD",
        "mimeType": "image/png",
    }


def test_wire_error_result_has_no_is_error_field() -> None:
    # pi §3.8: createErrorToolResult has no isError on the result itself.
    assert to_wire(AgentToolResult.error("boom")) == {
        "content": [{"type": "text", "text": "boom"}],
        "details": {},
    }


ROUND_TRIP = [
    pytest.param(TextContent("a", text_signature="sig"), id="text"),
    pytest.param(ImageContent("QUJD", "image/png"), id="image"),
    pytest.param(ThinkingContent("hmm"), id="thinking"),
    pytest.param(ToolCall("c", "n", {"a": [1, {"b": None}]}), id="tool-call"),
    pytest.param(
        ToolResultMessage("c", "n", (TextContent("x"),), {"d": 1}, Usage(2, 3), True, 7, 9),
        id="tool-result",
    ),
    pytest.param(
        AssistantMessage(
            content=(TextContent("hi"), ToolCall("c", "n", {"x": 1})),
            model="m",
            usage=Usage(1, 2, 3, 4, 10, Cost(0.1, 0.2, 0, 0, 0.3)),
            stop_reason="toolUse",
            timestamp=3,
        ),
        id="assistant",
    ),
    pytest.param(UserMessage("hello", timestamp=1), id="user-text"),
    pytest.param(UserMessage((TextContent("a"),), timestamp=1), id="user-blocks"),
    pytest.param(
        SystemMessage(
            "sys",
            tools_added=({"name": "a", "description": "", "parameters": {}},),
            tools_removed=(ToolRemoval("b"),),
            timestamp=0,
        ),
        id="system",
    ),
    pytest.param(ToolExecutionStartEvent("c", "n", {"a": "1"}), id="start-event"),
    pytest.param(
        ToolExecutionUpdateEvent("c", "n", {}, {"content": [], "details": {}}), id="update-event"
    ),
    pytest.param(
        ToolExecutionEndEvent("c", "n", AgentToolResult.text("x", details={}), False, 1),
        id="end-event",
    ),
    pytest.param(MessageStartEvent(UserMessage("u", timestamp=1)), id="message-start"),
    pytest.param(MessageEndEvent(ToolResultMessage("c", "n", timestamp=1)), id="message-end"),
    pytest.param(AgentStartEvent(), id="agent-start"),
    pytest.param(TurnStartEvent(), id="turn-start"),
    pytest.param(
        TurnEndEvent(AssistantMessage(timestamp=1), (ToolResultMessage("c", "n", timestamp=2),)),
        id="turn-end",
    ),
    pytest.param(AgentEndEvent((UserMessage("u", timestamp=1),)), id="agent-end"),
]


@pytest.mark.parametrize("record", ROUND_TRIP)
def test_wire_round_trip(record: object) -> None:
    wire = to_wire(record)
    # The wire form is plain JSON.
    assert json.loads(json.dumps(wire)) == wire
    assert from_wire(wire) == record


def test_wire_parse_tool_result_with_null_content_gives_empty_list() -> None:
    parsed = from_wire(
        {"role": "toolResult", "toolCallId": "c", "toolName": "n", "content": None, "isError": True}
    )
    assert isinstance(parsed, ToolResultMessage)
    assert parsed.content == ()
    assert to_wire(parsed)["content"] == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param([], "expected a JSON object", id="not-object"),
        pytest.param({"x": 1}, "needs a 'type' or a 'role'", id="no-discriminator"),
        pytest.param({"type": "nope"}, "unknown wire record", id="unknown-type"),
        pytest.param({"role": "robot"}, "unknown wire record", id="unknown-role"),
    ],
)
def test_wire_parse_rejects_unknown_shapes(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_wire(data)
