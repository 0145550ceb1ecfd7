"""Sandbox overhead, side by side: plain ``exec``, scriptgate, and the peers that are installed.

Run with ``uv run --group bench python benchmarks/sandbox.py`` (``--quick`` for fewer
repetitions, ``--trio`` to run on trio). Every figure is the best of N repetitions,
in milliseconds; scriptgate's repetitions alternate with the baseline's (plain
``exec``, or direct ``run_tool_call`` for tool calls) so that load on the machine
hits both alike, and the ratio is to that baseline. Nothing
is asserted: the machine may be busy, the figures are for reading.

Workloads (the same script text for every runner):

- ``startup``: ``x = 1 + 2`` (compile + run; scriptgate caches compiled scripts); a run
  takes ~10–30 µs, so this workload gets :data:`STARTUP_REPEAT` times the repetitions
  (for every runner alike): best of 7 single runs was at the scheduler's mercy;
- ``loop``: Σ i·i for i < 200 000;
- ``fib``: recursive ``fib(20)`` (``fib-typed``: the same in ``if``/``return`` statements with
  type hints);
- ``glue``: build 10 000 dicts, filter, sort, join (names built with ``+``; ``glue-fstring``
  and ``glue-percent`` build them with an f-string and with ``%``);
- ``tools``: 1 000 tool calls through the full pipeline (validation, both hooks),
  sync (``echo(i=i)``) and async (``await echo(i=i)``) scripts, against 1 000
  direct ``run_tool_call`` calls as the baseline.
"""

from __future__ import annotations

import atexit
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent, ToolCall
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

WORKLOADS: dict[str, str] = {
    "startup": "x = 1 + 2",
    "loop": "total = 0\nfor i in range(200000):\n    total += i * i\ntotal",
    "fib": "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nfib(20)",
    "glue": (
        "rows = [{'id': i, 'name': 'item' + str(i), 'score': (i * 37) % 101} for i in range(10000)]\n"
        "good = [r for r in rows if r['score'] > 50]\n"
        "good.sort(key=lambda r: (-r['score'], r['id']))\n"
        "', '.join([r['name'] for r in good[:100]])"
    ),
}
WORKLOADS["fib-typed"] = (
    "def fib(n: int) -> int:\n    if n < 2:\n        return n\n"
    "    return fib(n - 1) + fib(n - 2)\nfib(20)"
)  # the same recursion in the statement form models write, with type hints
for _form, _expr in {"glue-fstring": "f'item{i}'", "glue-percent": "'item%d' % i"}.items():
    WORKLOADS[_form] = WORKLOADS["glue"].replace("'item' + str(i)", _expr)
TARGETS = {
    "startup": 3.0, "loop": 2.0, "fib": 1.5, "fib-typed": 1.5, "glue": 1.5, "glue-fstring": 1.5,
    "glue-percent": 1.5,
}  # fmt: skip

SYNC_CALLS = "for i in range(1000):\n    echo(i=i)"
ASYNC_CALLS = "for i in range(1000):\n    await echo(i=i)"


def _echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent(str(params["i"])),))


async def _echo_async(
    tool_call_id: str, params: Any, signal: Any, on_update: Any
) -> AgentToolResult:
    return AgentToolResult(content=(TextContent(str(params["i"])),))


def _tool(fn: Any) -> AgentTool:
    return AgentTool(
        name="echo",
        description="Echo i.",
        parameters={"type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"]},
        execute=fn,
    )


def _before(ctx: Any, signal: Any) -> None:
    return None


def _after(ctx: Any, signal: Any) -> None:
    return None


# ----------------------------------------------------------------------------- runners


def plain_exec(source: str) -> Any:
    """The baseline: compile and exec with the real builtins."""
    namespace: dict[str, Any] = {}
    exec(compile(source, "<bench>", "exec"), namespace)
    return namespace


def _restricted_runner() -> Callable[[str], Any] | None:
    try:
        from RestrictedPython import compile_restricted_exec, limited_builtins, safe_builtins
        from RestrictedPython.Eval import default_guarded_getitem
        from RestrictedPython.Guards import (
            full_write_guard,
            guarded_iter_unpack_sequence,
            safer_getattr,
        )
    except ImportError:
        return None

    builtins = {**safe_builtins, **limited_builtins, "range": range, "sorted": sorted}

    def run(source: str) -> Any:
        result = compile_restricted_exec(source)
        namespace = {
            "__builtins__": builtins,
            "_getattr_": safer_getattr,
            "_getitem_": default_guarded_getitem,
            "_getiter_": iter,
            "_write_": full_write_guard,
            "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
            "_inplacevar_": _inplacevar,
        }
        exec(result.code, namespace)
        return namespace

    return run


def _inplacevar(op: str, x: Any, y: Any) -> Any:
    if op == "+=":
        return x + y
    raise NotImplementedError(op)


def _smolagents_runner() -> Callable[[str], Any] | None:
    try:
        from smolagents.local_python_executor import LocalPythonExecutor
    except ImportError:
        return None

    def run(source: str) -> Any:
        executor = LocalPythonExecutor(additional_authorized_imports=[])
        executor.send_tools({})
        return executor(source)

    return run


def _monty_runner() -> Callable[[str], Any] | None:
    """pydantic-monty: one warm worker session (``feed_run`` per script)."""
    try:
        import pydantic_monty
    except ImportError:
        return None
    try:
        pool = pydantic_monty.Monty()
        pool.__enter__()
        session = pool.checkout()
        session.__enter__()
    except Exception:  # no monty binary on this machine
        return None
    atexit.register(pool.__exit__, None, None, None)
    atexit.register(session.__exit__, None, None, None)

    def run(source: str) -> Any:
        return session.feed_run(source)

    return run


# ----------------------------------------------------------------------------- measuring


STARTUP_REPEAT = 30
"""How many times more repetitions the ``startup`` workload gets (its runs are µs long)."""


def best_of(fn: Callable[[], Any], repeat: int) -> float:
    """Best wall time of ``repeat`` calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


async def best_of_async(fn: Callable[[], Awaitable[Any]], repeat: int) -> float:
    """Best wall time of ``repeat`` awaited calls, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        await fn()
        best = min(best, time.perf_counter() - start)
    return best


async def main(quick: bool) -> None:
    """Measure and print."""
    repeat = 7 if quick else 25
    limits = Limits(timeout=None, max_steps=None)
    sandbox = Sandbox([_tool(_echo)], limits=limits)
    peers: dict[str, Callable[[str], Any] | None] = {
        "restrictedpython": _restricted_runner(),
        "smolagents": _smolagents_runner(),
        "monty": _monty_runner(),
    }
    print(f"python {sys.version.split()[0]}; best of {repeat}; ms (ratio to plain exec)")
    header = f"{'workload':10} {'exec':>9} {'scriptgate':>18} {'target':>7}"
    for name, runner in peers.items():
        header += f" {name:>22}" if runner else ""
    print(header)
    for name, source in WORKLOADS.items():
        check = await sandbox.run(source)
        if not check.ok:
            print(f"{name}: scriptgate failed: {check.error}")
            continue
        repeats = repeat * STARTUP_REPEAT if name == "startup" else repeat
        base = ours = float("inf")
        for _ in range(repeats):  # interleaved, so a busy moment hits both alike
            base = min(base, best_of(lambda source=source: plain_exec(source), 1))
            ours = min(ours, await best_of_async(lambda source=source: sandbox.run(source), 1))
        line = f"{name:10} {base * 1000:9.3f} {ours * 1000:9.3f} ({ours / base:5.2f}x) {TARGETS[name]:6.1f}x"
        for runner in peers.values():
            if runner is None:
                continue
            try:
                peer = best_of(
                    lambda runner=runner, source=source: runner(source), max(3, repeats // 3)
                )
                line += f" {peer * 1000:11.3f} ({peer / base:6.2f}x)"
            except Exception as exc:  # a peer that cannot run this workload
                line += f" {'n/a (' + type(exc).__name__ + ')':>22}"
        print(line)

    tools_sync = [_tool(_echo)]
    tools_async = [_tool(_echo_async)]

    async def direct() -> None:
        for i in range(1000):
            await run_tool_call(
                ToolCall(id=f"d/{i}", name="echo", arguments={"i": i}),
                tools=tools_async,
                before_tool_call=_before,
                after_tool_call=_after,
            )

    cases = []
    for label, tools, source in (
        ("script, sync calls, async tool", tools_async, SYNC_CALLS),
        ("script, await calls, async tool", tools_async, ASYNC_CALLS),
        ("script, await calls, sync tool (thread)", tools_sync, ASYNC_CALLS),
    ):
        box = Sandbox(tools, before_tool_call=_before, after_tool_call=_after, limits=limits)
        check = await box.run(source)
        if not check.ok or len(check.calls) != 1000:
            print(f"  {label}: failed: {check.error}")
            continue
        cases.append((label, box, source))
    base = float("inf")
    took = [float("inf")] * len(cases)
    for _ in range(repeat):  # interleaved with the direct baseline
        base = min(base, await best_of_async(direct, 1))
        for index, (_, box, source) in enumerate(cases):
            took[index] = min(
                took[index], await best_of_async(lambda box=box, source=source: box.run(source), 1)
            )
    print("\n1,000 tool calls (full pipeline, both hooks); target <= 25 ms")
    print(f"  direct run_tool_call (async tool): {base * 1000:8.2f} ms")
    for (label, _, _), ms in zip(cases, took, strict=True):
        print(f"  {label + ':':40} {ms * 1000:8.2f} ms ({ms / base:4.2f}x direct)")


def sync_entry_points(quick: bool) -> None:
    """``Sandbox.run_sync`` from plain sync code (no loop running), as scripts call it."""
    repeat = (7 if quick else 25) * STARTUP_REPEAT
    sandbox = Sandbox([], limits=Limits(timeout=None, max_steps=None))
    for name in ("startup", "fib"):
        source = WORKLOADS[name]
        sandbox.run_sync(source)
        runs = repeat if name == "startup" else repeat // STARTUP_REPEAT
        base = ours = float("inf")
        for _ in range(runs):
            base = min(base, best_of(lambda source=source: plain_exec(source), 1))
            ours = min(ours, best_of(lambda source=source: sandbox.run_sync(source), 1))
        print(
            f"run_sync {name:8} {base * 1000:9.3f} {ours * 1000:9.3f} ({ours / base:5.2f}x)"
            f" {TARGETS[name]:6.1f}x"
        )


if __name__ == "__main__":
    anyio.run(main, "--quick" in sys.argv, backend="trio" if "--trio" in sys.argv else "asyncio")
    print()
    sync_entry_points("--quick" in sys.argv)
