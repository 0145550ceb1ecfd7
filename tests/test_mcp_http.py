"""MCP over streamable HTTP end to end: headers reach the upstream, a client that goes away.

Every server here is real and on 127.0.0.1: the edge server (``tools/mcp_edge_server.py``)
serving HTTP, and ``scriptgate serve --http`` driven by the SDK's own client.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.text import TextReceiveStream

EDGE = str(Path(__file__).parent / "tools" / "mcp_edge_server.py")
PY = sys.executable
_RUNNING = re.compile(r"running on http://127\.0\.0\.1:(\d+)")


@contextlib.contextmanager
def edge_http(*extra: str) -> Iterator[str]:
    """The edge server on streamable HTTP (a free port on loopback); yields its URL."""
    process = subprocess.Popen(
        [PY, EDGE, *extra, "http", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        seen: list[str] = []
        port: int | None = None
        for line in process.stderr:  # ends at EOF if the server dies
            seen.append(line)
            found = _RUNNING.search(line)
            if found:
                port = int(found.group(1))
                break
        assert port is not None, "".join(seen)
        # keep reading, so the server never blocks on a full stderr pipe
        threading.Thread(target=process.stderr.read, daemon=True).start()
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover - a stuck server
            process.kill()
            process.wait()


def scriptgate(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "scriptgate", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


HEADER_SCRIPT = "[header(name='x-token'), header(name='authorization'), header(name='x-none')]"


def test_mcp_http_run_sends_mcp_header_options(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(HEADER_SCRIPT)
    with edge_http() as url:
        done = scriptgate(
            "run",
            str(script),
            "--json",
            "--mcp",
            url,
            "--mcp-header",
            "X-Token: abc 123",
            "--mcp-header",
            "Authorization: Bearer s3cret",
            cwd=tmp_path,
        )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["value"] == ["abc 123", "Bearer s3cret", "(none)"], result


def test_mcp_http_run_sends_config_file_headers(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text(HEADER_SCRIPT)
    config = tmp_path / "mcp.json"
    with edge_http() as url:
        config.write_text(
            json.dumps(
                {"mcpServers": {"edge": {"url": url, "headers": {"X-Token": "from-config"}}}}
            )
        )
        done = scriptgate("run", str(script), "--json", "--mcp-config", str(config), cwd=tmp_path)
        bare = scriptgate("run", str(script), "--json", "--mcp", url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["value"] == ["from-config", "(none)", "(none)"]
    # without the option nothing is sent: the test can tell the two apart
    assert bare.returncode == 0, bare.stderr
    assert json.loads(bare.stdout)["value"] == ["(none)", "(none)", "(none)"]


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@contextlib.asynccontextmanager
async def serve_stdio(*argv: str, cwd: Path) -> AsyncIterator[Any]:
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
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(90):
                await session.initialize()
            yield session


@pytest.mark.anyio
async def test_mcp_http_serve_upstream_gets_its_headers(tmp_path: Path) -> None:
    script = "[u_header(name='x-token'), v_header(name='x-token'), v_header(name='x-other')]"
    with edge_http() as url:
        config = tmp_path / "mcp.json"
        config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "u": {"url": url, "prefix": "u_", "headers": {"X-Token": "for-u"}},
                    }
                }
            )
        )
        argv = [
            "--mcp-config",
            str(config),
            "--mcp",
            url,
            "--mcp-prefix",
            "v_",
            "--mcp-header",
            "X-Token: for-v",
            "--mcp-header",
            "X-Other: 2",
        ]
        async with serve_stdio(*argv, cwd=tmp_path) as session:
            result = await session.call_tool("python", {"code": script})
    assert not result.is_error, _text(result)
    assert '["for-u","for-v","2"]' in _text(result)


async def _drain(stream: anyio.abc.ByteReceiveStream) -> None:
    async for _chunk in stream:
        pass


@contextlib.asynccontextmanager
async def serve_http(*argv: str, cwd: Path) -> AsyncIterator[tuple[str, anyio.abc.Process]]:
    """``scriptgate serve --http 127.0.0.1:0 ...``; yields its URL and process."""
    process = await anyio.open_process(
        [PY, "-m", "scriptgate", "serve", "--http", "127.0.0.1:0", *argv], cwd=str(cwd)
    )
    try:
        assert process.stderr is not None
        port: int | None = None
        buffer = ""
        with anyio.fail_after(90):
            async for chunk in TextReceiveStream(process.stderr):
                buffer += chunk
                found = _RUNNING.search(buffer)
                if found:
                    port = int(found.group(1))
                    break
        assert port is not None, buffer
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain, process.stderr)
            yield f"http://127.0.0.1:{port}/mcp", process
            tg.cancel_scope.cancel()
    finally:
        if process.returncode is None:
            process.terminate()
        with anyio.move_on_after(20, shield=True):
            await process.wait()
        await process.aclose()


@contextlib.asynccontextmanager
async def http_client(url: str) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        streamable_http_client(url) as (read, write, *_rest),
        ClientSession(read, write) as session,
    ):
        with anyio.fail_after(60):
            await session.initialize()
        yield session


async def _read_fifo(path: Path) -> str:
    """What a writer puts into the FIFO ``path`` (waits for it, up to 60 seconds)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opens at once, writer or not
    try:
        data = b""
        with anyio.fail_after(60):
            while True:
                await anyio.wait_readable(fd)
                chunk = os.read(fd, 64)
                if not chunk and data:
                    return data.decode()
                data += chunk
    finally:
        os.close(fd)


@pytest.mark.anyio
async def test_mcp_http_serve_client_disconnect_cancels_the_upstream_call(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    marker.mkdir()
    started = marker / "started"
    os.mkfifo(started)  # the upstream's `wait` writes it when the call arrives
    cancelled = marker / "cancelled"
    os.mkfifo(cancelled)  # ... and this one when the call is cancelled
    audit = tmp_path / "audit.jsonl"
    upstream = f"{PY} {EDGE} --name one --marker {marker}"
    argv = ["--mcp", upstream, "--mcp-prefix", "one_", "--audit", str(audit), "--timeout", "300"]
    async with serve_http(*argv, cwd=tmp_path) as (url, process):
        async with http_client(url) as session, anyio.create_task_group() as tg:

            async def call() -> None:
                await session.call_tool("python", {"code": "one_wait()"})

            tg.start_soon(call)
            assert await anyio.to_thread.run_sync(started.read_text) == "1"
            tg.cancel_scope.cancel()
        # The client went away mid-script: the script is aborted and its upstream call
        # cancelled (the upstream writes the FIFO `cancelled` when it is).
        assert await _read_fifo(cancelled) == "1"
        # the server stays healthy for the next client
        async with http_client(url) as session:
            again = await session.call_tool("python", {"code": "one_whoami().split()[0]"})
        assert (_text(again).splitlines()[-1], again.is_error) == ("one", False)
        assert process.returncode is None
    lines = [json.loads(x) for x in audit.read_text().splitlines()]
    waits = [(x["event"], x.get("status")) for x in lines if x["tool"] == "one_wait"]
    assert waits == [("intent", None), ("outcome", "cancelled")]


@pytest.mark.anyio
async def test_mcp_http_serve_two_upstreams_policy_audit_and_a_crash(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('default = "allow"\n[[rules]]\ntool = "two_delete"\naction = "deny"\n')
    audit = tmp_path / "audit.jsonl"
    argv = [
        *("--mcp", f"{PY} {EDGE} --name one", "--mcp-prefix", "one_"),
        *("--mcp", f"{PY} {EDGE} --name two", "--mcp-prefix", "two_"),
        *("--policy", str(policy), "--audit", str(audit)),
    ]
    script = (
        "a, b = await gather(one_whoami(), two_whoami())\n"
        "try:\n"
        "    await two_delete(path='/x')\n"
        "    denied = 'not denied'\n"
        "except ToolDenied as e:\n"
        "    denied = str(e)\n"
        "try:\n"
        "    await one_crash()\n"
        "    crashed = 'no error'\n"
        "except ToolError:\n"
        "    crashed = 'crashed'\n"
        "[a.split()[0], b.split()[0], denied, crashed, (await one_whoami()).split()[0]]"
    )
    async with serve_http(*argv, cwd=tmp_path) as (url, _process), http_client(url) as session:
        names = {t.name for t in (await session.list_tools()).tools}
        result = await session.call_tool("python", {"code": script})
    assert names == {"python", "search_tools", "describe_tool"}
    assert not result.is_error, _text(result)
    value = json.loads(_text(result).splitlines()[-1])
    assert value[:2] == ["one", "two"]
    assert value[2].startswith("Denied by policy")
    # the upstream that crashed mid-run is reconnected for the script's next call
    assert value[3:] == ["crashed", "one"]
    lines = [json.loads(x) for x in audit.read_text().splitlines()]
    outcomes = sorted((x["tool"], x["status"]) for x in lines if x["event"] == "outcome")
    assert outcomes == [
        ("one_crash", "error"),
        ("one_whoami", "ok"),
        ("one_whoami", "ok"),
        ("two_delete", "blocked"),
        ("two_whoami", "ok"),
    ]
    run_ids = {x["run_id"] for x in lines}
    assert len(run_ids) == 1  # one script run, named with the outer MCP request
    request_id, _, run = run_ids.pop().partition("/")
    assert request_id
    assert run
