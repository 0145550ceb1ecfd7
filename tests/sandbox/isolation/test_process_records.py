"""A worker's result names the calls the parent answered instead of repeating their records.

The worker sends a call's record as its id alone when the record is exactly what it
sent and what the parent's reply said; the parent then builds that record from its
own view of the call. Every other record crosses whole. These tests pin both sides
and the end-to-end equivalence with in-process runs.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, BeforeToolCallResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, ToolReply, tool_specs
from scriptgate.sandbox.engine import run_script
from scriptgate.sandbox.isolation import framing, worker_jobs
from scriptgate.sandbox.isolation import parent as process
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import CallRecord, Limits, ScriptResult

LIMITS = Limits(timeout=20.0, memory_bytes=512 << 20)


def _answered(*records: CallRecord) -> dict[str, ToolReply]:
    return {r.id: ToolReply(r.status, None, r.error, r.duration_ms) for r in records}


def test_process_worker_result_names_the_calls_the_parent_answered() -> None:
    args = {"a": 1}
    same = CallRecord("s/1", "t", args, "ok", 3, None)
    failed = CallRecord("s/2", "t", {}, "error", None, "bad")
    answered = _answered(same, failed)
    result = ScriptResult(ok=True, calls=(same, failed))
    data = json.loads(json.dumps(worker_jobs._result_json(result, answered)))
    assert data["calls"] == ["s/1", "s/2"]


@pytest.mark.parametrize(
    "changed",
    [
        {"status": "cancelled"},  # the engine cancelled it after the reply
        {"duration_ms": 4},
        {"error": "other"},
    ],
)
def test_process_worker_result_sends_a_record_that_differs_from_the_reply_whole(
    changed: dict[str, Any],
) -> None:
    sent = CallRecord("s/1", "t", {"a": 1}, "ok", 3, None)
    fields = {
        "id": sent.id,
        "tool": sent.tool,
        "arguments": sent.arguments,
        "status": sent.status,
        "duration_ms": sent.duration_ms,
        "error": sent.error,
    }
    record = CallRecord(**{**fields, **changed})
    result = ScriptResult(ok=True, calls=(record,))
    data = worker_jobs._result_json(result, _answered(sent))
    assert data["calls"] == [
        [record.id, record.tool, record.arguments, record.status, record.duration_ms, record.error]
    ]


def test_process_worker_result_sends_unanswered_calls_whole() -> None:
    record = CallRecord("s/1", "t", {}, "error", None, "tool arguments are not JSON data")
    data = worker_jobs._result_json(ScriptResult(ok=True, calls=(record,)), {})
    assert data["calls"] == [["s/1", "t", {}, "error", None, "tool arguments are not JSON data"]]


def _parent_call(status: Any = "ok") -> process._Call:
    call = process._Call("s/1", "t", {"a": [1]})
    call.status, call.duration_ms, call.error = status, 2, None
    return call


def test_process_parent_builds_a_named_record_from_its_own_call() -> None:
    call = _parent_call()
    data = {
        "ok": True,
        "output": "",
        "wall_time": 0.1,
        "calls": ["s/1", ["s/2", "u", {}, "error", None, "e"]],
    }
    result = process._result_from_json(data, {"s/1": call})
    assert result.calls == (
        CallRecord("s/1", "t", {"a": [1]}, "ok", 2, None),
        CallRecord("s/2", "u", {}, "error", None, framing.UNSENT_ERROR),
    )


@pytest.mark.parametrize("by_id", [None, {}, {"s/1": _parent_call(status=None)}])
def test_process_parent_refuses_a_record_naming_a_call_it_did_not_answer(
    by_id: dict[str, process._Call] | None,
) -> None:
    # a worker cannot make the parent report a call it never ran or never answered
    data = {"ok": True, "output": "", "wall_time": 0.1, "calls": ["s/1"]}
    with pytest.raises(process._ProtocolError, match="names an unanswered call"):
        process._result_from_json(data, by_id)


# ----------------------------------------------------------------------------- end to end


async def _echo(call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> Any:
    if params.get("fail"):
        raise ValueError("it failed")
    return AgentToolResult(content=(TextContent(str(params.get("text", "")) + "!"),))


ECHO = AgentTool(
    name="echo",
    description="echo",
    parameters={
        "type": "object",
        "properties": {"text": {"type": "string"}, "fail": {"type": "boolean"}},
    },
    execute=_echo,
)
GUARDED = AgentTool(name="guarded", description="blocked", execute=_echo)


def _block(ctx: Any, signal: Any) -> BeforeToolCallResult | None:
    return (
        BeforeToolCallResult(block=True, reason="no") if ctx.tool_call.name == "guarded" else None
    )


SOURCE = """
out = [await echo(text='a'), await echo(text='é', fail=False)]
try:
    await echo(fail=True)
except Exception as exc:
    out.append(str(exc))
try:
    await guarded()
except Exception as exc:
    out.append('blocked: ' + str(exc))
try:
    await echo(text=1)
except Exception as exc:
    out.append('invalid')
out.append(await gather(echo(text='x'), echo(text='y')))
out
"""


def _records(result: ScriptResult) -> list[tuple[Any, ...]]:
    # durations are measured times: only whether one is there is compared
    return [
        (r.id, r.tool, r.arguments, r.status, r.duration_ms is None, r.error) for r in result.calls
    ]


@pytest.mark.anyio
async def test_process_call_records_are_those_of_an_in_process_run() -> None:
    tools = [ECHO, GUARDED]
    bridge = HostToolBridge(tools, before_tool_call=_block)
    specs = tool_specs(tools)
    local = await run_script(SOURCE, bridge=bridge, tools=specs, limits=LIMITS)
    assert local.ok, local.error
    async with ProcessRunner(LIMITS, pool_size=1) as runner:
        remote = await runner.run(SOURCE, bridge=bridge, tools=specs)
    assert remote.ok, remote.error
    assert remote.value == local.value
    assert len(remote.calls) == 7
    assert _records(remote) == _records(local)


class _OddBridge:
    """A host bridge whose replies carry values the frames normalise."""

    async def call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> ToolReply:
        if tool_name == "float_duration":
            return ToolReply(status="ok", value="v", duration_ms=1.5)  # type: ignore[arg-type]
        if tool_name == "text_subclass":
            return ToolReply(status="error", error=type("Text", (str,), {})("subclassed"))
        if tool_name == "odd_status":
            return ToolReply(status="weird", error="e")  # type: ignore[arg-type]
        return ToolReply(status="ok", value=object())  # not JSON data


@pytest.mark.anyio
async def test_process_call_records_are_what_the_worker_was_told() -> None:
    names = ["float_duration", "text_subclass", "odd_status", "not_json"]
    tools = [AgentTool(name=n, execute=_echo) for n in names]
    source = "\n".join(f"try:\n    {n}()\nexcept Exception as exc:\n    pass" for n in names)
    async with ProcessRunner(LIMITS, pool_size=1) as runner:
        result = await runner.run(source, bridge=_OddBridge(), tools=tool_specs(tools))
    assert result.ok, result.error
    records = {r.tool: r for r in result.calls}
    assert (records["float_duration"].status, records["float_duration"].duration_ms) == ("ok", None)
    assert type(records["text_subclass"].error) is str
    assert records["text_subclass"].error == "subclassed"
    assert (records["odd_status"].status, records["odd_status"].error) == ("error", "e")
    assert records["not_json"].status == "error"
    assert "not JSON data" in str(records["not_json"].error)
