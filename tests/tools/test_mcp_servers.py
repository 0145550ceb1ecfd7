"""Real MCP servers (tests/tools/mcp_edge_server.py, mcp_raw_server.py) with the edge cases users hit."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.types import ToolCall
from scriptgate.sandbox import Sandbox
from scriptgate.sandbox.model.stubs import render_stubs
from scriptgate.tools.mcp import McpTool, connect_stdio
from scriptgate.tools.mcp_servers import (
    McpServer,
    McpServerConfig,
    connect_servers,
    load_mcp_config,
    parse_mcp_config,
)

HERE = Path(__file__).parent
EDGE = str(HERE / "mcp_edge_server.py")
RAW = str(HERE / "mcp_raw_server.py")


def edge(name: str = "edge", *extra: str, **options: Any) -> McpServerConfig:
    return McpServerConfig(
        name=name, command=sys.executable, args=(EDGE, "--name", name, *extra), **options
    )


@pytest.mark.anyio
async def test_mcp_error_with_structured_content_raises_tool_error_in_script() -> None:
    async with connect_stdio(sys.executable, [EDGE]) as tools:
        find = next(t for t in tools if t.name == "find")
        assert find.output_schema is not None
        result = await Sandbox(tools).run(
            "ok = find(key='ok')\n"
            "try:\n"
            "    find(key='nope')\n"
            "    missing = 'no error'\n"
            "except ToolError as e:\n"
            "    missing = [str(e), e.data]\n"
            "[ok, missing]"
        )
    assert result.error is None, result.error
    assert result.value == [
        {"key": "ok", "found": True},
        ["no such key: nope", {"key": "nope", "found": False}],
    ]


@pytest.mark.anyio
async def test_mcp_tool_names_become_distinct_callable_identifiers() -> None:
    async with connect_stdio(sys.executable, [EDGE]) as tools:
        stubs = render_stubs(tools)
        for ident in ("a_b", "a_b_2", "tool_1st_tool", "print_"):
            assert f"def {ident}(" in stubs
        assert "def print(" not in stubs
        assert "def _st_tool(" not in stubs
        result = await Sandbox(tools).run(
            "print('builtin print still works')\n[a_b(), a_b_2(), tool_1st_tool(), print_(text='x')]"
        )
    assert result.error is None, result.error
    assert result.value == ["underscore", "dash", "first", "printed x"]
    assert result.output == "builtin print still works\n"


@pytest.mark.anyio
async def test_mcp_tool_without_input_schema_keeps_the_connection() -> None:
    async with connect_stdio(sys.executable, [RAW]) as tools:
        assert [t.name for t in tools] == ["bare", "echo"]
        assert tools[0].parameters == {"type": "object"}
        result = await Sandbox(tools).run("[bare(), echo(x='1')]")
    assert result.error is None, result.error
    assert result.value == ["bare {}", 'echo {"x": "1"}']


@pytest.mark.anyio
async def test_mcp_tools_of_a_callers_session_read_a_refused_listing_via_its_dispatcher() -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    from scriptgate.tools.mcp import McpToolError, mcp_tools

    params = StdioServerParameters(command=sys.executable, args=[RAW])
    async with stdio_client(params) as (read, write):
        dispatcher = JSONRPCDispatcher(read, write)
        async with ClientSession(dispatcher=dispatcher) as session:
            await session.initialize()
            tools = await mcp_tools(session, dispatcher=dispatcher)
            result = await Sandbox(tools).run("[bare(), echo(x='2')]")
    assert result.error is None, result.error
    assert result.value == ["bare {}", 'echo {"x": "2"}']
    # a session built without a dispatcher at hand: one clear line, no traceback text
    async with stdio_client(params) as (read, write), ClientSession(read, write) as plain:
        await plain.initialize()
        with pytest.raises(McpToolError) as info:
            await mcp_tools(plain)
    assert str(info.value).startswith("the server's tools/list answer does not parse (")
    assert "\n" not in str(info.value)


@pytest.mark.anyio
async def test_mcp_tools_expose_annotations() -> None:
    async with connect_stdio(sys.executable, [EDGE]) as tools:
        delete = next(t for t in tools if t.name == "delete")
        assert isinstance(delete, McpTool)
        assert delete.annotations["destructiveHint"] is True
        assert delete.annotations["readOnlyHint"] is False
        assert delete.remote_name == "delete"


@pytest.mark.anyio
async def test_mcp_mixed_result_images_leave_a_placeholder() -> None:
    async with connect_stdio(sys.executable, [EDGE]) as tools:
        result = await Sandbox(tools).run("mixed()")
    assert result.error is None, result.error
    assert result.value == "before\n[image: image/png, 66 bytes]\nafter"


@pytest.mark.anyio
async def test_mcp_progress_is_forwarded_to_on_update() -> None:
    updates: list[str] = []
    async with connect_stdio(sys.executable, [EDGE]) as tools:
        outcome = await run_tool_call(
            ToolCall("p1", "progress", {}),
            tools=tools,
            on_update=lambda partial: updates.append(partial.text_content()),
        )
    assert outcome.result.text_content() == "finished"
    assert updates == ["progress 1/2: half", "progress 2/2: done"]


@pytest.mark.anyio
async def test_mcp_servers_connect_concurrently_and_a_failure_is_isolated(tmp_path: Path) -> None:
    ready = tmp_path / "second.pid"
    configs = [
        # The first serves only once the second has started: one after the other, it would time out.
        edge("first", "--wait-for", str(ready), prefix="one_", timeout=20),
        McpServerConfig(
            name="broken", command=sys.executable, args=("-c", "import sys; sys.exit(4)")
        ),
        edge("second", "--pidfile", str(ready), prefix="two_", timeout=20),
    ]
    async with connect_servers(configs) as connections:
        assert [s.config.name for s in connections.servers] == ["first", "second"]
        assert len(connections.failures) == 1
        assert "sys.exit(4)" in connections.failures[0]
        assert "\n" not in connections.failures[0]
        result = await Sandbox(connections.tools).run(
            "results = await gather(one_whoami(), two_whoami())\n[r.split()[0] for r in results]"
        )
    assert result.error is None, result.error
    assert result.value == ["first", "second"]


@pytest.mark.anyio
async def test_mcp_server_env_cwd_prefix_and_filters(tmp_path: Path) -> None:
    config = edge(
        "e",
        env={"EDGE_VAR": "from-config"},
        cwd=str(tmp_path),
        prefix="e_",
        enabled_tools=("whoami", "a*"),
        disabled_tools=("a-b",),
    )
    async with connect_servers([config]) as connections:
        assert [t.name for t in connections.tools] == ["e_whoami", "e_a_b"]
        result = await Sandbox(connections.tools).run("e_whoami()")
    assert result.value == f"e {tmp_path} from-config"


@pytest.mark.anyio
async def test_mcp_server_reconnects_after_a_crash() -> None:
    async with connect_servers([edge("c")]) as connections:
        server = connections.servers[0]
        first = await Sandbox(connections.tools).run(
            "try:\n    crash()\n    r = 'no error'\nexcept ToolError as e:\n    r = 'failed'\n"
            "[r, whoami().split()[0]]"
        )
        assert first.error is None, first.error
        assert first.value == ["failed", "c"]
        assert server.reconnects == 1


@pytest.mark.anyio
async def test_mcp_server_picks_up_a_changed_tool_list() -> None:
    changed = anyio.Event()
    async with connect_servers(
        [edge("g")], on_tools_changed=lambda _server: changed.set()
    ) as connections:
        assert "extra" not in [t.name for t in connections.tools]
        result = await Sandbox(connections.tools).run("grow()")
        assert result.value == "grown"
        with anyio.fail_after(10):
            await changed.wait()
        assert "extra" in [t.name for t in connections.tools]
        again = await Sandbox(connections.tools).run("extra()")
    assert again.value == "extra!"


@pytest.mark.anyio
async def test_mcp_resource_links_can_be_followed() -> None:
    async with connect_servers([edge("r")]) as connections:
        result = await Sandbox(connections.tools).run(
            "text = link()\nuri = text.split()[-1].rstrip(']')\n[text, read_resource(uri=uri)]"
        )
    assert result.error is None, result.error
    assert result.value == ["[resource link: note memo://note]", "the note's text"]


@pytest.mark.anyio
async def test_mcp_server_that_fails_alone_raises_from_start() -> None:
    server = McpServer(McpServerConfig(name="x", command=sys.executable, args=("-c", "pass")))
    async with anyio.create_task_group() as tg:
        with pytest.raises(ConfigurationError, match="Could not start MCP server"):
            await tg.start(server.run)


def test_mcp_config_file_in_the_mcp_servers_format(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"A": "1"}},
                    "remote": {
                        "url": "https://example.invalid/mcp",
                        "headers": {"Authorization": "Bearer t"},
                        "prefix": "r_",
                        "timeout": 5,
                        "disabled_tools": ["drop"],
                    },
                    "off": {"command": "x", "disabled": True},
                }
            }
        )
    )
    git, remote = load_mcp_config(path)
    assert (git.name, git.command, git.args, git.env) == (
        "git",
        "uvx",
        ("mcp-server-git",),
        {"A": "1"},
    )
    assert (remote.url, remote.headers, remote.prefix, remote.timeout) == (
        "https://example.invalid/mcp",
        {"Authorization": "Bearer t"},
        "r_",
        5.0,
    )
    assert not remote.keeps("drop")
    assert remote.keeps("keep")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param([], 'expected an object with an "mcpServers" object', id="not-object"),
        pytest.param({"mcpServers": {"a": {}}}, 'exactly one of "command" and "url"', id="neither"),
        pytest.param(
            {"mcpServers": {"a": {"command": "x", "arg": []}}}, "unknown key 'arg'", id="typo"
        ),
        pytest.param(
            {"mcpServers": {"a": {"command": "x", "args": "y"}}}, "args must be a list", id="args"
        ),
        pytest.param({"mcpServers": {"a": {"url": "ftp://x"}}}, "must be an http(s) URL", id="url"),
        pytest.param(
            {"mcpServers": {"a": {"command": "x", "timeout": 0}}}, "positive number", id="timeout"
        ),
    ],
)
def test_mcp_config_errors_are_one_line(data: Any, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        parse_mcp_config(data, source="f.json")
    assert message in str(info.value)
    assert str(info.value).startswith("f.json")
    assert "\n" not in str(info.value)


def test_mcp_config_file_that_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("{nope")
    with pytest.raises(ConfigurationError, match="not JSON"):
        load_mcp_config(path)
