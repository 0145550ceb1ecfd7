"""Transcript → provider request conversions: images, errored turns, unanswered calls."""

from __future__ import annotations

from scriptgate.models.anthropic import anthropic_messages_input
from scriptgate.models.openai_chat import chat_messages
from scriptgate.models.openai_responses import responses_input
from scriptgate.runtime.loop import ModelContext
from scriptgate.runtime.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

IMAGE = ImageContent(data="aGk=", mime_type="image/png")


def transcript() -> ModelContext:
    return ModelContext(
        (
            UserMessage((TextContent("look"), IMAGE), timestamp=0),
            AssistantMessage(
                content=(ToolCall("c1", "shot", {}), ToolCall("c2", "read", {"path": "a"})),
                stop_reason="toolUse",
                timestamp=0,
            ),
            ToolResultMessage("c1", "shot", content=(IMAGE,), timestamp=0),
            # c2 never got a result (the run was interrupted)
            UserMessage("and?", timestamp=0),
            AssistantMessage(
                content=(TextContent("half"),), stop_reason="error", error_message="x", timestamp=0
            ),
            UserMessage("again", timestamp=0),
        )
    )


def test_conversions_chat_images_unanswered_calls_and_errored_turns() -> None:
    messages = chat_messages(transcript())
    assert messages[0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,aGk="},
    }
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "user",
        "user",
    ]
    assert messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "(see attached image)"}
    assert messages[3] == {"role": "tool", "tool_call_id": "c2", "content": "No result provided"}
    assert messages[4]["content"][0] == {
        "type": "text",
        "text": "Attached image(s) from tool result:",
    }
    # the errored assistant turn is not sent
    assert all(m.get("content") != "half" for m in messages)


def test_conversions_anthropic_merges_user_side_blocks() -> None:
    messages = anthropic_messages_input(transcript())
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    results = messages[2]["content"]
    assert results[0]["type"] == "tool_result"
    assert results[0]["content"][0]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": "aGk=",
    }
    assert results[1] == {
        "type": "tool_result",
        "tool_use_id": "c2",
        "content": [{"type": "text", "text": "No result provided"}],
        "is_error": True,
    }
    assert results[2:] == [{"type": "text", "text": "and?"}, {"type": "text", "text": "again"}]


def test_conversions_responses_function_call_outputs() -> None:
    items = responses_input(transcript())
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert outputs[0]["output"][0] == {
        "type": "input_image",
        "image_url": "data:image/png;base64,aGk=",
        "detail": "auto",
    }
    assert outputs[1] == {
        "type": "function_call_output",
        "call_id": "c2",
        "output": "No result provided",
    }
