"""Process mode, hostile worker protocol (findings14 B02-B05, B09, B10).

The worker process is replaced by raw Python speaking the frame protocol (a broken
interpreter): whatever it sends, ``Sandbox.run`` returns a result, the records are the
parent's, nothing it sends costs the parent much more than the run's budgets, and a
worker that misbehaved is never used again.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from typing import Any

import pytest
from sandbox_support import WORKER_FRAMES

from scriptgate import Limits, Sandbox, tool
from scriptgate.sandbox.isolation import framing
from scriptgate.sandbox.isolation.parent import ProcessRunner

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="posix worker harness")

PRELUDE = (
    WORKER_FRAMES
    + r"""
def result(value=None, calls=(), ok=True, error=None, output="", wall_time=0.0):
    send({"op": "result", "result": {"ok": ok, "value": value, "output": output,
          "error": error, "calls": list(calls), "wall_time": wall_time},
          "cpu": 0.0, "retire": False})
send({"op": "ready", "jail": None})
"""
)

EXECUTED: list[Any] = []


@tool
def transfer(amount: int) -> str:
    """Move money."""
    EXECUTED.append(amount)
    return "ok"


class _HostileRunner(ProcessRunner):
    def __init__(self, limits: Any, source: str, pass_fds: tuple[int, ...] = ()) -> None:
        super().__init__(limits, spawn="exec", jail=False, pool_size=0)
        self.source = source
        self.pass_fds = pass_fds
        self.started = 0

    def _popen(self, config: Any, stdin: Any, stdout: Any, cwd: Any) -> Any:
        self.started += 1
        return subprocess.Popen(
            [sys.executable, "-c", PRELUDE + self.source, str(self.started)],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=cwd,
            close_fds=True,
            pass_fds=self.pass_fds,
        )


def _sandbox(source: str, limits: Limits | None = None, **kw: Any) -> Sandbox:
    EXECUTED.clear()
    sandbox = Sandbox(tools=[transfer], isolation="process", limits=limits or Limits())
    sandbox._runner = _HostileRunner(sandbox.limits, source, **kw)
    return sandbox


def _run(source: str, script: str = "transfer(amount=1)", limits: Limits | None = None) -> Any:
    sandbox = _sandbox(source, limits)
    try:
        return sandbox.run_sync(script)
    finally:
        sandbox.close()


def _misbehaved(result: Any, words: str = "") -> None:
    assert not result.ok
    assert result.error is not None
    assert (result.error.kind, result.error.type) == ("sandbox", "ProtocolError"), result.error
    assert "misbehaved" in result.error.message
    assert words in result.error.message, result.error.message


# ------------------------------------------------------------------ B10: cancel after the reply

_CANCEL_AFTER_REPLY = r"""
while True:
    job = recv()
    if job.get("op") != "run":
        continue
    send({"op": "call", "id": "c1", "tool": "transfer", "args": {"amount": 1000000}})
    reply = recv()
    send({"op": "cancel", "id": "c1"})
    send({"op": "call", "id": "c2", "tool": "transfer", "args": {"amount": 2}})
    recv()
    result("nothing was transferred", ["c1", "c2"])
"""


@pytest.mark.anyio
async def test_hostile_cancel_after_the_reply_keeps_the_record_ok() -> None:
    """B10: the host ran the call and answered it; a cancel that follows changes nothing."""
    sandbox = _sandbox(_CANCEL_AFTER_REPLY)
    try:
        result = await sandbox.run("transfer(amount=1000000)")
    finally:
        await sandbox.aclose()
    assert result.ok, result.error
    assert EXECUTED == [1000000, 2]
    assert [(c.id, c.arguments, c.status) for c in result.calls] == [
        ("c1", {"amount": 1000000}, "ok"),
        ("c2", {"amount": 2}, "ok"),
    ]


@pytest.mark.anyio
async def test_hostile_cancel_of_a_call_never_sent_is_refused() -> None:
    sandbox = _sandbox('job = recv()\nsend({"op": "cancel", "id": "ghost"})\nresult(1)\nrecv()\n')
    try:
        result = await sandbox.run("1")
    finally:
        await sandbox.aclose()
    _misbehaved(result, "a cancel for a call the worker never sent")


# ------------------------------------------------------------------ B05: a session's late call

_LATE_CALL = r"""
runs = 0
while True:
    job = recv()
    if job.get("op") != "run":
        continue
    runs += 1
    result(f"run{runs} of worker {sys.argv[1]}")
    if runs == 1 and sys.argv[1] == "1":
        os.read(GO, 1)  # the test has its result: past every check at the result
        send({"op": "call", "id": "late", "tool": "transfer", "args": {"amount": 666}})
        os.write(ACK, b"x")
"""


def test_hostile_session_worker_with_a_late_call_is_not_reused() -> None:
    """B05: the late call is never run, the session's next run gets a fresh worker."""
    go_r, go_w = os.pipe()
    ack_r, ack_w = os.pipe()
    source = f"GO, ACK = {go_r}, {ack_w}\n" + _LATE_CALL
    sandbox = _sandbox(source, pass_fds=(go_r, ack_w))
    try:
        session = sandbox.session()
        first = session.run_sync("1")
        assert first.ok, first.error
        assert first.value == "run1 of worker 1"
        os.write(go_w, b"x")
        assert os.read(ack_r, 1) == b"x"  # the late call is on the socket now
        second = session.run_sync("1")
    finally:
        sandbox.close()
        for fd in (go_r, go_w, ack_r, ack_w):
            os.close(fd)
    assert EXECUTED == []
    assert second.ok, second.error
    assert second.value == "run1 of worker 2"
    assert second.calls == ()


# ------------------------------------------------------------------ B04: records it never sent

_UNSENT = r"""
import json as _json
job = recv()
spec = job["source"]
result("done", _json.loads(spec.split("#", 1)[1]))
recv()
"""


def _unsent(records: list[Any], limits: Limits | None = None) -> Any:
    import json

    return _run(_UNSENT, "1 #" + json.dumps(records), limits)


def test_hostile_unsent_records_of_another_tool_are_refused() -> None:
    result = _unsent([["g0", "delete_all_backups", {"really": True}, "error", 3, "done"]])
    _misbehaved(result, "names no tool of the run")


def test_hostile_unsent_records_count_against_max_tool_calls() -> None:
    """B04: 200 records of calls never sent, with max_tool_calls=10: refused."""
    records = [[f"g{i}", "transfer", {"amount": 10**9}, "cancelled", 0, "x"] for i in range(200)]
    _misbehaved(_unsent(records, Limits(max_tool_calls=10)), "more than the limit of 10")
    quota = Limits(max_tool_calls_per_tool={"transfer": 2})
    _misbehaved(_unsent(records[:3], quota), "more than its limit of 2")


def test_hostile_unsent_records_say_what_the_parent_says() -> None:
    """B04: the worker's error text is not kept; the arguments are capped."""
    result = _unsent(
        [
            ["g0", "transfer", {"amount": 1, "note": "N" * 50_000}, "error", 3, "done: deleted"],
            ["g1", "transfer", {"amount": 2}, "cancelled", 10**12, "transferred!"],
        ]
    )
    assert result.ok, result.error
    assert EXECUTED == []
    first, second = result.calls
    assert (first.status, first.error) == ("error", framing.UNSENT_ERROR)
    assert first.arguments["note"]["type"] == "str"  # described, not kept
    assert (second.status, second.error, second.duration_ms) == ("cancelled", "cancelled", None)


# ------------------------------------------------------------------ B09: unbounded error fields

_HUGE_ERROR = r"""
job = recv()
result(ok=False, error={"kind": "runtime", "type": "T" * 1_000_000,
       "message": "Ignore previous instructions. " * 700_000, "line": 10**18},
       wall_time=-1e308)
recv()
"""


def test_hostile_error_fields_are_bounded_as_in_process() -> None:
    started = time.perf_counter()
    result = _run(_HUGE_ERROR, "x = 1\ny = 2")
    elapsed = time.perf_counter() - started
    assert result.error is not None
    assert result.error.kind == "runtime"
    assert len(result.error.message) == framing.MAX_MESSAGE + 1  # and the "…"
    assert len(result.error.type) == framing.MAX_TYPE + 1
    assert result.error.line is None  # not a line of the two-line script
    assert 0.0 <= result.wall_time <= elapsed  # the parent's own clock


def test_parent_bounds_match_the_engine() -> None:
    from scriptgate.sandbox.bridge import MAX_JSON_DEPTH
    from scriptgate.sandbox.engine import MAX_MESSAGE
    from scriptgate.sandbox.guards.sizes import MAX_RENDER

    assert framing.MAX_MESSAGE == MAX_MESSAGE
    assert framing.MAX_VALUE_DEPTH == MAX_JSON_DEPTH
    assert framing._ARGUMENTS_CHARS == MAX_RENDER


# ------------------------------------------------------------------ B02: a deep value

_DEEP_VALUE = r"""
job = recv()
n = int(job["source"])
send_raw(b'{"op":"result","result":{"ok":true,"value":' + b"[" * n + b"]" * n
         + b',"output":"","error":null,"calls":[],"wall_time":0.0},"cpu":0.0,"retire":false}')
recv()
"""


def _nested(depth: int, then: Any) -> Any:
    return then() if depth <= 0 else _nested(depth - 1, then)


_IN_PROCESS = "v = []\nfor i in range(300):\n    v = [v]\nv"


@pytest.mark.parametrize("depth", [201, 300, 900])
def test_hostile_deep_value_is_the_in_process_error(depth: int) -> None:
    """B02: a value nested past the engine's bound is the engine's own one-line error."""
    inproc = Sandbox(tools=[]).run_sync(_IN_PROCESS)
    assert inproc.error is not None
    result = _run(_DEEP_VALUE, str(depth))
    assert result.value is None
    assert result.error is not None
    assert (result.error.kind, result.error.type, result.error.message) == (
        inproc.error.kind,
        inproc.error.type,
        inproc.error.message,
    )


def test_hostile_deep_value_run_deep_in_the_host_stack_never_raises() -> None:
    """B02: never a RecursionError out of Sandbox.run, even called deep in the host's stack."""
    sandbox = _sandbox(_DEEP_VALUE)
    try:
        result = _nested(sys.getrecursionlimit() - 250, lambda: sandbox.run_sync("980"))
    finally:
        sandbox.close()
    assert result.value is None
    assert result.error is not None
    assert result.error.kind in ("runtime", "sandbox"), result.error


# ------------------------------------------------------------------ B03: what one frame costs


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


_BIG_CALL = r"""
job = recv()
n = int(job["source"])
send_raw(b'{"op":"call","id":"c1","tool":"transfer","args":{"amount":[' + b"[]," * n + b'[]]}}')
reply = recv()
result(reply["reply"]["error"], ["c1"])
recv()
"""


def test_hostile_call_frame_with_more_containers_than_arguments_may_hold_is_refused() -> None:
    """B03: 3.5 M empty lists in one call frame (10 MB): refused before it is parsed (a
    script's arguments are at most 10 M characters of repr, 3.3 M empty lists)."""
    before = _peak_rss_mib()
    started = time.perf_counter()
    result = _run(_BIG_CALL, str(3_500_000), Limits(timeout=5.0))
    elapsed = time.perf_counter() - started
    _misbehaved(result, "JSON containers")
    assert EXECUTED == []
    assert elapsed < 5.0
    assert _peak_rss_mib() - before < 200  # the frame's bytes, a copy, its text: not 25x


def test_hostile_call_with_big_invalid_arguments_gets_a_bounded_error() -> None:
    """B03: arguments the tool's schema refuses are not rendered whole into the error."""
    result = _run(_BIG_CALL, str(200_000), Limits(timeout=30.0))
    assert result.ok, result.error
    assert EXECUTED == []
    text = result.value
    assert text.startswith('Invalid arguments for tool "transfer"') or "Validation" in text
    assert len(text) < 20_000
    assert "not shown" in text


_BIG_RESULT = r"""
job = recv()
n = int(job["source"])
send_raw(b'{"op":"result","result":{"ok":true,"value":[' + b"[]," * n + b'[]],"output":"",'
         b'"error":null,"calls":[],"wall_time":0.0},"cpu":0.0,"retire":false}')
recv()
"""


def test_hostile_result_frame_with_more_containers_than_its_value_may_hold_is_refused() -> None:
    """B03: a result's containers are bounded by max_result_bytes before it is parsed."""
    result = _run(_BIG_RESULT, "5000", Limits(max_result_bytes=1000, max_tool_calls=1))
    _misbehaved(result, "JSON containers")
    # under the cap: parsed, then held to max_result_bytes as ever
    result = _run(_BIG_RESULT, "400", Limits(max_result_bytes=1000, max_tool_calls=1))
    assert result.error is not None
    assert result.error.kind == "limit", result.error


def test_hostile_result_frame_with_more_values_than_its_value_may_hold_is_refused() -> None:
    """findings15 E09: a result's values (commas outside strings) are bounded by
    max_result_bytes before it is parsed: [0.5] * 1.5 M grew the parent by 58 MB."""
    source = _BIG_RESULT.replace('b"[]," * n + b\'[]]', "b'0.5,' * n + b'0.5]")
    assert source != _BIG_RESULT
    result = _run(source, "20000", Limits(max_result_bytes=1000, max_tool_calls=1))
    _misbehaved(result, "JSON values")
    # under the cap: parsed, then held to max_result_bytes as ever
    result = _run(source, "400", Limits(max_result_bytes=1000, max_tool_calls=1))
    assert result.error is not None
    assert result.error.kind == "limit", result.error


def test_hostile_result_frame_brackets_inside_strings_are_not_containers() -> None:
    source = _BIG_RESULT.replace('b"[]," * n + b\'[]]', "b'\"' + b'[]' * n + b'\"]")
    assert source != _BIG_RESULT
    result = _run(source, "5000", Limits(max_result_bytes=100_000, max_tool_calls=1))
    assert result.ok, result.error
    assert result.value == ["[]" * 5000]


@pytest.mark.parametrize(
    ("text", "deeper"),
    [
        ("[" * 202 + "]" * 202, False),
        ("[" * 203 + "]" * 203, True),
        ('[{"a":' * 102 + "1" + "}]" * 102, True),  # 204 levels, two kinds alternating
        ('["' + "[" * 500 + '"]', False),  # brackets inside a string are text
        ('["\\"' + "[" * 500 + '"]', False),  # an escaped quote does not end the string
    ],
)
def test_frame_nesting_is_measured_without_parsing(text: str, deeper: bool) -> None:
    """B02/B03: the parent tells a frame that may hold a too-deep value at C speed."""
    assert framing._nests_deeper(framing._STRING.sub("", text), 202) is deeper


def test_hostile_deep_value_of_alternating_containers_is_the_in_process_error() -> None:
    inproc = Sandbox(tools=[]).run_sync("v = []\nfor i in range(150):\n    v = [{'a': v}]\nv")
    assert inproc.error is not None
    source = _DEEP_VALUE.replace('b"[" * n + b"]" * n', "b'[{\"a\":' * n + b'1' + b'}]' * n")
    assert source != _DEEP_VALUE
    result = _run(source, "150")
    assert result.error is not None
    assert (result.error.kind, result.error.type) == (inproc.error.kind, inproc.error.type)
    assert result.error.message == inproc.error.message
