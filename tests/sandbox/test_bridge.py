"""The script/host boundary: ToolSpec/ToolReply records, JSON copies, HostToolBridge conversion."""

from __future__ import annotations

import math
from typing import Any

import anyio
import pytest

from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AgentToolResult,
    BeforeToolCallResult,
    ImageContent,
    TextContent,
)
from scriptgate.sandbox.bridge import (
    HostToolBridge,
    NotJSONError,
    ToolReply,
    ToolSpec,
    json_copy,
    tool_specs,
)

OPEN = {"type": "object", "additionalProperties": True}


def _tool(name: str, result: AgentToolResult, **kwargs: Any) -> AgentTool:
    def execute(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return result

    return AgentTool(
        name=name, description=f"{name} tool", parameters=OPEN, execute=execute, **kwargs
    )


def test_bridge_records_round_trip_through_json() -> None:
    spec = ToolSpec(name="my-tool", identifier="my_tool", description="d", has_output_schema=True)
    assert ToolSpec.from_json(spec.to_json()) == spec
    reply = ToolReply(status="blocked", error="nope", duration_ms=None)
    assert ToolReply.from_json(reply.to_json()) == reply


def test_bridge_tool_specs_use_callable_identifiers() -> None:
    tools = [
        _tool("my-tool", AgentToolResult()),
        _tool("1abc", AgentToolResult(), output_schema={"type": "object"}),
    ]
    assert tool_specs(tools) == [
        ToolSpec("my-tool", "my_tool", "my-tool tool", False),
        ToolSpec("1abc", "tool_1abc", "1abc tool", True),
    ]


def test_bridge_json_copy_is_deep_and_exact() -> None:
    source = {"a": [1, 2.5, None, True, {"b": "c"}], "t": (1, 2)}
    copied = json_copy(source)
    assert copied == {"a": [1, 2.5, None, True, {"b": "c"}], "t": [1, 2]}
    assert copied["a"] is not source["a"]
    assert math.isnan(json_copy(float("nan")))


class _Str(str):
    pass


@pytest.mark.parametrize(
    "value",
    [_Str("x"), {1: "a"}, {"a": {1, 2}}, b"bytes", object(), [print], {"k": _Str("v")}],
    ids=["str-subclass", "int-key", "set", "bytes", "object", "function", "nested-subclass"],
)
def test_bridge_json_copy_refuses_non_json(value: Any) -> None:
    with pytest.raises(NotJSONError):
        json_copy(value)


def test_bridge_json_copy_refuses_deep_nesting() -> None:
    deep: Any = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(NotJSONError, match="nested"):
        json_copy(deep)


async def _call(tool: AgentTool, **kwargs: Any) -> ToolReply:
    return await HostToolBridge([tool], **kwargs).call("script/1", tool.name, {"x": 1})


@pytest.mark.anyio
async def test_bridge_text_blocks_joined_images_dropped() -> None:
    result = AgentToolResult(
        content=(
            TextContent("a"),
            ImageContent(data="AAAA", mime_type="image/png"),
            TextContent("b"),
        )
    )
    reply = await _call(_tool("t", result))
    assert reply == ToolReply(status="ok", value="a\nb", duration_ms=reply.duration_ms)
    assert reply.duration_ms is not None


@pytest.mark.anyio
async def test_bridge_structured_content_only_with_output_schema() -> None:
    result = AgentToolResult(content=(TextContent("txt"),), structured_content={"k": [1]})
    with_schema = await _call(_tool("s", result, output_schema={"type": "object"}))
    without = await _call(_tool("s", result))
    assert with_schema.value == {"k": [1]}
    assert without.value == "txt"


@pytest.mark.anyio
async def test_bridge_error_results() -> None:
    structured = AgentToolResult(
        content=(TextContent("bad"),), structured_content={"e": 1}, is_error=True
    )
    reply = await _call(_tool("s", structured, output_schema={"type": "object"}))
    assert (reply.status, reply.value, reply.error) == ("error", {"e": 1}, "bad")
    text = await _call(_tool("s", AgentToolResult(content=(TextContent("bad"),), is_error=True)))
    assert (text.status, text.error) == ("error", "bad")
    empty = await _call(_tool("empty", AgentToolResult(is_error=True)))
    assert empty.error == 'Tool "empty" failed'


@pytest.mark.anyio
async def test_bridge_blocked_call() -> None:
    def block(ctx: Any, signal: Any) -> BeforeToolCallResult:
        return BeforeToolCallResult(block=True, reason="policy says no")

    reply = await _call(_tool("t", AgentToolResult.text("ok")), before_tool_call=block)
    assert (reply.status, reply.error) == ("blocked", "policy says no")


@pytest.mark.anyio
async def test_bridge_non_json_structured_content_is_an_error() -> None:
    result = AgentToolResult(content=(TextContent("p"),), structured_content={"p": object()})
    reply = await _call(_tool("p", result, output_schema={"type": "object"}))
    assert reply.status == "error"
    assert reply.error is not None
    assert "not JSON" in reply.error


@pytest.mark.anyio
async def test_bridge_result_size_cap() -> None:
    reply = await _call(_tool("big", AgentToolResult.text("x" * 500)), max_result_bytes=100)
    assert reply.status == "error"
    assert reply.error == (
        'Tool "big" returned 502 bytes, more than the limit of 100 bytes for a script'
    )


@pytest.mark.anyio
async def test_bridge_values_are_copies() -> None:
    data = {"nested": {"v": 1}}
    tool = _tool("d", AgentToolResult(structured_content=data), output_schema={"type": "object"})
    reply = await _call(tool)
    reply.value["nested"]["v"] = 2
    assert data == {"nested": {"v": 1}}


@pytest.mark.anyio
async def test_bridge_per_call_signal_follows_the_run_signal() -> None:
    controller = AbortController()
    entered = anyio.Event()
    seen: list[Any] = []

    async def execute(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        seen.append(signal is not controller.signal)
        entered.set()
        reason = await signal.wait()
        return AgentToolResult(content=(TextContent(f"stopped: {reason}"),), is_error=True)

    tool = AgentTool(name="w", description="", parameters=OPEN, execute=execute)
    bridge = HostToolBridge([tool], signal=controller.signal)
    box: dict[str, ToolReply] = {}

    async def call() -> None:
        box["reply"] = await bridge.call("script/1", "w", {})

    async with anyio.create_task_group() as tg:
        tg.start_soon(call)
        await entered.wait()
        controller.abort("stop")
    assert seen == [True]
    assert box["reply"].status == "cancelled"
    assert box["reply"].error == "stopped: stop"


@pytest.mark.anyio
async def test_bridge_unknown_tool_is_an_error_reply() -> None:
    reply = await HostToolBridge([]).call("script/1", "nope", {})
    assert reply.status == "error"
    assert reply.error is not None
    assert "nope" in reply.error


class _Dict(dict[str, Any]):
    def items(self) -> Any:  # never called by the copy
        raise AssertionError("the copy must not call the value's own methods")

    def __iter__(self) -> Any:
        raise AssertionError("the copy must not call the value's own methods")


class _Tuple(tuple[Any, ...]):
    def __iter__(self) -> Any:
        raise AssertionError("the copy must not call the value's own methods")


def test_bridge_json_copy_reads_container_subclasses_through_their_base_type() -> None:
    import collections

    point = collections.namedtuple("point", "x y")
    value = {
        "counter": collections.Counter("aab"),
        "ordered": collections.OrderedDict(b=1, a=2),
        "default": collections.defaultdict(list, k=[1]),
        "named": point(1, 2),
        "custom": _Dict(z=_Tuple((1, "s"))),
    }
    copied = json_copy(value)
    assert copied == {
        "counter": {"a": 2, "b": 1},
        "ordered": {"b": 1, "a": 2},
        "default": {"k": [1]},
        "named": [1, 2],
        "custom": {"z": [1, "s"]},
    }
    assert type(copied["counter"]) is dict
    assert type(copied["named"]) is list
    with pytest.raises(NotJSONError, match="key of type int"):
        json_copy({"c": collections.Counter([1, 1])})
