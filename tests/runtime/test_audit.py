"""AuditLog: one JSON line per call, for direct and scripted calls alike."""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from scriptgate.runtime.audit import AuditLog, result_digest
from scriptgate.runtime.hooks import BeforeVerdict, compose_hooks
from scriptgate.runtime.policy import Decision, Policy, Rule
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
)

KEYS = [
    "time",
    "run_id",
    "tool_call_id",
    "tool",
    "arguments",
    "decision",
    "reason",
    "rule",
    "status",
    "duration_ms",
    "result_digest",
]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def _before(call: ToolCall) -> BeforeToolCallContext:
    return BeforeToolCallContext(None, call, dict(call.arguments), None)


def _after(call: ToolCall, result: AgentToolResult, is_error: bool) -> AfterToolCallContext:
    return AfterToolCallContext(None, call, dict(call.arguments), result, is_error, None)


def test_audit_result_digest_is_sha256_of_canonical_json() -> None:
    result = AgentToolResult(content=(TextContent("hé"),), structured_content={"b": 1, "a": [2]})
    canonical = '{"content":[{"text":"hé","type":"text"}],"structured_content":{"a":[2],"b":1}}'
    expected = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert result_digest(result) == expected
    assert result_digest(AgentToolResult.text("x")) != result_digest(AgentToolResult.text("y"))


@pytest.mark.anyio
async def test_audit_writes_one_line_per_call_with_documented_keys() -> None:
    stream = io.StringIO()
    audit = AuditLog(stream, run_id="run-1")
    call = ToolCall("c1", "read", {"path": "a.txt"})
    audit.before_tool_call(_before(call))
    result = AgentToolResult(content=(TextContent("data"),), structured_content={"n": 1})
    audit.after_tool_call(_after(call, result, False))
    failing = ToolCall("c2", "read", {"path": "b.txt"})
    audit.before_tool_call(_before(failing))
    audit.after_tool_call(_after(failing, AgentToolResult.error("boom"), True))
    first, second = _lines(stream)
    assert list(first) == KEYS
    assert TIME.match(first["time"])
    assert first["run_id"] == "run-1"
    assert first["tool_call_id"] == "c1"
    assert first["tool"] == "read"
    assert first["arguments"] == {"path": "a.txt"}
    assert (first["decision"], first["reason"], first["rule"]) == ("allow", None, None)
    assert first["status"] == "ok"
    assert isinstance(first["duration_ms"], int)
    assert first["result_digest"] == result_digest(result)
    assert second["status"] == "error"
    assert audit.lines_written == 2


@pytest.mark.anyio
async def test_audit_composed_with_policy_logs_blocks_and_decisions() -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)
    policy = Policy(
        [Rule("read", "allow", reason="reads ok"), Rule("write", "deny", reason="read-only run")]
    )
    hooks = compose_hooks(policy, audit)
    assert hooks.before_tool_call is not None
    assert hooks.after_tool_call is not None
    read = ToolCall("r", "read", {"path": "a"})
    assert await hooks.before_tool_call(_before(read), None) is None
    await hooks.after_tool_call(_after(read, AgentToolResult.text("x"), False), None)
    write = ToolCall("w", "write", {"path": "a", "content": "x"})
    blocked = await hooks.before_tool_call(_before(write), None)
    assert blocked is not None
    assert blocked.block is True
    other = ToolCall("o", "ls", {})
    await hooks.before_tool_call(_before(other), None)
    ok, denied, default = _lines(stream)
    assert (ok["decision"], ok["reason"], ok["rule"], ok["status"]) == (
        "allow",
        "reads ok",
        0,
        "ok",
    )
    assert denied["tool"] == "write"
    assert denied["arguments"] == {"path": "a", "content": "x"}
    assert (denied["decision"], denied["reason"], denied["rule"]) == ("deny", "read-only run", 1)
    assert denied["status"] == "blocked"
    assert denied["duration_ms"] is None
    assert denied["result_digest"] is None
    assert (default["decision"], default["rule"], default["status"]) == ("deny", None, "blocked")


@pytest.mark.anyio
@pytest.mark.parametrize("audit_first", [True, False])
async def test_audit_logs_blocks_by_other_hooks_whatever_the_order(audit_first: bool) -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)
    veto = (lambda ctx, signal: BeforeToolCallResult(block=True, reason="quota exceeded"), None)
    hooks = compose_hooks(audit, veto) if audit_first else compose_hooks(veto, audit)
    assert hooks.before_tool_call is not None
    await hooks.before_tool_call(_before(ToolCall("c", "read", {})), None)
    (line,) = _lines(stream)
    assert (line["decision"], line["reason"], line["status"]) == (
        "block",
        "quota exceeded",
        "blocked",
    )
    audit.close()
    assert len(_lines(stream)) == 1  # nothing left pending


@pytest.mark.anyio
async def test_audit_logs_a_raising_before_hook_as_error() -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)

    def broken(ctx: BeforeToolCallContext, signal: Any) -> None:
        raise ValueError("hook crashed")

    hooks = compose_hooks(audit, (broken, None))
    assert hooks.before_tool_call is not None
    with pytest.raises(ValueError, match="hook crashed"):
        await hooks.before_tool_call(_before(ToolCall("c", "read", {})), None)
    (line,) = _lines(stream)
    assert (line["decision"], line["reason"], line["status"]) == ("block", "hook crashed", "error")


def test_audit_close_logs_unfinished_calls_as_aborted() -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)
    call = ToolCall("c", "read", {})
    audit.before_tool_call(_before(call))
    audit.observe_verdict(
        _before(call), BeforeVerdict(blocked=False, decision=Decision("allow", "fine", 2))
    )
    with audit:
        pass
    (line,) = _lines(stream)
    assert (line["status"], line["decision"], line["reason"], line["rule"]) == (
        "aborted",
        "allow",
        "fine",
        2,
    )
    audit.after_tool_call(_after(call, AgentToolResult.text("late"), False))
    assert len(_lines(stream)) == 1  # closed: nothing more is written


def test_audit_appends_to_a_file_and_flushes_each_line(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_text('{"earlier": true}\n', encoding="utf-8")
    audit = AuditLog(path, run_id="r")
    call = ToolCall("c", "read", {})
    audit.before_tool_call(_before(call))
    audit.after_tool_call(_after(call, AgentToolResult.text("x"), False))
    lines = path.read_text(encoding="utf-8").splitlines()  # before close: already flushed
    assert len(lines) == 2
    assert json.loads(lines[1])["run_id"] == "r"
    audit.close()
    audit.close()  # idempotent


def test_audit_is_thread_safe() -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)
    per_thread = 200

    def work(worker: int) -> None:
        for n in range(per_thread):
            call = ToolCall(f"{worker}/{n}", "read", {"n": n})
            audit.before_tool_call(_before(call))
            audit.after_tool_call(_after(call, AgentToolResult.text(str(n)), False))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = _lines(stream)
    assert len(lines) == 4 * per_thread
    assert len({line["tool_call_id"] for line in lines}) == 4 * per_thread
    assert all(line["arguments"]["n"] == int(line["tool_call_id"].split("/")[1]) for line in lines)


def test_audit_defaults_to_a_random_run_id() -> None:
    a, b = AuditLog(io.StringIO()), AuditLog(io.StringIO())
    assert re.fullmatch(r"[0-9a-f]{32}", a.run_id)
    assert a.run_id != b.run_id
    before, after = a.hooks()
    assert before == a.before_tool_call
    assert after == a.after_tool_call
    with pytest.raises(TypeError):
        AuditLog(42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- parity


def _parity_tools() -> list[Any]:
    from scriptgate.runtime.tool import AgentTool

    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["path"],
    }

    def fetch(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        if params["path"] == "missing":
            raise FileNotFoundError("no such file: missing")
        return AgentToolResult(
            content=(TextContent(f"{params['path']} x{params.get('n', 1)}"),),
            structured_content={"path": params["path"], "n": params.get("n", 1)},
        )

    def store(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        return AgentToolResult.text("stored")

    return [
        AgentTool(
            name="fetch",
            parameters=schema,
            execute=fetch,
            output_schema={"type": "object"},
        ),
        AgentTool(name="store", parameters=schema, execute=store),
    ]


PARITY_POLICY = """
default = "deny"
[[rules]]
tool = "fetch"
action = "allow"
reason = "fetching is fine"
[[rules]]
tool = "store"
action = "deny"
reason = "read-only"
"""

# The same calls, made directly and from a script (n="2" is coerced to 2 both ways).
PARITY_CALLS = [
    ("fetch", {"path": "a", "n": "2"}),
    ("store", {"path": "b"}),
    ("fetch", {"path": "missing"}),
    ("fetch", {"path": "c"}),
]
PARITY_SCRIPT = """
fetch(path="a", n="2")
try:
    store(path="b")
except ToolDenied:
    pass
try:
    fetch(path="missing")
except ToolError:
    pass
fetch(path="c")
"""


def _comparable(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    varying = {"time", "run_id", "tool_call_id", "duration_ms"}
    return [{k: v for k, v in line.items() if k not in varying} for line in lines]


@pytest.mark.anyio
async def test_audit_direct_and_scripted_calls_write_the_same_lines() -> None:
    from scriptgate.runtime.pipeline import run_tool_call
    from scriptgate.sandbox.sandbox import Sandbox

    tools = _parity_tools()
    policy = Policy.from_toml(PARITY_POLICY)

    direct_stream = io.StringIO()
    with AuditLog(direct_stream) as audit:
        hooks = compose_hooks(policy, audit)
        for n, (name, args) in enumerate(PARITY_CALLS, 1):
            await run_tool_call(
                ToolCall(f"direct/{n}", name, args), tools=tools, **hooks.as_kwargs()
            )

    scripted_stream = io.StringIO()
    with AuditLog(scripted_stream) as audit:
        hooks = compose_hooks(policy, audit)
        async with Sandbox(tools, **hooks.as_kwargs()) as sandbox:
            result = await sandbox.run(PARITY_SCRIPT)
    assert result.ok, result.error

    direct, scripted = _lines(direct_stream), _lines(scripted_stream)
    assert [line["status"] for line in direct] == ["ok", "blocked", "error", "ok"]
    assert direct[0]["arguments"] == {"path": "a", "n": 2}
    assert direct[1]["reason"] == "read-only"
    assert _comparable(direct) == _comparable(scripted)
    assert [line["tool_call_id"] for line in scripted] == [c.id for c in result.calls]


@pytest.mark.anyio
async def test_audit_parallel_batch_logs_every_call_once() -> None:
    """Parallel preflight runs every gate before any execute: pending entries must not mix."""
    from scriptgate.runtime.batch import execute_tool_calls
    from scriptgate.runtime.types import AssistantMessage

    tools = _parity_tools()
    stream = io.StringIO()
    audit = AuditLog(stream)
    hooks = compose_hooks(Policy.from_toml(PARITY_POLICY), audit)
    message = AssistantMessage(
        content=tuple(
            ToolCall(f"call{n}", name, args) for n, (name, args) in enumerate(PARITY_CALLS)
        ),
        stop_reason="toolUse",
    )
    batch = await execute_tool_calls(message, tools=tools, mode="parallel", **hooks.as_kwargs())
    assert len(batch.messages) == 4
    lines = {line["tool_call_id"]: line for line in _lines(stream)}
    assert len(lines) == 4
    assert [lines[f"call{n}"]["status"] for n in range(4)] == ["ok", "blocked", "error", "ok"]
    assert lines["call0"]["arguments"] == {"path": "a", "n": 2}
    assert lines["call3"]["result_digest"] == result_digest(
        AgentToolResult(content=(TextContent("c x1"),), structured_content={"path": "c", "n": 1})
    )
