"""The fast tool-call path of a script: same records, copies, refusals and semantics as the slow one.

A sync script steps each tool call's coroutine in its own greenlet (no switch
when the call never waits), flat ``**kwargs`` are used as the JSON copy, and
the per-call records are built without the frozen dataclasses' ``__init__``.
"""

from __future__ import annotations

import collections
import contextvars
import dataclasses
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from greenlet import greenlet  # type: ignore[import-untyped]

from scriptgate.runtime.pipeline import ToolCallOutcome
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AgentToolResult,
    BeforeToolCallResult,
    ImageContent,
    TextContent,
    ToolCall,
)
from scriptgate.sandbox.bridge import (
    SMALL_FLAT_BYTES,
    HostToolBridge,
    ToolReply,
    _reply,
    _tool_call,
    json_copy,
    json_size,
    slot_setters,
    small_flat,
)
from scriptgate.sandbox.engine import _Call
from scriptgate.sandbox.records import record_arguments
from scriptgate.sandbox.result import CallRecord, Limits
from scriptgate.sandbox.sandbox import Sandbox

OPEN = {"type": "object", "additionalProperties": True}


def _tool(name: str, execute: Any, **kwargs: Any) -> AgentTool:
    return AgentTool(name=name, description=name, parameters=OPEN, execute=execute, **kwargs)


async def _echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
    return AgentToolResult.text(repr(sorted(params.items())))


# ----------------------------------------------------------------------------- records


def test_callpath_fast_records_equal_the_dataclass_constructors() -> None:
    record = _Call("s/1", "t", {"a": 1})
    record.status, record.duration_ms, record.error = "error", 3, "bad"
    assert record.record() == CallRecord("s/1", "t", {"a": 1}, "error", 3, "bad")
    unfinished = _Call("s/2", "t", {}).record()
    assert unfinished == CallRecord("s/2", "t", {}, "cancelled", None, None)
    assert _reply("ok", [1], None, 2) == ToolReply(status="ok", value=[1], duration_ms=2)
    assert _reply("blocked", None, "no", None) == ToolReply(status="blocked", error="no")
    assert _tool_call("c", "t", {"x": 1}) == ToolCall(id="c", name="t", arguments={"x": 1})
    # still frozen, still hashable like the real thing
    with pytest.raises(dataclasses.FrozenInstanceError):
        unfinished.status = "ok"  # type: ignore[misc]
    assert hash(_reply("ok", "x", None, 1)) == hash(ToolReply("ok", "x", None, 1))


def test_callpath_slot_setters_follow_the_fields_and_refuse_post_init() -> None:
    for cls in (CallRecord, ToolReply, ToolCall):
        assert len(slot_setters(cls)) == len(dataclasses.fields(cls))

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        n: int

        def __post_init__(self) -> None:
            assert self.n >= 0

    with pytest.raises(AssertionError):
        slot_setters(Checked)


# ----------------------------------------------------------------------------- arguments


def test_callpath_small_flat_json_is_never_above_its_bound() -> None:
    # the worst case: 16 keys and values of 1,000 control characters (6 bytes each)
    worst = {f"{i:\x01>1000}": "\x01" * 1000 for i in range(16)}
    assert small_flat(worst)
    assert json_size(worst) <= SMALL_FLAT_BYTES
    assert not small_flat({"_private": 1})  # argument names refused by the slow path


ARGUMENTS: list[tuple[str, Any]] = [
    ("echo(i=1, s='x', f=1.5, b=True, n=None)", {"i": 1, "s": "x", "f": 1.5, "b": True, "n": None}),
    ("echo({'i': 1})", {"i": 1}),
    ("echo(**{'i': 1})", {"i": 1}),
    ("echo()", {}),
    ("echo(l=[1, (2, 3)], d={'k': {'j': None}})", {"l": [1, [2, 3]], "d": {"k": {"j": None}}}),
    ("echo(c=Counter('aab'))", {"c": {"a": 2, "b": 1}}),
    ("echo(p=namedtuple('P', 'x y')(1, 2))", {"p": [1, 2]}),
    ("echo(**Counter('ab'))", {"a": 1, "b": 1}),
    ("echo(big=1 << 70)", {"big": 1 << 70}),
    ("echo(long='y' * 5000)", {"long": "y" * 5000}),
    ("echo(**{f'k{i}': i for i in range(40)})", {f"k{i}": i for i in range(40)}),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("call", "expected"), ARGUMENTS)
async def test_callpath_arguments_are_the_json_copy_on_every_path(call: str, expected: Any) -> None:
    seen: list[Any] = []

    async def echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        seen.append(params)
        return AgentToolResult.text("ok")

    source = f"from collections import Counter, namedtuple\n{call}"
    for script in (source, source.replace("echo(", "await echo(")):
        seen.clear()
        result = await Sandbox([_tool("echo", echo)]).run(script)
        assert result.ok, result.error
        # the tool saw the full copy; the record keeps long values described (capped)
        kept = record_arguments(expected)
        assert result.calls[0].arguments == kept
        assert seen == [expected]
        assert type(result.calls[0].arguments) is dict
        assert json_copy(result.calls[0].arguments) == kept


REFUSED: list[tuple[str, str]] = [
    ("echo(s={1, 2})", "is a set, which is not JSON data"),
    ("echo(_x=1)", 'argument "_x" is not allowed'),
    ("echo({'_x': 1})", 'argument "_x" is not allowed'),
    ("echo({1: 2})", "has a key of type int"),
    ("echo(Counter(a=1))", "takes keyword arguments, or a single dict"),
    ("echo(x=[[0] * 1000] * 100000)", "too large"),
    ("echo(f=len)", "which is not JSON data"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("call", "message"), REFUSED)
async def test_callpath_non_json_and_huge_arguments_are_refused(call: str, message: str) -> None:
    ran: list[Any] = []

    async def echo(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        ran.append(params)  # pragma: no cover - never reached
        return AgentToolResult.text("ok")  # pragma: no cover

    result = await Sandbox([_tool("echo", echo)]).run(f"from collections import Counter\n{call}")
    assert result.error is not None
    assert message in result.error.message, result.error
    assert ran == []
    assert result.calls == ()


@pytest.mark.anyio
async def test_callpath_hooks_and_tools_cannot_change_the_record_or_the_script_value() -> None:
    def before(ctx: Any, signal: Any) -> None:
        ctx.tool_call.arguments["i"] = "hook"
        ctx.args["i"] = "args"

    async def mutate(
        tool_call_id: str, params: Any, signal: Any, on_update: Any
    ) -> AgentToolResult:
        params["i"] = "tool"
        return AgentToolResult.text("ok")

    sandbox = Sandbox([_tool("mutate", mutate)], before_tool_call=before)
    source = "d = {'i': 1}\nmutate(d)\nmutate(i=2)\nmutate(**d)\nd['i'] = 3\nd"
    for script in (source, source.replace("mutate(", "await mutate(")):
        result = await sandbox.run(script)
        assert result.ok, result.error
        assert result.value == {"i": 3}
        assert [c.arguments for c in result.calls] == [{"i": 1}, {"i": 2}, {"i": 1}]


# ----------------------------------------------------------------------------- results


def _outcome(result: AgentToolResult, **kwargs: Any) -> ToolCallOutcome:
    kwargs.setdefault("is_error", False)
    return ToolCallOutcome(ToolCall(id="c", name="t"), result, duration_ms=4, **kwargs)


def test_callpath_convert_fast_and_slow_paths_agree() -> None:
    plain = _tool("t", _echo)
    typed = _tool("s", _echo, output_schema={"type": "object"})
    bridge = HostToolBridge([plain, typed], max_result_bytes=100)
    text = AgentToolResult.text("hi")
    assert bridge.convert("t", _outcome(text)) == ToolReply("ok", "hi", None, 4)
    two = AgentToolResult(
        content=(TextContent("a"), ImageContent("x", "image/png"), TextContent("b"))
    )
    assert bridge.convert("t", _outcome(two)) == ToolReply("ok", "a\nb", None, 4)
    assert bridge.convert("t", _outcome(text), cancelled=True) == ToolReply(
        "cancelled", None, "hi", 4
    )
    assert bridge.convert("t", _outcome(text, is_error=True)) == ToolReply("error", None, "hi", 4)
    assert bridge.convert("t", _outcome(text, is_error=True, blocked=True)) == ToolReply(
        "blocked", None, "hi", 4
    )
    over = AgentToolResult.text("z" * 101)
    assert bridge.convert("t", _outcome(over)).error == (
        'Tool "t" returned 103 bytes, more than the limit of 100 bytes for a script'
    )
    assert bridge.convert("t", _outcome(AgentToolResult.text("é" * 30))).value == "é" * 30
    data = {"_k": [1, {"v": "w"}]}
    structured = AgentToolResult(content=(TextContent("s"),), structured_content=data)
    reply = bridge.convert("s", _outcome(structured))
    assert reply == ToolReply("ok", data, None, 4)
    assert reply.value is not data
    assert reply.value["_k"] is not data["_k"]
    # the tool without an output schema gives the text, not the structured content
    assert bridge.convert("t", _outcome(structured)).value == "s"


def test_callpath_small_structured_results_skip_the_size_measure_only_under_a_large_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from scriptgate.sandbox import bridge as bridge_module

    measured: list[Any] = []

    def counting_size(value: Any) -> int:
        measured.append(value)
        return json_size(value)

    monkeypatch.setattr(bridge_module, "json_size", counting_size)
    typed = _tool("s", _echo, output_schema={"type": "object"})
    flat = {"k": "v" * 80}
    result = AgentToolResult(content=(), structured_content=flat)
    assert HostToolBridge([typed]).convert("s", _outcome(result)).value == flat
    roomy = HostToolBridge([typed], max_result_bytes=SMALL_FLAT_BYTES)
    assert roomy.convert("s", _outcome(result)).value == flat
    assert measured == []
    # a cap below the flat bound still measures: 88 bytes > 50
    tight = HostToolBridge([typed], max_result_bytes=50)
    assert tight.convert("s", _outcome(result)).error == (
        'Tool "s" returned 88 bytes, more than the limit of 50 bytes for a script'
    )
    # and so does anything that is not a small flat dict
    nested = AgentToolResult(content=(), structured_content={"k": [1]})
    assert roomy.convert("s", _outcome(nested)).value == {"k": [1]}
    assert measured == [flat, {"k": [1]}]


# ----------------------------------------------------------------------------- the greenlet


CALLER = contextvars.ContextVar("CALLER", default="unset")
TOOL = contextvars.ContextVar("TOOL", default="unset")


@pytest.mark.anyio
@pytest.mark.parametrize("waits", [0, 3])
async def test_callpath_tools_run_in_the_callers_context(waits: int) -> None:
    seen: list[tuple[str, str]] = []

    async def probe(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        seen.append((CALLER.get(), TOOL.get()))
        for _ in range(waits):
            await anyio.lowlevel.checkpoint()
        TOOL.set(f"call {params['n']}")
        return AgentToolResult.text(CALLER.get())

    def before(ctx: Any, signal: Any) -> None:
        seen.append(("hook", CALLER.get()))

    CALLER.set("host")
    result = await Sandbox([_tool("probe", probe)], before_tool_call=before).run(
        "[probe(n=1), probe(n=2)]"
    )
    assert result.ok, result.error
    assert result.value == ["host", "host"]
    assert seen == [("hook", "host"), ("host", "unset"), ("hook", "host"), ("host", "call 1")]
    assert TOOL.get() == "call 2"  # as when the tool is awaited by the host itself


@pytest.mark.anyio
async def test_callpath_a_waiting_call_stays_in_one_greenlet_across_its_waits() -> None:
    # Code that remembers its greenlet (SQLAlchemy's asyncio layer does) keeps
    # working: every step of a call runs in the same greenlet.
    greenlets: list[Any] = []

    async def steps(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        for _ in range(3):
            greenlets.append(greenlet.getcurrent())
            await anyio.lowlevel.checkpoint()
        greenlets.append(greenlet.getcurrent())
        return AgentToolResult.text("done")

    result = await Sandbox([_tool("steps", steps)]).run("steps() + steps()")
    assert result.ok, result.error
    assert result.value == "donedone"
    assert len(greenlets) == 8
    assert len(set(greenlets)) == 1


@pytest.mark.anyio
async def test_callpath_a_tool_can_run_a_sync_script_that_waits() -> None:
    # nested runs: each sync script has its own greenlet; the inner tool waits
    # for an event another task sets, so both scripts' calls really suspend
    go = anyio.Event()

    async def wait(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        await go.wait()
        return AgentToolResult.text("inner")

    inner = Sandbox([_tool("wait", wait)])

    async def nest(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        result = await inner.run("wait() + '!'")
        assert result.ok, result.error
        return AgentToolResult.text(result.value)

    box: dict[str, Any] = {}

    async def outer() -> None:
        box["result"] = await Sandbox([_tool("nest", nest)]).run("nest() + nest()")

    async with anyio.create_task_group() as tg:
        tg.start_soon(outer)
        await anyio.lowlevel.checkpoint()
        go.set()
    assert box["result"].ok, box["result"].error
    assert box["result"].value == "inner!inner!"


class _Boom(BaseException):
    """Not an Exception: the pipeline lets it through."""


@pytest.mark.anyio
@pytest.mark.parametrize("waits", [False, True])
async def test_callpath_a_base_exception_from_a_tool_ends_the_run_as_before(waits: bool) -> None:
    async def boom(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        if waits:
            await anyio.lowlevel.checkpoint()
        raise _Boom

    ran: list[str] = []

    async def ok(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        ran.append("ok")  # pragma: no cover - the script unwinds without calling it
        return AgentToolResult.text("ok")  # pragma: no cover

    sandbox = Sandbox([_tool("boom", boom), _tool("ok", ok)])
    result = await sandbox.run("try:\n    boom()\nfinally:\n    ok()")
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("aborted", "Execution cancelled")
    assert [(c.tool, c.status) for c in result.calls] == [("boom", "cancelled")]
    assert ran == []


@pytest.mark.anyio
async def test_callpath_abort_while_a_sync_call_waits_fires_the_tools_signal() -> None:
    from scriptgate.runtime.abort import AbortController

    controller = AbortController()
    entered = anyio.Event()
    reasons: list[Any] = []

    async def hang(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        signal.add_listener(reasons.append)
        entered.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")  # pragma: no cover

    box: dict[str, Any] = {}

    async def run() -> None:
        box["result"] = await Sandbox([_tool("hang", hang)], limits=Limits(timeout=30)).run(
            "try:\n    hang()\nexcept:\n    pass\n'swallowed'", signal=controller.signal
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await entered.wait()
        controller.abort("stop")
    result = box["result"]
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("aborted", "stop")
    assert reasons == ["stop"]
    assert [c.status for c in result.calls] == ["cancelled"]


@pytest.mark.anyio
async def test_callpath_blocked_and_failing_calls_raise_in_the_script() -> None:
    def before(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
        return BeforeToolCallResult(block=True, reason="nope") if ctx.args.get("deny") else None

    async def fail(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        raise ValueError("broken")

    sandbox = Sandbox([_tool("fail", fail)], before_tool_call=before)
    source = (
        "out = []\n"
        "for kw in ({'deny': True}, {}):\n"
        "    try:\n"
        "        fail(**kw)\n"
        "    except ToolDenied as e:\n"
        "        out.append(['denied', str(e)])\n"
        "    except ToolError as e:\n"
        "        out.append(['error', str(e)])\n"
        "out"
    )
    for script in (source, source.replace("fail(**kw)", "await fail(**kw)")):
        result = await sandbox.run(script)
        assert result.ok, result.error
        assert result.value == [["denied", "nope"], ["error", "broken"]]
        assert [c.status for c in result.calls] == ["blocked", "error"]
        assert collections.Counter(c.duration_ms is None for c in result.calls) == {
            True: 1,
            False: 1,
        }
