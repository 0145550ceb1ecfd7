"""The ``time`` stand-in in both modes: time.sleep bounded by the deadline."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest
from sandbox_support import refused, value

from scriptgate.runtime.abort import AbortController
from scriptgate.sandbox.events import RunEvent
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox


def test_time_sleep_waits(sandbox: Sandbox) -> None:
    src = "import time\nt = time.monotonic()\ntime.sleep(0.05)\ntime.monotonic() - t >= 0.05"
    assert value(sandbox, src) is True


def test_time_sleep_past_the_deadline_is_the_timeout() -> None:
    for mode in ("in_process", "process"):
        box = Sandbox(limits=Limits(timeout=0.5), isolation=mode)  # type: ignore[arg-type]
        result = box.run_sync("import time\ntime.sleep(1000)")
        box.close()
        assert result.error is not None
        assert result.error.kind == "limit", result.error
        assert "timed out" in result.error.message


def test_time_sleep_refuses_bad_lengths(sandbox: Sandbox) -> None:
    refused(sandbox, "import time\ntime.sleep(-1)", "non-negative")
    refused(sandbox, "import time\ntime.sleep('1')", "number")


@pytest.mark.anyio
async def test_time_sleep_lets_the_host_loop_run() -> None:
    # In-process, a sync script's sleep is an anyio.sleep on the host's loop: a host task
    # gets thousands of turns while the script sleeps (a blocking sleep in 20 ms slices
    # would give it one turn per slice, about ten here).
    box = Sandbox(limits=Limits(timeout=10))
    turns = 0
    finished = anyio.Event()

    async def host_task() -> None:
        nonlocal turns
        while not finished.is_set():
            turns += 1
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(host_task)
        result = await box.run("import time\ntime.sleep(0.2)\n'slept'")
        finished.set()
    assert result.ok, result.error
    assert result.value == "slept"
    assert turns > 100


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["in_process", "process"])
async def test_time_sleep_ends_at_an_abort(mode: str) -> None:
    box = Sandbox(limits=Limits(timeout=30), isolation=mode)  # type: ignore[arg-type]
    controller = AbortController()

    def on_event(event: RunEvent) -> None:
        if event.kind == "output":
            controller.abort("stop now")  # the script printed: it is about to sleep

    try:
        result = await box.run(
            "import time\nprint('sleeping')\ntime.sleep(1000)",
            signal=controller.signal,
            on_event=on_event,
        )
    finally:
        box.close()
    assert result.error is not None
    assert result.error.kind == "aborted", result.error
    assert result.wall_time < 20
