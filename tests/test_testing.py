"""scriptgate.testing: the scripted FakeModel and message builders."""

from __future__ import annotations

import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.loop import ModelContext, StreamOptions
from scriptgate.runtime.types import AssistantMessage, TextContent, ToolCall, UserMessage
from scriptgate.testing import FakeModel, assistant_text, assistant_with_tool_calls, tool_call


def ctx(*texts: str) -> ModelContext:
    return ModelContext(tuple(UserMessage(t, timestamp=0) for t in texts))


def test_testing_tool_call_builds_blocks_with_fresh_ids() -> None:
    a = tool_call("read", {"path": "x"})
    b = tool_call("read")
    assert a.name == "read"
    assert a.arguments == {"path": "x"}
    assert b.arguments == {}
    assert a.id != b.id
    assert tool_call("x", id="fixed").id == "fixed"


def test_testing_assistant_with_tool_calls_accepts_every_spec_form() -> None:
    message = assistant_with_tool_calls(
        ToolCall("i1", "a", {}),
        ("b", {"x": 1}),
        ("i3", "c", {"y": 2}),
        "d",
        text="let me look",
    )
    assert message.stop_reason == "toolUse"
    assert message.content[0] == TextContent("let me look")
    calls = message.tool_calls
    assert [c.name for c in calls] == ["a", "b", "c", "d"]
    assert calls[0].id == "i1"
    assert calls[1].arguments == {"x": 1}
    assert calls[2].id == "i3"
    assert calls[2].arguments == {"y": 2}


def test_testing_assistant_with_tool_calls_rejects_bad_spec() -> None:
    with pytest.raises(TypeError, match="not a tool call spec"):
        assistant_with_tool_calls(("a", "b", "c", "d"))  # type: ignore[arg-type]


def test_testing_assistant_text_defaults_to_stop() -> None:
    message = assistant_text("hello")
    assert message.stop_reason == "stop"
    assert message.content == (TextContent("hello"),)
    assert message.tool_calls == []
    assert assistant_text("", stop_reason="error", error_message="boom").error_message == "boom"


@pytest.mark.anyio
async def test_testing_fake_model_answers_from_a_list_and_records_contexts() -> None:
    first, second = assistant_text("one"), assistant_text("two")
    model = FakeModel([first, second])
    c1, c2 = ctx("a"), ctx("a", "b")
    assert await model("m", c1, StreamOptions()) is first
    assert await model("m", c2, StreamOptions()) is second
    assert model.contexts == [c1, c2]
    assert model.calls == 2
    with pytest.raises(ConfigurationError, match="no response for request 3"):
        await model("m", ctx(), StreamOptions())


@pytest.mark.anyio
async def test_testing_fake_model_answers_with_a_function_of_the_context() -> None:
    def answer(context: ModelContext) -> AssistantMessage:
        return assistant_text(f"{len(context.messages)} messages")

    model = FakeModel(answer)
    reply = await model(None, ctx("a", "b"), StreamOptions())
    assert reply.content == (TextContent("2 messages"),)


@pytest.mark.anyio
async def test_testing_fake_model_list_items_may_be_async_functions() -> None:
    async def answer(context: ModelContext) -> AssistantMessage:
        return assistant_text("async")

    model = FakeModel([answer])
    reply = await model(None, ctx(), None)
    assert reply.content == (TextContent("async"),)


@pytest.mark.anyio
async def test_testing_fake_model_rejects_non_message_answers() -> None:
    model = FakeModel([lambda context: "text"])  # type: ignore[list-item]
    with pytest.raises(ConfigurationError, match="is str, not an AssistantMessage"):
        await model(None, ctx(), None)


@pytest.mark.anyio
async def test_testing_fake_model_aborted_signal_gives_aborted_message() -> None:
    model = FakeModel([assistant_text("never")])
    reply = await model(None, ctx(), StreamOptions(AbortController.aborted_signal()))
    assert reply.stop_reason == "aborted"
    assert model.calls == 1
