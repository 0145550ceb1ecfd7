"""An MCP server (official SDK) with the edge cases real servers have; ``python mcp_edge_server.py``.

Options (argv): ``--banner`` prints a banner on stdout before serving; ``--pidfile FILE``
writes the process id there; ``--name NAME`` names the server (and the ``whoami`` answer); ``--wait-for FILE``
serves only once FILE exists; ``--marker DIR`` is where ``wait`` records its progress;
``http PORT`` serves streamable HTTP on 127.0.0.1 instead of stdio.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context
from mcp.server.mcpserver import MCPServer as Server
from mcp.types import CallToolResult, ImageContent, ResourceLink, TextContent, ToolAnnotations

PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)

parser = argparse.ArgumentParser()
parser.add_argument("--banner", action="store_true")
parser.add_argument("--pidfile")
parser.add_argument("--name", default="edge")
parser.add_argument("--wait-for", help="serve only once this file exists")
parser.add_argument(
    "--marker", help="a directory where `wait` records that it started / was cancelled"
)
parser.add_argument("transport", nargs="*")
options = parser.parse_args()

server = Server(options.name)


@server.tool(name="whoami", structured_output=False)
def whoami() -> str:
    """The server's name and working directory, and the value of $EDGE_VAR."""
    return f"{options.name} {os.getcwd()} {os.environ.get('EDGE_VAR', '')}"


@server.tool(name="header", structured_output=False)
def header(name: str, ctx: Context) -> str:
    """The value of the HTTP request header `name` (streamable HTTP only), or "(none)"."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    value = headers.get(name) if headers is not None else None
    return value if value is not None else "(none)"


@server.tool(name="a-b", structured_output=False)
def a_dash_b() -> str:
    """Named with a dash."""
    return "dash"


@server.tool(name="a_b", structured_output=False)
def a_underscore_b() -> str:
    """Named with an underscore."""
    return "underscore"


@server.tool(name="1st-tool", structured_output=False)
def first() -> str:
    """Starts with a digit."""
    return "first"


@server.tool(name="print", structured_output=False)
def print_tool(text: str) -> str:
    """Shadows a builtin."""
    return f"printed {text}"


@server.tool(name="find", structured_output=True)
def find(key: str) -> dict[str, Any]:
    """Declares an output schema; fails for every key but "ok" with structured content."""
    if key == "ok":
        return {"key": key, "found": True}
    return CallToolResult(  # type: ignore[return-value]
        content=[TextContent(type="text", text=f"no such key: {key}")],
        structured_content={"key": key, "found": False},
        is_error=True,
    )


@server.tool(
    name="delete",
    structured_output=False,
    annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False),
)
def delete(path: str) -> str:
    """Pretends to delete a path."""
    return f"deleted {path}"


@server.tool(
    name="peek",
    structured_output=False,
    annotations=ToolAnnotations(read_only_hint=True, destructive_hint=False),
)
def peek(path: str) -> str:
    """Pretends to read a path (read-only, not destructive)."""
    return f"peeked {path}"


@server.tool(name="mixed", structured_output=False)
def mixed() -> list[Any]:
    """Text, an image and more text."""
    return [
        TextContent(type="text", text="before"),
        ImageContent(
            type="image", data=__import__("base64").b64encode(PNG).decode(), mime_type="image/png"
        ),
        TextContent(type="text", text="after"),
    ]


@server.tool(name="link", structured_output=False)
def link() -> list[Any]:
    """A resource link to memo://note."""
    return [ResourceLink(type="resource_link", uri="memo://note", name="note")]


@server.resource("memo://note")
def note() -> str:
    """A note."""
    return "the note's text"


@server.tool(name="progress", structured_output=False)
async def progress(ctx: Context) -> str:
    """Reports progress twice."""
    await ctx.report_progress(1, 2, "half")
    await ctx.report_progress(2, 2, "done")
    return "finished"


@server.tool(name="grow", structured_output=False)
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and announces the changed tool list."""
    server.add_tool(lambda: "extra!", name="extra", description="Added later.")
    await ctx.request_context.session.send_tool_list_changed()
    return "grown"


@server.tool(name="crash", structured_output=False)
def crash() -> str:
    """Exits the server process at once."""
    os._exit(3)


@server.tool(name="wait", structured_output=False)
async def wait() -> str:
    """Waits until cancelled; with --marker DIR, writes DIR/started and then DIR/cancelled."""
    marker = anyio.Path(options.marker) if options.marker else None
    if marker is not None:
        await (marker / "started").write_text("1")
    try:
        await anyio.Event().wait()
    finally:
        if marker is not None:
            with anyio.CancelScope(shield=True):
                await (marker / "cancelled").write_text("1")
    return "unreachable"


if __name__ == "__main__":
    if options.pidfile:
        with open(options.pidfile, "w") as f:
            f.write(str(os.getpid()))
    if options.wait_for:
        while not os.path.exists(options.wait_for):
            time.sleep(0.01)
    if options.banner:
        print("Edge MCP server v1.0 starting up", flush=True)
    if options.transport[:1] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(options.transport[1]))
    else:
        server.run()
    sys.exit(0)
