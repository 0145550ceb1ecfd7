"""Deadlines hold whatever a sync tool does; ``@tool(blocking=False)`` runs inline on the loop."""

from __future__ import annotations

import threading
import time

import pytest

from scriptgate.runtime.tool import tool
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

SCRIPTS = {
    "sync": "print('before')\nstuck()\nprint('after')",
    "async": "print('before')\nawait stuck()\nprint('after')",
}


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
@pytest.mark.parametrize("style", ["sync", "async"])
async def test_sync_tool_stuck_past_the_deadline_is_abandoned(isolation: str, style: str) -> None:
    release = threading.Event()
    entered = threading.Event()

    @tool
    def stuck() -> str:
        """Block its thread until the test releases it."""
        entered.set()
        release.wait(60)
        return "late"

    limits = Limits(timeout=0.5)
    try:
        async with Sandbox([stuck], limits=limits, isolation=isolation) as sandbox:
            started = time.monotonic()
            result = await sandbox.run(SCRIPTS[style])
            took = time.monotonic() - started
    finally:
        release.set()
    assert entered.is_set()
    assert result.error is not None
    assert result.error.kind == "limit"
    assert [call.status for call in result.calls] == ["cancelled"]
    assert result.output == "before\n"
    assert took < 5  # the deadline (0.5 s), not the tool's 60 s


@pytest.mark.anyio
@pytest.mark.parametrize("blocking", [True, False])
async def test_sync_tool_blocking_false_runs_on_the_loop_thread(blocking: bool) -> None:
    threads: list[int] = []

    @tool(blocking=blocking)
    def where() -> str:
        """Say which thread ran it."""
        threads.append(threading.get_ident())
        return "here"

    result = await Sandbox([where]).run("where()")
    assert result.ok, result.error
    assert (threads == [threading.get_ident()]) is (not blocking)
    assert where.blocking is blocking
