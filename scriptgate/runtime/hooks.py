"""Composing ``before_tool_call`` / ``after_tool_call`` hooks (policy, audit, the user's own).

:func:`compose_hooks` chains hook *sources* — a :class:`~scriptgate.runtime.policy.Policy`,
an :class:`~scriptgate.runtime.audit.AuditLog`, a :class:`Hooks` pair, a
``(before, after)`` tuple, or any object with ``before_tool_call`` and/or
``after_tool_call`` attributes — into one :class:`Hooks` pair to hand to
``run_tool_call``, ``execute_tool_calls``, the agent loop or a ``Sandbox``.

Order and short-circuit rules
-----------------------------
**Before** hooks run in the order the sources were given.

- The first hook whose result has a truthy ``block`` short-circuits: later
  before hooks do not run, and its result is returned unchanged (its ``reason``
  and ``terminate`` reach the pipeline as pi §3.2 says).
- A hook that raises also short-circuits; the exception propagates, so the call
  fails with its message exactly as in pi.
- A non-blocking result is not returned to the pipeline (pi ignores it); when it
  carries a policy ``decision`` (a :class:`~scriptgate.runtime.policy.PolicyVerdict`),
  the decision is remembered for the observers (the last one wins).
- When the chain ends — allowed, blocked or raised — every source with an
  ``observe_verdict(ctx, verdict)`` method is told the :class:`BeforeVerdict`,
  whether or not its own before hook ran. This is where an audit log writes a
  call's intent line — after every gate, before ``execute`` — with the policy
  decision; an observer that raises for an allowed call makes the call fail
  without running (fail-closed). A chain cancelled while a hook runs is reported
  as blocked with ``error`` set to :data:`CANCELLED_TEXT`.
- The composed before hook carries its observers (attribute
  ``scriptgate.runtime.observe.OBSERVERS_ATTRIBUTE``), so the pipeline can tell
  them about calls hooks never see: invalid arguments, unknown tools, aborts,
  and calls cut off while they ran.

**After** hooks run in the order the sources were given.

- Each sees the result (and ``is_error``) as overridden by the hooks before it,
  with pi's §3.7 field-level merge (``None`` keeps a field; ``structured_content``
  is dropped when ``content`` is replaced without a new ``structured_content``).
- Their overrides accumulate into one :class:`~scriptgate.runtime.types.AfterToolCallResult`
  which, applied by the pipeline to the original result, gives exactly the result
  the last hook saw plus its own override. ``None`` is returned when no hook
  overrode anything.
- A hook that raises does not stop the chain: later hooks still run and see the
  error result the pipeline will make of it (``details == {}``, the message as
  text, ``is_error``), so an audit placed after it logs the failure. The first
  exception is then re-raised, so the pipeline builds that error result itself
  (pi §3.4) and the overrides of the later hooks are discarded.

Recommended order: ``compose_hooks(policy, your_hooks, audit)`` — the policy gates
first, the audit's after hook sees the final result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol, TypeAlias, runtime_checkable

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.observe import OBSERVERS_ATTRIBUTE
from scriptgate.runtime.pipeline import BLOCKED_TEXT, error_message
from scriptgate.runtime.policy import Decision
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AfterToolCallHook,
    AfterToolCallResult,
    AgentToolResult,
    BeforeToolCallContext,
    BeforeToolCallHook,
    BeforeToolCallResult,
)

__all__ = [
    "CANCELLED_TEXT",
    "BeforeVerdict",
    "HookSource",
    "Hooks",
    "VerdictObserver",
    "compose_hooks",
    "merge_after_result",
]

CANCELLED_TEXT = "The call was cancelled before the permission check finished"
"""The verdict's error for a call cancelled while a before hook ran."""


class Hooks(NamedTuple):
    """A ``before_tool_call`` / ``after_tool_call`` pair (either may be ``None``).

    Unpack it (``before, after = hooks``) or pass ``**hooks.as_kwargs()`` to
    ``run_tool_call``, ``execute_tool_calls`` or ``Sandbox``.
    """

    before_tool_call: BeforeToolCallHook | None = None
    after_tool_call: AfterToolCallHook | None = None

    def as_kwargs(self) -> dict[str, Any]:
        """``{"before_tool_call": ..., "after_tool_call": ...}``."""
        return {"before_tool_call": self.before_tool_call, "after_tool_call": self.after_tool_call}


@dataclass(frozen=True, slots=True)
class BeforeVerdict:
    """How a composed before chain ended for one call (what observers are told).

    - ``blocked``: the call will not run;
    - ``reason``: the text the model reads when blocked (pi's default
      ``Tool execution was blocked`` for an empty reason);
    - ``decision``: the policy decision, if a policy took part (for a block by
      another hook, the policy's earlier decision, if any);
    - ``blocked_by``: the index of the source that blocked or raised;
    - ``error``: set when a before hook raised (the call fails with this text).
    """

    blocked: bool
    reason: str | None = None
    decision: Decision | None = None
    blocked_by: int | None = None
    error: str | None = None


@runtime_checkable
class VerdictObserver(Protocol):
    """A hook source that wants to know how every composed before chain ended."""

    def observe_verdict(self, ctx: BeforeToolCallContext, verdict: BeforeVerdict) -> None:
        """Called once per call that reached the before chain (sync; keep it quick)."""


HookSource: TypeAlias = Any
"""A Policy, AuditLog, :class:`Hooks`, ``(before, after)`` tuple or object with hook attributes."""


async def _settle(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


def merge_after_result(
    result: AgentToolResult, is_error: bool, override: AfterToolCallResult
) -> tuple[AgentToolResult, bool]:
    """Apply one ``after_tool_call`` override to a result (pi §3.7).

    ``content``, ``details``, ``usage`` and ``terminate`` replace when not ``None``;
    ``is_error`` replaces the flag when not ``None``; ``structured_content``
    replaces when not ``None``, else is dropped when ``content`` was replaced,
    else is kept.
    """
    structured = result.structured_content
    if override.structured_content is not None:
        structured = override.structured_content
    elif override.content is not None:
        structured = None
    merged = AgentToolResult(
        content=override.content if override.content is not None else result.content,
        details=override.details if override.details is not None else result.details,
        structured_content=structured,
        usage=override.usage if override.usage is not None else result.usage,
        is_error=result.is_error,
        terminate=override.terminate if override.terminate is not None else result.terminate,
    )
    new_error = override.is_error if override.is_error is not None else is_error
    return merged, new_error


def _split(source: HookSource, index: int) -> tuple[Any, Any]:
    if isinstance(source, tuple):
        if len(source) != 2:
            raise ConfigurationError(
                f"compose_hooks: argument {index} is a tuple of {len(source)}; "
                "expected (before_tool_call, after_tool_call)"
            )
        return source[0], source[1]
    before = getattr(source, "before_tool_call", None)
    after = getattr(source, "after_tool_call", None)
    if before is None and after is None and not isinstance(source, VerdictObserver):
        raise ConfigurationError(
            f"compose_hooks: argument {index} ({type(source).__name__}) has no before_tool_call "
            "or after_tool_call; pass a (before, after) tuple for bare functions"
        )
    return before, after


def compose_hooks(*sources: HookSource) -> Hooks:
    """Chain several hook sources into one :class:`Hooks` pair.

    See the module docstring for the order and short-circuit rules. ``None``
    sources are skipped. The composed hooks are async; either is ``None`` when no
    source provides that kind of hook (and, for before, no source observes).
    """
    befores: list[tuple[int, Callable[..., Any]]] = []
    afters: list[Callable[..., Any]] = []
    observers: list[VerdictObserver] = []
    for index, source in enumerate(sources):
        if source is None:
            continue
        before, after = _split(source, index)
        for hook, kind in ((before, "before_tool_call"), (after, "after_tool_call")):
            if hook is not None and not callable(hook):
                raise ConfigurationError(
                    f"compose_hooks: the {kind} of argument {index} is not callable"
                )
        if before is not None:
            befores.append((index, before))
        if after is not None:
            afters.append(after)
        if isinstance(source, VerdictObserver):
            observers.append(source)

    composed_before = _compose_before(befores, observers) if befores or observers else None
    if composed_before is not None:
        # the pipeline tells these about calls the hooks never see (scriptgate.runtime.observe)
        setattr(composed_before, OBSERVERS_ATTRIBUTE, tuple(observers))
    composed_after = _compose_after(afters) if afters else None
    return Hooks(composed_before, composed_after)


def _compose_before(
    befores: Sequence[tuple[int, Callable[..., Any]]], observers: Sequence[VerdictObserver]
) -> BeforeToolCallHook:
    def notify(ctx: BeforeToolCallContext, verdict: BeforeVerdict) -> None:
        for observer in observers:
            observer.observe_verdict(ctx, verdict)

    async def before_tool_call(
        ctx: BeforeToolCallContext, signal: AbortSignal | None = None
    ) -> BeforeToolCallResult | None:
        decision: Decision | None = None
        for index, hook in befores:
            try:
                result = await _settle(hook(ctx, signal))
            except Exception as exc:
                text = error_message(exc)
                notify(
                    ctx,
                    BeforeVerdict(
                        blocked=True, reason=text, decision=decision, blocked_by=index, error=text
                    ),
                )
                raise
            except BaseException:  # cancelled while a hook ran (an `ask` waiting, a deadline)
                verdict = BeforeVerdict(
                    blocked=True, reason=CANCELLED_TEXT, decision=decision, blocked_by=index,
                    error=CANCELLED_TEXT,
                )  # fmt: skip
                with contextlib.suppress(Exception):
                    notify(ctx, verdict)
                raise
            found = getattr(result, "decision", None)
            if isinstance(found, Decision):
                decision = found
            if result is not None and result.block:
                reason = result.reason or BLOCKED_TEXT
                notify(
                    ctx,
                    BeforeVerdict(blocked=True, reason=reason, decision=decision, blocked_by=index),
                )
                return result  # type: ignore[no-any-return]
        notify(ctx, BeforeVerdict(blocked=False, decision=decision))
        return None

    return before_tool_call


def _compose_after(afters: Sequence[Callable[..., Any]]) -> AfterToolCallHook:
    async def after_tool_call(
        ctx: AfterToolCallContext, signal: AbortSignal | None = None
    ) -> AfterToolCallResult | None:
        result = ctx.result
        is_error = ctx.is_error
        current = ctx
        fields: dict[str, Any] = {}
        overridden = False
        first_exc: Exception | None = None
        for hook in afters:
            if current.result is not result or current.is_error != is_error:
                current = dataclasses.replace(ctx, result=result, is_error=is_error)
            try:
                override = await _settle(hook(current, signal))
            except Exception as exc:
                if first_exc is None:
                    first_exc = exc
                result, is_error = AgentToolResult.error(error_message(exc)), True
                continue
            if override is None:
                continue
            overridden = True
            result, is_error = merge_after_result(result, is_error, override)
            for name in ("content", "details", "usage", "terminate", "is_error"):
                value = getattr(override, name)
                if value is not None:
                    fields[name] = value
            if override.structured_content is not None:
                fields["structured_content"] = override.structured_content
            elif override.content is not None:
                fields.pop("structured_content", None)
        if first_exc is not None:
            raise first_exc
        if not overridden:
            return None
        return AfterToolCallResult(**fields)

    return after_tool_call
