"""Process isolation (scriptgate.sandbox.isolation.parent): pool, containment, deadlines, limits, sessions.

The runner is loop-agnostic, so one module-scoped runner serves both anyio backends;
tests that count, crash or close workers make their own.
"""

from __future__ import annotations

import json
import os
import signal as signals
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortController, AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, BeforeToolCallResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, tool_specs
from scriptgate.sandbox.engine import run_script
from scriptgate.sandbox.isolation import parent as process
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import Limits, ScriptResult
from scriptgate.sandbox.sandbox import Sandbox

LIMITS = Limits(timeout=10.0, memory_bytes=512 << 20)


def _text_tool(name: str, fn: Any) -> AgentTool:
    async def execute(call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> Any:
        return await fn(params, signal)

    return AgentTool(
        name=name,
        description=name,
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        execute=execute,
    )


async def _echo(params: Any, signal: AbortSignal | None) -> AgentToolResult:
    return AgentToolResult(content=(TextContent(f"{params.get('text', '')}:{os.getpid()}"),))


ECHO = _text_tool("echo", _echo)


async def _run(
    runner: ProcessRunner,
    source: str,
    tools: Sequence[AgentTool] = (ECHO,),
    *,
    before: Any = None,
    signal: AbortSignal | None = None,
    session_key: str | None = None,
) -> ScriptResult:
    bridge = HostToolBridge(tools, before_tool_call=before, signal=signal)
    return await runner.run(
        source, bridge=bridge, tools=tool_specs(tools), signal=signal, session_key=session_key
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def shared() -> Iterator[ProcessRunner]:
    runner = ProcessRunner(LIMITS, pool_size=2)
    yield runner
    runner.close()


# ----------------------------------------------------------------------------- basics


@pytest.mark.anyio
async def test_process_runs_a_script_and_returns_plain_data(shared: ProcessRunner) -> None:
    result = await _run(shared, "x = 1 + 2\nprint('hi', x)\n{'x': x, 'l': [1, 2.5, None]}")
    assert result.ok, result.error
    assert result.value == {"x": 3, "l": [1, 2.5, None]}
    assert result.output == "hi 3\n"
    assert json.loads(json.dumps(result.to_json())) == result.to_json()


@pytest.mark.anyio
async def test_process_result_has_the_same_shape_as_in_process(shared: ProcessRunner) -> None:
    source = "a = echo(text='x')\nprint(len(a) > 0)\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n    pass\n[a.split(':')[0], 7]"
    remote = await _run(shared, source)
    local = await run_script(
        source, bridge=HostToolBridge([ECHO]), tools=tool_specs([ECHO]), limits=LIMITS
    )

    def strip(result: ScriptResult) -> dict[str, Any]:
        data = result.to_json()
        data.pop("wall_time")
        for call in data["calls"]:
            call.pop("duration_ms")
        return data

    assert strip(remote) == strip(local)
    remote_error = await _run(shared, "x = 1\nundefined_name")
    local_error = await run_script(
        "x = 1\nundefined_name", bridge=HostToolBridge([]), tools=[], limits=LIMITS
    )
    assert strip(remote_error) == strip(local_error)


@pytest.mark.anyio
async def test_process_tool_calls_and_hooks_run_in_the_parent(shared: ProcessRunner) -> None:
    seen: list[tuple[str, Any, int]] = []

    async def before(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
        seen.append((ctx.tool_call.name, ctx.args, os.getpid()))
        if ctx.args.get("text") == "forbidden":
            return BeforeToolCallResult(block=True, reason="not allowed here")
        return None

    source = (
        "first = echo(text='a')\n"
        "try:\n"
        "    echo(text='forbidden')\n"
        "    denied = None\n"
        "except ToolDenied as exc:\n"
        "    denied = str(exc)\n"
        "[first, denied]"
    )
    result = await _run(shared, source, before=before)
    assert result.ok, result.error
    assert result.value == [f"a:{os.getpid()}", "not allowed here"]
    assert seen == [
        ("echo", {"text": "a"}, os.getpid()),
        ("echo", {"text": "forbidden"}, os.getpid()),
    ]
    assert [(c.id, c.tool, c.arguments, c.status) for c in result.calls] == [
        ("script/1", "echo", {"text": "a"}, "ok"),
        ("script/2", "echo", {"text": "forbidden"}, "blocked"),
    ]


# ----------------------------------------------------------------------------- the pool


@pytest.mark.anyio
async def test_process_pool_reuses_a_worker_after_success_and_replaces_it_after_failure() -> None:
    # reuse_workers=True: the default retires every worker after one run (its pid was
    # still listed while the refill thread reaped it, so this test passed by a race)
    async with ProcessRunner(LIMITS, pool_size=1, reuse_workers=True) as runner:
        await runner.start()
        [first] = runner.worker_pids()
        assert (await _run(runner, "1 + 1")).value == 2
        assert runner.worker_pids() == [first]
        failed = await _run(runner, "1 / 0")
        assert failed.error is not None
        assert failed.error.kind == "runtime"
        assert not _alive(first)
        [second] = runner.worker_pids()
        assert second != first
        assert (await _run(runner, "'still' + ' fine'")).value == "still fine"


@pytest.mark.anyio
async def test_process_concurrent_runs_do_not_share_state(shared: ProcessRunner) -> None:
    arrived = 0
    both = anyio.Event()

    async def barrier(params: Any, signal: AbortSignal | None) -> AgentToolResult:
        nonlocal arrived
        arrived += 1
        if arrived == 2:
            both.set()
        await both.wait()
        return AgentToolResult(content=(TextContent("go"),))

    tools = [_text_tool("barrier", barrier)]
    results: dict[str, ScriptResult] = {}

    async def one(name: str) -> None:
        source = f"secret = {name!r}\nbarrier(text={name!r})\nsecret"
        results[name] = await _run(shared, source, tools)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "A")
        tg.start_soon(one, "B")
    assert results["A"].value == "A"
    assert results["B"].value == "B"
    later = await _run(shared, "secret")
    assert later.error is not None
    assert later.error.kind == "runtime"
    assert later.error.type == "NameError"


@pytest.mark.anyio
async def test_process_aclose_leaves_no_process_and_refuses_new_runs() -> None:
    started = anyio.Event()

    async def hang(params: Any, signal: AbortSignal | None) -> AgentToolResult:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    # a deadline far past any close: under load a 10 s one raced aclose (CI, a `limit`)
    runner = ProcessRunner(replace(LIMITS, timeout=300), pool_size=2)
    await runner.start()
    outcome: list[ScriptResult] = []

    async def running() -> None:
        outcome.append(await _run(runner, "hang()", [_text_tool("hang", hang)]))

    async with anyio.create_task_group() as tg:
        tg.start_soon(running)
        await started.wait()
        pids = runner.worker_pids()
        assert len(pids) >= 2
        zygote = runner.zygote_pid()
        assert zygote is not None
        pids.append(zygote)
        await runner.aclose()
    assert [p for p in pids if _alive(p)] == []
    [result] = outcome
    assert result.error is not None
    assert result.error.kind == "sandbox", result.error
    assert "closed" in result.error.message
    with pytest.raises(ConfigurationError):
        await _run(runner, "1")


# ----------------------------------------------------------------------------- containment


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("signal_number", "kind", "text"),
    [
        (signals.SIGSEGV, "sandbox", "crashed: killed by SIGSEGV"),
        (signals.SIGKILL, "sandbox", "crashed: killed by SIGKILL"),
        (signals.SIGXCPU, "limit", "CPU-time limit"),
    ],
    ids=["SIGSEGV", "SIGKILL", "SIGXCPU"],
)
async def test_process_worker_killed_by_a_signal_is_reported_and_replaced(
    signal_number: int, kind: str, text: str
) -> None:
    started = anyio.Event()
    cancelled = anyio.Event()

    async def hang(params: Any, signal: AbortSignal | None) -> AgentToolResult:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    async with ProcessRunner(LIMITS, pool_size=0) as runner:
        outcome: list[ScriptResult] = []

        async def running() -> None:
            outcome.append(
                await _run(runner, "print('before')\nhang()", [_text_tool("hang", hang)])
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(running)
            await started.wait()
            [pid] = runner.worker_pids()
            os.kill(pid, signal_number)
        [result] = outcome
        assert result.error is not None
        assert result.error.kind == kind
        assert text in result.error.message
        assert cancelled.is_set()
        assert [(c.tool, c.status) for c in result.calls] == [("hang", "cancelled")]
        assert not _alive(pid)
        assert (await _run(runner, "2 * 21")).value == 42


@pytest.mark.anyio
async def test_process_real_interpreter_crash_is_contained(shared: ProcessRunner) -> None:
    # restrictedpython-notes §7.1: hashing a very deep tuple overflows the C stack of
    # CPython 3.11 (no recursion check in tuplehash). Set-membership hashes implicitly.
    source = "t = ()\nfor i in range(400000):\n    t = (t,)\nt in {1}"
    result = await _run(shared, source)
    assert result.error is not None
    assert result.error.kind in ("sandbox", "limit", "runtime")
    if result.error.kind == "sandbox":
        assert "SIGSEGV" in result.error.message
    assert (await _run(shared, "'alive'")).value == "alive"


@pytest.mark.anyio
async def test_process_deadline_kills_a_script_stuck_in_c() -> None:
    # Straight-line code runs no budget check between its C operations: six hundred
    # reversals of a 10 M-item list (milliseconds each; a list's methods are read inline,
    # past the large-input check) run on past the deadline, and only the parent's SIGKILL
    # ends them. (In-process such a run is reported as a timeout when it ends.)
    # Catastrophic regexes, hash floods, comparisons of shared-reference DAGs, huge modular
    # powers, big-int divisions and case conversions of a 10 MB string (findings14 A16:
    # a large input checks the budget first) used to be the example: the sandbox now stops
    # or refuses those itself.
    limits = Limits(timeout=1.0, memory_bytes=512 << 20)
    async with ProcessRunner(limits, pool_size=1) as runner:
        await runner.start()
        [pid] = runner.worker_pids()
        result = await _run(
            runner,
            "x = [0] * 10_000_000\n" + "x.reverse()\n" * 600,
        )
        assert result.error is not None
        assert result.error.kind == "limit"
        assert result.error.type == "TimeoutError"
        assert "killed" in result.error.message
        assert not _alive(pid)
        assert (await _run(runner, "'next'")).value == "next"


@pytest.mark.anyio
async def test_process_memory_limit_is_a_limit_error() -> None:
    limits = Limits(timeout=20.0, max_steps=None, memory_bytes=256 << 20)
    async with ProcessRunner(limits, pool_size=0) as runner:
        result = await _run(runner, "x = []\nwhile True:\n    x.append('y' * 1000000)")
    assert result.error is not None
    assert result.error.kind == "limit"
    assert "memory" in result.error.message.lower()


@pytest.mark.anyio
async def test_process_abort_signal_stops_the_run() -> None:
    started = anyio.Event()

    async def hang(params: Any, signal: AbortSignal | None) -> AgentToolResult:
        started.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    controller = AbortController()
    async with ProcessRunner(LIMITS, pool_size=0) as runner:
        outcome: list[ScriptResult] = []

        async def running() -> None:
            outcome.append(
                await _run(runner, "hang()", [_text_tool("hang", hang)], signal=controller.signal)
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(running)
            await started.wait()
            controller.abort()
    [result] = outcome
    assert result.error is not None
    assert result.error.kind == "aborted"
    assert [c.status for c in result.calls] == ["cancelled"]


@pytest.mark.anyio
async def test_process_pending_call_is_cancelled_on_the_host_when_the_script_ends(
    shared: ProcessRunner,
) -> None:
    started = anyio.Event()
    cancelled = anyio.Event()

    async def hang(params: Any, signal: AbortSignal | None) -> AgentToolResult:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()
        raise AssertionError("unreachable")

    async def after_hang(params: Any, signal: AbortSignal | None) -> AgentToolResult:
        await started.wait()
        return AgentToolResult(content=(TextContent("done"),))

    tools = [_text_tool("hang", hang), _text_tool("after_hang", after_hang)]
    # An async script starts hang() and never awaits it: when the script ends, the
    # engine cancels the call, the worker says so, and the parent cancels the host call.
    result = await _run(shared, "pending = hang()\nawait after_hang()", tools)
    assert result.ok, result.error
    assert result.value == "done"
    assert cancelled.is_set()
    assert [(c.tool, c.status) for c in result.calls] == [
        ("hang", "cancelled"),
        ("after_hang", "ok"),
    ]


# ----------------------------------------------------------------------------- the worker's jail


def _proc(pid: int, name: str) -> str:
    return Path(f"/proc/{pid}/{name}").read_text(encoding="utf-8", errors="replace")


def _proc_bytes(pid: int, name: str) -> bytes:
    return Path(f"/proc/{pid}/{name}").read_bytes()


def _exists(path: str) -> bool:
    return Path(path).exists()


def _limit(limits_text: str, label: str) -> str:
    for line in limits_text.splitlines():
        if line.startswith(label):
            return line[len(label) :].split()[0]
    raise AssertionError(f"{label!r} not in /proc/pid/limits")


@pytest.mark.anyio
async def test_process_worker_has_no_secrets_and_runs_under_rlimits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCRIPTGATE_TEST_SECRET", "hunter2")
    with tempfile.TemporaryFile() as leaked:
        os.set_inheritable(leaked.fileno(), True)
        async with ProcessRunner(
            Limits(timeout=3.0, memory_bytes=300 << 20), pool_size=1
        ) as runner:
            await runner.start()
            [pid] = runner.worker_pids()
            environ = _proc_bytes(pid, "environ")
            assert b"hunter2" not in environ
            assert b"PATH=" not in environ
            limits = _proc(pid, "limits")
            assert _limit(limits, "Max address space") == str(300 << 20)
            assert _limit(limits, "Max file size") == "0"
            assert _limit(limits, "Max core file size") == "0"
            assert _limit(limits, "Max open files") == "32"
            assert _limit(limits, "Max cpu time") != "unlimited"
            cwd = os.readlink(f"/proc/{pid}/cwd")
            assert Path(cwd).name.startswith("scriptgate-worker-")
            assert os.listdir(cwd) == []
            targets = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            assert os.readlink(f"/proc/self/fd/{leaked.fileno()}") not in targets
            assert not any(t.startswith("/") and t != "/dev/null" for t in targets), targets
            assert os.getpgid(pid) == pid
            assert os.getsid(pid) == pid
        assert not _exists(cwd)


# ----------------------------------------------------------------------------- sessions


@pytest.mark.anyio
async def test_process_session_keeps_globals_until_a_fatal_error_or_reset() -> None:
    limits = Limits(timeout=10.0, max_steps=50_000, memory_bytes=512 << 20)
    async with ProcessRunner(limits, pool_size=1) as runner:
        assert (await _run(runner, "x = 41", session_key="s")).ok
        assert (await _run(runner, "x + 1", session_key="s")).value == 42
        other = await _run(runner, "x", session_key="t")
        assert other.error is not None
        assert other.error.type == "NameError"
        assert (await _run(runner, "1 / 0", session_key="s")).error is not None
        assert (await _run(runner, "x", session_key="s")).value == 41
        fatal = await _run(runner, "while True:\n    pass", session_key="s")
        assert fatal.error is not None
        assert fatal.error.kind == "limit"
        assert "globals are lost" in fatal.error.message
        lost = await _run(runner, "x", session_key="s")
        assert lost.error is not None
        assert lost.error.type == "NameError"
        assert (await _run(runner, "y = 1", session_key="s")).ok
        await runner.reset_session("s")
        reset = await _run(runner, "y", session_key="s")
        assert reset.error is not None
        assert reset.error.type == "NameError"


@pytest.mark.anyio
async def test_process_sessions_are_bounded_and_can_be_dropped() -> None:
    async with ProcessRunner(LIMITS, pool_size=0, max_sessions=2) as runner:
        for key in ("a", "b", "c"):
            assert (await _run(runner, f"x = {key!r}", session_key=key)).ok
        assert len(runner.worker_pids()) == 2
        evicted = await _run(runner, "x", session_key="a")
        assert evicted.error is not None
        assert evicted.error.type == "NameError"
        assert (await _run(runner, "x", session_key="c")).value == "c"
        runner.drop_session("c")
        dropped = await _run(runner, "x", session_key="c")
        assert dropped.error is not None
        assert dropped.error.type == "NameError"


# ----------------------------------------------------------------------------- a hostile worker

_HOSTILE = """
import json, os, socket, sys
sock = socket.socket(fileno=os.dup(0))
def send(message):
    data = json.dumps(message).encode()
    sock.sendall(len(data).to_bytes(4, "big") + data)
def recv():
    head = b""
    while len(head) < 4:
        head += sock.recv(4 - len(head))
    size = int.from_bytes(head, "big")
    body = b""
    while len(body) < size:
        body += sock.recv(size - len(body))
    return json.loads(body)
send({"op": "ready"})
recv()
MODE
sock.recv(1)
"""

_MODES = {
    "huge-frame": ("sock.sendall((1 << 31).to_bytes(4, 'big'))", "sandbox", "cap"),
    "not-json": ("sock.sendall((3).to_bytes(4, 'big') + b'{{{')", "sandbox", "JSON"),
    "bad-result": (
        "send({'op': 'result', 'result': {'ok': 'yes', 'error': None}})",
        "sandbox",
        "malformed",
    ),
    "lying-result": (
        "send({'op': 'result', 'result': {'ok': True, 'error': {'kind': 'runtime', 'type': 'X', 'message': ''}}})",
        "sandbox",
        "malformed",
    ),
    "unknown-op": ("send({'op': 'exec', 'code': 'x'})", "sandbox", "unknown"),
    "call-flood": (
        "[send({'op': 'call', 'id': f'c{i}', 'tool': 'echo', 'args': {}}) for i in range(5)]",
        "limit",
        "Tool-call limit",
    ),
    "exit": ("sys.exit(7)", "sandbox", "status 7"),
}


@pytest.mark.anyio
@pytest.mark.parametrize("mode", sorted(_MODES))
async def test_process_parent_never_trusts_the_worker(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, kind, text = _MODES[mode]
    monkeypatch.setattr(process, "_BOOTSTRAP", _HOSTILE.replace("MODE", code))
    limits = Limits(timeout=10.0, max_tool_calls=3)
    async with ProcessRunner(limits, pool_size=0, spawn="exec") as runner:
        result = await _run(runner, "1")
        pids = runner.worker_pids()
    assert result.error is not None
    assert (result.error.kind, text in result.error.message) == (kind, True), result.error
    assert pids == []


@pytest.mark.anyio
async def test_process_worker_that_cannot_start_is_a_sandbox_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(process, "_BOOTSTRAP", "import sys; sys.exit(3)")
    for spawn in ("exec", "fork"):
        async with ProcessRunner(LIMITS, pool_size=0, spawn=spawn) as runner:  # type: ignore[arg-type]
            result = await _run(runner, "1")
        assert result.error is not None
        assert result.error.kind == "sandbox"
        assert result.error.type == "WorkerStartError"
        assert "status 3" in result.error.message


def test_process_runner_rejects_a_negative_pool_size() -> None:
    with pytest.raises(ConfigurationError):
        ProcessRunner(LIMITS, pool_size=-1)


@pytest.mark.anyio
async def test_process_sandbox_session_reset_releases_its_pinned_worker() -> None:
    async with Sandbox([], limits=LIMITS, isolation="process") as sandbox:
        session = sandbox.session()
        assert (await session.run("x = 1")).ok
        runner = sandbox._runner
        assert runner is not None
        pinned = set(runner.worker_pids())
        session.reset()
        assert not (await session.run("x")).ok  # the globals are gone
        for _ in range(3):  # resets do not accumulate pinned workers
            assert (await session.run("y = 2")).ok
            session.reset()
        assert len(runner.worker_pids()) <= max(len(pinned), 2)


@pytest.mark.anyio
async def test_process_unencodable_call_arguments() -> None:
    # An int of more than 4300 digits has no JSON text: it used to fail encoding the
    # call's record in the worker's result ("sandbox" failure, worker discarded) and to
    # crash the trace in-process. Both modes now refuse it at the call, before any record.
    async with Sandbox([ECHO], limits=LIMITS, isolation="process") as sandbox:
        result = await sandbox.run(
            "try:\n    echo(text=10 ** 5000)\nexcept TypeError as e:\n    r = str(e)\nr"
        )
        assert result.ok, result.error
        assert "not JSON data" in result.value
        assert result.calls == ()
        assert (await sandbox.run("'next'")).value == "next"


@pytest.mark.parametrize("text", ["", "MemoryError"])
def test_process_memory_error_rendered_with_its_name_is_the_limit(text: str) -> None:
    # a MemoryError met in host Python code under the address-space limit (OrderedDict's
    # update loop) can come back with its own name as its text: still the memory limit
    from scriptgate.sandbox.result import ScriptError, ScriptResult

    runner = ProcessRunner(Limits(memory_bytes=256 << 20), pool_size=1)
    failed = ScriptResult(
        ok=False,
        value=None,
        output="",
        error=ScriptError("runtime", "MemoryError", text, 3),
        calls=(),
        wall_time=0.1,
    )
    error = runner._memory_error_to_limit(failed).error
    assert error is not None
    assert error.kind == "limit"
    assert "memory limit" in error.message
    other = ScriptResult(
        ok=False,
        value=None,
        output="",
        error=ScriptError("runtime", "MemoryError", "mine", 3),
        calls=(),
        wall_time=0.1,
    )
    assert runner._memory_error_to_limit(other).error == other.error
