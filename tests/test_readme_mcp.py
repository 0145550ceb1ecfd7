"""The README's ``mcpServers`` snippets for ``scriptgate serve`` work as written.

The client entry is started the way a client starts it (its ``command`` and ``args``, with
only the ``/home/me/...`` paths swapped for the test's own), through the SDK's stdio client;
the example ``upstreams.json`` is read by the same loader ``--mcp-config`` uses.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import anyio
import pytest

from scriptgate.tools.mcp_servers import parse_mcp_config

README = Path(__file__).parent.parent / "README.md"
EDGE = str(Path(__file__).parent / "tools" / "mcp_edge_server.py")


def _serve_snippets() -> list[dict[str, object]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Serving code mode to any MCP client", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```json\n(.*?)```", section, flags=re.DOTALL)
    return [json.loads(block) for block in blocks]


def test_readme_mcp_upstreams_example_is_a_valid_config() -> None:
    _client, upstreams = _serve_snippets()
    servers = {s.name: s for s in parse_mcp_config(upstreams, source="README")}
    assert list(servers) == ["git", "memory", "remote"]
    assert (servers["git"].command, servers["git"].prefix) == ("uvx", "git_")
    assert servers["memory"].disabled_tools == ("delete_entities",)
    assert servers["remote"].url == "https://example.com/mcp"
    assert dict(servers["remote"].headers or {}) == {"Authorization": "Bearer ..."}


@pytest.mark.anyio
async def test_readme_mcp_client_entry_starts_scriptgate_serve(tmp_path: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    client, _upstreams = _serve_snippets()
    (entry,) = parse_mcp_config(client, source="README")
    assert entry.name == "scriptgate"
    assert entry.command == "scriptgate"
    upstreams = tmp_path / "upstreams.json"
    upstreams.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "one": {"command": sys.executable, "args": [EDGE], "prefix": "one_"},
                }
            }
        )
    )
    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n[[rules]]\ntool = "one_delete"\naction = "deny"\n')
    audit = tmp_path / "audit.jsonl"
    mine = {
        "/home/me/upstreams.json": upstreams,
        "/home/me/policy.toml": policy,
        "/home/me/audit.jsonl": audit,
    }
    assert set(mine) <= set(entry.args), entry.args
    args = [str(mine.get(arg, arg)) for arg in entry.args]
    # the installed console script, as a client finds it on PATH
    command = shutil.which(entry.command, path=os.path.dirname(sys.executable))
    assert command is not None
    params = StdioServerParameters(command=command, args=args, cwd=str(tmp_path))
    script = (
        "try:\n    one_delete(path='/x')\nexcept ToolDenied:\n    pass\none_whoami().split()[0]"
    )
    with (tmp_path / "serve.stderr").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(90):
                await session.initialize()
            result = await session.call_tool("python", {"code": script})
    text = "\n".join(block.text for block in result.content if block.type == "text")
    assert not result.is_error, text
    assert text.splitlines()[-1] == "edge"
    outcomes = [json.loads(x) for x in audit.read_text().splitlines()]
    statuses = [(x["tool"], x["status"]) for x in outcomes if x["event"] == "outcome"]
    assert statuses == [("one_delete", "blocked"), ("one_whoami", "ok")]
