"""Process mode: one run per worker, so what a run leaves in its interpreter dies with it.

The planting worker is a real process speaking the worker protocol that keeps state in
its interpreter across jobs, as an interpreter broken by a script (without the parent
noticing) would. With ``reuse_workers=True`` (the opt-in) the next run sees it: that
shows the test can fail. The real worker: each run gets a worker of its own, a session
keeps its worker, and the pool is topped up again.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="posix worker harness")

LIMITS = Limits(timeout=30.0)

_PLANTING = r"""
import json, os, socket, sys
sock = socket.socket(fileno=0)
def send(message):
    data = json.dumps(message).encode()
    sock.sendall(len(data).to_bytes(4, "big") + data)
buf = b""
def recv():
    global buf
    while True:
        if len(buf) >= 4:
            size = int.from_bytes(buf[:4], "big")
            if len(buf) >= 4 + size:
                message, buf = json.loads(buf[4:4 + size]), buf[4 + size:]
                return message
        chunk = sock.recv(65536)
        if not chunk:
            sys.exit(0)
        buf += chunk
planted = []  # the interpreter's own state, kept across jobs
send({"op": "ready", "pid": os.getpid(), "jail": []})
while True:
    message = recv()
    if message.get("op") != "run":
        continue
    if message.get("source") == "plant":
        planted.append("secret of an earlier run")
    output = f"sees: {planted}\n"
    send({"op": "result", "result": {"ok": True, "output": output, "calls": [],
                                     "wall_time": 0.0}, "cpu": 0.0, "retire": False})
"""


class _PlantingRunner(ProcessRunner):
    def __init__(self, tmp: Path, *, reuse_workers: bool) -> None:
        super().__init__(LIMITS, pool_size=1, spawn="exec", jail=False, reuse_workers=reuse_workers)
        self.program = tmp / "planting_worker.py"
        self.program.write_text(_PLANTING)

    def _popen(self, config: dict[str, Any], stdin: int, stdout: int, cwd: str) -> Any:
        return subprocess.Popen(
            [sys.executable, str(self.program)],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={},
            start_new_session=True,
        )


async def _echo(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
    return AgentToolResult(content=(TextContent(str(params.get("text"))),))


ECHO = AgentTool(name="echo", description="echo", execute=_echo)


async def _outputs(runner: ProcessRunner, sources: list[str]) -> list[str]:
    outputs = []
    for source in sources:
        result = await runner.run(source, bridge=HostToolBridge([ECHO]), tools=tool_specs([ECHO]))
        assert result.ok, result.error
        outputs.append(result.output)
    return outputs


@pytest.mark.anyio
async def test_process_state_planted_in_a_worker_is_not_visible_to_the_next_run(
    tmp_path: Path,
) -> None:
    async with _PlantingRunner(tmp_path, reuse_workers=False) as runner:
        outputs = await _outputs(runner, ["plant", "look", "look"])
    assert outputs == ["sees: ['secret of an earlier run']\n", "sees: []\n", "sees: []\n"]


@pytest.mark.anyio
async def test_process_reuse_workers_opt_in_keeps_the_interpreter(tmp_path: Path) -> None:
    async with _PlantingRunner(tmp_path, reuse_workers=True) as runner:
        outputs = await _outputs(runner, ["plant", "look"])
    assert outputs[1] == "sees: ['secret of an earlier run']\n"


class _Watching(ProcessRunner):
    """A real runner that notes the worker each run was given (its pid, warmed up or not)."""

    given: list[tuple[int, bool]]

    async def _acquire(self, session_key: str | None) -> Any:
        worker = await super()._acquire(session_key)
        self.given.append((worker.pid, worker.warmed))
        return worker


@pytest.mark.anyio
async def test_process_each_run_gets_a_fresh_real_worker_and_the_pool_refills() -> None:
    async with _Watching(LIMITS, pool_size=1) as runner:
        runner.given = []
        await runner.start()
        for _ in range(3):
            result = await runner.run(
                "echo(text='x')", bridge=HostToolBridge([ECHO]), tools=tool_specs([ECHO])
            )
            assert result.ok, result.error
    # three runs, three different workers; the first was warmed up by start() (a run that
    # finds no idle worker forks one itself rather than wait for the refill thread's)
    assert len({pid for pid, _warmed in runner.given}) == 3
    assert runner.given[0][1] is True


@pytest.mark.anyio
async def test_process_session_runs_keep_their_worker() -> None:
    async with ProcessRunner(LIMITS, pool_size=1) as runner:
        bridge, specs = HostToolBridge([ECHO]), tool_specs([ECHO])
        first = await runner.run("x = 41", bridge=bridge, tools=specs, session_key="s")
        second = await runner.run("x + 1", bridge=bridge, tools=specs, session_key="s")
    assert first.ok, first.error
    assert second.ok, second.error
    assert second.value == 42
