"""Per-call cost of a sync tool: in a worker thread (the default) vs ``blocking=False`` (inline).

Run with ``uv run python benchmarks/sync_tools.py [--backend asyncio|trio]``.

A sync script makes ``CALLS`` calls of a trivial tool; the per-call figure is the
run's wall time divided by the calls, median of ``REPEAT`` runs, for an async tool
(the baseline), a sync tool (thread hop, abandoned on cancel) and a sync tool
declared ``@tool(blocking=False)`` (runs on the loop). Measured, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import anyio

from scriptgate.runtime.tool import tool
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

CALLS = 2_000
REPEAT = 5


@tool
async def async_echo(x: int) -> str:
    """Echo (async)."""
    return "ok"


@tool
def thread_echo(x: int) -> str:
    """Echo (sync, in a worker thread)."""
    return "ok"


@tool(blocking=False)
def inline_echo(x: int) -> str:
    """Echo (sync, inline on the loop)."""
    return "ok"


async def _per_call(sandbox: Sandbox, name: str) -> float:
    script = f"for i in range({CALLS}):\n    {name}(x=i)\n"
    times = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        result = await sandbox.run(script)
        times.append(time.perf_counter() - started)
        assert result.ok, result.error
    return statistics.median(times) / CALLS * 1e6


async def main() -> None:
    sandbox = Sandbox(
        [async_echo, thread_echo, inline_echo], limits=Limits(timeout=60, max_tool_calls=None)
    )
    figures = {
        name: await _per_call(sandbox, name)
        for name in ("async_echo", "thread_echo", "inline_echo")
    }
    base = figures["async_echo"]
    for name, micros in figures.items():
        print(f"{name:12s} {micros:8.1f} µs/call  ({micros / base:.2f}× the async tool)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    anyio.run(main, backend=parser.parse_args().backend)
