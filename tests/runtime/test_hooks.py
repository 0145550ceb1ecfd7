"""compose_hooks: order, short-circuit and after-merge rules."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.hooks import (
    BeforeVerdict,
    Hooks,
    compose_hooks,
    merge_after_result,
)
from scriptgate.runtime.policy import Decision, Policy, PolicyVerdict, Rule
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallResult,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallResult,
    TextContent,
    ToolCall,
)

CALL = ToolCall("c1", "read", {"path": "a"})


def _before_ctx(call: ToolCall = CALL) -> BeforeToolCallContext:
    return BeforeToolCallContext(None, call, dict(call.arguments), None)


def _after_ctx(result: AgentToolResult, is_error: bool = False) -> AfterToolCallContext:
    return AfterToolCallContext(None, CALL, dict(CALL.arguments), result, is_error, None)


class Recorder:
    """A hook source whose hooks log their calls and return a configured result."""

    def __init__(
        self,
        name: str,
        log: list[str],
        *,
        before: Any = None,
        after: Any = None,
        raise_before: bool = False,
        raise_after: bool = False,
        use_async: bool = False,
    ) -> None:
        self.name = name
        self.log = log
        self.before_result = before
        self.after_result = after
        self.raise_before = raise_before
        self.raise_after = raise_after
        self.seen: list[AfterToolCallContext] = []
        if use_async:
            self.before_tool_call = self._before_async
            self.after_tool_call = self._after_async
        else:
            self.before_tool_call = self._before
            self.after_tool_call = self._after

    def _before(self, ctx: BeforeToolCallContext, signal: Any) -> Any:
        self.log.append(f"before {self.name}")
        if self.raise_before:
            raise RuntimeError(f"{self.name} broke")
        return self.before_result

    async def _before_async(self, ctx: BeforeToolCallContext, signal: Any) -> Any:
        return self._before(ctx, signal)

    def _after(self, ctx: AfterToolCallContext, signal: Any) -> Any:
        self.log.append(f"after {self.name}")
        self.seen.append(ctx)
        if self.raise_after:
            raise RuntimeError(f"{self.name} failed")
        return self.after_result

    async def _after_async(self, ctx: AfterToolCallContext, signal: Any) -> Any:
        return self._after(ctx, signal)


class Observer:
    """Records the verdicts compose_hooks reports."""

    def __init__(self) -> None:
        self.verdicts: list[BeforeVerdict] = []

    def observe_verdict(self, ctx: BeforeToolCallContext, verdict: BeforeVerdict) -> None:
        self.verdicts.append(verdict)


# --------------------------------------------------------------------------- before


@pytest.mark.anyio
@pytest.mark.parametrize("use_async", [False, True])
async def test_hooks_before_run_in_order_when_nothing_blocks(use_async: bool) -> None:
    log: list[str] = []
    hooks = compose_hooks(
        Recorder("a", log, use_async=use_async),
        Recorder("b", log, before=BeforeToolCallResult(block=False), use_async=use_async),
        Recorder("c", log, use_async=use_async),
    )
    assert hooks.before_tool_call is not None
    assert await hooks.before_tool_call(_before_ctx(), None) is None
    assert log == ["before a", "before b", "before c"]


@pytest.mark.anyio
async def test_hooks_before_first_block_short_circuits() -> None:
    log: list[str] = []
    block = BeforeToolCallResult(block=True, reason="nope", terminate=True)
    observer = Observer()
    hooks = compose_hooks(
        Recorder("a", log),
        Recorder("b", log, before=block),
        Recorder("c", log, before=BeforeToolCallResult(block=True, reason="later")),
        observer,
    )
    assert hooks.before_tool_call is not None
    result = await hooks.before_tool_call(_before_ctx(), None)
    assert result is block  # returned unchanged: reason and terminate reach the pipeline
    assert log == ["before a", "before b"]
    assert observer.verdicts == [BeforeVerdict(blocked=True, reason="nope", blocked_by=1)]


@pytest.mark.anyio
async def test_hooks_before_block_without_reason_reports_pi_default() -> None:
    observer = Observer()
    hooks = compose_hooks((lambda ctx, signal: BeforeToolCallResult(block=True), None), observer)
    assert hooks.before_tool_call is not None
    await hooks.before_tool_call(_before_ctx(), None)
    assert observer.verdicts[0].reason == "Tool execution was blocked"


@pytest.mark.anyio
async def test_hooks_before_raise_short_circuits_and_propagates() -> None:
    log: list[str] = []
    observer = Observer()
    hooks = compose_hooks(Recorder("a", log, raise_before=True), Recorder("b", log), observer)
    assert hooks.before_tool_call is not None
    with pytest.raises(RuntimeError, match="a broke"):
        await hooks.before_tool_call(_before_ctx(), None)
    assert log == ["before a"]
    assert observer.verdicts == [
        BeforeVerdict(blocked=True, reason="a broke", blocked_by=0, error="a broke")
    ]


@pytest.mark.anyio
async def test_hooks_before_reports_policy_decisions_to_observers() -> None:
    observer = Observer()
    policy = Policy([Rule("read", "allow", reason="reads are fine")], default="deny")
    hooks = compose_hooks(policy, observer)
    assert hooks.before_tool_call is not None
    assert await hooks.before_tool_call(_before_ctx(), None) is None  # allow → None
    blocked = await hooks.before_tool_call(_before_ctx(ToolCall("c2", "write", {})), None)
    assert isinstance(blocked, PolicyVerdict)
    assert blocked.block is True
    assert observer.verdicts[0] == BeforeVerdict(
        blocked=False, decision=Decision("allow", "reads are fine", 0)
    )
    assert observer.verdicts[1].blocked is True
    assert observer.verdicts[1].decision is not None
    assert observer.verdicts[1].decision.action == "deny"
    assert observer.verdicts[1].reason == (
        'Denied by policy: no rule allows tool "write" with these arguments'
    )


@pytest.mark.anyio
async def test_hooks_block_after_policy_allow_keeps_the_policy_decision() -> None:
    observer = Observer()
    policy = Policy([Rule("*", "allow")])
    veto = (lambda ctx, signal: BeforeToolCallResult(block=True, reason="quota"), None)
    hooks = compose_hooks(policy, veto, observer)
    assert hooks.before_tool_call is not None
    await hooks.before_tool_call(_before_ctx(), None)
    verdict = observer.verdicts[0]
    assert verdict.blocked is True
    assert verdict.reason == "quota"
    assert verdict.blocked_by == 1
    assert verdict.decision is not None
    assert verdict.decision.action == "allow"


def test_hooks_compose_shapes() -> None:
    assert compose_hooks() == Hooks(None, None)
    only_after = compose_hooks((None, lambda ctx, signal: None), None)
    assert only_after.before_tool_call is None
    assert only_after.after_tool_call is not None
    before, after = compose_hooks(Policy([]))
    assert before is not None
    assert after is None
    assert set(compose_hooks(Policy([])).as_kwargs()) == {"before_tool_call", "after_tool_call"}


def test_hooks_compose_rejects_ambiguous_sources() -> None:
    with pytest.raises(ConfigurationError, match="argument 0"):
        compose_hooks(lambda ctx, signal: None)
    with pytest.raises(ConfigurationError, match="tuple of 3"):
        compose_hooks((None, None, None))
    with pytest.raises(ConfigurationError, match="not callable"):
        compose_hooks((3, None))


# --------------------------------------------------------------------------- after


ORIGINAL = AgentToolResult(
    content=(TextContent("orig"),), details={"d": 0}, structured_content={"s": 0}
)


@pytest.mark.anyio
async def test_hooks_after_each_sees_previous_overrides() -> None:
    log: list[str] = []
    a = Recorder("a", log, after=AfterToolCallResult(details={"d": 1}))
    b = Recorder("b", log, after=AfterToolCallResult(content=(TextContent("b"),)))
    c = Recorder("c", log)
    hooks = compose_hooks(a, b, c)
    assert hooks.after_tool_call is not None
    combined = await hooks.after_tool_call(_after_ctx(ORIGINAL), None)
    assert log == ["after a", "after b", "after c"]
    assert a.seen[0].result is ORIGINAL
    assert b.seen[0].result.details == {"d": 1}
    assert b.seen[0].result.structured_content == {"s": 0}
    assert c.seen[0].result.content == (TextContent("b"),)
    assert c.seen[0].result.details == {"d": 1}
    assert c.seen[0].result.structured_content is None  # dropped: content replaced
    assert combined == AfterToolCallResult(content=(TextContent("b"),), details={"d": 1})


@pytest.mark.anyio
async def test_hooks_after_returns_none_when_nothing_overrides() -> None:
    log: list[str] = []
    hooks = compose_hooks(Recorder("a", log), Recorder("b", log, use_async=True))
    assert hooks.after_tool_call is not None
    assert await hooks.after_tool_call(_after_ctx(ORIGINAL), None) is None


OVERRIDES = [
    AfterToolCallResult(content=(TextContent("x"),)),
    AfterToolCallResult(structured_content={"s": 2}),
    AfterToolCallResult(content=(TextContent("y"),), structured_content={"s": 3}),
    AfterToolCallResult(details={"d": 9}),
    AfterToolCallResult(is_error=True),
    AfterToolCallResult(is_error=False, terminate=True),
    None,
]


@pytest.mark.anyio
@pytest.mark.parametrize("sequence", [*itertools.product(OVERRIDES, repeat=2), tuple(OVERRIDES)])
async def test_hooks_after_combined_override_equals_chained_merges(
    sequence: tuple[AfterToolCallResult | None, ...],
) -> None:
    """Applied once to the original (as the pipeline does), the combined override gives
    the same result as applying each hook's override in turn (pi §3.7 per step)."""
    log: list[str] = []
    hooks = compose_hooks(*(Recorder(str(i), log, after=o) for i, o in enumerate(sequence)))
    assert hooks.after_tool_call is not None
    combined = await hooks.after_tool_call(_after_ctx(ORIGINAL), None)
    expected, expected_error = ORIGINAL, False
    for override in sequence:
        if override is not None:
            expected, expected_error = merge_after_result(expected, expected_error, override)
    if combined is None:
        assert (expected, expected_error) == (ORIGINAL, False)
    else:
        assert merge_after_result(ORIGINAL, False, combined) == (expected, expected_error)


@pytest.mark.anyio
async def test_hooks_after_raise_lets_later_hooks_see_the_error_then_reraises() -> None:
    log: list[str] = []
    a = Recorder("a", log, raise_after=True)
    b = Recorder("b", log, after=AfterToolCallResult(details={"ignored": True}))
    hooks = compose_hooks(a, b)
    assert hooks.after_tool_call is not None
    with pytest.raises(RuntimeError, match="a failed"):
        await hooks.after_tool_call(_after_ctx(ORIGINAL), None)
    assert log == ["after a", "after b"]
    assert b.seen[0].is_error is True
    assert b.seen[0].result == AgentToolResult.error("a failed")


def test_hooks_merge_after_result_vectors() -> None:
    """pi §3.7 vectors: {content} → undefined; {sc: X} → X; {content, sc: Y} → Y; {details} keeps."""
    text = (TextContent("new"),)
    assert (
        merge_after_result(ORIGINAL, False, AfterToolCallResult(content=text))[0].structured_content
        is None
    )
    assert (
        merge_after_result(ORIGINAL, False, AfterToolCallResult(structured_content="X"))[
            0
        ].structured_content
        == "X"
    )
    assert (
        merge_after_result(
            ORIGINAL, False, AfterToolCallResult(content=text, structured_content="Y")
        )[0].structured_content
        == "Y"
    )
    assert merge_after_result(ORIGINAL, False, AfterToolCallResult(details={}))[
        0
    ].structured_content == {"s": 0}
    assert merge_after_result(ORIGINAL, True, AfterToolCallResult())[1] is True


@pytest.mark.anyio
async def test_hooks_composed_through_run_tool_call() -> None:
    """End to end through the pipeline: order before a, before b, after a, after b."""
    from scriptgate.runtime.pipeline import run_tool_call
    from scriptgate.runtime.tool import AgentTool

    def execute(call_id: str, params: Any, signal: Any, on_update: Any) -> AgentToolResult:
        log.append("execute")
        return AgentToolResult(content=(TextContent("raw"),), structured_content={"v": 1})

    tool = AgentTool(name="read", execute=execute)
    log: list[str] = []
    a = Recorder("a", log, after=AfterToolCallResult(details={"by": "a"}))
    b = Recorder("b", log, after=AfterToolCallResult(content=(TextContent("b"),)))
    hooks = compose_hooks(a, b)
    outcome = await run_tool_call(ToolCall("1", "read", {}), tools=[tool], **hooks.as_kwargs())
    assert log == ["before a", "before b", "execute", "after a", "after b"]
    assert outcome.result.content == (TextContent("b"),)
    assert outcome.result.details == {"by": "a"}
    assert outcome.result.structured_content is None

    log.clear()
    blocker = Recorder("x", log, before=BeforeToolCallResult(block=True, reason="stop"))
    hooks = compose_hooks(a, blocker, b)
    outcome = await run_tool_call(ToolCall("2", "read", {}), tools=[tool], **hooks.as_kwargs())
    assert log == ["before a", "before x"]
    assert outcome.blocked is True
    assert outcome.result.text_content() == "stop"
