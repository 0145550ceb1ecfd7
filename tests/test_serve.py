"""``scriptgate serve`` end to end: the SDK's client over stdio and HTTP, real upstream servers."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.text import TextReceiveStream

from scriptgate.serve import PYTHON_DESCRIPTION

EDGE = str(Path(__file__).parent / "tools" / "mcp_edge_server.py")
PY = sys.executable


def _upstream(name: str, *extra: str) -> list[str]:
    return ["--mcp", f"{PY} {EDGE} --name {name} {' '.join(extra)}", "--mcp-prefix", f"{name}_"]


@contextlib.asynccontextmanager
async def serve_stdio(*argv: str, cwd: Path, elicitation: Any = None) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=PY,
        args=["-m", "scriptgate", "serve", *argv],
        cwd=str(cwd),
        env={"PYTHONPATH": os.pathsep.join(sys.path)},
    )
    with (cwd / "serve.stderr").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, elicitation_callback=elicitation) as session,
        ):
            with anyio.fail_after(90):
                await session.initialize()
            yield session


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.mark.anyio
async def test_serve_lists_python_search_and_describe_with_a_stable_description(
    tmp_path: Path,
) -> None:
    async with serve_stdio(*_upstream("one"), cwd=tmp_path) as session:
        listed = await session.list_tools()
        by_name = {tool.name: tool for tool in listed.tools}
        assert set(by_name) == {"python", "search_tools", "describe_tool"}
        assert by_name["python"].description == PYTHON_DESCRIPTION
        assert "one_" not in PYTHON_DESCRIPTION
        found = _text(await session.call_tool("search_tools", {"query": "whoami"}))
        assert found.splitlines()[0].startswith("one_whoami: ")
        stub = _text(await session.call_tool("describe_tool", {"name": "one_print"}))
        assert "def one_print(" in stub
        missing = _text(await session.call_tool("describe_tool", {"name": "nope"}))
        assert "No tool is named 'nope'" in missing


@pytest.mark.anyio
async def test_serve_script_calls_two_upstreams_under_policy_and_audit(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n[[rules]]\ntool = "two_delete"\naction = "deny"\n')
    audit = tmp_path / "audit.jsonl"
    argv = [*_upstream("one"), *_upstream("two"), "--policy", str(policy), "--audit", str(audit)]
    script = (
        "a, b = await gather(one_whoami(), two_whoami())\n"
        "try:\n"
        "    await two_delete(path='/x')\n"
        "    denied = 'not denied'\n"
        "except ToolDenied as e:\n"
        "    denied = str(e)\n"
        "print(a.split()[0], b.split()[0])\n"
        "denied"
    )
    async with serve_stdio(*argv, cwd=tmp_path) as session:
        result = await session.call_tool("python", {"code": script})
    text = _text(result)
    assert not result.is_error, text
    assert "one two" in text
    assert "Denied by policy" in text
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    outcomes = [line for line in lines if line["event"] == "outcome"]
    # every outcome follows its own intent line (write-ahead), paired by token
    intents = {line["token"] for line in lines if line["event"] == "intent"}
    assert {line["token"] for line in outcomes} == intents
    assert sorted((line["tool"], line["status"]) for line in outcomes) == [
        ("one_whoami", "ok"),
        ("two_delete", "blocked"),
        ("two_whoami", "ok"),
    ]
    run_ids = {line["run_id"] for line in lines}
    assert len(run_ids) == 1
    request_id, _, run = run_ids.pop().partition("/")
    assert request_id
    assert run
    assert all(line["tool_call_id"].startswith(f"request-{request_id}/") for line in lines)


@pytest.mark.anyio
async def test_serve_upstream_that_crashes_mid_run(tmp_path: Path) -> None:
    script = (
        "try:\n"
        "    one_crash()\n"
        "    first = 'no error'\n"
        "except ToolError as e:\n"
        "    first = 'crashed'\n"
        "[first, one_whoami().split()[0]]"
    )
    async with serve_stdio(*_upstream("one"), cwd=tmp_path) as session:
        result = await session.call_tool("python", {"code": script})
        again = await session.call_tool("python", {"code": "one_whoami().split()[0]"})
    assert not result.is_error, _text(result)
    assert '["crashed","one"]' in _text(result)
    assert "one" in _text(again)


@pytest.mark.anyio
async def test_serve_failing_upstream_is_reported_and_the_others_serve(tmp_path: Path) -> None:
    argv = [*_upstream("one"), "--mcp", f"{PY} -c pass"]
    async with serve_stdio(*argv, cwd=tmp_path) as session:
        result = await session.call_tool("python", {"code": "one_whoami().split()[0]"})
    assert "one" in _text(result)
    stderr = (tmp_path / "serve.stderr").read_text()
    assert "scriptgate: warning: Could not start MCP server" in stderr
    assert "Traceback" not in stderr


@pytest.mark.anyio
async def test_serve_client_disconnect_aborts_the_script_and_its_calls(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    marker.mkdir()
    started = marker / "started"
    os.mkfifo(started)  # the upstream's `wait` writes it when the call arrives
    audit = tmp_path / "audit.jsonl"
    argv = [*_upstream("one", "--marker", str(marker)), "--audit", str(audit), "--timeout", "300"]
    async with serve_stdio(*argv, cwd=tmp_path) as session, anyio.create_task_group() as tg:

        async def call() -> None:
            await session.call_tool("python", {"code": "one_wait()"})

        tg.start_soon(call)
        assert await anyio.to_thread.run_sync(started.read_text) == "1"
        tg.cancel_scope.cancel()
    # Leaving the client closed scriptgate's stdin: it cancelled the script, whose call
    # was cancelled upstream, and the pipeline logged the cut-off call as cancelled.
    assert (marker / "cancelled").read_text() == "1"
    intent, outcome = [json.loads(x) for x in audit.read_text().splitlines()]
    assert (intent["event"], intent["tool"]) == ("intent", "one_wait")
    assert (outcome["event"], outcome["tool"], outcome["status"]) == (
        "outcome",
        "one_wait",
        "cancelled",
    )
    assert outcome["duration_ms"] is not None
    assert outcome["token"] == intent["token"]
    assert outcome["duration_ms"] is not None


@pytest.mark.anyio
async def test_serve_over_streamable_http(tmp_path: Path) -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    process = await anyio.open_process(
        [PY, "-m", "scriptgate", "serve", "--http", "127.0.0.1:0", *_upstream("one")],
        cwd=str(tmp_path),
    )
    try:
        assert process.stderr is not None
        port: int | None = None
        buffer = ""
        with anyio.fail_after(90):
            async for chunk in TextReceiveStream(process.stderr):
                buffer += chunk
                found = re.search(r"running on http://127\.0\.0\.1:(\d+)", buffer)
                if found:
                    port = int(found.group(1))
                    break
        assert port is not None, buffer
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain, process.stderr)
            url = f"http://127.0.0.1:{port}/mcp"
            async with (
                streamable_http_client(url) as (read, write, *_rest),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                listed = await session.list_tools()
                assert {t.name for t in listed.tools} == {"python", "search_tools", "describe_tool"}
                result = await session.call_tool(
                    "python",
                    {
                        "code": "r = await gather(one_whoami(), one_a_b())\n[x.split()[0] for x in r]"
                    },
                )
                assert '["one","underscore"]' in _text(result)
            tg.cancel_scope.cancel()
    finally:
        process.terminate()
        with anyio.move_on_after(20, shield=True):
            await process.wait()
        await process.aclose()


async def _drain(stream: anyio.abc.ByteReceiveStream) -> None:
    async for _chunk in stream:
        pass


@pytest.mark.anyio
async def test_serve_ask_rules_use_elicitation(tmp_path: Path) -> None:
    from mcp.types import ElicitResult

    asked: list[str] = []

    async def elicitation(context: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"approve": "/ok" in params.message})

    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n[[rules]]\ntool = "one_delete"\naction = "ask"\n')
    script = (
        "out = [one_delete(path='/ok')]\n"
        "try:\n"
        "    one_delete(path='/no')\n"
        "except ToolDenied as e:\n"
        "    out.append('denied')\n"
        "out"
    )
    argv = [*_upstream("one"), "--policy", str(policy)]
    async with serve_stdio(*argv, cwd=tmp_path, elicitation=elicitation) as session:
        result = await session.call_tool("python", {"code": script})
    assert '["deleted /ok","denied"]' in _text(result), _text(result)
    assert len(asked) == 2
    assert "one_delete" in asked[0]


@pytest.mark.anyio
async def test_serve_expose_direct_gates_upstream_tools(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n[[rules]]\ntool = "one_delete"\naction = "deny"\n')
    audit = tmp_path / "audit.jsonl"
    argv = [*_upstream("one"), "--expose-direct", "--policy", str(policy), "--audit", str(audit)]
    async with serve_stdio(*argv, cwd=tmp_path) as session:
        names = {t.name for t in (await session.list_tools()).tools}
        assert {"python", "one_whoami", "one_delete", "one_a-b"} <= names
        ok = await session.call_tool("one_print", {"text": "hi"})
        denied = await session.call_tool("one_delete", {"path": "/x"})
    assert (_text(ok), ok.is_error) == ("printed hi", False)
    assert denied.is_error
    assert "Denied by policy" in _text(denied)
    lines = [json.loads(x) for x in audit.read_text().splitlines()]
    statuses = [(x["tool"], x["status"]) for x in lines if x["event"] == "outcome"]
    assert statuses == [("one_print", "ok"), ("one_delete", "blocked")]


@pytest.mark.anyio
async def test_serve_policy_knows_upstream_annotations_and_mcp_roots(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "secret").mkdir(parents=True)
    policy = tmp_path / "policy.toml"
    policy.write_text(
        'default = "allow"\n'
        "[[rules]]\n"
        'tool = "one_peek"\naction = "deny"\nreason = "secrets"\n'
        '[rules.arguments]\npath = "secret/**"\n'
        "[[rules]]\n"
        'tool = "*"\naction = "deny"\nreason = "destructive"\n'
        "[rules.annotations]\ndestructiveHint = true\n"
        "[[rules]]\n"
        'tool = "nothing_like_this"\naction = "deny"\n'
    )
    script = (
        "out = []\n"
        "for path in ['a.txt', 'secret/../a.txt', f'{root}/secret/k', 'x/../secret/k']:\n"
        "    try:\n"
        "        out.append(one_peek(path=path))\n"
        "    except ToolDenied as e:\n"
        "        out.append(str(e))\n"
        "try:\n"
        "    one_delete(path='a.txt')\n"
        "except ToolDenied as e:\n"
        "    out.append(str(e))\n"
        "out"
    ).replace("{root}", str(root))
    argv = [*_upstream("one"), "--policy", str(policy), "--mcp-root", str(root)]
    async with serve_stdio(*argv, cwd=tmp_path) as session:
        result = await session.call_tool("python", {"code": script})
    text = _text(result)
    assert not result.is_error, text
    value = json.loads(text.splitlines()[-1])
    # the read-only tool is not "destructive" (its annotations were learnt), and its path
    # argument is judged where it lands under the root, whatever its spelling
    assert value[0] == f"peeked {root}/a.txt"
    assert value[1] == f"peeked {root}/a.txt"
    assert "Denied by policy: secrets" in value[2]
    assert "Denied by policy: secrets" in value[3]
    assert "Denied by policy: destructive" in value[4]
    # a rule that matches no tool is reported at start-up
    stderr = (tmp_path / "serve.stderr").read_text()
    assert "'nothing_like_this' matches no available tool" in stderr


def test_serve_two_upstreams_with_the_same_tool_names_refuse_to_start(tmp_path: Path) -> None:
    argv = ["--mcp", f"{PY} {EDGE} --name a", "--mcp", f"{PY} {EDGE} --name b"]
    done = subprocess.run(
        [PY, "-m", "scriptgate", "serve", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "scriptgate: error: two tools are named 'whoami'; use --mcp-prefix or rename one"
    ]


@pytest.mark.anyio
async def test_serve_ask_rule_without_elicitation_is_denied_saying_so(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n[[rules]]\ntool = "one_delete"\naction = "ask"\n')
    script = (
        "try:\n    one_delete(path='/x')\n    r = 'ran'\nexcept ToolDenied as e:\n    r = str(e)\nr"
    )
    argv = [*_upstream("one"), "--policy", str(policy)]
    async with serve_stdio(*argv, cwd=tmp_path) as session:  # a client without elicitation
        result = await session.call_tool("python", {"code": script})
    text = _text(result)
    assert not result.is_error, text
    assert text.splitlines()[-1] == (
        'Denied by policy: rules[0] (ask) matched tool "one_delete", but approval failed: '
        "ElicitationUnavailable: the MCP client cannot ask the user (no elicitation)"
    )
