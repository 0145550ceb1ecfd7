"""Process isolation: what the warm pool costs (measured, never asserted).

Run with ``uv run --group bench python benchmarks/isolation.py``.

Figures, each next to a baseline measured in the same run:

- a warm pooled run of ``x = 1 + 2`` (baseline: the same script in-process);
- one tool-call round trip (a script with one call minus a script with none);
- 1,000 tool calls in one script (baseline: the same script in-process), and the
  CPU each side spends per call (the parent's own, the workers' from
  ``/proc/<pid>/schedstat``);
- the pool's cold start (``ProcessRunner.start()``, one and two workers);
- how long after its deadline a script is stopped: ``while True: pass`` (stopped by
  the engine's budget check inside the worker), a catastrophic regex (stopped by
  the ``re`` stand-in's timeout inside the worker) and straight-line code of
  million-bit divisions, C operations with no budget check between them (stopped
  by the parent's SIGKILL of the worker's process group; ``set.update()`` of
  colliding hashes and ``==`` between shared-reference lists standing for 10**15
  items were the example until the hashing feed and the comparison bound stopped
  them in the worker);
- pydantic-monty's warm run and host call, when it is installed;
- the transport floor: a ping-pong of small length-prefixed frames between this
  process and a child Python process over the same kind of socket (a Unix socket
  pair, blocking reads on both sides), as raw bytes and as the JSON messages of a
  tool call and its reply: what any round trip between two Python processes
  costs on this machine before an event loop, the engine or a tool is involved.

Targets (issue 5): warm run ≤ 2 ms, round trip ≤ 150 µs, kill within 100 ms of
the deadline. The machine is shared and has 2 cores: expect noise. The per-call
figures of the 1,000-call scripts are given as the median and the best of
``REPEAT`` runs.
"""

from __future__ import annotations

import json
import resource
import socket
import statistics
import subprocess
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
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits

LIMITS = Limits(timeout=30.0, max_steps=None, max_tool_calls=100_000)
CALLS = 1_000
REPEAT = 7
FLOOR_TRIPS = 5_000

# The child side of the transport floor: echo raw frames, or answer JSON calls.
_ECHO = """
import json, os, socket, sys
sock = socket.socket(fileno=0)
mode = sys.argv[1]
buf = b""
while True:
    while len(buf) < 4 or len(buf) < 4 + int.from_bytes(buf[:4], "big"):
        chunk = sock.recv(65536)
        if not chunk:
            sys.exit(0)
        buf += chunk
    size = int.from_bytes(buf[:4], "big")
    frame, buf = buf[: 4 + size], buf[4 + size :]
    if mode == "json":
        message = json.loads(frame[4:])
        data = json.dumps({"op": "call", "id": message["id"], "tool": "ping", "args": {}}).encode()
        frame = len(data).to_bytes(4, "big") + data
    sock.sendall(frame)
"""


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


KILL_LABEL = "straight-line big-int divisions in C (parent SIGKILL)"
"""The stop the parent's SIGKILL makes: the kill-latency figure of the summary."""


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


def _recv_frame(sock: socket.socket, buf: bytearray) -> bytes:
    while len(buf) < 4 or len(buf) < 4 + int.from_bytes(buf[:4], "big"):
        chunk = sock.recv(65536)
        if not chunk:
            raise EOFError
        buf += chunk
    size = int.from_bytes(buf[:4], "big")
    frame = bytes(buf[4 : 4 + size])
    del buf[: 4 + size]
    return frame


def _floor(mode: str) -> float:
    """Median round trip of ``FLOOR_TRIPS`` frames to a child process (blocking reads)."""
    ours, theirs = socket.socketpair()
    child = subprocess.Popen([sys.executable, "-I", "-c", _ECHO, mode], stdin=theirs)
    theirs.close()
    buf = bytearray()
    times = []
    try:
        for i in range(FLOOR_TRIPS):
            start = time.perf_counter()
            if mode == "json":
                reply = {"status": "ok", "value": "pong", "error": None, "duration_ms": 0}
                data = json.dumps({"op": "reply", "id": f"script/{i}", "reply": reply}).encode()
                ours.sendall(len(data).to_bytes(4, "big") + data)
                json.loads(_recv_frame(ours, buf))
            else:
                ours.sendall(b"\x00\x00\x00\x40" + b"x" * 64)
                _recv_frame(ours, buf)
            times.append(time.perf_counter() - start)
    finally:
        ours.close()
        child.wait()
    return statistics.median(times[FLOOR_TRIPS // 10 :])


def _floor_figures() -> dict[str, float]:
    print(f"transport floor (median of {FLOOR_TRIPS} round trips, best of 3)")
    figures = {mode: min(_floor(mode) for _ in range(3)) for mode in ("raw", "json")}
    _row("raw 68-byte frames, blocking reads both sides", figures["raw"])
    _row("JSON call/reply messages, blocking reads", figures["json"])
    return figures


def _process_cpu(pids: list[int]) -> float:
    """CPU seconds the processes ``pids`` have run so far (Linux ``/proc/<pid>/schedstat``)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _cpu_per_call(fn: Callable[[], Awaitable[Any]], pids: list[int]) -> tuple[float, float]:
    """Median CPU per call of this process and of the workers ``pids``, over ``REPEAT`` runs."""
    ours, theirs = [], []
    for _ in range(REPEAT):
        own, workers = _own_cpu(), _process_cpu(pids)
        await fn()
        ours.append((_own_cpu() - own) / CALLS)
        theirs.append((_process_cpu(pids) - workers) / CALLS)
    return statistics.median(ours), statistics.median(theirs)


async def _per_call(fn: Callable[[], Awaitable[Any]]) -> tuple[float, float]:
    """Median and best per-call time of ``REPEAT`` runs of a ``CALLS``-call script."""
    times = []
    for _ in range(REPEAT):
        start = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - start) / CALLS)
    return statistics.median(times), min(times)


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
        print(f"{CALLS} calls in one script, per call (median, best of {REPEAT} runs)")
        for key, label, source in (
            ("sync", "blocking calls `ping()`", LOOP),
            ("async", "awaited calls `await ping()`", ASYNC_LOOP),
        ):
            local_median, local_best = await _per_call(lambda source=source: local(source))
            median, best = await _per_call(lambda source=source: remote(source))
            figures[f"local_{key}"] = local_best
            figures[f"{key}_median"], figures[f"{key}_best"] = median, best
            _row(f"{label}, in-process (baseline), best", local_best)
            _row(f"{label}, process, median", median, local_median, "in-process")
            _row(f"{label}, process, best", best, local_best, "in-process")
        parent, worker = await _cpu_per_call(lambda: remote(LOOP), runner.worker_pids())
        figures["parent_cpu"], figures["worker_cpu"] = parent, worker
        _row("CPU per blocking call: the parent (median)", parent)
        _row("CPU per blocking call: the worker (median, schedstat)", worker)

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
                KILL_LABEL,
                "x = 10 ** 300000\ny = 10 ** 150000 + 1\n" + "q = x // y\n" * 40,
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
        times = []
        for _ in range(REPEAT):
            start = time.perf_counter()
            session.feed_run(LOOP, external_lookup=lookup)
            times.append((time.perf_counter() - start) / CALLS)
        figures["call"] = min(times)
        _row(f"monty host call ({CALLS} in one run), median", statistics.median(times))
        _row(f"monty host call ({CALLS} in one run), best", figures["call"])
    return figures


def main() -> None:
    """Print every figure; never assert."""
    print(f"Python {sys.version.split()[0]}; figures are medians unless noted\n")
    floor = _floor_figures()
    figures = anyio.run(_process_figures)
    monty = _monty_figures()
    best = min(figures["sync_best"], figures["async_best"])
    print("\nsummary against the targets")
    print(f"  warm run        {_fmt(figures['warm'])}  (target ≤ 2 ms)")
    print(
        f"  round trip      {_fmt(figures['sync_best'])}  per blocking call, "
        f"{_fmt(figures['async_best'])} per awaited call, best of {REPEAT} "
        f"(medians {_fmt(figures['sync_median']).strip()}, "
        f"{_fmt(figures['async_median']).strip()}; target ≤ 150 µs)"
    )
    print(
        f"  vs the floor    {best / floor['raw']:.1f}× the raw transport floor "
        f"({_fmt(floor['raw']).strip()}), {best / floor['json']:.1f}× the JSON floor "
        f"({_fmt(floor['json']).strip()})"
    )
    print(
        f"  CPU per call    parent {_fmt(figures['parent_cpu']).strip()}, "
        f"worker {_fmt(figures['worker_cpu']).strip()} (a round trip is both, one after the other)"
    )
    print(f"  cold start      {_fmt(figures['cold2'])}  for a pool of two (zygote + two forks)")
    late = figures[KILL_LABEL]
    print(f"  kill latency    {_fmt(late)}  past the deadline (target ≤ 100 ms)")
    if monty:
        print(
            f"  vs monty        warm run {figures['warm'] / monty['warm']:.1f}×, "
            f"host call {best / monty['call']:.1f}× (monty {_fmt(monty['call']).strip()})"
        )


if __name__ == "__main__":
    main()
