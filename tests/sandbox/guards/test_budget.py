"""The run's ticker (``guards.Budget``): exact depth and step limits, chunk ends, pauses.

Every function entry and ``while`` iteration calls ``_tk_()``: ``pop`` of a list
whose first item's finalizer checks the limits and refills it. These tests pin
what that mechanism must keep from the plain "check at every tick" it replaces:
the limits are exact (the call or step that passes a limit is the one stopped,
before its body runs), in every way a script runs (a sync script run directly,
a sync script in its greenlet, an async script), at every depth a chunk can end.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import anyio
import pytest

from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.guards.attributes import Budget
from scriptgate.sandbox.guards.constants import TICK_CHUNK
from scriptgate.sandbox.guards.errors import RunEnded
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

OPEN = {"type": "object", "additionalProperties": True}


def _echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent("ok"),))


TOOLS = [AgentTool(name="echo", description="", parameters=OPEN, execute=_echo)]

# how a script runs: directly (names no tool), in its greenlet (names a tool), as a task
MODES = {
    "direct": "{}",
    "greenlet": "if False:\n    echo()\n{}",
    "async": "await gather()\n{}",
}

DEPTH = "def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\ndepth({n})"


async def run(source: str, **limits: Any) -> ScriptResult:
    return await Sandbox(TOOLS, limits=Limits(**limits)).run(source)


def _stopped(result: ScriptResult, text: str) -> None:
    assert result.error is not None, result.value
    assert result.error.kind == "limit", result.error
    assert text in result.error.message, result.error


@pytest.mark.anyio
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("limit", [1, 2, 3, 31, 32, 33, 63, 64, 65, 100, 200, 300])
async def test_ticker_recursion_limit_is_exact_at_every_limit(mode: str, limit: int) -> None:
    # `limit` nested calls run; one more is stopped, whatever depth the chunks end at
    ok = await run(MODES[mode].format(DEPTH.format(n=limit - 1)), max_recursion=limit)
    assert ok.value == limit - 1, ok.error
    over = await run(MODES[mode].format(DEPTH.format(n=limit)), max_recursion=limit)
    _stopped(over, f"recursion limit ({limit} nested calls)")


@pytest.mark.anyio
@pytest.mark.parametrize("mode", sorted(MODES))
async def test_ticker_recursion_limit_holds_after_many_chunks(mode: str) -> None:
    # a long shallow phase (many chunk ends, the cheap depth probe) and then a dive
    source = (
        "def walk(n):\n    return 0 if n == 0 else 1 + walk(n - 1)\n"
        "total = 0\nfor i in range(2000):\n    total += walk(i % 20)\n"
        "walk({n})"
    )
    assert (await run(MODES[mode].format(source.format(n=149)), max_recursion=150)).value == 149
    _stopped(
        await run(MODES[mode].format(source.format(n=150)), max_recursion=150),
        "recursion limit (150 nested calls)",
    )


@pytest.mark.anyio
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("limit", [300, 511, 512, 513, 600])
async def test_ticker_recursion_limit_holds_with_long_chunks(mode: str, limit: int) -> None:
    # quick ticks make the chunks long (up to 4 x TICK_CHUNK, capped by the depth
    # headroom): a dive after thousands of quick calls is still stopped exactly
    source = (
        "def walk(n):\n    return 0 if n == 0 else 1 + walk(n - 1)\n"
        "total = 0\nfor i in range(300):\n    total += walk(i % 40)\n"
        "walk({n})"
    )
    ok = await run(MODES[mode].format(source.format(n=limit - 1)), max_recursion=limit)
    assert ok.value == limit - 1, ok.error
    _stopped(
        await run(MODES[mode].format(source.format(n=limit)), max_recursion=limit),
        f"recursion limit ({limit} nested calls)",
    )


@pytest.mark.anyio
@pytest.mark.parametrize("mode", sorted(MODES))
async def test_ticker_body_of_the_call_past_the_limit_never_runs(mode: str) -> None:
    source = "def f(n):\n    print(n)\n    f(n + 1)\nf(1)"
    result = await run(MODES[mode].format(source), max_recursion=40)
    _stopped(result, "recursion limit (40 nested calls)")
    assert result.output.split() == [str(n) for n in range(1, 41)]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("steps", [1, 2, 255, 256, 257, 1000, 1023, 1024, 1025, 5000])
async def test_ticker_step_limit_is_exact(mode: str, steps: int) -> None:
    # one step per `while` iteration: `steps` iterations run, one more is stopped
    loop = "i = 0\nwhile i < {n}:\n    i += 1\ni"
    assert (await run(MODES[mode].format(loop.format(n=steps)), max_steps=steps)).value == steps
    over = await run(MODES[mode].format(loop.format(n=steps + 1)), max_steps=steps)
    _stopped(over, f"step limit ({steps} steps)")


@pytest.mark.anyio
@pytest.mark.parametrize("body", ["0", "None", "[]", "''", "False", "x"])
async def test_ticker_lambda_tick_keeps_falsy_results(body: str) -> None:
    # a lambda ticks with `_tk_() and None or <body>`: the body's value, even falsy,
    # including on the tick that ends a chunk (300 calls cross one)
    source = f"f = lambda x: {body}\n[f(0) for _ in range(300)][-1]"
    expected = {"0": 0, "None": None, "[]": [], "''": "", "False": False, "x": 0}[body]
    assert (await run(source)).value == expected


@pytest.mark.anyio
async def test_ticker_greenlet_script_pauses_for_the_loop() -> None:
    # a chunk that ends when a pause is due hands the pause to the next tick (a
    # finalizer cannot switch out): another task still gets its turns while a
    # sync script recurses without loops
    turns = 0
    done = anyio.Event()

    async def other() -> None:
        nonlocal turns
        while not done.is_set():
            turns += 1
            await anyio.lowlevel.checkpoint()

    source = MODES["greenlet"].format(
        "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(23)"
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        await anyio.lowlevel.checkpoint()
        start = turns
        result = await run(source, max_steps=None)
        done.set()
    assert result.value == 28657
    assert turns > start + 1


@pytest.mark.anyio
async def test_ticker_abort_mid_chunk_stops_at_the_next_tick() -> None:
    # the watchdog trips the budget while a sync script recurses: the next tick raises
    source = MODES["greenlet"].format(
        "def f(n):\n    return 1 if n < 1 else f(n - 1) + f(n - 1)\nf(60)"
    )
    result = await run(source, timeout=0.2, max_steps=None)
    _stopped(result, "timed out after 0.2 s")


def test_ticker_chunk_end_after_the_run_does_nothing() -> None:
    # a budget closed with chunk marks still in its list: dropping them runs no check
    budget = Budget(Limits())
    hooks: dict[str, Any] = {"_tk_": budget.first_tick()}
    budget.hooks = hooks
    budget.close()
    gc.collect()
    assert hooks["_tk_"] is not budget.tick_check
    # the ended run's stop (a GeneratorExit): code of the run resumed later stops at once
    assert isinstance(budget.stop, RunEnded)
    assert isinstance(budget.stop, GeneratorExit)
    with pytest.raises(RunEnded):
        hooks["_tk_"]()
    assert budget.used == 0


def test_ticker_long_chunk_checks_the_deadline_every_tick_chunk() -> None:
    # eighth attack F03: quick ticks earn a 4 x TICK_CHUNK chunk, then turn slow (a 9 ms
    # C call each); the time marks inside the long chunk keep the deadline checked every
    # TICK_CHUNK ticks, so the overshoot stays what a plain chunk allows
    budget = Budget(Limits(timeout=60, max_steps=None, max_recursion=5000))
    hooks: dict[str, Any] = {"_tk_": budget.first_tick()}
    budget.hooks = hooks
    budget._checked = time.monotonic() + 60  # the last chunk was quick
    hooks["_tk_"] = budget._chunk_end(True)
    assert budget._chunk == 4 * TICK_CHUNK
    budget.deadline = time.monotonic() - 1  # the ticks turned slow: the deadline is past
    tick = hooks["_tk_"]
    for _ in range(TICK_CHUNK):
        tick()
    assert budget.stop is not None
    assert budget.stop.kind == "limit", budget.stop
    assert "timed out" in budget.stop.message
    with pytest.raises(type(budget.stop)):
        hooks["_tk_"]()
    budget.close()


def test_ticker_long_chunk_marks_keep_the_step_count_exact() -> None:
    # the time marks are ticks like the others: a long chunk still charges exactly
    budget = Budget(Limits(timeout=60, max_steps=None, max_recursion=5000))
    hooks: dict[str, Any] = {"_tk_": budget.first_tick()}
    budget.hooks = hooks
    budget._checked = time.monotonic() + 60
    hooks["_tk_"] = budget._chunk_end(True)
    start, chunk = budget.used, budget._chunk
    for _ in range(chunk):
        hooks["_tk_"]()
    assert budget.used == start + chunk
    assert budget.stop is None
    budget.close()


def test_ticker_chunk_is_long_only_after_a_quick_chunk() -> None:
    # a chunk that ended within _QUICK lets the next be 4 x TICK_CHUNK (depth headroom
    # allowing); one that took longer brings the next back to TICK_CHUNK
    budget = Budget(Limits(timeout=None, max_steps=None, max_recursion=5000))
    budget.hooks = {"_tk_": budget.first_tick()}
    assert budget._chunk == TICK_CHUNK
    budget._checked = time.monotonic() + 60  # the last check was "just now"
    budget._chunk_end(True)
    assert budget._chunk == 4 * TICK_CHUNK
    budget._checked = time.monotonic() - 60  # the chunk took a minute
    budget._chunk_end(True)
    assert budget._chunk == TICK_CHUNK
    budget._checked = time.monotonic() + 60
    budget.max_steps = budget.used + budget._chunk + 700  # never past the steps left
    budget._chunk_end(True)
    assert budget._chunk == 700 & -32
    budget.close()
