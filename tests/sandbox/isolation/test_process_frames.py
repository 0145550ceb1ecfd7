"""Process isolation's frames: the hand-built call and reply frames, decoding, text UTF-8 cannot carry.

The call frame (worker) and the reply frame (parent) are built as text instead of
through the JSON encoder; these tests pin that they are byte for byte what the
encoder makes, that they refuse what it refuses, and that frames are decoded
strictly (a frame is exactly one JSON object). A lone surrogate, which a
script's or a tool's ``str`` may hold, crosses the boundary in both directions
and gives what an in-process run gives.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentToolResult, TextContent
from scriptgate.sandbox.bridge import HostToolBridge, ToolReply, tool_specs
from scriptgate.sandbox.engine import run_script
from scriptgate.sandbox.isolation import framing, worker_bridge, worker_channel, worker_jobs
from scriptgate.sandbox.isolation import parent as process
from scriptgate.sandbox.isolation.parent import ProcessRunner
from scriptgate.sandbox.result import CallRecord, Limits, ScriptResult

LIMITS = Limits(timeout=20.0, memory_bytes=512 << 20)


def _frame(message: dict[str, Any]) -> bytes:
    data = json.dumps(message).encode()
    return len(data).to_bytes(4, "big") + data


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    ours, theirs = socket.socketpair()
    yield ours, theirs
    ours.close()
    theirs.close()


# ----------------------------------------------------------------------------- the call frame


@pytest.mark.parametrize(
    "arguments",
    [
        {},
        {"n": 1, "text": 'quote " backslash \\ newline \n é 中', "flag": True, "off": False},
        {"none": None, "big": 2**70, "negative": -5},
        {"ratio": 1.5},  # floats go through the encoder
        {"nested": {"a": [1, 2, {"b": None}]}},
        {"items": [1, "two"]},
        {1: "an int key"},  # the encoder writes it as "1"
        {"nan": float("nan"), "inf": float("inf")},
    ],
)
def test_process_call_frame_is_the_frame_the_encoder_makes(arguments: dict[Any, Any]) -> None:
    built = worker_channel._call_frame("script/7", "my-tool", arguments)
    message = {"op": "call", "id": "script/7", "tool": "my-tool", "args": arguments}
    assert built == worker_channel._Channel.encode(message)
    assert built == worker_channel._call_frame("script/7", "my-tool", arguments, '"my-tool"')


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"x": object()}, TypeError),
        ({"x": 10**5000}, ValueError),  # more digits than int -> str allows
        ({"x": {"deep": object()}}, TypeError),
    ],
)
def test_process_call_frame_refuses_what_the_encoder_refuses(
    arguments: dict[str, Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        worker_channel._call_frame("script/1", "t", arguments)
    with pytest.raises(error):
        worker_channel._Channel.encode(
            {"op": "call", "id": "script/1", "tool": "t", "args": arguments}
        )


@pytest.mark.anyio
async def test_process_bridge_refuses_arguments_the_frame_cannot_carry(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, _theirs = pair
    bridge = worker_bridge.PipeToolBridge(worker_channel._Channel(ours), wait=30.0)
    reply = await bridge.call("c1", "ping", {"x": object()})
    assert reply.status == "error"
    assert reply.error is not None
    assert "not JSON data" in reply.error


def test_process_call_frame_escapes_a_lone_surrogate() -> None:
    frame = worker_channel._call_frame("script/1", "t", {"text": "a\ud800b"})
    message = json.loads(frame[4:])
    assert message["args"] == {"text": "a\ud800b"}
    assert frame[4:].isascii()


# ----------------------------------------------------------------------------- the reply frame


@pytest.mark.parametrize(
    "reply",
    [
        ToolReply("ok", "pong", None, 0),
        ToolReply("ok", 'é 中 " \\ \n', None, 12),
        ToolReply("error", None, 'Tool "x" failed: bad "input"', None),
        ToolReply("blocked", None, "denied", 3),
        ToolReply("ok", {"a": [1, 2.5, None, True]}, None, 7),
        ToolReply("ok", 1.5, None, None),
        ToolReply("ok", float("nan"), None, 1),
        ToolReply("ok", False, None, 0),
        ToolReply("cancelled", None, "cancelled", 2**40),
    ],
)
def test_process_reply_frame_is_the_frame_the_encoder_makes(reply: ToolReply) -> None:
    payload = reply.to_json()
    expected = process._frame({"op": "reply", "id": "script/3", "reply": payload})
    assert process._reply_frame("script/3", reply.status, reply) == expected


def test_process_reply_frame_sends_the_status_it_is_given() -> None:
    reply = ToolReply("weird", "v", None, 1)  # type: ignore[arg-type]
    message = json.loads(process._reply_frame("s/1", "error", reply)[4:])
    assert message == {
        "op": "reply",
        "id": "s/1",
        "reply": {"status": "error", "value": "v", "error": None, "duration_ms": 1},
    }


def test_process_reply_frame_refuses_a_value_that_is_not_json() -> None:
    with pytest.raises(TypeError):
        process._reply_frame("s/1", "ok", ToolReply("ok", object(), None, 1))


def test_process_reply_frame_escapes_a_lone_surrogate() -> None:
    frame = process._reply_frame("s/1", "ok", ToolReply("ok", "\udfff", None, 1))
    assert json.loads(frame[4:])["reply"]["value"] == "\udfff"


# ----------------------------------------------------------------------------- strict decoding


def test_process_parent_refuses_a_frame_with_data_after_the_json(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, _theirs = pair
    worker = process._Worker(0, ours, "", 1 << 20)
    data = b'{"op":"call","id":"a","tool":"t","args":{}} {"op":"x"}'
    worker.buf += len(data).to_bytes(4, "big") + data
    with pytest.raises(process._ProtocolError, match="extra data"):
        worker._parse()


@pytest.mark.parametrize("payload", [b"[1, 2]", b'"text"', b"{", b"\xff\xfe"])
def test_process_parent_refuses_a_frame_that_is_not_one_json_object(
    pair: tuple[socket.socket, socket.socket], payload: bytes
) -> None:
    ours, _theirs = pair
    worker = process._Worker(0, ours, "", 1 << 20)
    worker.buf += len(payload).to_bytes(4, "big") + payload
    with pytest.raises(process._ProtocolError):
        worker._parse()


def test_process_worker_closes_the_channel_on_a_frame_with_data_after_the_json(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    channel = worker_channel._Channel(ours)
    data = b'{"op":"reply","id":"a","reply":{}}[]'
    theirs.sendall(len(data).to_bytes(4, "big") + data)
    assert channel.poll(30.0) is None
    assert channel.at_eof()


def test_process_worker_poll_reads_a_frame_alone_in_its_read_and_two_in_one(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    ours, theirs = pair
    channel = worker_channel._Channel(ours)
    first = {"op": "reply", "id": "a", "reply": {"status": "ok", "value": "é"}}
    theirs.sendall(_frame(first))
    assert channel.poll(30.0) == first  # exactly one frame: decoded from the read itself
    assert not channel._buf
    second, third = {"op": "abort", "reason": "r"}, {"op": "reply", "id": "b", "reply": {}}
    theirs.sendall(_frame(second) + _frame(third))
    assert channel.poll(30.0) == second
    assert channel.poll(0.0) == third  # the rest of the read, from the buffer
    assert not channel.at_eof()


@pytest.mark.parametrize(
    ("calls", "what"),
    [
        ([["a", "t", {}, [], None, None]], "call status"),  # unhashable
        ([["a", "t", {}, "done", None, None]], "call status"),
        ([[1, "t", {}, "ok", None, None]], "call id/tool"),
        ([["a", "t", {}, "ok", True, None]], "duration"),
        ([["a", "t", {}, "ok", 1.5, None]], "duration"),
        ([["a", "t", {}, "ok", 1, 5]], "duration/error"),
        ([["a", "t", {}, "ok", 1]], r"\(call\)"),  # a field short
        ([{"id": "a", "tool": "t", "status": "ok"}], r"\(call\)"),  # an object
        (["not a record"], "names an unanswered call"),  # an id this side did not answer
    ],
)
def test_process_result_with_a_malformed_call_record_is_a_protocol_error(
    calls: list[Any], what: str
) -> None:
    data = {"ok": True, "output": "", "wall_time": 0.1, "calls": calls}
    with pytest.raises(process._ProtocolError, match=what):
        process._result_from_json(data)


def test_process_result_with_an_unhashable_error_kind_is_a_protocol_error() -> None:
    data = {"ok": False, "error": {"kind": ["limit"], "type": "X", "message": "m"}}
    with pytest.raises(process._ProtocolError, match=r"error\.kind"):
        process._result_from_json(data)


def test_process_result_call_records_are_rebuilt_field_by_field() -> None:
    records = (
        CallRecord("s/1", "t", {"a": [1, {"b": None}]}, "ok", 3, None),
        # (a call the worker never sent: the parent's words, not the worker's)
        CallRecord("s/2", "u", {}, "error", None, framing.UNSENT_ERROR),
        CallRecord("s/3", "v", {"x": "é"}, "cancelled", 0, "cancelled"),
    )
    result = ScriptResult(ok=True, value={"v": 1}, output="out\n", calls=records, wall_time=0.5)
    data = json.loads(json.dumps(worker_jobs._result_json(result)))
    assert data["calls"][0] == ["s/1", "t", {"a": [1, {"b": None}]}, "ok", 3, None]
    # an "ok" record is only believed for a call the parent itself ran (issue 13)
    ran = process._Call("s/1", "t", {"a": [1, {"b": None}]})
    ran.status, ran.duration_ms, ran.error = "ok", 3, None
    assert process._result_from_json(data, {"s/1": ran}) == result
    with pytest.raises(process._ProtocolError, match="never ran"):
        process._result_from_json(data)


# ----------------------------------------------------------------------------- end to end


async def _echo(call_id: str, params: Any, signal: AbortSignal | None, on_update: Any) -> Any:
    return AgentToolResult(content=(TextContent(params["text"] + "!"),))


ECHO = AgentTool(
    name="echo",
    description="echo",
    parameters={"type": "object", "properties": {"text": {"type": "string"}}},
    execute=_echo,
)


@pytest.mark.anyio
async def test_process_lone_surrogates_cross_both_ways_as_in_process() -> None:
    source = "s = '\\ud800'\nprint(s)\nr = echo(text=s)\n{'back': r, 'sent': s}"
    bridge = HostToolBridge([ECHO])
    specs = tool_specs([ECHO])
    local = await run_script(source, bridge=bridge, tools=specs, limits=LIMITS)
    async with ProcessRunner(LIMITS, pool_size=1) as runner:
        remote = await runner.run(source, bridge=bridge, tools=specs)
        again = await runner.run("1 + 1", bridge=bridge, tools=specs)
    assert local.ok, local.error
    assert remote.ok, remote.error
    assert remote.value == local.value == {"back": "\ud800!", "sent": "\ud800"}
    assert remote.output == local.output == "\ud800\n"
    assert [(c.arguments, c.status) for c in remote.calls] == [({"text": "\ud800"}, "ok")]
    assert again.value == 2  # the worker is still there


@pytest.mark.anyio
async def test_process_source_with_a_lone_surrogate_is_refused_as_in_process() -> None:
    source = "x = '\ud800'\nlen(x)"  # the character itself, not an escape
    bridge = HostToolBridge([])
    local = await run_script(source, bridge=bridge, tools=[], limits=LIMITS)
    async with ProcessRunner(LIMITS, pool_size=1) as runner:
        remote = await runner.run(source, bridge=bridge, tools=[])  # (it raised before)
    assert local.error is not None
    assert remote.error == local.error
