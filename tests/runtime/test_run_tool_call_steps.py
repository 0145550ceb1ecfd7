"""run_tool_call runs the three pipeline steps as one coroutine: it must agree with them.

Every path of ``prepare_tool_call`` → ``execute_prepared_tool_call`` →
``finalize_executed_tool_call`` (the batch's steps) is run both ways, on fresh tools
and hooks each time, and the outcomes, what the hooks saw and what ``execute``
received are compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pydantic
import pytest

from scriptgate.runtime.abort import AbortController, AbortSignal
from scriptgate.runtime.pipeline import (
    ToolCallOutcome,
    execute_prepared_tool_call,
    finalize_executed_tool_call,
    prepare_tool_call,
    run_tool_call,
)
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallResult,
    AgentToolResult,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
)

SCHEMA = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "tags": {"type": "array"}},
    "required": ["n"],
}


class Model(pydantic.BaseModel):
    """A pydantic parameters model (``build_params`` makes an instance)."""

    n: int


class Seen:
    """What a scenario's tool and hooks received, in order."""

    def __init__(self) -> None:
        self.events: list[Any] = []


async def three_steps(tool_call: ToolCall, **options: Any) -> ToolCallOutcome:
    """The three public steps, composed as run_tool_call documents."""
    on_update = options.pop("on_update", None)
    after = options.pop("after_tool_call", None)
    tools = options.pop("tools")
    prepared = await prepare_tool_call(tool_call, tools=tools, **options)
    if isinstance(prepared, ToolCallOutcome):
        return prepared
    signal = options.get("signal")
    executed = await execute_prepared_tool_call(prepared, signal=signal, on_update=on_update)
    options.pop("before_tool_call", None)
    return await finalize_executed_tool_call(prepared, executed, after_tool_call=after, **options)


Scenario = Callable[[Seen], tuple[ToolCall, dict[str, Any]]]


def _result(text: str, **fields: Any) -> AgentToolResult:
    return AgentToolResult(content=(TextContent(text),), details={"t": text}, **fields)


def _tool(seen: Seen, behaviour: str = "ok", **options: Any) -> AgentTool:
    def body(params: Any, on_update: Any) -> Any:
        seen.events.append(("execute", params if isinstance(params, Model) else dict(params)))
        if behaviour == "raise":
            raise ValueError("tool broke")
        if behaviour == "raise-empty":
            raise RuntimeError
        if behaviour == "not-a-result":
            return {"n": 1}
        if behaviour == "is-error":
            return _result("soft failure", is_error=True)
        if behaviour == "update":
            on_update(_result("partial"))
        return _result("done", structured_content={"ok": True}, terminate=True)

    if options.pop("sync", False):

        def execute_sync(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
            return body(params, on_update)

        return AgentTool(
            name="t", parameters=options.pop("parameters", SCHEMA), execute=execute_sync, **options
        )

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        return body(params, on_update)

    return AgentTool(
        name="t", parameters=options.pop("parameters", SCHEMA), execute=execute, **options
    )


def _call(arguments: Any = None, **fields: Any) -> ToolCall:
    return ToolCall(
        id="c1", name="t", arguments={"n": 1} if arguments is None else arguments, **fields
    )


def _before(seen: Seen, decision: Any, *, mutate: bool = False, aborter: Any = None) -> Any:
    def hook(ctx: Any, signal: AbortSignal | None) -> Any:
        seen.events.append(("before", ctx.tool_call, dict(ctx.args)))
        if mutate:
            ctx.args["n"] = 99
        if aborter is not None:
            aborter.abort()
        if decision == "raise":
            raise KeyError("before broke")
        return decision

    return hook


def _after(seen: Seen, override: Any) -> Any:
    async def hook(ctx: Any, signal: AbortSignal | None) -> Any:
        seen.events.append(("after", ctx.tool_call, ctx.result, ctx.is_error))
        if override == "raise":
            raise LookupError("after broke")
        return override

    return hook


def _scenarios() -> dict[str, Scenario]:
    aborted = AbortController()
    aborted.abort()

    def aborted_signal(seen: Seen) -> tuple[ToolCall, dict[str, Any]]:
        return _call(), {"tools": [_tool(seen)], "signal": aborted.signal}

    def aborted_by_before(seen: Seen) -> tuple[ToolCall, dict[str, Any]]:
        controller = AbortController()
        hook = _before(seen, None, aborter=controller)
        return _call(), {
            "tools": [_tool(seen)],
            "signal": controller.signal,
            "before_tool_call": hook,
        }

    def plain(behaviour: str, **tool_options: Any) -> Scenario:
        def scenario(seen: Seen) -> tuple[ToolCall, dict[str, Any]]:
            return _call(), {"tools": [_tool(seen, behaviour, **tool_options)]}

        return scenario

    def with_hooks(
        decision: Any, override: Any, behaviour: str = "ok", mutate: bool = False
    ) -> Scenario:
        def scenario(seen: Seen) -> tuple[ToolCall, dict[str, Any]]:
            return _call(), {
                "tools": {"t": _tool(seen, behaviour)},
                "before_tool_call": _before(seen, decision, mutate=mutate),
                "after_tool_call": _after(seen, override),
            }

        return scenario

    def shim(rewrite: bool, fail: bool = False) -> Scenario:
        def prepare(arguments: dict[str, Any]) -> Any:
            if fail:
                raise ValueError("shim broke")
            return {"n": "7"} if rewrite else arguments

        def scenario(seen: Seen) -> tuple[ToolCall, dict[str, Any]]:
            return _call({"m": 1}), {"tools": [_tool(seen, prepare_arguments=prepare)]}

        return scenario

    def updates(seen: Seen) -> tuple[ToolCall, dict[str, Any]]:
        async def sink(partial: Any) -> None:
            seen.events.append(("update", partial))

        return _call(), {"tools": [_tool(seen, "update")], "on_update": sink}

    return {
        "aborted signal": aborted_signal,
        "aborted by before_tool_call": aborted_by_before,
        "unknown tool": lambda seen: (
            ToolCall(id="c1", name="nope", arguments={}),
            {"tools": [_tool(seen)]},
        ),
        "arguments_error": lambda seen: (
            _call({}, arguments_error="bad json"),
            {"tools": [_tool(seen)]},
        ),
        "validation failure": lambda seen: (_call({"n": "x"}), {"tools": [_tool(seen)]}),
        "coercion": lambda seen: (_call({"n": "5", "tags": "a"}), {"tools": [_tool(seen)]}),
        "async tool": plain("ok"),
        "sync tool": plain("ok", sync=True),
        "sync tool raises": plain("raise", sync=True),
        "tool raises": plain("raise"),
        "tool raises without a message": plain("raise-empty"),
        "tool returns a non-result": plain("not-a-result"),
        "tool reports an error": plain("is-error"),
        "pydantic params": plain("ok", parameters=Model),
        "pydantic params refuse": lambda seen: (
            _call({"n": 1.5}),
            {"tools": [_tool(seen, parameters=Model)]},
        ),
        "shim rewrites": shim(True),
        "shim keeps": shim(False),
        "shim raises": shim(False, fail=True),
        "partial results": updates,
        "hooks pass": with_hooks(None, None),
        "before mutates the args": with_hooks(None, None, mutate=True),
        "before blocks": with_hooks(BeforeToolCallResult(block=True), None),
        "before blocks with a reason": with_hooks(
            BeforeToolCallResult(block=True, reason="no", terminate=True), None
        ),
        "before allows": with_hooks(BeforeToolCallResult(block=False), None),
        "before returns junk": with_hooks("junk", None),
        "before raises": with_hooks("raise", None),
        "after replaces the content": with_hooks(
            None, AfterToolCallResult(content=(TextContent("new"),))
        ),
        "after replaces every field": with_hooks(
            None,
            AfterToolCallResult(
                content=(TextContent("new"),),
                details={"d": 1},
                structured_content={"s": 2},
                is_error=True,
                terminate=False,
            ),
        ),
        "after clears an error": with_hooks(None, AfterToolCallResult(is_error=False), "is-error"),
        "after returns junk": with_hooks(None, 42),
        "after raises": with_hooks(None, "raise"),
        "after sees a raised tool": with_hooks(None, None, "raise"),
    }


def _normalised(outcome: ToolCallOutcome) -> tuple[Any, ...]:
    # duration_ms is a measured time: only whether execute ran is compared
    return (
        outcome.tool_call,
        outcome.result,
        outcome.is_error,
        outcome.duration_ms is None,
        outcome.blocked,
        outcome.aborted,
        type(outcome),
    )


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(_scenarios()))
async def test_run_tool_call_agrees_with_the_three_steps(name: str) -> None:
    scenario = _scenarios()[name]
    fused_seen, steps_seen = Seen(), Seen()
    call, options = scenario(fused_seen)
    fused = await run_tool_call(call, **options)
    call, options = scenario(steps_seen)
    steps = await three_steps(call, **options)
    assert _normalised(fused) == _normalised(steps)
    assert fused_seen.events == steps_seen.events


@pytest.mark.anyio
async def test_run_tool_call_passes_the_hooks_args_object_to_execute() -> None:
    received: list[Any] = []
    seen_args: list[Any] = []

    async def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        received.append(params)
        return _result("ok")

    def before(ctx: Any, signal: Any) -> None:
        seen_args.append(ctx.args)

    def after(ctx: Any, signal: Any) -> None:
        seen_args.append(ctx.args)

    arguments = {"n": 3}
    tool = AgentTool(name="t", parameters=SCHEMA, execute=execute)
    outcome = await run_tool_call(
        _call(arguments), tools=[tool], before_tool_call=before, after_tool_call=after
    )
    assert outcome.is_error is False
    assert received[0] is seen_args[0] is seen_args[1]
    assert received[0] is not arguments  # a copy: the transcript's call is not the tool's


@pytest.mark.anyio
async def test_run_tool_call_outcome_is_a_complete_dataclass() -> None:
    outcome = await run_tool_call(_call(), tools=[_tool(Seen())])
    assert outcome == ToolCallOutcome(outcome.tool_call, outcome.result, False, outcome.duration_ms)
    assert (outcome.blocked, outcome.aborted) == (False, False)
    assert repr(outcome).startswith("ToolCallOutcome(")
