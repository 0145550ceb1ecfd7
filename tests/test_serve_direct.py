"""``--expose-direct`` registrations against the SDK itself, in process (``mcp.Client(server)``).

``scriptgate.serve._direct_tool`` builds the SDK's tool registration by hand (the one place
that depends on the shape of ``Tool``/``FuncMetadata``/``ArgModelBase``); these tests fail
loudly if the SDK changes that shape: the listed schema, annotations and the arguments a
call hands through are checked as a client sees them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.policy import Policy
from scriptgate.runtime.tool import AgentTool, OnUpdate
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.serve import Gateway, _build_server

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "arguments": {"type": "string"}},
    "required": ["n"],
    "additionalProperties": False,
}


def _echo(received: list[Any]) -> AgentTool:
    async def execute(
        tool_call_id: str, params: Any, signal: AbortSignal | None, on_update: OnUpdate | None
    ) -> AgentToolResult:
        received.append(params)
        return AgentToolResult(content=(TextContent(f"got {sorted(params.items())}"),))

    return AgentTool(
        name="up-echo",
        label="Echo it",
        description="Echoes its arguments.",
        parameters=SCHEMA,
        execute=execute,
        annotations={"readOnlyHint": True, "destructiveHint": False},
    )


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.mark.anyio
async def test_serve_direct_tool_lists_the_upstream_schema_and_passes_arguments_through() -> None:
    from mcp import Client

    received: list[Any] = []
    tool = _echo(received)
    server = _build_server(Gateway(lambda: [tool]), expose_direct=[tool])
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == {"python", "search_tools", "describe_tool", "up-echo"}
        direct = listed["up-echo"]
        assert direct.input_schema == SCHEMA
        assert direct.description == "Echoes its arguments."
        assert direct.title == "Echo it"
        assert direct.annotations is not None
        assert (direct.annotations.read_only_hint, direct.annotations.destructive_hint) == (
            True,
            False,
        )
        # an argument named like the handler's own parameter is just an argument
        ok = await client.call_tool("up-echo", {"n": 3, "arguments": "x"})
        # scriptgate's validator (not the SDK's) refuses what the schema refuses
        bad = await client.call_tool("up-echo", {"n": 1, "other": True})
    assert (_text(ok), ok.is_error) == ("got [('arguments', 'x'), ('n', 3)]", False)
    assert bad.is_error
    assert "other" in _text(bad)
    assert received == [{"n": 3, "arguments": "x"}]


@pytest.mark.anyio
async def test_serve_direct_tool_goes_through_the_policy(tmp_path: Path) -> None:
    from mcp import Client

    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n[[rules]]\ntool = "up-echo"\naction = "deny"\n')
    received: list[Any] = []
    tool = _echo(received)
    gateway = Gateway(lambda: [tool], policy=Policy.from_toml(policy))
    async with Client(_build_server(gateway, expose_direct=[tool])) as client:
        denied = await client.call_tool("up-echo", {"n": 1})
    assert denied.is_error
    assert "Denied by policy" in _text(denied)
    assert received == []
