"""Pipeline overhead and parallel batch benchmark (measured, never asserted).

1. Per-call overhead of ``run_tool_call`` — a trivial async tool with a small
   schema and both hooks set — against awaiting the tool's ``execute``
   directly, in the same run. Validation alone is timed too, so the pipeline's
   own share is visible. Target: overhead ≤ 20 µs per call.
2. The same with a *coercible* argument (``{"i": "7"}`` for an integer, no hooks)
   against a valid one (``{"i": 7}``) and the direct ``execute``, interleaved round by
   round; medians, since the machine is shared. Target: overhead < 20 µs per call.
3. A parallel batch of 100 calls that each sleep 50 ms, against the ideal
   50 ms. Target: within 1.5× of the ideal.

Run: ``uv run python benchmarks/pipeline.py [--backend asyncio|trio] [--calls N]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import anyio

from scriptgate.runtime.batch import execute_tool_calls
from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallContext,
    ToolCall,
)
from scriptgate.runtime.validation import validate_tool_arguments

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
}
RESULT = AgentToolResult.text("ok")


async def trivial(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return RESULT


def before_sync(ctx: BeforeToolCallContext, signal: Any) -> None:
    return None


def after_sync(ctx: AfterToolCallContext, signal: Any) -> None:
    return None


async def before_async(ctx: BeforeToolCallContext, signal: Any) -> None:
    return None


async def after_async(ctx: AfterToolCallContext, signal: Any) -> None:
    return None


def best_of(samples: list[float]) -> float:
    return min(samples)


async def overhead(calls: int, rounds: int) -> None:
    tool = AgentTool(name="read", parameters=SCHEMA, execute=trivial)
    tools = [tool]
    call = ToolCall("c1", "read", {"path": "a.txt", "limit": 10})
    args = {"path": "a.txt", "limit": 10}

    async def direct() -> float:
        start = time.perf_counter_ns()
        for _ in range(calls):
            await tool.execute("c1", args, None, None)  # type: ignore[misc]
        return (time.perf_counter_ns() - start) / calls / 1000

    async def validation_only() -> float:
        start = time.perf_counter_ns()
        for _ in range(calls):
            validate_tool_arguments(tool, call)
        return (time.perf_counter_ns() - start) / calls / 1000

    async def pipeline(before: Any, after: Any) -> float:
        start = time.perf_counter_ns()
        for _ in range(calls):
            await run_tool_call(call, tools=tools, before_tool_call=before, after_tool_call=after)
        return (time.perf_counter_ns() - start) / calls / 1000

    # warm up caches (validator compilation, is_async, ...)
    await pipeline(before_sync, after_sync)
    results: dict[str, list[float]] = {
        "direct execute": [],
        "validation alone": [],
        "run_tool_call, no hooks": [],
        "run_tool_call, sync hooks": [],
        "run_tool_call, async hooks": [],
    }
    for _ in range(rounds):
        results["direct execute"].append(await direct())
        results["validation alone"].append(await validation_only())
        results["run_tool_call, no hooks"].append(await pipeline(None, None))
        results["run_tool_call, sync hooks"].append(await pipeline(before_sync, after_sync))
        results["run_tool_call, async hooks"].append(await pipeline(before_async, after_async))
    base = best_of(results["direct execute"])
    print(f"per-call times ({calls} calls x {rounds} rounds, best round, µs/call):")
    for name, samples in results.items():
        best = best_of(samples)
        median = statistics.median(samples)
        print(f"  {name:28s} best {best:7.2f}  median {median:7.2f}  ratio {best / base:6.1f}x")
    for name in ("run_tool_call, sync hooks", "run_tool_call, async hooks"):
        over = best_of(results[name]) - base
        without_validation = over - best_of(results["validation alone"])
        print(
            f"  overhead vs direct ({name}): {over:.2f} µs/call "
            f"({without_validation:.2f} µs excluding validation; target ≤ 20 µs)"
        )


COERCIBLE_SCHEMA = {"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]}


async def coercible_overhead(calls: int, rounds: int) -> None:
    tool = AgentTool(name="n", parameters=COERCIBLE_SCHEMA, execute=trivial)
    tools = [tool]
    coercible = ToolCall("c1", "n", {"i": "7"})
    valid = ToolCall("c1", "n", {"i": 7})

    async def direct() -> float:
        args = {"i": 7}
        start = time.perf_counter_ns()
        for _ in range(calls):
            await tool.execute("c1", args, None, None)  # type: ignore[misc]
        return (time.perf_counter_ns() - start) / calls / 1000

    async def pipeline(call: ToolCall) -> float:
        start = time.perf_counter_ns()
        for _ in range(calls):
            await run_tool_call(call, tools=tools)
        return (time.perf_counter_ns() - start) / calls / 1000

    assert (await run_tool_call(coercible, tools=tools)).is_error is False
    over_coercible: list[float] = []
    over_valid: list[float] = []
    bases: list[float] = []
    for _ in range(rounds):
        before = await direct()
        c = await pipeline(coercible)
        v = await pipeline(valid)
        base = (before + await direct()) / 2
        bases.append(base)
        over_coercible.append(c - base)
        over_valid.append(v - base)
    base = statistics.median(bases)
    oc = statistics.median(over_coercible)
    ov = statistics.median(over_valid)
    print(f"coercible argument, no hooks ({calls} calls x {rounds} interleaved rounds, medians):")
    print(f"  direct execute               {base:7.2f} µs/call")
    print(
        f"  run_tool_call {{'i': 7}}       overhead {ov:6.2f} µs/call "
        f"(call {(ov + base) / base:5.1f}x direct)"
    )
    print(
        f"  run_tool_call {{'i': '7'}}     overhead {oc:6.2f} µs/call "
        f"(call {(oc + base) / base:5.1f}x direct; {oc / ov:4.2f}x the valid overhead; "
        "target < 20 µs)"
    )


async def batch(size: int, sleep_s: float, rounds: int) -> None:
    async def nap(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await anyio.sleep(sleep_s)
        return RESULT

    tool = AgentTool(name="nap", execute=nap)
    message = AssistantMessage(
        content=tuple(ToolCall(f"c{i}", "nap", {}) for i in range(size)), stop_reason="toolUse"
    )
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        out = await execute_tool_calls(
            message,
            tools=[tool],
            before_tool_call=before_sync,
            after_tool_call=after_sync,
            emit=lambda event: None,
        )
        samples.append(time.perf_counter() - start)
        assert len(out.messages) == size
    ideal = sleep_s * 1000
    best = min(samples) * 1000
    median = statistics.median(samples) * 1000
    print(
        f"parallel batch of {size} calls sleeping {ideal:.0f} ms: best {best:.1f} ms, "
        f"median {median:.1f} ms; ideal {ideal:.0f} ms → {best / ideal:.2f}x best, "
        f"{median / ideal:.2f}x median (target ≤ 1.5x)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args()

    async def run() -> None:
        print(f"backend: {options.backend}")
        await overhead(options.calls, options.rounds)
        await coercible_overhead(5_000, 21)
        await batch(100, 0.05, options.rounds)

    anyio.run(run, backend=options.backend)


if __name__ == "__main__":
    main()
