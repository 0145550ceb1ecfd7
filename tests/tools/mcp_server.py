"""A small MCP server for the tests, written with the official SDK; run as ``python mcp_server.py``.

``python mcp_server.py http <port>`` serves streamable HTTP on 127.0.0.1 instead of stdio.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel
from typing_extensions import TypedDict

try:  # mcp 2.x
    from mcp.server.mcpserver import Image
    from mcp.server.mcpserver import MCPServer as Server
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # pragma: no cover - mcp 1.x
    from mcp.server.fastmcp import FastMCP as Server  # type: ignore[no-redef]
    from mcp.server.fastmcp import Image  # type: ignore[no-redef]
    from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]

# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

server = Server("scriptgate-test")


class Point(BaseModel):
    x: float
    y: float


class Forecast(TypedDict):
    city: str
    celsius: float
    days: int


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def forecast(city: str, days: int = 1) -> Forecast:
    """A structured forecast."""
    return {"city": city, "celsius": 21.5, "days": days}


@server.tool()
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ToolError(message)


@server.tool()
def lookup(key: str) -> CallToolResult:
    """An error result that still carries structured content."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"no such key: {key}")],
        structured_content={"key": key, "found": False},
        is_error=True,
    )


@server.tool()
def distance(a: Point, b: Point) -> str:
    """Distance between two points (the input schema uses $defs/$ref)."""
    return f"{((a.x - b.x) ** 2 + (a.y - b.y) ** 2) ** 0.5:g}"


@server.tool()
def tagged(name: str, extra: Any = None) -> str:
    """Echo; its input schema gets a dangling $ref for `extra` below."""
    return f"name={name} extra={extra!r}"


@server.tool()
async def hang() -> str:
    """Never returns (until the client cancels the request)."""
    await anyio.Event().wait()
    return "unreachable"


@server.tool()
def picture() -> Image:
    """A 1x1 PNG image."""
    return Image(data=PNG, format="png")


_tagged = server._tool_manager.get_tool("tagged")
_tagged.parameters = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "extra": {"$ref": "#/$defs/Missing"},
    },
    "required": ["name"],
}


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
