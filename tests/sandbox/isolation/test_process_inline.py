"""Process isolation: a lone tool call run from the parent's reader callback (asyncio).

While the run's task waits for the worker's next message, a call that arrives
alone is stepped in the loop's reader callback, as the run's task and in its
contextvars context; one that suspends is driven on by the run's task. These
tests pin that the call behaves exactly as if the run's task ran it: what the
tool sees (contextvars, the current task, anyio cancel scopes, threads), a call
that suspends midway, a tool that raises, cancellation of a suspended call by
the script, the deadline and an abort. They run on both backends (trio reads
and runs calls in tasks); no timing assertions.
"""

from __future__ import annotations

import asyncio
import contextvars
import socket
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.isolation import parent as process
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits

LIMITS = Limits(timeout=20.0, memory_bytes=512 << 20)
CALLER = contextvars.ContextVar("CALLER", default="unset")
TOOL = contextvars.ContextVar("TOOL", default="unset")


@pytest.fixture(scope="module")
def runner() -> Iterator[ProcessRunner]:
    runner = ProcessRunner(LIMITS, pool_size=1)
    yield runner
    runner.close()


def _tool(name: str, execute: Any, properties: dict[str, Any] | None = None) -> AgentTool:
    return AgentTool(
        name=name,
        description=name,
        parameters={"type": "object", "properties": properties or {}},
        execute=execute,
    )


def _text(value: str) -> AgentToolResult[Any]:
    return AgentToolResult(content=(TextContent(value),))


class _Hang:
    """A tool that waits forever: ``started`` is set when it runs, ``unwound`` records its exit."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.unwound: list[bool] = []

    async def execute(self, call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        self.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.unwound.append(True)
        return _text("never")  # pragma: no cover


async def _run(runner: ProcessRunner, source: str, *tools: AgentTool, **kwargs: Any) -> Any:
    bridge = HostToolBridge(list(tools))
    return await runner.run(source, bridge=bridge, tools=tool_specs(list(tools)), **kwargs)


def _in_reader_callback() -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "serve_one":
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


@pytest.mark.anyio
@pytest.mark.parametrize("waits", [0, 3])
async def test_process_inline_call_sees_the_callers_context_and_task(
    runner: ProcessRunner, anyio_backend: str, waits: int
) -> None:
    seen: list[tuple[str, str, bool]] = []
    me = asyncio.current_task() if anyio_backend == "asyncio" else None

    async def probe(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        current = asyncio.current_task() if anyio_backend == "asyncio" else None
        seen.append((CALLER.get(), TOOL.get(), current is me))
        for _ in range(waits):
            await anyio.lowlevel.checkpoint()
        TOOL.set(f"call {params['n']}")
        return _text(CALLER.get())

    CALLER.set("host")
    tool = _tool("probe", probe, {"n": {"type": "integer"}})
    result = await _run(runner, "[probe(n=1), probe(n=2)]", tool)
    assert result.ok, result.error
    assert result.value == ["host", "host"]
    if anyio_backend == "asyncio":
        # a sequential call runs as the run's task, in its context (as it always did)
        assert seen == [("host", "unset", True), ("host", "call 1", True)]
        assert TOOL.get() == "call 2"
    else:
        # trio runs the calls in a helper task (a copy of the run's context)
        assert seen == [("host", "unset", True), ("host", "call 1", True)]
        assert TOOL.get() == "unset"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_process_inline_call_that_never_suspends_is_answered_from_the_reader_callback(
    runner: ProcessRunner, anyio_backend: str
) -> None:
    # The fast path is taken: no task switch, the loop's callback runs the tool.
    where: list[bool] = []

    async def probe(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        where.append(_in_reader_callback())
        return _text("ok")

    result = await _run(runner, "[probe() for _ in range(5)]", _tool("probe", probe))
    assert result.ok, result.error
    assert result.value == ["ok"] * 5
    assert where == [True] * 5


@pytest.mark.anyio
async def test_process_inline_call_that_suspends_midway_finishes_in_the_runs_task(
    runner: ProcessRunner, anyio_backend: str
) -> None:
    # The tool opens an anyio cancel scope and a task group before it first waits,
    # waits on an event set by another task, on a checkpoint and on a thread: the
    # rest of the call runs in the run's task, scopes and all.
    async def slow(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        done = anyio.Event()
        parts: list[str] = []

        async def helper() -> None:
            await anyio.lowlevel.checkpoint()
            parts.append("helper")
            done.set()

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(helper)
                await done.wait()
            await anyio.lowlevel.checkpoint()
            parts.append(await anyio.to_thread.run_sync(lambda: f"thread {params['n']}"))
        return _text(" ".join(parts))

    def blocking(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return _text(f"sync {params['n']}")

    tools = (
        _tool("slow", slow, {"n": {"type": "integer"}}),
        _tool("blocking", blocking, {"n": {"type": "integer"}}),
    )
    source = "[slow(n=1), blocking(n=2), slow(n=3), blocking(n=4)]"
    result = await _run(runner, source, *tools)
    assert result.ok, result.error
    assert result.value == ["helper thread 1", "sync 2", "helper thread 3", "sync 4"]
    assert [c.status for c in result.calls] == ["ok"] * 4


@pytest.mark.anyio
@pytest.mark.parametrize("waits", [0, 2])
async def test_process_inline_call_of_a_tool_that_raises_is_an_error_reply(
    runner: ProcessRunner, waits: int
) -> None:
    async def broken(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        for _ in range(waits):
            await anyio.lowlevel.checkpoint()
        raise ValueError(f"broken {params['n']}")

    source = (
        "out = []\n"
        "for i in range(3):\n"
        "    try:\n"
        "        broken(n=i)\n"
        "    except ToolError as exc:\n"
        "        out.append(str(exc))\n"
        "out"
    )
    result = await _run(runner, source, _tool("broken", broken, {"n": {"type": "integer"}}))
    assert result.ok, result.error
    assert result.value == ["broken 0", "broken 1", "broken 2"]
    assert [c.status for c in result.calls] == ["error"] * 3


@pytest.mark.anyio
async def test_process_inline_call_the_script_stops_waiting_for_is_cancelled(
    runner: ProcessRunner,
) -> None:
    # The call suspends after it was stepped; the script's own timeout gives up on
    # it, the worker says so, and the parent cancels the call where it waits.
    hanging = _Hang()
    started, unwound, hang = hanging.started, hanging.unwound, hanging.execute

    async def after(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        await started.wait()
        return _text("done")

    # hang() is stepped alone and suspends; after() arrives while it waits; the
    # script ends without awaiting hang(), the worker cancels it.
    source = "pending = hang()\nawait after()"
    result = await _run(runner, source, _tool("hang", hang), _tool("after", after))
    assert result.ok, result.error
    assert result.value == "done"
    assert unwound == [True]
    assert [(c.tool, c.status) for c in result.calls] == [("hang", "cancelled"), ("after", "ok")]


@pytest.mark.anyio
async def test_process_inline_call_suspended_at_the_deadline_is_cancelled(
    anyio_backend: str,
) -> None:
    hanging = _Hang()
    unwound, hang = hanging.unwound, hanging.execute

    async with ProcessRunner(Limits(timeout=0.5), pool_size=1) as runner:
        result = await _run(runner, "hang()", _tool("hang", hang))
        assert result.error is not None
        assert result.error.kind == "limit", result.error
        assert unwound == [True]
        assert [(c.tool, c.status) for c in result.calls] == [("hang", "cancelled")]
        # the pool is fine afterwards
        again = await _run(runner, "1 + 1", _tool("hang", hang))
        assert again.value == 2


@pytest.mark.anyio
async def test_process_inline_call_suspended_when_the_run_is_aborted_is_cancelled() -> None:
    hanging = _Hang()
    started, unwound, hang = hanging.started, hanging.unwound, hanging.execute
    controller = AbortController()

    async with ProcessRunner(LIMITS, pool_size=1) as runner:
        outcome: list[Any] = []

        async def running() -> None:
            bridge = HostToolBridge([_tool("hang", hang)], signal=controller.signal)
            outcome.append(
                await runner.run(
                    "hang()",
                    bridge=bridge,
                    tools=tool_specs([_tool("hang", hang)]),
                    signal=controller.signal,
                )
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(running)
            await started.wait()
            controller.abort("stop now")
    [result] = outcome
    assert result.error is not None
    assert result.error.kind == "aborted", result.error
    assert unwound == [True]
    assert [(c.tool, c.status) for c in result.calls] == [("hang", "cancelled")]


@pytest.mark.anyio
async def test_process_inline_caller_cancelled_while_a_call_is_suspended(
    runner: ProcessRunner,
) -> None:
    # Our own caller gives up while the stepped call waits: the call unwinds, the
    # worker is discarded, nothing leaks into the next run.
    hanging = _Hang()
    started, unwound, hang = hanging.started, hanging.unwound, hanging.execute

    async with anyio.create_task_group() as tg:
        tg.start_soon(_run, runner, "hang()", _tool("hang", hang))
        await started.wait()
        tg.cancel_scope.cancel()
    assert unwound == [True]
    again = await _run(runner, "[ping() for _ in range(3)]", _tool("ping", _pong))
    assert again.value == ["pong"] * 3


async def _pong(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
    return _text("pong")


# A worker that ignores the tool-call quota: one call at a time, each after the
# previous reply (the calls the parent steps from its reader callback).
_GREEDY = """
import json, os, socket
sock = socket.socket(fileno=os.dup(0))
def send(message):
    data = json.dumps(message).encode()
    sock.sendall(len(data).to_bytes(4, "big") + data)
def receive():
    head = b""
    while len(head) < 4:
        head += sock.recv(4 - len(head))
    size = int.from_bytes(head, "big")
    body = b""
    while len(body) < size:
        body += sock.recv(size - len(body))
    return json.loads(body)
send({"op": "ready"})
receive()  # the job
for i in range(10):
    send({"op": "call", "id": f"c{i}", "tool": "ping", "args": {}})
    receive()
sock.recv(1)
"""


@pytest.mark.anyio
async def test_process_inline_quota_is_enforced_on_the_parent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process, "_BOOTSTRAP", _GREEDY)
    limits = Limits(timeout=20.0, max_tool_calls=3)
    async with ProcessRunner(limits, pool_size=0, spawn="exec") as runner:
        result = await _run(runner, "1", _tool("ping", _pong))
    assert result.error is not None
    assert result.error.kind == "limit", result.error
    assert "more than 3 calls" in result.error.message
    assert [c.status for c in result.calls] == ["ok"] * 3


# A worker that gives up on its first call at once, then makes three more calls,
# one at a time, and reports their replies as its result.
_FICKLE = (
    _GREEDY.split("for i in range(10)")[0]
    + """
send({"op": "call", "id": "c0", "tool": "hang", "args": {}})
send({"op": "cancel", "id": "c0"})
values = []
for i in range(1, 4):
    send({"op": "call", "id": f"c{i}", "tool": "ping", "args": {}})
    values.append(receive()["reply"]["value"])
result = {"ok": True, "value": values, "output": "", "error": None, "calls": [], "wall_time": 0.0}
send({"op": "result", "result": result, "cpu": 0.0, "retire": True})
sock.recv(1)
"""
)


@pytest.mark.anyio
async def test_process_inline_call_cancelled_midway_then_more_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    hanging = _Hang()
    unwound, hang = hanging.unwound, hanging.execute

    monkeypatch.setattr(process, "_BOOTSTRAP", _FICKLE)
    async with ProcessRunner(LIMITS, pool_size=0, spawn="exec") as runner:
        result = await _run(runner, "1", _tool("hang", hang), _tool("ping", _pong))
    assert result.ok, result.error
    assert result.value == ["pong"] * 3
    # the cancel arrives with the call or just after it started: the call never runs, or
    # is unwound (findings14 B10: a call cancelled before it started is not started)
    assert unwound in ([], [True])
    assert result.calls[0].id == "c0"
    assert result.calls[0].status == "cancelled"


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_process_parent_writes_a_partly_taken_frame_once(anyio_backend: str) -> None:
    # A frame larger than the socket buffer: the socket takes part of it at once,
    # the rest is written when the socket drains; the peer reads it exactly once.
    ours, theirs = socket.socketpair()
    try:
        worker = process._Worker(0, ours, "", 1 << 30)
        frame = process._frame({"op": "reply", "id": "c", "reply": {"value": "x" * 3_000_000}})
        received = bytearray()

        def read_all() -> None:
            theirs.settimeout(30)
            while len(received) < len(frame) + 5:
                chunk = theirs.recv(1 << 20)
                if not chunk:
                    break
                received.extend(chunk)

        lock = anyio.Lock()
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker.send_frame, frame, lock)
            await anyio.wait_all_tasks_blocked()
            assert worker.partial or lock.locked()  # it did not fit at once
            tg.start_soon(worker.send_frame, process._frame({"op": "abort"}), lock)
            await anyio.to_thread.run_sync(read_all)
        assert bytes(received) == frame + process._frame({"op": "abort"})
    finally:
        ours.close()
        theirs.close()


# ----------------------------------------------------------------------------- worker side


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # counts the asyncio loop's turns
async def test_process_worker_sequential_calls_cost_no_loop_turn_or_greenlet_switch(
    monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    # The worker's side of a sync script's calls: the reply is awaited on the socket
    # itself and the call's coroutine never suspends, so the number of event-loop
    # turns and greenlet switches of a run does not grow with its calls.
    from greenlet import settrace  # type: ignore[import-untyped]

    from scriptgate.sandbox.bridge import ToolSpec
    from scriptgate.sandbox.engine import run_script
    from scriptgate.sandbox.guards import budget
    from scriptgate.sandbox.isolation import worker_bridge, worker_channel

    monkeypatch.setattr(budget, "PAUSE_INTERVAL", 1e9)  # no budget pauses
    specs = [ToolSpec(name="ping", identifier="ping", description="ping", has_output_schema=False)]
    loop = asyncio.get_running_loop()
    selector = loop._selector  # type: ignore[attr-defined]
    turns = [0]
    select = selector.select

    def counting_select(timeout: float | None = None) -> Any:
        turns[0] += 1
        return select(timeout)

    async def costs(calls: int) -> tuple[int, int]:
        ours, theirs = socket.socketpair()

        def parent() -> None:
            for _ in range(calls):
                message = _read(theirs)
                reply = {"op": "reply", "id": message["id"], "reply": {"status": "ok", "value": 1}}
                theirs.sendall(process._frame(reply))

        switches = [0]

        def trace(event: str, args: Any) -> None:
            switches[0] += event in ("switch", "throw")

        bridge = worker_bridge.PipeToolBridge(worker_channel._Channel(ours), wait=30.0)
        source = f"total = 0\nfor i in range({calls}):\n    total += ping()\ntotal"
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(anyio.to_thread.run_sync, parent)
                await anyio.wait_all_tasks_blocked()
                monkeypatch.setattr(selector, "select", counting_select)
                turns[0] = 0
                previous = settrace(trace)
                try:
                    result = await run_script(source, bridge=bridge, tools=specs, limits=LIMITS)
                finally:
                    settrace(previous)
                    monkeypatch.setattr(selector, "select", select)
                counted = (turns[0], switches[0])
            assert result.ok, result.error
            assert result.value == calls
        finally:
            ours.close()
            theirs.close()
        return counted

    assert await costs(1) == await costs(20)


def _read(sock: socket.socket) -> dict[str, Any]:
    head = b""
    while len(head) < 4:
        head += sock.recv(4 - len(head))
    size = int.from_bytes(head, "big")
    body = b""
    while len(body) < size:
        body += sock.recv(size - len(body))
    message: dict[str, Any] = __import__("json").loads(body)
    return message


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_process_inline_tool_that_cancels_the_task_it_runs_as(
    runner: ProcessRunner, anyio_backend: str
) -> None:
    # The tool cancels its current task (the run's task) before it first waits: the
    # run's caller is cancelled, as when the run's task itself ran the tool, and the
    # call, started from the reader callback and never taken over, unwinds first.
    unwound: list[bool] = []

    async def rogue(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()
        try:
            await anyio.sleep_forever()
        finally:
            unwound.append(True)
        return _text("never")  # pragma: no cover

    run = asyncio.ensure_future(_run(runner, "rogue()", _tool("rogue", rogue)))
    with pytest.raises(asyncio.CancelledError):
        await run
    assert unwound == [True]
    again = await _run(runner, "[ping() for _ in range(3)]", _tool("ping", _pong))
    assert again.value == ["pong"] * 3
