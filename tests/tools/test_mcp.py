"""MCP tools: a real SDK server (tests/tools/mcp_server.py) on stdio and streamable HTTP."""

from __future__ import annotations

import base64
import re
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.lowlevel
import pytest
from anyio.streams.text import TextReceiveStream

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import ImageContent, TextContent, ToolCall
from scriptgate.tools.mcp import (
    MCP_EXTRA_MESSAGE,
    McpToolError,
    connect_http,
    connect_stdio,
    mcp_tools,
    result_from_mcp,
)

SERVER = str(Path(__file__).with_name("mcp_server.py"))


async def run(tools: list[AgentTool], name: str, args: dict[str, Any], **kwargs: Any) -> Any:
    return await run_tool_call(ToolCall(f"call-{name}", name, args), tools=tools, **kwargs)


async def check_server_tools(tools: list[AgentTool]) -> None:
    """Everything a connected tool list must do, whatever the transport."""
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == {
        "add",
        "forecast",
        "fail",
        "lookup",
        "distance",
        "tagged",
        "hang",
        "picture",
    }
    assert by_name["add"].description == "Add two integers."
    assert by_name["add"].parameters_schema["required"] == ["a", "b"]
    forecast_out = by_name["forecast"].output_schema
    assert forecast_out is not None
    assert forecast_out["required"] == ["city", "celsius", "days"]

    # Lenient coercion happens on our side: "2" → 2 before the server sees it.
    added = await run(tools, "add", {"a": "2", "b": 3})
    assert not added.is_error
    assert added.result.text_content() == "5"

    # Structured output → structured_content.
    forecast = await run(tools, "forecast", {"city": "Oslo", "days": "3"})
    assert not forecast.is_error
    assert forecast.result.structured_content == {"city": "Oslo", "celsius": 21.5, "days": 3}

    # Our validator rejects bad arguments with pi's text; the server is never called.
    bad = await run(tools, "add", {"a": "two"})
    assert bad.is_error
    assert bad.result.text_content().startswith('Validation failed for tool "add":\n')
    assert "  - a: expected integer, got string\n" in bad.result.text_content()
    assert "  - b: missing\n" in bad.result.text_content()

    # isError → an error result carrying the server's message.
    failed = await run(tools, "fail", {"message": "disk on fire"})
    assert failed.is_error
    assert failed.result.text_content() == "Error executing tool fail: disk on fire"

    # An error result may still carry structured content.
    lookup = await run(tools, "lookup", {"key": "k"})
    assert lookup.is_error
    assert lookup.result.structured_content == {"key": "k", "found": False}
    assert lookup.result.text_content() == "no such key: k"

    # $defs/$ref in the input schema: resolved, and coercion reaches inside.
    distance = await run(tools, "distance", {"a": {"x": 0, "y": 0}, "b": {"x": "3", "y": "4"}})
    assert not distance.is_error, distance.result.text_content()
    assert distance.result.text_content() == "5"

    # A dangling $ref fails only a value present at that place (pi §2.4).
    absent = await run(tools, "tagged", {"name": "n"})
    assert not absent.is_error, absent.result.text_content()
    assert absent.result.text_content() == "name=n extra=None"
    present = await run(tools, "tagged", {"name": "n", "extra": 5})
    assert present.is_error
    assert present.result.text_content() == (
        'Validation failed for tool "tagged":\n'
        "  - extra: unresolved reference #/$defs/Missing\n\n"
        "Received arguments:\n"
        '{\n  "name": "n",\n  "extra": 5\n}'
    )

    # Images come back as image blocks.
    picture = await run(tools, "picture", {})
    assert not picture.is_error
    image = picture.result.content[0]
    assert isinstance(image, ImageContent)
    assert image.mime_type == "image/png"
    assert base64.b64decode(image.data).startswith(b"\x89PNG")

    # Aborting a call in flight gives an error; the session keeps working.
    controller = AbortController()
    outcome: dict[str, str] = {}

    async def hang() -> None:
        try:
            await by_name["hang"].execute("h", {}, controller.signal, None)
        except McpToolError as exc:
            outcome["error"] = str(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(hang)
        await anyio.lowlevel.checkpoint()
        controller.abort()
    assert outcome == {"error": "Operation aborted"}
    again = await run(tools, "add", {"a": 1, "b": 1})
    assert again.result.text_content() == "2"


@pytest.mark.anyio
async def test_mcp_stdio_server_tools_end_to_end() -> None:
    # The block's own error comes out as raised, not wrapped in the SDK's exception groups.
    with pytest.raises(KeyError, match="the caller's own error"):  # noqa: PT012
        async with connect_stdio(sys.executable, [SERVER]) as tools:
            await check_server_tools(tools)
            raise KeyError("the caller's own error")
    # After the block the session is closed: calls fail cleanly instead of hanging.
    with anyio.fail_after(30):
        late = await run(tools, "add", {"a": 1, "b": 2})
    assert late.is_error
    assert late.result.text_content().startswith('MCP tool "add" failed: ')


@pytest.mark.anyio
async def test_mcp_tools_from_an_open_session_with_prefix() -> None:
    import mcp
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=[SERVER])
    async with (
        stdio_client(params) as (read, write),
        mcp.ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = await mcp_tools(session, prefix="demo_")
        by_name = {tool.name: tool for tool in tools}
        assert "demo_add" in by_name
        outcome = await run(tools, "demo_add", {"a": 20, "b": 22})
        assert outcome.result.text_content() == "42"


@pytest.mark.anyio
async def test_mcp_stdio_missing_command_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        async with connect_stdio(str(tmp_path / "no-such-server"), []):
            pytest.fail("connected to nothing")
    message = str(info.value)
    assert message.startswith(f"Could not start MCP server `{tmp_path / 'no-such-server'}`:")
    assert "\n" not in message


@pytest.mark.anyio
async def test_mcp_stdio_server_that_exits_is_a_configuration_error() -> None:
    code = "import sys; sys.stderr.write('bad config: no token\\n'); sys.exit(3)"
    with pytest.raises(ConfigurationError) as info:
        async with connect_stdio(sys.executable, ["-c", code]):
            pytest.fail("connected to a dead server")
    message = str(info.value)
    assert message.startswith(f"Could not start MCP server `{sys.executable} -c ")
    assert "bad config: no token" in message
    assert "\n" not in message


@pytest.mark.anyio
async def test_mcp_stdio_server_that_never_answers_times_out() -> None:
    code = "import sys; sys.stdin.read()"
    with pytest.raises(ConfigurationError, match=r"no answer within 0\.5 s$"):
        async with connect_stdio(sys.executable, ["-c", code], connect_timeout=0.5):
            pytest.fail("connected to a silent server")


def test_mcp_result_mapping_of_every_block_kind() -> None:
    result = result_from_mcp(
        {
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "aGk=", "mimeType": "image/gif"},
                {
                    "type": "audio",
                    "data": base64.b64encode(b"12345").decode(),
                    "mimeType": "audio/wav",
                },
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
                {
                    "type": "resource",
                    "resource": {
                        "uri": "file:///b.bin",
                        "blob": "AAEC",
                        "mimeType": "application/x",
                    },
                },
                {"type": "resource_link", "uri": "file:///c", "name": "c"},
                {"type": "mystery", "value": 1},
            ],
            "structuredContent": {"ok": True},
            "isError": True,
            "_meta": {"trace": "t1"},
        }
    )
    assert result.content == (
        TextContent("hello"),
        ImageContent("aGk=", "image/gif"),
        TextContent("[image: image/gif, 2 bytes]"),
        TextContent("[audio: audio/wav, 5 bytes]"),
        TextContent("[resource: file:///a.txt]\ninside"),
        TextContent("[resource: file:///b.bin (application/x, 3 bytes)]"),
        TextContent("[resource link: c file:///c]"),
        TextContent('{"type": "mystery", "value": 1}'),
    )
    assert result.structured_content == {"ok": True}
    assert result.is_error is True
    assert result.details == {"_meta": {"trace": "t1"}}
    empty = result_from_mcp({"content": []})
    assert empty.content == ()
    assert empty.structured_content is None
    assert empty.is_error is False


@pytest.mark.anyio
async def test_mcp_without_the_extra_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(ConfigurationError) as info:
        async with connect_stdio(sys.executable, [SERVER]):
            pytest.fail("mcp should be missing")
    assert str(info.value) == MCP_EXTRA_MESSAGE
    with pytest.raises(ConfigurationError, match=re.escape(MCP_EXTRA_MESSAGE)):
        await mcp_tools(object())


# ----------------------------------------------------------------------------- streamable HTTP


async def _drain(stream: anyio.abc.ByteReceiveStream) -> None:
    async for _chunk in stream:
        pass


@pytest.mark.anyio
async def test_mcp_streamable_http_on_loopback() -> None:
    process = await anyio.open_process([sys.executable, SERVER, "http", "0"])
    try:
        assert process.stderr is not None
        port: int | None = None
        buffer = ""
        with anyio.fail_after(60):
            async for chunk in TextReceiveStream(process.stderr):
                buffer += chunk
                found = re.search(r"Uvicorn running on http://127\.0\.0\.1:(\d+)", buffer)
                if found:
                    port = int(found.group(1))
                    break
        assert port is not None, buffer
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain, process.stderr)
            url = f"http://127.0.0.1:{port}/mcp"
            async with connect_http(url, headers={"X-Scriptgate-Test": "1"}) as tools:
                await check_server_tools(tools)
            tg.cancel_scope.cancel()
    finally:
        process.terminate()
        with anyio.move_on_after(10, shield=True):
            await process.wait()
        await process.aclose()


@pytest.mark.anyio
async def test_mcp_http_unreachable_is_a_configuration_error() -> None:
    # A port that was just free on loopback: nothing listens there, so connecting is refused.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    with pytest.raises(ConfigurationError) as info:
        async with connect_http(url, connect_timeout=10):
            pytest.fail("connected to nothing")
    message = str(info.value)
    assert message.startswith(f"Could not connect to MCP server at {url}:")
    assert "\n" not in message


# ----------------------------------------------------------------------------- without a server


class FakeSession:
    """Just enough of ``mcp.ClientSession`` to test paging and protocol errors."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.cursors: list[str | None] = []

    async def list_tools(self, *, params: Any = None) -> dict[str, Any]:
        cursor = None if params is None else params.cursor
        self.cursors.append(cursor)
        if cursor is None:
            return {
                "tools": [{"name": "one", "inputSchema": {"type": "object"}}],
                "nextCursor": "page-2",
            }
        return {
            "tools": [
                {
                    "name": "two",
                    "description": "Second.",
                    "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
                    "outputSchema": {"type": "object"},
                    "annotations": {"title": "Number two"},
                }
            ]
        }

    async def call_tool(
        self, name: str, arguments: dict[str, Any], progress_callback: Any = None
    ) -> dict[str, Any]:
        import mcp

        self.calls.append((name, arguments))
        if name == "one":
            raise mcp.MCPError(code=-32602, message="Unknown tool: one\nmore detail")
        return {"content": [{"type": "text", "text": f"n={arguments['n']}"}]}


@pytest.mark.anyio
async def test_mcp_tools_follow_pagination_and_map_metadata() -> None:
    session = FakeSession()
    tools = await mcp_tools(session)
    assert session.cursors == [None, "page-2"]
    assert [tool.name for tool in tools] == ["one", "two"]
    two = tools[1]
    assert two.label == "Number two"
    assert two.description == "Second."
    assert two.output_schema == {"type": "object"}
    outcome = await run(tools, "two", {"n": "7"})
    assert outcome.result.text_content() == "n=7"
    assert session.calls == [("two", {"n": 7})]


@pytest.mark.anyio
async def test_mcp_protocol_errors_become_one_line_error_results() -> None:
    tools = await mcp_tools(FakeSession())
    outcome = await run(tools, "one", {})
    assert outcome.is_error
    assert outcome.result.text_content() == 'MCP tool "one" failed: Unknown tool: one'
