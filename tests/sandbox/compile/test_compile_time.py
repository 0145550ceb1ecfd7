"""Compiling a script is linear in its size and governed by the run's deadline and abort signal.

The attack: a script of nested subscripts, attributes or ``+`` chains used to compile in time
quadratic in the chain (RestrictedPython's ``copy_locations`` re-walked every operand's
subtree), one step the run's deadline could not interrupt: 128 KB took minutes with
``timeout=2``. Linearity is asserted on deterministic work (the profiler's count of calls made
while compiling), never on an absolute time; the deadline tests bound the run generously.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from scriptgate.runtime.abort import AbortController, loop_scheduler
from scriptgate.sandbox.compile.cache import CompileFailure, compile_script, is_cached
from scriptgate.sandbox.compile.deadline import CompileClock
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

MODES = ["in_process", "process"]

SLACK = 5.0
"""Seconds a stopped run may take in all (the parse, in C, cannot stop; ~0.3 s at 128 KB)."""


def _plus_lines(size: int) -> str:
    """``a+b+b…`` lines 90 deep up to ``size`` bytes: the slowest shape per byte (tens of s at 120 KB)."""
    line = "a" + "+b" * 90 + "\n"
    return line * (size // len(line))


def _work(source: str) -> int:
    """Calls and returns (Python and C) made while compiling ``source``: deterministic work."""
    count = [0]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        count[0] += 1

    sys.setprofile(profile)
    try:
        result = compile_script(source, cache=False)
    finally:
        sys.setprofile(None)
    assert not isinstance(result, CompileFailure), result
    return count[0]


NESTED: dict[str, Callable[[int], str]] = {
    "subscript": lambda depth: "a" + "".join(f"[b{i}" for i in range(depth)) + "]" * depth,
    "attribute": lambda depth: "x" + ".y" * depth,
    "call": lambda depth: "f" + "(g" * depth + ")" * depth,
    "plus": lambda depth: "a" + "+b" * depth,
    "boolean": lambda depth: "(a and (b or " * depth + "c" + "))" * depth,
    "fstring": lambda depth: "v = " + "[" * depth + "f'{a}{b!r:>{w}}'" + "]" * depth,
}
FLAT: dict[str, Callable[[int], str]] = {
    "and_chain": lambda n: "v = " + " and ".join(["a"] * n),
    "compare_chain": lambda n: "v = " + " < ".join(["a"] * n),
    "fstrings": lambda n: 'v = f"{a}{b!r}{c:>{w}}"\n' * n,
    "literal_list": lambda n: "v = [" + ",".join(["1"] * n) + "]",
    "call_args": lambda n: "f(" + ",".join(["a"] * n) + ")",
    "plus_lines": lambda n: ("a" + "+b" * 40 + "\n") * (n // 16),
}


@pytest.mark.parametrize("shape", sorted(NESTED))
def test_attack_compile_time_linear_in_chain_depth(shape: str) -> None:
    # 4x the depth: 4x the work (it was 12-15x for subscripts, attributes and `+`)
    build = NESTED[shape]
    ratio = _work(build(48)) / _work(build(12))
    assert ratio < 6, ratio


@pytest.mark.parametrize("shape", sorted(FLAT))
def test_attack_compile_time_linear_in_length(shape: str) -> None:
    build = FLAT[shape]
    ratio = _work(build(400)) / _work(build(100))
    assert ratio < 6, ratio


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", MODES)
async def test_attack_compile_time_bounded_by_deadline(isolation: Any) -> None:
    source = (
        _plus_lines(40_000) + f"# {isolation}\n"
    )  # tens of seconds of policy work; the parse (C) ~0.1 s
    async with Sandbox([], isolation=isolation, limits=Limits(timeout=0.5)) as sandbox:
        result = await sandbox.run(source)
        assert result.error is not None, result.value
        assert result.error.kind == "limit", result.error
        assert "0.5 s" in result.error.message, result.error
        if isolation == "in_process":
            # the run's ordinary timeout, and the half-done compile was not kept
            assert result.error.message == "Script timed out after 0.5 s"
            assert not is_cached(source)
        assert result.wall_time < SLACK, result.wall_time
        after = await sandbox.run("1 + 1")  # the sandbox still serves
        assert after.value == 2


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", MODES)
async def test_attack_compile_time_of_exec_string_bounded_by_deadline(isolation: Any) -> None:
    # one exec() string of ~4 KB of `+` chains compiles in about a second on a quiet
    # machine; the deadline stops the compile itself (it was checked only after it)
    text = _plus_lines(4_000)
    script = f"s = {text!r}\nexec(s)\n"
    async with Sandbox([], isolation=isolation, limits=Limits(timeout=0.1)) as sandbox:
        result = await sandbox.run(script)
    assert result.error is not None, result.value
    assert result.error.kind == "limit", result.error
    assert "0.1 s" in result.error.message, result.error
    if isolation == "in_process":
        assert result.error.message == "Script timed out after 0.1 s"
        assert not is_cached(text, session=True)
    assert result.wall_time < SLACK, result.wall_time


def _compiling(thread_id: int) -> bool:
    frame = sys._current_frames().get(thread_id)
    while frame is not None:
        if frame.f_code.co_name == "_compile_uncached":
            return True
        frame = frame.f_back
    return False


@pytest.mark.anyio
async def test_attack_compile_time_abort_stops_compile() -> None:
    source = _plus_lines(30_000) + "# abort\n"
    controller = AbortController()
    call_soon = loop_scheduler()
    here = threading.get_ident()
    done = threading.Event()

    def abort_once_compiling() -> None:
        while not done.wait(0.002):  # polls the run's thread, orders nothing by time
            if _compiling(here):
                controller.abort_soon("stopped by the test", call_soon)
                return

    watcher = threading.Thread(target=abort_once_compiling, daemon=True)
    watcher.start()
    try:
        result = await Sandbox([], limits=Limits(timeout=None)).run(
            source, signal=controller.signal
        )
    finally:
        done.set()
        watcher.join()
    assert result.error is not None, result.value
    assert (result.error.kind, result.error.message) == ("aborted", "stopped by the test")
    assert not is_cached(source)


def test_attack_compile_time_clock_counts_every_pass() -> None:
    # the clock's visits cover every pass (the policy and the walks around it): a compile
    # visits more nodes than the parser made, in proportion to the size
    small, large = CompileClock(None), CompileClock(None)
    assert not isinstance(
        compile_script(_plus_lines(1_000), cache=False, clock=small), CompileFailure
    )
    assert not isinstance(
        compile_script(_plus_lines(4_000), cache=False, clock=large), CompileFailure
    )
    assert small.visits > 0
    assert 3 < large.visits / small.visits < 6
