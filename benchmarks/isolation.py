"""Process isolation: what the warm pool costs (measured, never asserted).

Run with ``uv run --group bench python benchmarks/isolation.py``.

Figures, each next to a baseline measured in the same run:

- a warm pooled run of ``x = 1 + 2`` (baseline: the same script in-process);
- one tool-call round trip (a script with one call minus a script with none);
- 1,000 tool calls in one script (baseline: the same script in-process);
- the pool's cold start (``ProcessRunner.start()``, one and two workers);
- how long after its deadline a script is stopped: ``while True: pass`` (stopped by
  the engine's budget check inside the worker), a catastrophic regex (stopped by
  the ``re`` stand-in's timeout inside the worker) and a quadratic ``set()`` of
  colliding hashes stuck in one C call (stopped by the parent's SIGKILL of the
  worker's process group);
- pydantic-monty's warm run and host call, when it is installed.

Targets (issue 5): warm run ≤ 2 ms, round trip ≤ 150 µs, kill within 100 ms of
the deadline. The machine is shared and has 2 cores: expect noise.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.engine import run_script
from scriptgate.sandbox.process import ProcessRunner
from scriptgate.sandbox.result import Limits

LIMITS = Limits(timeout=30.0, max_steps=None, max_tool_calls=100_000)
CALLS = 1_000


async def _ping(call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> Any:
    return AgentToolResult(content=(TextContent("pong"),))


PING = AgentTool(
    name="ping",
    description="Answers pong.",
    parameters={"type": "object", "properties": {}},
    execute=_ping,
)
TOOLS = [PING]
SPECS = tool_specs(TOOLS)
LOOP = f"for i in range({CALLS}):\n    ping()\n"
ASYNC_LOOP = f"for i in range({CALLS}):\n    await ping()\n"


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "


async def _median(fn: Callable[[], Awaitable[Any]], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        await fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _row(label: str, value: float, baseline: float | None = None, name: str = "") -> None:
    ratio = f"   {value / baseline:6.1f}× {name}" if baseline else ""
    print(f"  {label:<52} {_fmt(value)}{ratio}")


async def _process_figures() -> dict[str, float]:
    figures: dict[str, float] = {}
    bridge = HostToolBridge(TOOLS)

    async def local(source: str) -> Any:
        result = await run_script(source, bridge=bridge, tools=SPECS, limits=LIMITS)
        assert result.ok, result.error
        return result

    print("cold start")
    for size in (1, 2):
        runner = ProcessRunner(LIMITS, pool_size=size)
        start = time.perf_counter()
        await runner.start()
        figures[f"cold{size}"] = time.perf_counter() - start
        _row(f"ProcessRunner(pool_size={size}).start()", figures[f"cold{size}"])
        await runner.aclose()

    async with ProcessRunner(LIMITS, pool_size=2) as runner:
        await runner.start()

        async def remote(source: str) -> Any:
            result = await runner.run(source, bridge=bridge, tools=SPECS)
            assert result.ok, result.error
            return result

        for _ in range(20):
            await remote("x = 1 + 2")
            await local("x = 1 + 2")
        print("warm run of `x = 1 + 2` (median of 300)")
        figures["local"] = await _median(lambda: local("x = 1 + 2"), 300)
        figures["warm"] = await _median(lambda: remote("x = 1 + 2"), 300)
        _row("in-process (baseline)", figures["local"])
        _row("process, warm pool", figures["warm"], figures["local"], "in-process")

        print("tool calls")
        one = await _median(lambda: remote("ping()"), 300)
        figures["roundtrip"] = max(one - figures["warm"], 0.0)
        local_one = await _median(lambda: local("ping()"), 300)
        figures["local_call"] = max(local_one - figures["local"], 0.0)
        _row("one call in-process (baseline)", figures["local_call"])
        _row(
            "one round trip (1-call run minus 0-call run)",
            figures["roundtrip"],
            figures["local_call"] or None,
            "in-process",
        )
        figures["local_1000"] = await _median(lambda: local(LOOP), 5)
        figures["remote_1000"] = await _median(lambda: remote(LOOP), 5)
        _row(f"{CALLS} calls in-process (baseline)", figures["local_1000"])
        _row(
            f"{CALLS} calls, process",
            figures["remote_1000"],
            figures["local_1000"],
            "in-process",
        )
        _row("  per call, process", figures["remote_1000"] / CALLS)
        figures["local_async"] = await _median(lambda: local(ASYNC_LOOP), 5)
        figures["remote_async"] = await _median(lambda: remote(ASYNC_LOOP), 5)
        _row(f"{CALLS} awaited calls (async script) in-process", figures["local_async"])
        _row(
            f"{CALLS} awaited calls (async script), process",
            figures["remote_async"],
            figures["local_async"],
            "in-process",
        )
        _row("  per call, process, async script", figures["remote_async"] / CALLS)

    print("stopping at the deadline (timeout 0.5 s; time past the deadline)")
    short = Limits(timeout=0.5, max_steps=None)
    async with ProcessRunner(short, pool_size=1) as runner:
        await runner.start()
        for label, source in (
            ("`while True: pass` (engine budget check)", "while True:\n    pass"),
            (
                "catastrophic regex (re stand-in timeout)",
                "import re\nre.match('(a|aa)+$', 'a' * 60 + 'b')",
            ),
            (
                "colliding-hash set() in C (parent SIGKILL)",
                "x = [i * (2 ** 61 - 1) for i in range(200000)]\nset(x)",
            ),
        ):
            lates = []
            for _ in range(3):
                await runner.start()
                start = time.perf_counter()
                result = await runner.run(source, bridge=bridge, tools=SPECS)
                lates.append(time.perf_counter() - start - 0.5)
                assert result.error is not None, "the script should have been stopped"
                assert result.error.kind == "limit", result.error
            figures[label] = statistics.median(lates)
            _row(label, figures[label])
    return figures


def _monty_figures() -> dict[str, float]:
    try:
        import pydantic_monty
    except ImportError:
        print("pydantic-monty: not installed (uv run --group bench ...)")
        return {}
    figures: dict[str, float] = {}
    print("pydantic-monty (same machine, same run)")
    limits: Any = {"max_suspensions": 10 * CALLS}
    with (
        pydantic_monty.Monty(min_processes=1) as pool,
        pool.checkout(limits=limits) as session,
    ):
        for _ in range(20):
            session.feed_run("x = 1 + 2")
        times = []
        for _ in range(300):
            start = time.perf_counter()
            session.feed_run("x = 1 + 2")
            times.append(time.perf_counter() - start)
        figures["warm"] = statistics.median(times)
        _row("monty feed_run(`x = 1 + 2`)", figures["warm"])

        def ping() -> str:
            return "pong"

        lookup = {"ping": ping}
        session.feed_run(LOOP, external_lookup=lookup)
        start = time.perf_counter()
        session.feed_run(LOOP, external_lookup=lookup)
        figures["1000"] = time.perf_counter() - start
        _row(f"monty {CALLS} host calls", figures["1000"])
        _row("  per call, monty", figures["1000"] / CALLS)
    return figures


def main() -> None:
    """Print every figure; never assert."""
    print(f"Python {sys.version.split()[0]}; figures are medians unless noted\n")
    figures = anyio.run(_process_figures)
    monty = _monty_figures()
    print("\nsummary against the targets")
    print(f"  warm run        {_fmt(figures['warm'])}  (target ≤ 2 ms)")
    print(
        f"  round trip      {_fmt(figures['remote_async'] / CALLS)}  per awaited call, "
        f"{_fmt(figures['remote_1000'] / CALLS)} per blocking call (target ≤ 150 µs)"
    )
    print(f"  cold start      {_fmt(figures['cold2'])}  for a pool of two (zygote + two forks)")
    late = figures["colliding-hash set() in C (parent SIGKILL)"]
    print(f"  kill latency    {_fmt(late)}  past the deadline (target ≤ 100 ms)")
    if monty:
        print(
            f"  vs monty        warm run {figures['warm'] / monty['warm']:.1f}×, "
            f"1,000 calls {figures['remote_async'] / monty['1000']:.1f}× (async script)"
        )


if __name__ == "__main__":
    main()
