"""MCP tools under a policy: annotations become rules' material, and path arguments resolve
under the declared roots before the policy judges them (issue 19 / 16, the policy half)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.policy import Policy
from scriptgate.runtime.types import ToolCall
from scriptgate.tools.mcp import connect_stdio
from scriptgate.tools.mcp_paths import declare_mcp_paths, mcp_path_arguments

SERVER = '''
import json
from mcp.types import ToolAnnotations
try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:
    from mcp.server.fastmcp import FastMCP as Server

server = Server("fs-like")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_file(path: str) -> str:
    """Echo the path the server was given."""
    return "read " + path


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def read_multiple_files(paths: list[str]) -> str:
    """Echo the paths."""
    return "read " + json.dumps(paths)


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def delete_file(path: str) -> str:
    """Pretend to delete."""
    return "deleted " + path


@server.tool()
def search(query: str) -> str:
    """No annotations at all."""
    return "found " + query


server.run()
'''

POLICY = """
default = "deny"
[[rules]]
tool = "*"
action = "deny"
reason = "destructive"
[rules.annotations]
destructiveHint = true
[[rules]]
tool = "*"
action = "deny"
reason = "secrets"
[rules.arguments]
path = "secret/**"
[[rules]]
tool = "*"
action = "deny"
reason = "secrets"
[rules.arguments]
paths = "secret/**"
[[rules]]
tool = "*"
action = "allow"
[rules.annotations]
readOnlyHint = true
"""


@pytest.fixture
def served(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "data"
    (root / "secret").mkdir(parents=True)
    (root / "public").mkdir()
    os.symlink("../secret", root / "public" / "s")
    script = tmp_path / "server.py"
    script.write_text(SERVER, encoding="utf-8")
    return Path(os.path.realpath(root)), script


async def _text(tools: list[Any], policy: Policy, name: str, **args: Any) -> str:
    outcome = await run_tool_call(
        ToolCall("c1", name, args), tools=tools, before_tool_call=policy.before_tool_call
    )
    return "".join(getattr(block, "text", "") for block in outcome.result.content)


def test_mcp_policy_rule_needing_arguments_no_tool_has_together_is_an_error(
    tmp_path: Path,
) -> None:
    from scriptgate.runtime.tool import AgentTool

    def make(name: str, arg: str) -> AgentTool:
        schema = {"type": "object", "properties": {arg: {"type": "string"}}}
        return AgentTool(name=name, parameters=schema, execute=lambda *a: None)  # type: ignore[arg-type]

    policy = Policy.from_toml(
        '[[rules]]\ntool = "*"\naction = "deny"\n[rules.arguments]\npath = "a"\npaths = "a"\n'
    )
    (problem,) = policy.check([make("one", "path"), make("many", "paths")])
    assert problem.level == "error"
    assert "split it into one rule per argument" in problem.message


@pytest.mark.anyio
async def test_mcp_policy_annotations_and_paths_under_declared_roots(
    served: tuple[Path, Path],
) -> None:
    root, script = served
    real = str(root)
    async with connect_stdio(sys.executable, [str(script)]) as tools:
        declare_mcp_paths(tools, [root])
        by_name = {t.name: t for t in tools}
        assert by_name["delete_file"].annotations["destructiveHint"] is True
        assert by_name["read_file"].paths is not None
        assert by_name["search"].paths is None
        policy = Policy.from_toml(POLICY)
        assert policy.bind(tools) == []

        assert await _text(tools, policy, "read_file", path="public/x") == (f"read {real}/public/x")
        assert "Denied by policy: secrets" in await _text(
            tools, policy, "read_file", path="public/s/key"
        )
        assert "Denied by policy: secrets" in await _text(
            tools, policy, "read_file", path=f"{real}/public/../secret/key"
        )
        assert "Denied by policy: secrets" in await _text(
            tools, policy, "read_multiple_files", paths=["public/x", "public/s/key"]
        )
        assert "outside the directories" in await _text(
            tools, policy, "read_file", path="../elsewhere"
        )
        assert "Denied by policy: destructive" in await _text(
            tools, policy, "delete_file", path="public/x"
        )
        # No annotations: MCP's defaults say "may be destructive", so it is denied.
        assert "Denied by policy: destructive" in await _text(tools, policy, "search", query="q")


def test_mcp_policy_path_rule_format_path_and_conventional_names(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "target": {"type": "string", "format": "path"},
            "url": {"type": "string", "format": "uri"},
            "paths": {"type": "array", "items": {"type": "string"}},
            "source": {"type": "integer"},
        },
    }
    spec = mcp_path_arguments(schema, [tmp_path])
    assert spec is not None
    assert spec.names == ("path", "target", "paths")
    assert spec.form == "absolute"
    assert (
        mcp_path_arguments({"type": "object", "properties": {"q": {"type": "string"}}}, [tmp_path])
        is None
    )
