"""AuditLog: write-ahead intent lines, paired outcome lines, strict bounded JSON, fail-closed."""

from __future__ import annotations

import hashlib
import io
import json
import re
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

import scriptgate
from scriptgate.runtime.audit import AuditLog, AuditWriteError, result_digest
from scriptgate.runtime.batch import execute_tool_calls
from scriptgate.runtime.hooks import compose_hooks
from scriptgate.runtime.pipeline import run_tool_call
from scriptgate.runtime.policy import Policy, Rule
from scriptgate.runtime.strict_json import canonical_bytes
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AgentToolResult,
    AssistantMessage,
    BeforeToolCallContext,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
)

INTENT_KEYS = [
    "event",
    "time",
    "run_id",
    "token",
    "tool_call_id",
    "tool",
    "arguments",
    "replaced",
    "decision",
    "reason",
    "rule",
]
OUTCOME_KEYS = [
    "event",
    "time",
    "run_id",
    "token",
    "tool_call_id",
    "tool",
    "status",
    "duration_ms",
    "result_digest",
    "error",
]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _strict(line: str) -> dict[str, Any]:
    """Parse one line as strict JSON: NaN/Infinity tokens are an error."""

    def refuse(token: str) -> Any:
        raise ValueError(f"not strict JSON: {token}")

    value = json.loads(line, parse_constant=refuse)
    assert isinstance(value, dict)
    return value


def _lines(text: str) -> list[dict[str, Any]]:
    return [_strict(line) for line in text.splitlines()]


def _calls(lines: list[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """token -> (intent, outcome); every intent has exactly one outcome, after it."""
    intents: dict[str, dict[str, Any]] = {}
    paired: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for line in lines:
        if line["event"] == "intent":
            assert line["token"] not in intents
            intents[line["token"]] = line
        else:
            assert line["event"] == "outcome"
            assert line["token"] in intents, "outcome before its intent"
            assert line["token"] not in paired
            paired[line["token"]] = (intents[line["token"]], line)
    assert set(paired) == set(intents)
    return paired


def _schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["path"],
    }


class _Probe:
    """A tool that records, when it runs, what the audit log already holds."""

    def __init__(self, read_log: Any) -> None:
        self.read_log = read_log
        self.seen: list[list[dict[str, Any]]] = []
        self.own: list[bool] = []

    def tool(self, name: str = "probe") -> AgentTool:
        async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            lines = _lines(self.read_log())
            self.seen.append(lines)
            mine = [x for x in lines if x["tool_call_id"] == call_id]
            # its own intent is on disk, with the decision, and still unanswered
            self.own.append(len(mine) == 1 and mine[0]["event"] == "intent")
            return AgentToolResult.text(f"ran {params['path']}")

        return AgentTool(name=name, parameters=_schema(), execute=execute)


# --------------------------------------------------------------------------- format


@pytest.mark.anyio
async def test_audit_writes_intent_then_outcome_with_documented_keys() -> None:
    stream = io.StringIO()
    probe = _Probe(stream.getvalue)
    audit = AuditLog(stream, run_id="run-1")
    hooks = audit.hooks()
    outcome = await run_tool_call(
        ToolCall("c1", "probe", {"path": "a.txt", "n": "2"}),
        tools=[probe.tool()],
        **hooks.as_kwargs(),
    )
    assert not outcome.is_error
    intent, done = _lines(stream.getvalue())
    assert list(intent) == INTENT_KEYS
    assert list(done) == OUTCOME_KEYS
    assert TIME.match(intent["time"])
    assert TIME.match(done["time"])
    assert intent["run_id"] == done["run_id"] == "run-1"
    assert re.fullmatch(r"[0-9a-f]{32}", intent["token"])
    assert intent["token"] == done["token"]
    assert intent["arguments"] == {"path": "a.txt", "n": 2}  # validated and coerced
    assert (intent["decision"], intent["reason"], intent["rule"]) == ("allow", None, None)
    assert intent["replaced"] == []
    assert (done["status"], done["error"]) == ("ok", None)
    assert isinstance(done["duration_ms"], int)
    assert done["result_digest"] == result_digest(outcome.result)
    assert audit.lines_written == 2


def test_audit_result_digest_is_sha256_of_canonical_json() -> None:
    result = AgentToolResult(content=(TextContent("hé"),), structured_content={"b": 1, "a": [2]})
    canonical = '{"content":[{"text":"hé","type":"text"}],"structured_content":{"a":[2],"b":1}}'
    expected = "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert result_digest(result) == expected
    assert result_digest(AgentToolResult.text("x")) != result_digest(AgentToolResult.text("y"))


# --------------------------------------------------------------------------- write-ahead


@pytest.mark.anyio
async def test_audit_intent_line_is_flushed_before_execute_direct_and_batch(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.jsonl"
    probe = _Probe(lambda: path.read_text(encoding="utf-8"))
    tools = [probe.tool()]
    with AuditLog(path) as audit:
        hooks = compose_hooks(Policy([Rule("probe", "allow", reason="ok")]), audit)
        await run_tool_call(ToolCall("d", "probe", {"path": "x"}), tools=tools, **hooks.as_kwargs())
        message = AssistantMessage(
            content=(
                ToolCall("b1", "probe", {"path": "y"}),
                ToolCall("b2", "probe", {"path": "z"}),
            ),
            stop_reason="toolUse",
        )
        await execute_tool_calls(message, tools=tools, mode="parallel", **hooks.as_kwargs())
    assert probe.own == [True, True, True]
    assert all(x["decision"] == "allow" for seen in probe.seen for x in seen if "decision" in x)


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_audit_intent_line_is_flushed_before_execute_in_scripts(
    tmp_path: Path, isolation: str
) -> None:
    path = tmp_path / "audit.jsonl"
    probe = _Probe(lambda: path.read_text(encoding="utf-8"))
    with AuditLog(path) as audit:
        async with scriptgate.Sandbox(
            [probe.tool()],
            isolation=isolation,  # type: ignore[arg-type]
            **compose_hooks(audit).as_kwargs(),
        ) as sandbox:
            result = await sandbox.run("probe(path='a')\nprobe(path='b')")
    assert result.ok, result.error
    assert [seen[-1]["arguments"]["path"] for seen in probe.seen] == ["a", "b"]
    assert probe.own == [True, True]
    pairs = _calls(_lines(path.read_text(encoding="utf-8")))
    assert sorted(outcome["status"] for _intent, outcome in pairs.values()) == ["ok", "ok"]


# --------------------------------------------------------------------------- fail-closed


@pytest.mark.anyio
async def test_audit_unwritable_log_refuses_call_full_disk() -> None:
    if not await anyio.Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    ran: list[str] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        ran.append(params["path"])
        return AgentToolResult.text("wrote")

    tools = [AgentTool(name="write", parameters=_schema(), execute=execute)]
    audit = AuditLog("/dev/full")
    hooks = compose_hooks(Policy([Rule("*", "allow")]), audit)
    first = await run_tool_call(
        ToolCall("1", "write", {"path": "a"}), tools=tools, **hooks.as_kwargs()
    )
    second = await run_tool_call(
        ToolCall("2", "write", {"path": "b"}), tools=tools, **hooks.as_kwargs()
    )
    assert ran == []  # neither call ran
    for outcome in (first, second):
        assert outcome.is_error
        text = outcome.result.content[0].text  # type: ignore[union-attr]
        assert "audit log unavailable" in text
        assert "the call was not run" in text
        assert "No space left on device" in text
    assert audit.broken is not None
    audit.close()


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_audit_closed_log_refuses_call_in_scripts(isolation: str) -> None:
    ran: list[str] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        ran.append(params["path"])
        return AgentToolResult.text("wrote")

    tools = [AgentTool(name="write", parameters=_schema(), execute=execute)]
    stream = io.StringIO()
    audit = AuditLog(stream)
    stream.close()  # the log's stream is gone: writing raises ValueError
    async with scriptgate.Sandbox(
        tools,
        isolation=isolation,  # type: ignore[arg-type]
        **audit.hooks().as_kwargs(),
    ) as sandbox:
        result = await sandbox.run(
            "try:\n    write(path='a')\nexcept ToolError as e:\n    msg = str(e)\nmsg"
        )
    assert result.ok, result.error
    assert ran == []
    assert "audit log unavailable" in result.value
    assert "the call was not run" in result.value
    assert [c.status for c in result.calls] == ["error"]


@pytest.mark.anyio
async def test_audit_lone_surrogate_argument_is_escaped_and_audited_before_the_call(
    tmp_path: Path,
) -> None:
    path = tmp_path / "audit.jsonl"
    probe = _Probe(lambda: path.read_text(encoding="utf-8"))
    with AuditLog(path) as audit:
        await run_tool_call(
            ToolCall("s", "probe", {"path": "x\ud800y"}),
            tools=[probe.tool()],
            **audit.hooks().as_kwargs(),
        )
    raw = path.read_bytes()
    raw.decode("utf-8")  # valid UTF-8: the surrogate is an escape, not a byte sequence
    assert b"\\ud800" in raw
    ((intent, outcome),) = _calls(_lines(raw.decode("utf-8"))).values()
    assert intent["arguments"]["path"] == "x\ud800y"  # decodes back to the very value
    assert outcome["status"] == "ok"
    assert probe.own == [True]


# --------------------------------------------------------------------------- strict, bounded


@pytest.mark.anyio
async def test_audit_nan_and_infinity_are_not_bare_tokens() -> None:
    stream = io.StringIO()
    schema = {"type": "object", "properties": {"x": {}, "y": {}, "z": {}}}

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=(TextContent("ok"),), structured_content={"v": params["x"]})

    tools = [AgentTool(name="f", parameters=schema, execute=execute)]
    args = {"x": float("nan"), "y": float("inf"), "z": [float("-inf")]}
    with AuditLog(stream) as audit:
        outcome = await run_tool_call(
            ToolCall("n", "f", args), tools=tools, **audit.hooks().as_kwargs()
        )
    assert not outcome.is_error
    assert "NaN" not in stream.getvalue().replace('"NaN"', "")
    intent, done = _lines(stream.getvalue())  # strict parse: no bare tokens
    assert intent["arguments"]["x"] == {"type": "float", "value": "NaN"}
    assert intent["arguments"]["y"] == {"type": "float", "value": "Infinity"}
    assert intent["arguments"]["z"] == [{"type": "float", "value": "-Infinity"}]
    assert intent["replaced"] == ["/arguments/x", "/arguments/y", "/arguments/z/0"]
    assert done["result_digest"].startswith("sha256:")


@pytest.mark.anyio
async def test_audit_5000_digit_int_argument_is_capped_with_digest() -> None:
    stream = io.StringIO()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return AgentToolResult(content=(TextContent("ok"),), structured_content={"n": params["n"]})

    big = 7 * 10**4999 + 1
    tools = [AgentTool(name="f", parameters=schema, execute=execute)]
    with AuditLog(stream) as audit:
        outcome = await run_tool_call(
            ToolCall("i", "f", {"n": big}), tools=tools, **audit.hooks().as_kwargs()
        )
    assert not outcome.is_error  # the audit never breaks the call
    intent, done = _lines(stream.getvalue())
    capped = intent["arguments"]["n"]
    assert capped["type"] == "int"
    assert capped["bits"] == big.bit_length()
    assert capped["sha256"] == hashlib.sha256(canonical_bytes(big)).hexdigest()
    assert intent["replaced"] == ["/arguments/n"]
    assert done["status"] == "ok"
    assert done["result_digest"].startswith("sha256:")
    assert len(stream.getvalue()) < 2_000


@pytest.mark.anyio
async def test_audit_huge_string_argument_is_capped_with_digest() -> None:
    stream = io.StringIO()
    probe = _Probe(stream.getvalue)
    content = "A" * 3_000_000
    with AuditLog(stream) as audit:
        await run_tool_call(
            ToolCall("h", "probe", {"path": content}),
            tools=[probe.tool()],
            **audit.hooks().as_kwargs(),
        )
    intent, _done = _lines(stream.getvalue())
    capped = intent["arguments"]["path"]
    assert capped["type"] == "str"
    assert capped["length"] == 3_000_000
    assert capped["head"] == "A" * 100
    expected = hashlib.sha256(json.dumps(content).encode()).hexdigest()
    assert capped["sha256"] == expected
    assert len(stream.getvalue()) < 2_000


@pytest.mark.anyio
async def test_audit_30_denied_writes_with_large_arguments_stay_small(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    schema = {"type": "object", "properties": {"path": {}, "content": {}}}
    tools = [
        AgentTool(name="write", parameters=schema, execute=lambda *a: AgentToolResult.text(""))
    ]
    wide = {f"k{i}": "x" * 900 for i in range(900)}  # 900 values under the string cap: ~0.8 MB
    with AuditLog(path) as audit:
        hooks = compose_hooks(Policy([Rule("write", "deny", reason="read-only")]), audit)
        for n in range(30):
            args = {"path": f"f{n}", "content": "y" * 9_000_000} if n % 2 else {"path": wide}
            outcome = await run_tool_call(
                ToolCall(str(n), "write", args), tools=tools, **hooks.as_kwargs()
            )
            assert outcome.blocked
    size = path.stat().st_size
    assert size < 3 * 1024 * 1024, size  # not hundreds of MB
    pairs = _calls(_lines(path.read_text(encoding="utf-8")))
    assert len(pairs) == 30
    for intent, outcome in pairs.values():
        assert (intent["decision"], intent["reason"]) == ("deny", "read-only")
        assert outcome["status"] == "blocked"
        assert outcome["duration_ms"] is None
        assert intent["replaced"]  # something was capped in every call


# --------------------------------------------------------------------------- pairing


@pytest.mark.anyio
async def test_audit_token_pairs_lines_of_two_runs_sharing_a_log(tmp_path: Path) -> None:
    path = tmp_path / "shared.jsonl"
    gate = anyio.Event()
    started = anyio.Event()

    async def slow(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        started.set()
        await gate.wait()
        return AgentToolResult.text("slow")

    async def fast(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        raise RuntimeError("fast failed")

    tools = [
        AgentTool(name="slow", parameters=_schema(), execute=slow),
        AgentTool(name="fast", parameters=_schema(), execute=fast),
    ]
    one, two = AuditLog(path, run_id="same"), AuditLog(path, run_id="same")
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            lambda: run_tool_call(
                ToolCall("1", "slow", {"path": "a"}), tools=tools, **one.hooks().as_kwargs()
            )
        )
        await started.wait()
        await run_tool_call(
            ToolCall("1", "fast", {"path": "b"}), tools=tools, **two.hooks().as_kwargs()
        )
        gate.set()
    one.close()
    two.close()
    pairs = _calls(_lines(path.read_text(encoding="utf-8")))
    by_tool = {intent["tool"]: outcome for intent, outcome in pairs.values()}
    assert by_tool["slow"]["status"] == "ok"
    assert by_tool["fast"]["status"] == "error"
    assert by_tool["fast"]["error"] == "fast failed"


@pytest.mark.anyio
async def test_audit_batch_with_duplicated_ids_is_not_misattributed() -> None:
    stream = io.StringIO()
    release = anyio.Event()

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        if params["path"] == "first":
            await release.wait()  # finishes after the second call
            return AgentToolResult.text("first done")
        release.set()
        raise RuntimeError("second failed")

    tools = [AgentTool(name="t", parameters=_schema(), execute=execute)]
    message = AssistantMessage(
        content=(ToolCall("dup", "t", {"path": "first"}), ToolCall("dup", "t", {"path": "second"})),
        stop_reason="toolUse",
    )
    with AuditLog(stream) as audit:
        await execute_tool_calls(message, tools=tools, mode="parallel", **audit.hooks().as_kwargs())
    pairs = _calls(_lines(stream.getvalue()))
    by_path = {intent["arguments"]["path"]: outcome for intent, outcome in pairs.values()}
    assert by_path["first"]["status"] == "ok"
    assert by_path["first"]["result_digest"] == result_digest(AgentToolResult.text("first done"))
    assert (by_path["second"]["status"], by_path["second"]["error"]) == ("error", "second failed")


# --------------------------------------------------------------------------- what hooks never see


@pytest.mark.anyio
async def test_audit_validation_failure_is_audited() -> None:
    stream = io.StringIO()
    probe = _Probe(stream.getvalue)
    with AuditLog(stream) as audit:
        hooks = compose_hooks(Policy([Rule("*", "allow")]), audit)
        outcome = await run_tool_call(
            ToolCall("v", "probe", {"n": "many"}), tools=[probe.tool()], **hooks.as_kwargs()
        )
        unknown = await run_tool_call(
            ToolCall("u", "nope", {"a": 1}), tools=[probe.tool()], **hooks.as_kwargs()
        )
    assert outcome.is_error
    assert unknown.is_error
    assert probe.seen == []
    pairs = _calls(_lines(stream.getvalue()))
    by_id = {intent["tool_call_id"]: (intent, done) for intent, done in pairs.values()}
    intent, done = by_id["v"]
    assert intent["arguments"] == {"n": "many"}
    assert intent["decision"] is None
    assert done["status"] == "invalid"
    assert done["error"] == outcome.result.content[0].text  # type: ignore[union-attr]
    assert by_id["u"][1]["status"] == "invalid"
    assert by_id["u"][1]["error"] == "Tool nope not found"


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_audit_validation_failure_in_scripts_is_audited(isolation: str) -> None:
    stream = io.StringIO()
    probe = _Probe(stream.getvalue)
    with AuditLog(stream) as audit:
        async with scriptgate.Sandbox(
            [probe.tool()],
            isolation=isolation,
            **audit.hooks().as_kwargs(),  # type: ignore[arg-type]
        ) as sandbox:
            result = await sandbox.run("try:\n    probe(n='x')\nexcept ToolError:\n    pass\n1")
    assert result.ok, result.error
    ((intent, done),) = _calls(_lines(stream.getvalue())).values()
    assert intent["tool_call_id"] == result.calls[0].id
    assert done["status"] == "invalid"


@pytest.mark.anyio
@pytest.mark.parametrize("isolation", ["in_process", "process"])
async def test_audit_timed_out_call_has_real_duration(isolation: str) -> None:
    stream = io.StringIO()

    async def hang(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        await anyio.sleep_forever()

    tools = [AgentTool(name="hang", parameters=_schema(), execute=hang)]
    with AuditLog(stream) as audit:
        async with scriptgate.Sandbox(
            tools,
            isolation=isolation,  # type: ignore[arg-type]
            limits=scriptgate.Limits(timeout=0.5),
            **audit.hooks().as_kwargs(),
        ) as sandbox:
            result = await sandbox.run("hang(path='x')")
        assert not result.ok
        ((intent, done),) = _calls(_lines(stream.getvalue())).values()  # before close
    assert intent["tool"] == "hang"
    assert done["status"] == "cancelled"
    assert isinstance(done["duration_ms"], int)
    assert done["duration_ms"] >= 400


@pytest.mark.anyio
async def test_audit_call_cut_off_by_fail_after_is_audited_directly() -> None:
    stream = io.StringIO()
    started = anyio.Event()

    async def hang(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        started.set()
        await anyio.sleep_forever()

    tools = [AgentTool(name="hang", parameters=_schema(), execute=hang)]
    audit = AuditLog(stream)
    async with anyio.create_task_group() as tg:

        async def call() -> None:
            await run_tool_call(
                ToolCall("h", "hang", {"path": "x"}), tools=tools, **audit.hooks().as_kwargs()
            )

        tg.start_soon(call)
        await started.wait()
        tg.cancel_scope.cancel()
    ((_intent, done),) = _calls(_lines(stream.getvalue())).values()
    assert done["status"] == "cancelled"
    assert isinstance(done["duration_ms"], int)


# --------------------------------------------------------------------------- decisions


@pytest.mark.anyio
async def test_audit_composed_with_policy_logs_blocks_and_decisions() -> None:
    stream = io.StringIO()
    probe = _Probe(stream.getvalue)
    tools = [probe.tool("read"), probe.tool("write"), probe.tool("ls")]
    policy = Policy(
        [Rule("read", "allow", reason="reads ok"), Rule("write", "deny", reason="read-only run")]
    )
    with AuditLog(stream) as audit:
        hooks = compose_hooks(policy, audit)
        for name in ("read", "write", "ls"):
            await run_tool_call(
                ToolCall(name, name, {"path": "a"}), tools=tools, **hooks.as_kwargs()
            )
    pairs = {i["tool"]: (i, o) for i, o in _calls(_lines(stream.getvalue())).values()}
    intent, done = pairs["read"]
    assert (intent["decision"], intent["reason"], intent["rule"], done["status"]) == (
        "allow",
        "reads ok",
        0,
        "ok",
    )
    intent, done = pairs["write"]
    assert (intent["decision"], intent["reason"], intent["rule"]) == ("deny", "read-only run", 1)
    assert (done["status"], done["duration_ms"], done["result_digest"]) == ("blocked", None, None)
    intent, done = pairs["ls"]
    assert (intent["decision"], intent["rule"], done["status"]) == ("deny", None, "blocked")


@pytest.mark.anyio
@pytest.mark.parametrize("audit_first", [True, False])
async def test_audit_logs_blocks_by_other_hooks_whatever_the_order(audit_first: bool) -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)
    veto = (lambda ctx, signal: BeforeToolCallResult(block=True, reason="quota exceeded"), None)
    hooks = compose_hooks(audit, veto) if audit_first else compose_hooks(veto, audit)
    assert hooks.before_tool_call is not None
    ctx = BeforeToolCallContext(None, ToolCall("c", "read", {}), {}, None)
    await hooks.before_tool_call(ctx, None)
    intent, done = _lines(stream.getvalue())
    assert (intent["decision"], intent["reason"], done["status"]) == (
        "block",
        "quota exceeded",
        "blocked",
    )
    audit.close()
    assert len(_lines(stream.getvalue())) == 2  # nothing left open


@pytest.mark.anyio
async def test_audit_logs_a_raising_before_hook_as_error() -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)

    def broken(ctx: BeforeToolCallContext, signal: Any) -> None:
        raise ValueError("hook crashed")

    hooks = compose_hooks(audit, (broken, None))
    assert hooks.before_tool_call is not None
    with pytest.raises(ValueError, match="hook crashed"):
        await hooks.before_tool_call(
            BeforeToolCallContext(None, ToolCall("c", "r", {}), {}, None), None
        )
    intent, done = _lines(stream.getvalue())
    assert (intent["decision"], intent["reason"], done["status"]) == (
        "block",
        "hook crashed",
        "error",
    )


@pytest.mark.anyio
async def test_audit_close_writes_aborted_for_open_intents() -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)
    hooks = audit.hooks()
    assert hooks.before_tool_call is not None
    ctx = BeforeToolCallContext(None, ToolCall("c", "read", {}), {}, None)
    await hooks.before_tool_call(ctx, None)  # passed the gate, never finished
    with audit:
        pass
    intent, done = _lines(stream.getvalue())
    assert (intent["event"], done["status"], done["token"]) == (
        "intent",
        "aborted",
        intent["token"],
    )
    with pytest.raises(AuditWriteError):
        await hooks.before_tool_call(ctx, None)  # closed: refuses, writes nothing
    assert len(_lines(stream.getvalue())) == 2


def test_audit_is_thread_safe() -> None:
    stream = io.StringIO()
    audit = AuditLog(stream)
    per_thread = 100
    tools = [
        AgentTool(
            name="t", parameters={"type": "object"}, execute=lambda *a: AgentToolResult.text("x")
        )
    ]

    def work(worker: int) -> None:
        for n in range(per_thread):
            anyio.run(
                lambda n=n: run_tool_call(  # type: ignore[misc]
                    ToolCall(f"{worker}/{n}", "t", {"n": n}),
                    tools=tools,
                    **audit.hooks().as_kwargs(),
                )
            )

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pairs = _calls(_lines(stream.getvalue()))
    assert len(pairs) == 4 * per_thread
    for intent, _done in pairs.values():
        assert intent["arguments"]["n"] == int(intent["tool_call_id"].split("/")[1])


def test_audit_defaults_to_a_random_run_id() -> None:
    a, b = AuditLog(io.StringIO()), AuditLog(io.StringIO())
    assert re.fullmatch(r"[0-9a-f]{32}", a.run_id)
    assert a.run_id != b.run_id
    with pytest.raises(TypeError):
        AuditLog(42)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- parity

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


def _parity_tools() -> list[AgentTool]:
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
            name="fetch", parameters=_schema(), execute=fetch, output_schema={"type": "object"}
        ),
        AgentTool(name="store", parameters=_schema(), execute=store),
    ]


def _comparable(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    varying = {"time", "run_id", "token", "tool_call_id", "duration_ms"}
    return [{k: v for k, v in line.items() if k not in varying} for line in lines]


@pytest.mark.anyio
async def test_audit_direct_and_scripted_calls_write_the_same_lines() -> None:
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
        async with scriptgate.Sandbox(tools, **compose_hooks(policy, audit).as_kwargs()) as sandbox:
            result = await sandbox.run(PARITY_SCRIPT)
    assert result.ok, result.error
    direct, scripted = _lines(direct_stream.getvalue()), _lines(scripted_stream.getvalue())
    outcomes = [line["status"] for line in direct if line["event"] == "outcome"]
    assert outcomes == ["ok", "blocked", "error", "ok"]
    assert direct[0]["arguments"] == {"path": "a", "n": 2}
    assert _comparable(direct) == _comparable(scripted)
    intents = [line["tool_call_id"] for line in scripted if line["event"] == "intent"]
    assert intents == [c.id for c in result.calls]
