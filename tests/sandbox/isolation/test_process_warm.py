"""Process mode: the parent's warm-up job on each new worker leaves no trace in user runs.

Real workers (jail on where the kernel has it) and, for the failure path, a real process
speaking the worker protocol that answers the warm-up job the way a hostile worker would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, BeforeToolCallContext, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.isolation.warm import WARM_TOOL
from scriptgate.sandbox.result import Limits

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="posix workers")

LIMITS = Limits(timeout=30.0)


async def _echo(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
    return AgentToolResult(content=(TextContent(str(params.get("text"))),))


ECHO = AgentTool(name="echo", description="echo", execute=_echo)


@pytest.mark.anyio
async def test_process_warm_up_leaves_no_trace_in_records_hooks_or_output() -> None:
    seen: list[str] = []

    def before(ctx: BeforeToolCallContext, signal: Any) -> None:
        seen.append(ctx.tool_call.name)

    async with ProcessRunner(LIMITS, pool_size=1) as runner:
        await runner.start()
        assert len(runner.worker_pids()) == 1  # warming does not overfill the pool
        (warmed,) = runner._idle
        assert warmed.warmed  # the job ran (it made WARM_CALLS calls the parent answered)
        bridge = HostToolBridge([ECHO], before_tool_call=before)
        first = await runner.run(
            "echo(text='a')\nprint('user')\n'done'", bridge=bridge, tools=tool_specs([ECHO])
        )
        assert first.ok, first.error
        assert [(c.tool, c.arguments, c.status) for c in first.calls] == [
            ("echo", {"text": "a"}, "ok")
        ]
        assert first.output == "user\n"
        assert first.value == "done"
        # the worker served exactly this one run: it left the pool for good
        assert warmed not in runner._idle
        assert warmed.killed or warmed in runner._retiring
        second = await runner.run(
            f"{WARM_TOOL.identifier}(i=1)", bridge=bridge, tools=tool_specs([ECHO])
        )
        assert warmed.killed
    # the private tool is no tool of a user run, and no hook (audit) ever saw it
    assert second.error is not None
    assert second.error.type == "NameError", second.error
    assert second.calls == ()
    assert seen == ["echo"]


@pytest.mark.anyio
async def test_process_warm_up_runs_under_strict_pool_limits_which_still_bind_user_runs() -> None:
    strict = Limits(timeout=30.0, max_tool_calls=2, max_output_chars=10, max_steps=500)
    async with ProcessRunner(strict, pool_size=1) as runner:
        await runner.start()
        assert [worker.warmed for worker in runner._idle] == [True]
        result = await runner.run(
            "for i in range(3):\n    echo(text='x')\n",
            bridge=HostToolBridge([ECHO]),
            tools=tool_specs([ECHO]),
        )
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert len(result.calls) <= 2


# A process speaking the worker protocol that, given a job, calls a tool the job does
# not offer (what a compromised worker might try during the warm-up).
_HOSTILE = r"""
import json, os, socket, sys
sock = socket.socket(fileno=0)
def send(message):
    data = json.dumps(message).encode()
    sock.sendall(len(data).to_bytes(4, "big") + data)
send({"op": "ready", "pid": os.getpid(), "jail": []})
sock.recv(65536)
send({"op": "call", "id": "x/1", "tool": "echo", "args": {"text": "from the warm-up"}})
sock.recv(65536)
"""


class _HostileRunner(ProcessRunner):
    def __init__(self, tmp: Path) -> None:
        super().__init__(LIMITS, pool_size=1, spawn="exec", jail=False)
        self.program = tmp / "hostile_worker.py"
        self.program.write_text(_HOSTILE)

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


@pytest.mark.anyio
async def test_process_worker_that_misbehaves_in_the_warm_up_is_discarded(tmp_path: Path) -> None:
    async with _HostileRunner(tmp_path) as runner:
        await runner.start()
        assert runner._idle == []
        assert runner.worker_pids() == []
