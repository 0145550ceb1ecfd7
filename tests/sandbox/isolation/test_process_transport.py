"""Process isolation's transport: the framed channel on both sides and the fast round trip.

The worker waits for a tool call's reply on the socket itself (``_Channel.poll``,
``PipeToolBridge``) and falls back to the event loop; the parent keeps the socket
registered with the loop for a run (``_Readable``) and hands calls to one
long-lived task. These tests pin the behaviour of those paths with a socket pair
in this process, and the end-to-end guarantees with real workers. No timing
assertions: every ordering is made with events or by the order of writes.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, ToolReply, tool_specs
from scriptgate.sandbox.isolation import parent as process
from scriptgate.sandbox.isolation import worker_bridge, worker_channel
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits

LIMITS = Limits(timeout=20.0, memory_bytes=512 << 20)


def _frame(message: dict[str, Any]) -> bytes:
    data = json.dumps(message).encode()
    return len(data).to_bytes(4, "big") + data


def _read_frame(sock: socket.socket) -> dict[str, Any]:
    head = b""
    while len(head) < 4:
        head += sock.recv(4 - len(head))
    size = int.from_bytes(head, "big")
    body = b""
    while len(body) < size:
        body += sock.recv(size - len(body))
    message = json.loads(body)
    assert isinstance(message, dict)
    return message


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair()
    yield ours, theirs
    ours.close()
    theirs.close()


# ----------------------------------------------------------------------------- worker: _Channel.poll


def test_process_channel_poll_assembles_a_frame_split_across_reads(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    channel = worker_channel._Channel(ours)
    frame = _frame({"op": "reply", "id": "a", "reply": {"status": "ok", "value": "x" * 100}})
    theirs.sendall(frame[:3])
    assert channel._read()
    assert channel.poll(0.0) is None  # not even a whole header yet
    theirs.sendall(frame[3:50])
    assert channel._read()
    assert channel.poll(0.0) is None  # a header, half a payload
    theirs.sendall(frame[50:] + _frame({"op": "abort", "reason": "r"}))
    assert channel.poll(30.0) == json.loads(frame[4:])  # the rest, read by poll
    assert channel.poll(0.0) == {"op": "abort", "reason": "r"}  # already buffered
    assert not channel.at_eof()


def test_process_channel_poll_reports_eof_without_blocking(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    channel = worker_channel._Channel(ours)
    theirs.close()
    assert channel.poll(60.0) is None
    assert channel.at_eof()


def test_process_channel_poll_falls_back_from_spinning_to_blocking(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    channel = worker_channel._Channel(ours)
    blocked: list[int] = []
    real = channel._poller

    class Poller:
        """Sends the message only once the channel blocks in poll(2)."""

        def poll(self, timeout: int) -> list[tuple[int, int]]:
            blocked.append(timeout)
            if len(blocked) == 1:
                theirs.sendall(_frame({"op": "reply", "id": "late"}))
            return real.poll(timeout)

    channel._poller = Poller()  # type: ignore[assignment]
    # spin for (at most) a microsecond on non-blocking reads, then block
    assert channel.poll(30.0, spin=1e-6) == {"op": "reply", "id": "late"}
    assert len(blocked) == 1
    assert blocked[0] > 0


# ----------------------------------------------------------------------------- worker: PipeToolBridge


@pytest.mark.anyio
async def test_process_bridge_waits_directly_and_skips_replies_for_other_calls(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    seen: list[dict[str, Any]] = []
    bridge = worker_bridge.PipeToolBridge(worker_channel._Channel(ours), seen.append, wait=30.0)
    # Queued before the call is even sent: a reply nobody waits for, then ours.
    theirs.sendall(
        _frame({"op": "reply", "id": "other", "reply": {"status": "ok", "value": 1}})
        + _frame({"op": "reply", "id": "c1", "reply": {"status": "ok", "value": "pong"}})
    )
    reply = await bridge.call("c1", "ping", {"n": 1})
    assert reply == ToolReply(status="ok", value="pong")
    assert _read_frame(theirs) == {"op": "call", "id": "c1", "tool": "ping", "args": {"n": 1}}
    assert seen == []


@pytest.mark.anyio
async def test_process_bridge_passes_an_abort_on_at_once_and_goes_back_to_the_loop(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    channel = worker_channel._Channel(ours)
    seen: list[dict[str, Any]] = []
    # A direct wait this long would hang the test if the abort did not end it.
    bridge = worker_bridge.PipeToolBridge(channel, seen.append, wait=3600.0)
    replies: list[ToolReply] = []

    async def job_loop() -> None:
        while (message := await channel.recv()) is not None:
            bridge.dispatch(message)

    async def calling() -> None:
        replies.append(await bridge.call("c1", "ping", {}))

    theirs.sendall(_frame({"op": "abort", "reason": "stop"}))
    async with anyio.create_task_group() as tg:
        tg.start_soon(calling)  # its direct wait reads the abort, then it waits on the loop
        await anyio.wait_all_tasks_blocked()
        assert seen == [{"op": "abort", "reason": "stop"}]
        assert replies == []
        assert _read_frame(theirs)["id"] == "c1"
        reply = {"status": "cancelled", "error": "aborted"}
        theirs.sendall(_frame({"op": "reply", "id": "c1", "reply": reply}))
        tg.start_soon(job_loop)  # the reply now reaches the call through the job loop
        await _until(lambda: replies)
        theirs.shutdown(socket.SHUT_WR)
    assert replies == [ToolReply(status="cancelled", error="aborted")]


async def _until(condition: Any) -> None:
    with anyio.fail_after(30):
        while not condition():
            await anyio.wait_all_tasks_blocked()


@pytest.mark.anyio
async def test_process_bridge_falls_back_to_the_event_loop_for_a_slow_reply(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    channel = worker_channel._Channel(ours)
    bridge = worker_bridge.PipeToolBridge(channel, wait=1e-6)
    replies: list[ToolReply] = []

    async def job_loop() -> None:  # what the worker's job loop does with messages
        while (message := await channel.recv()) is not None:
            bridge.dispatch(message)

    async def calling() -> None:
        replies.append(await bridge.call("c1", "ping", {}))

    async with anyio.create_task_group() as tg:
        tg.start_soon(job_loop)
        tg.start_soon(calling)
        await anyio.wait_all_tasks_blocked()  # the call gave up waiting directly
        request = _read_frame(theirs)
        assert replies == []
        reply = {"status": "error", "error": "e"}
        theirs.sendall(_frame({"op": "reply", "id": request["id"], "reply": reply}))
        await _until(lambda: replies)
        theirs.shutdown(socket.SHUT_WR)  # the job loop ends
    assert replies == [ToolReply(status="error", error="e")]


@pytest.mark.anyio
async def test_process_bridge_waits_directly_only_when_no_other_call_is_pending(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    channel = worker_channel._Channel(ours)
    bridge = worker_bridge.PipeToolBridge(channel, wait=1e-6)
    direct: list[object] = []
    wait_directly = bridge._wait_directly

    def spy(pending: Any) -> None:
        direct.append(pending)
        wait_directly(pending)

    bridge._wait_directly = spy  # type: ignore[method-assign]
    replies: dict[str, Any] = {}

    async def job_loop() -> None:
        while (message := await channel.recv()) is not None:
            bridge.dispatch(message)

    async def calling(call_id: str) -> None:
        replies[call_id] = (await bridge.call(call_id, "ping", {})).value

    async with anyio.create_task_group() as tg:
        tg.start_soon(job_loop)
        tg.start_soon(calling, "c1")
        await anyio.wait_all_tasks_blocked()
        assert len(direct) == 1  # c1 waited directly, then went to the loop
        tg.start_soon(calling, "c2")
        await anyio.wait_all_tasks_blocked()
        assert len(direct) == 1  # c2 went to the loop at once: c1 is pending
        requests = [_read_frame(theirs), _read_frame(theirs)]
        assert [r["id"] for r in requests] == ["c1", "c2"]
        for request in reversed(requests):
            reply = {"status": "ok", "value": request["id"]}
            theirs.sendall(_frame({"op": "reply", "id": request["id"], "reply": reply}))
        await _until(lambda: len(replies) == 2)
        theirs.shutdown(socket.SHUT_WR)
    assert replies == {"c1": "c1", "c2": "c2"}


# ----------------------------------------------------------------------------- parent: framing, readiness


@pytest.mark.anyio
@pytest.mark.parametrize("during_a_run", [True, False])
async def test_process_parent_assembles_a_frame_split_across_reads(
    pair: tuple[socket.socket, socket.socket], during_a_run: bool
) -> None:
    ours, theirs = pair
    worker = process._Worker(0, ours, "", 1 << 20)
    if during_a_run:
        worker.readable = process._Readable(worker.rfd)
    frame = _frame({"op": "call", "id": "c", "tool": "t", "args": {"text": "é" * 50}})
    got: list[dict[str, Any]] = []

    async def receiving() -> None:
        got.append(await worker.recv())

    try:
        async with anyio.create_task_group() as tg:
            theirs.sendall(frame[:2])
            tg.start_soon(receiving)
            await anyio.wait_all_tasks_blocked()
            theirs.sendall(frame[2:40])
            await anyio.wait_all_tasks_blocked()
            assert got == []
            theirs.sendall(frame[40:])
    finally:
        if worker.readable is not None:
            worker.readable.close()
    assert got == [json.loads(frame[4:])]


@pytest.mark.anyio
async def test_process_parent_readiness_loses_nothing_while_nobody_waits(
    pair: tuple[socket.socket, socket.socket], anyio_backend: str
) -> None:
    ours, theirs = pair
    readable = process._Readable(ours.fileno())
    assert (readable.loop is not None) == (anyio_backend == "asyncio")
    try:
        theirs.sendall(b"x")
        await readable.wait()  # already readable
        # nobody waits now: on asyncio the callback unregisters the descriptor...
        for _ in range(3):
            await anyio.lowlevel.checkpoint()
        assert not readable.registered
        # ...and the next wait registers it again and sees the unread byte at once
        with anyio.fail_after(30):
            await readable.wait()
        assert ours.recv(10) == b"x"
    finally:
        readable.close()
    if anyio_backend == "asyncio":
        assert not asyncio.get_running_loop().remove_reader(ours.fileno())


# ----------------------------------------------------------------------------- end to end


async def _ping(call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> Any:
    if params.get("fail"):
        raise ValueError(f"failed {params.get('n')}")
    return AgentToolResult(content=(TextContent(f"pong {params.get('n')}"),))


PING = AgentTool(
    name="ping",
    description="ping",
    parameters={"type": "object", "properties": {"n": {"type": "integer"}, "fail": {}}},
    execute=_ping,
)


@pytest.fixture(scope="module")
def runner() -> Iterator[ProcessRunner]:
    runner = ProcessRunner(LIMITS, pool_size=1)
    yield runner
    runner.close()


@pytest.mark.anyio
async def test_process_many_sequential_calls_keep_their_order_and_outcomes(
    runner: ProcessRunner,
) -> None:
    blocked = {7, 13}

    async def before(ctx: Any, signal: Any) -> Any:
        from scriptgate.runtime.types import BeforeToolCallResult

        if ctx.args.get("n") in blocked:
            return BeforeToolCallResult(block=True, reason=f"no {ctx.args['n']}")
        return None

    source = (
        "out = []\n"
        "for i in range(40):\n"
        "    try:\n"
        "        out.append(ping(n=i, fail=(i % 10 == 3)))\n"
        "    except ToolDenied as exc:\n"
        "        out.append('denied: ' + str(exc))\n"
        "    except ToolError as exc:\n"
        "        out.append('error: ' + str(exc))\n"
        "out"
    )
    bridge = HostToolBridge([PING], before_tool_call=before)
    result = await runner.run(source, bridge=bridge, tools=tool_specs([PING]))
    assert result.ok, result.error
    expected: list[str] = []
    statuses: list[str] = []
    for i in range(40):
        if i in blocked:
            expected.append(f"denied: no {i}")
            statuses.append("blocked")
        elif i % 10 == 3:
            expected.append(f"error: failed {i}")
            statuses.append("error")
        else:
            expected.append(f"pong {i}")
            statuses.append("ok")
    assert result.value == expected
    assert [c.status for c in result.calls] == statuses
    assert [c.id for c in result.calls] == [f"script/{i + 1}" for i in range(40)]


@pytest.mark.anyio
async def test_process_a_burst_of_concurrent_calls_runs_concurrently_on_the_host(
    runner: ProcessRunner,
) -> None:
    count = 12
    started: list[int] = []
    all_started = anyio.Event()

    async def meet(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        # Each call waits until every call has started: they must all run at once.
        started.append(params["n"])
        if len(started) == count:
            all_started.set()
        await all_started.wait()
        return AgentToolResult(content=(TextContent(str(params["n"])),))

    tool = AgentTool(
        name="meet",
        description="meet",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
        execute=meet,
    )
    source = f"results = await gather(*[meet(n=i) for i in range({count})])\nresults"
    bridge = HostToolBridge([tool])
    result = await runner.run(source, bridge=bridge, tools=tool_specs([tool]))
    assert result.ok, result.error
    assert result.value == [str(i) for i in range(count)]
    assert sorted(started) == list(range(count))
    assert [c.status for c in result.calls] == ["ok"] * count
    # and the worker is still fine for a sequential run afterwards
    again = await runner.run(
        "[ping(n=1), ping(n=2)]", bridge=HostToolBridge([PING]), tools=tool_specs([PING])
    )
    assert again.value == ["pong 1", "pong 2"]


@pytest.mark.anyio
async def test_process_run_leaves_no_reader_registered_on_the_loop(anyio_backend: str) -> None:
    # reuse_workers: the worker that ran is back in the pool, where the test can look at it
    async with ProcessRunner(LIMITS, pool_size=1, reuse_workers=True) as runner:
        bridge = HostToolBridge([PING])
        result = await runner.run("ping(n=1)", bridge=bridge, tools=tool_specs([PING]))
        assert result.value == "pong 1"
        workers = list(runner._idle)
        assert workers
        assert all(w.readable is None for w in workers)
        if anyio_backend == "asyncio":
            loop = asyncio.get_running_loop()
            assert not any(loop.remove_reader(w.rfd) for w in workers)


_HOSTILE = """
import json, os, socket, sys
sock = socket.socket(fileno=os.dup(0))
def send(message):
    data = json.dumps(message).encode()
    sock.sendall(len(data).to_bytes(4, "big") + data)
class Together:
    data = b""
    def sendall(self, data):
        self.data += data
send({"op": "ready"})
real = sock
real.recv(65536)  # the job
if not GO:
    sock = Together()  # the call and what follows it go out in one write
send({"op": "call", "id": "c1", "tool": "hang", "args": {}})
if GO:
    with open(GO, "rb") as go:  # the test's go: the parent's tool call is running
        go.read(1)
AFTER
if not GO:
    real.sendall(sock.data)
real.recv(1)
"""


@pytest.mark.anyio
@pytest.mark.parametrize("meanwhile", [True, False], ids=["while-the-call-runs", "back-to-back"])
@pytest.mark.parametrize(
    ("after", "text"),
    [
        ("sock.sendall((5).to_bytes(4, 'big') + b'[1, 2')", "not valid JSON"),
        ("send({'op': 'call', 'id': 'c1', 'tool': 'hang', 'args': {}})", "repeated"),
        ("sock.sendall((1 << 31).to_bytes(4, 'big'))", "cap"),
        ("send({'op': 'result', 'result': []})", "not a JSON object"),
    ],
    ids=["not-json", "repeated-call", "huge-frame", "bad-result"],
)
async def test_process_parent_stops_a_running_call_when_the_worker_misbehaves(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, after: str, text: str, meanwhile: bool
) -> None:
    # The worker misbehaves while the parent runs its tool call (or right behind the
    # call, in the same read): the parent notices at once, without waiting for the
    # call to end, stops the call and kills the worker.
    started = anyio.Event()
    cancelled = anyio.Event()

    async def hang(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    tool = AgentTool(name="hang", description="hang", parameters={"type": "object"}, execute=hang)
    go = tmp_path / "go"
    if meanwhile:
        os.mkfifo(go)
    bootstrap = _HOSTILE.replace("GO", repr(str(go)) if meanwhile else "''")
    monkeypatch.setattr(process, "_BOOTSTRAP", bootstrap.replace("AFTER", after))
    async with ProcessRunner(LIMITS, pool_size=0, spawn="exec") as runner:
        outcome: list[Any] = []

        async def running() -> None:
            bridge = HostToolBridge([tool])
            outcome.append(await runner.run("1", bridge=bridge, tools=tool_specs([tool])))

        async with anyio.create_task_group() as tg:
            tg.start_soon(running)
            await started.wait()
            if meanwhile:
                await anyio.to_thread.run_sync(go.write_bytes, b"!")
    [result] = outcome
    assert result.error is not None
    assert (result.error.kind, text in result.error.message) == ("sandbox", True), result.error
    assert cancelled.is_set()
    assert [(c.tool, c.status) for c in result.calls] == [("hang", "cancelled")]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])  # the fill hook is asyncio's
async def test_process_parent_readiness_fill_wakes_only_for_data_or_eof(
    pair: tuple[socket.socket, socket.socket], anyio_backend: str
) -> None:
    ours, theirs = pair
    worker = process._Worker(0, ours, "", 1 << 20)
    readable = process._Readable(worker.rfd, worker.fill)
    worker.readable = readable
    woken: list[bool] = []

    async def waiting() -> None:
        await readable.wait()
        woken.append(True)

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.wait_all_tasks_blocked()
            readable._ready()  # a stale readiness report: nothing to read
            await anyio.wait_all_tasks_blocked()
            assert woken == []
            theirs.sendall(_frame({"op": "cancel", "id": "x"}))
            await _until(lambda: woken)
        assert bytes(worker.buf) == _frame({"op": "cancel", "id": "x"})  # read by fill
        assert await worker.recv() == {"op": "cancel", "id": "x"}
        theirs.close()
        with pytest.raises(process._WorkerGone):
            await worker.recv()
        assert worker.gone
    finally:
        readable.close()
