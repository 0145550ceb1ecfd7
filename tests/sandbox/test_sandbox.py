"""The ``Sandbox`` API: results, tools as functions, concurrency, sessions, run_sync, pi §8.4."""

from __future__ import annotations

import threading
from typing import Any

import anyio
import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortController
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, BeforeToolCallResult, TextContent
from scriptgate.sandbox.result import Limits
from scriptgate.sandbox.sandbox import Sandbox

OPEN = {"type": "object", "additionalProperties": True}


def _tool(name: str, execute: Any, **kwargs: Any) -> AgentTool:
    return AgentTool(name=name, description=name, parameters=OPEN, execute=execute, **kwargs)


def _text(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent("line1"), TextContent("line2")))


def _structured(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(
        content=(TextContent("as text"),), structured_content={"id": tool_call_id, "args": params}
    )


def _failing(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    raise RuntimeError("disk on fire")


def _error_with_data(
    tool_call_id: str, params: Any, signal: Any, on_update: Any
) -> AgentToolResult:
    return AgentToolResult(
        content=(TextContent("partial failure"),), structured_content={"failed": 1}, is_error=True
    )


def _empty_error(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult(content=(), is_error=True)


def _tools() -> list[AgentTool]:
    return [
        _tool("text-tool", _text),
        _tool("structured", _structured, output_schema={"type": "object"}),
        _tool("no-schema", _structured),
        _tool("failing", _failing),
        _tool("error_with_data", _error_with_data, output_schema={"type": "object"}),
        _tool("empty_error", _empty_error),
    ]


@pytest.mark.anyio
async def test_sandbox_result_fields_are_plain_json() -> None:
    sandbox = Sandbox(_tools())
    result = await sandbox.run("print('hi')\nr = structured(a=1)\nr")
    assert result.ok
    assert result.value == {"id": "script/1", "args": {"a": 1}}
    assert result.output == "hi\n"
    assert result.error is None
    assert [(c.id, c.tool, c.arguments, c.status) for c in result.calls] == [
        ("script/1", "structured", {"a": 1}, "ok")
    ]
    assert result.calls[0].duration_ms is not None
    assert result.wall_time > 0
    assert result.to_json()["calls"][0]["tool"] == "structured"


@pytest.mark.anyio
async def test_sandbox_script_receives_text_or_structured_content() -> None:
    sandbox = Sandbox(_tools())
    result = await sandbox.run("[text_tool(), structured()['args'], no_schema()]")
    assert result.value == ["line1\nline2", {}, "as text"]


@pytest.mark.anyio
async def test_sandbox_tool_errors_are_catchable() -> None:
    sandbox = Sandbox(_tools())
    source = (
        "out = []\n"
        "for f in (failing, empty_error):\n"
        "    try:\n"
        "        f()\n"
        "    except ToolError as e:\n"
        "        out.append(str(e))\n"
        "try:\n"
        "    error_with_data()\n"
        "except ToolError as e:\n"
        "    out.append([str(e), e.data])\n"
        "out"
    )
    result = await sandbox.run(source)
    assert result.ok, result.error
    assert result.value == [
        "disk on fire",
        'Tool "empty_error" failed',
        ["partial failure", {"failed": 1}],
    ]
    assert [c.status for c in result.calls] == ["error", "error", "error"]


@pytest.mark.anyio
async def test_sandbox_uncaught_tool_error_ends_script_with_kind_tool() -> None:
    result = await Sandbox(_tools()).run("x = 1\nfailing()\nx")
    assert result.error is not None
    assert (result.error.kind, result.error.type, result.error.message, result.error.line) == (
        "tool",
        "ToolError",
        "disk on fire",
        2,
    )
    assert [c.status for c in result.calls] == ["error"]


@pytest.mark.anyio
async def test_sandbox_blocked_call_raises_tool_denied() -> None:
    def policy(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
        if ctx.args.get("path") == "/etc":
            return BeforeToolCallResult(block=True, reason="nope")
        return None

    sandbox = Sandbox(_tools(), before_tool_call=policy)
    source = (
        "try:\n"
        "    structured(path='/etc')\n"
        "except PermissionError as e:\n"
        "    r = [isinstance(e, ToolDenied), str(e), isinstance(e, ToolError)]\n"
        "r"
    )
    result = await sandbox.run(source)
    assert result.value == [True, "nope", True]
    assert result.calls[0].status == "blocked"


@pytest.mark.anyio
async def test_sandbox_calls_run_concurrently_with_gather() -> None:
    # each call waits until the other has started: only concurrent calls finish
    started = {"a": anyio.Event(), "b": anyio.Event()}

    async def meet(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        me, other = params["me"], params["other"]
        started[me].set()
        await started[other].wait()
        return AgentToolResult.text(me)

    sandbox = Sandbox([_tool("meet", meet)], limits=Limits(timeout=5))
    result = await sandbox.run("await gather(meet(me='a', other='b'), meet(me='b', other='a'))")
    assert result.ok, result.error
    assert result.value == ["a", "b"]
    assert [c.id for c in result.calls] == ["script/1", "script/2"]


@pytest.mark.anyio
async def test_sandbox_unawaited_calls_are_cancelled_when_script_ends() -> None:
    aborted = anyio.Event()
    entered = anyio.Event()

    async def hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        signal.add_listener(lambda reason: aborted.set())
        entered.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    async def quick(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await entered.wait()
        return AgentToolResult.text("done")

    sandbox = Sandbox([_tool("hang", hang), _tool("quick", quick)], limits=Limits(timeout=5))
    result = await sandbox.run("pending = hang()\nawait quick()")
    assert result.ok, result.error
    assert result.value == "done"
    assert [(c.tool, c.status) for c in result.calls] == [("hang", "cancelled"), ("quick", "ok")]
    assert aborted.is_set()


@pytest.mark.anyio
async def test_sandbox_abort_signal_ends_script_and_cancels_calls() -> None:
    controller = AbortController()
    entered = anyio.Event()

    async def hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        entered.set()
        await signal.wait()
        return AgentToolResult.text("aborted")

    sandbox = Sandbox([_tool("hang", hang)], limits=Limits(timeout=5))
    box: dict[str, Any] = {}

    async def run(source: str) -> None:
        box["result"] = await sandbox.run(source, signal=controller.signal)

    for source in ("hang()", "await hang()"):
        controller = AbortController()
        entered = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, source)
            await entered.wait()
            controller.abort(RuntimeError("user pressed stop"))
        result = box["result"]
        assert result.error is not None
        assert (result.error.kind, result.error.message) == ("aborted", "user pressed stop")
        assert result.calls[0].status == "cancelled"


@pytest.mark.anyio
async def test_sandbox_already_aborted_signal() -> None:
    result = await Sandbox().run("1", signal=AbortController.aborted_signal())
    assert result.error is not None
    assert result.error.kind == "aborted"


@pytest.mark.anyio
async def test_sandbox_parallel_runs_share_no_state() -> None:
    sandbox = Sandbox(_tools())
    results: list[Any] = []

    async def one(i: int) -> None:
        results.append(await sandbox.run(f"x = {i}\ntry:\n    y\nexcept NameError:\n    y = x\ny"))

    async with anyio.create_task_group() as tg:
        for i in range(5):
            tg.start_soon(one, i)
    assert sorted(r.value for r in results) == [0, 1, 2, 3, 4]


@pytest.mark.anyio
async def test_sandbox_session_keeps_globals_until_reset() -> None:
    sandbox = Sandbox(_tools())
    session = sandbox.session()
    await session.run("rows = [1, 2]\ndef total():\n    return sum(rows) + len(text_tool())")
    result = await session.run("rows.append(3)\ntotal()")
    assert result.value == 17
    assert session.globals == {"rows": [1, 2, 3]}
    session.reset()
    after = await session.run("rows")
    assert after.error is not None
    assert after.error.type == "NameError"
    fresh = await sandbox.run("rows")
    assert fresh.error is not None


@pytest.mark.anyio
async def test_sandbox_session_functions_call_tools_in_later_runs() -> None:
    session = Sandbox(_tools()).session()
    await session.run("def get():\n    return structured(k=1)['args']")
    result = await session.run("get()")
    assert result.value == {"k": 1}


def test_sandbox_run_sync_without_a_loop() -> None:
    result = Sandbox(_tools()).run_sync("structured(a=2)['args']['a'] * 21")
    assert result.value == 42


def test_sandbox_run_sync_keeps_one_loop_and_leaves_nothing_running() -> None:
    # the main thread's run_sync reuses one event loop (no new loop per call), and a task a
    # tool left behind is cancelled when its call returns, as asyncio.run would
    import asyncio

    loops: list[Any] = []
    seen: list[str] = []

    async def background() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    async def spawn(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        loops.append(asyncio.get_running_loop())
        asyncio.get_running_loop().create_task(background())
        return AgentToolResult(content=(TextContent("ok"),))

    sandbox = Sandbox([_tool("spawn", spawn)])
    assert sandbox.run_sync("spawn()").value == "ok"
    assert seen == ["cancelled"]
    assert sandbox.run_sync("spawn()").value == "ok"
    assert seen == ["cancelled", "cancelled"]
    assert loops[0] is loops[1]
    assert not loops[0].is_running()
    assert not loops[0].is_closed()


def test_sandbox_run_sync_from_a_plain_thread_uses_its_own_loop() -> None:
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(v=Sandbox().run_sync("2 + 3").value))
    thread.start()
    thread.join()
    assert box["v"] == 5


@pytest.mark.anyio
async def test_sandbox_run_sync_while_a_loop_is_running() -> None:
    sandbox = Sandbox(_tools())
    session = sandbox.session()
    assert sandbox.run_sync("text_tool()").value == "line1\nline2"
    session.run_sync("x = 5")
    assert session.run_sync("x + 1").value == 6


def test_sandbox_run_sync_from_a_thread_with_a_running_loop() -> None:
    box: dict[str, Any] = {}

    async def main() -> None:
        box["value"] = Sandbox().run_sync("sum(range(4))").value

    thread = threading.Thread(target=anyio.run, args=(main,))
    thread.start()
    thread.join()
    assert box["value"] == 6


def test_sandbox_rejects_bad_configuration() -> None:
    with pytest.raises(ConfigurationError):
        Sandbox(isolation="docker")
    with pytest.raises(ConfigurationError):
        Sandbox(limits={"timeout": 1})  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError):
        Sandbox(tools=[print])  # type: ignore[list-item]


@pytest.mark.anyio
async def test_sandbox_closed_sandbox_refuses_runs() -> None:
    async with Sandbox() as sandbox:
        assert (await sandbox.run("1")).value == 1
    with pytest.raises(ConfigurationError, match="closed"):
        await sandbox.run("1")


@pytest.mark.anyio
async def test_sandbox_tool_names_become_identifiers_none_is_lost() -> None:
    tools = [
        _tool("my-tool", _text),
        _tool("my_tool", _structured, output_schema={"type": "object"}),
        _tool("import", _text),
    ]
    sandbox = Sandbox(tools)
    result = await sandbox.run(
        "[my_tool_2(), tools['my-tool'](), tools.my_tool()['id'], my_tool()['id'], import_()]"
    )
    assert result.value == ["line1\nline2", "line1\nline2", "script/3", "script/4", "line1\nline2"]
    assert [c.tool for c in result.calls] == ["my-tool", "my-tool", "my_tool", "my_tool", "import"]


@pytest.mark.anyio
async def test_sandbox_unknown_tool_member_message() -> None:
    result = await Sandbox(_tools()).run("tools.structurd()")
    assert result.error is not None
    assert result.error.type == "TypeError"
    assert result.error.message == "tools.structurd does not exist. Did you mean structured?"


@pytest.mark.anyio
async def test_sandbox_value_not_json_is_rendered() -> None:
    result = await Sandbox().run("{2, 1}")
    assert result.ok, result.error
    assert result.value == [1, 2]


@pytest.mark.anyio
async def test_sandbox_empty_arguments_and_results_pass_through() -> None:
    def empty(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult(content=())

    sandbox = Sandbox([_tool("empty", empty)])
    result = await sandbox.run("[empty(), empty({})]")
    assert result.value == ["", ""]
    assert [c.arguments for c in result.calls] == [{}, {}]


@pytest.mark.anyio
async def test_sandbox_process_isolation_uses_the_same_api() -> None:
    async with Sandbox(_tools(), isolation="process") as sandbox:
        result = await sandbox.run("print('p')\nstructured(a=1)['args']")
        assert (result.ok, result.value, result.output) == (True, {"a": 1}, "p\n")
        session = sandbox.session()
        await session.run("n = 41")
        assert (await session.run("n + 1")).value == 42


@pytest.mark.anyio
async def test_sandbox_engine_never_raises_for_bad_sources() -> None:
    from scriptgate.sandbox.engine import run_script

    for source in (None, b"x = 1", "\ufeffx = 1\nx", "{'k': ['\udcff']}", "def f(:\n"):
        result = await run_script(
            source,  # type: ignore[arg-type]
            bridge=None,  # type: ignore[arg-type]
            tools=[],
            limits=Limits(),
        )
        assert isinstance(result.to_json(), dict)


@pytest.mark.anyio
async def test_sandbox_unawaited_call_in_async_script_explains_itself() -> None:
    result = await Sandbox(_tools()).run("a = await structured()\nb = structured()\nb['args']")
    assert result.error is not None
    assert "must be awaited" in result.error.message
    assert result.error.line == 3
