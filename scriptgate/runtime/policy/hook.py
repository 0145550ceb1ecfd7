"""The :class:`Policy`: ordered rules and a default, decided purely or run as a hook.

Owns the first-match-wins decision (:meth:`Policy.decide`, an array of paths judged
element by element, the strictest answer winning), the partial-knowledge preview, the
approval of ``ask`` decisions, the walk filter of walking tools, the ``before_tool_call``
hook, and the entry points that bind/check against tools and load from data or TOML
(their bodies live in :mod:`.checking` and :mod:`.loading`).

Must not touch: what a pattern matches (:mod:`.matching`, :mod:`.rules`), the TOML
shape and its error texts (:mod:`.loading`), the check findings (:mod:`.checking`).
Imports only :mod:`scriptgate.runtime` (never ``sandbox`` or ``tools``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.paths import ResolvedArguments, ResolvedPath, path_combinations
from scriptgate.runtime.policy.checking import check_policy
from scriptgate.runtime.policy.loading import policy_parts, read_policy_toml
from scriptgate.runtime.policy.matching import _ACTIONS, Action
from scriptgate.runtime.policy.rules import (
    ApprovalCallback,
    ApprovalRequest,
    Decision,
    Paths,
    PolicyProblem,
    PolicyVerdict,
    Rule,
)
from scriptgate.runtime.types import BeforeToolCallContext

if TYPE_CHECKING:
    from scriptgate.runtime.tool import AgentTool

__all__ = ["Policy"]


# --------------------------------------------------------------------------- policy


def _plain_args(args: Any) -> Mapping[str, Any]:
    if isinstance(args, BaseModel):
        return args.model_dump(mode="json")
    if isinstance(args, Mapping):
        return args
    return {}


def _rule_decision(rule: Rule, index: int, tool_name: str) -> Decision:
    reason = rule.reason
    if reason is None:
        reason = f'rules[{index}] ({rule.action}) matched tool "{tool_name}"'
    return Decision(rule.action, reason, index)


def _default_reason(action: Action, tool_name: str) -> str:
    if action == "deny":
        return f'no rule allows tool "{tool_name}" with these arguments'
    if action == "ask":
        return f'tool "{tool_name}" needs approval'
    return "allowed by default"


_STRICTNESS: dict[str, int] = {"allow": 0, "ask": 1, "deny": 2}


def _strictest(decisions: Iterable[Decision]) -> Decision | None:
    chosen: Decision | None = None
    for decision in decisions:
        if chosen is None or _STRICTNESS[decision.action] > _STRICTNESS[chosen.action]:
            chosen = decision
    return chosen


def _single_paths(args: Any) -> tuple[dict[str, ResolvedPath], bool]:
    """``(paths, has_arrays)`` of resolved arguments (``({}, False)`` for plain ones)."""
    if not isinstance(args, ResolvedArguments):
        return {}, False
    paths = args.current_paths()
    single = {k: v for k, v in paths.items() if isinstance(v, ResolvedPath)}
    return single, len(single) != len(paths)


class Policy:
    """Ordered allow / deny / ask rules; the first match wins, else ``default``.

    ``ask`` is the approval callback used for ``ask`` decisions (sync or async,
    returning ``True`` to approve). Use :meth:`decide` for a side-effect-free
    answer and :meth:`before_tool_call` as the hook; :meth:`check` /
    :meth:`bind` validate the rules against the tools. See the module docstring
    for the matching rules and the TOML shape (:meth:`from_toml`).
    """

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        *,
        default: Action = "deny",
        ask: ApprovalCallback | None = None,
    ) -> None:
        if default not in _ACTIONS:
            raise ConfigurationError(
                f"policy default must be one of allow, deny, ask (got {default!r})"
            )
        self.rules: tuple[Rule, ...] = tuple(rules)
        self.default: Action = default
        self.ask = ask
        self._annotations: dict[str, Mapping[str, Any]] = {}

    def __repr__(self) -> str:
        return f"Policy(rules={len(self.rules)}, default={self.default!r})"

    # -- pure decisions ---------------------------------------------------------

    def _decide_one(
        self, tool_name: str, plain: Mapping[str, Any], paths: Paths, annotations: Mapping[str, Any]
    ) -> Decision:
        for index, rule in enumerate(self.rules):
            if rule.matches(tool_name, plain, paths, annotations):
                return _rule_decision(rule, index, tool_name)
        return Decision(self.default, _default_reason(self.default, tool_name), None)

    def decide(self, tool_name: str, args: Any) -> Decision:
        """The decision for a call of ``tool_name`` with ``args`` (pure; ``ask`` is not resolved).

        ``args`` are the arguments ``before_tool_call`` sees; when they are
        :class:`~scriptgate.runtime.paths.ResolvedArguments`, their path arguments
        are matched as resolved paths, an array of paths element by element (the
        strictest answer wins).
        """
        plain = _plain_args(args)
        annotations = self._annotations.get(tool_name, {})
        try:
            single, arrays = _single_paths(args)
        except Exception as exc:
            return Decision("deny", f"a path argument was refused: {exc}")
        if not arrays:
            return self._decide_one(tool_name, plain, single, annotations)
        assert isinstance(args, ResolvedArguments)
        combinations = path_combinations(args.paths)
        if combinations is None:
            return Decision("deny", f'tool "{tool_name}" was given too many paths to judge')
        chosen = _strictest(
            self._decide_one(tool_name, plain, c, annotations) for c in combinations
        )
        return chosen or self._decide_one(tool_name, plain, {}, annotations)

    def preview(
        self, tool_name: str, known: Mapping[str, Any], unknown: Iterable[str] = ()
    ) -> Decision | None:
        """The decision when only some arguments are known, or ``None`` if it depends on the rest.

        ``known`` are arguments with known values (resolved ones when they are
        :class:`~scriptgate.runtime.paths.ResolvedArguments`), ``unknown`` the
        names of arguments present with values known only at run time; any other
        argument is missing. Rules are walked in order: a rule that cannot match
        is skipped; a rule that certainly matches decides; a rule whose match
        depends on an unknown argument makes the answer uncertain (``None``).
        """
        unknown_names = set(unknown) - set(known)
        single, arrays = _single_paths(known)
        if arrays:
            return None if unknown_names else self.decide(tool_name, known)
        annotations = self._annotations.get(tool_name, {})
        for index, rule in enumerate(self.rules):
            if not rule.matches_tool(tool_name) or not rule.matches_annotations(annotations):
                continue
            certain = True
            failed = False
            for name in rule.arguments:
                if name in unknown_names:
                    certain = False
                elif not rule.matches_argument(name, known, single):
                    failed = True
                    break
            if failed:
                continue
            if not certain:
                return None
            return _rule_decision(rule, index, tool_name)
        return Decision(self.default, _default_reason(self.default, tool_name), None)

    # -- the hook -----------------------------------------------------------------

    async def resolve(
        self, tool_name: str, args: Any, *, tool_call_id: str | None = None
    ) -> Decision:
        """:meth:`decide`, then resolve ``ask`` through the approval callback.

        The result's ``action`` is ``allow`` or ``deny``; ``asked`` tells whether the
        callback was consulted. No callback → deny ("approval was unavailable"); a
        callback that raises → deny with its error. The callback sees the
        arguments as the tool will receive them (path arguments resolved).
        """
        decision = self.decide(tool_name, args)
        if decision.action != "ask":
            return decision
        if self.ask is None:
            return Decision(
                "deny",
                f"{decision.reason}, but approval was unavailable (no approver is configured)",
                decision.rule,
                asked=True,
            )
        request = ApprovalRequest(tool_name, _plain_args(args), tool_call_id, decision)
        try:
            answer = self.ask(request)
            if inspect.isawaitable(answer):
                answer = await answer
        except Exception as exc:
            return Decision(
                "deny",
                f"{decision.reason}, but approval failed: {type(exc).__name__}: {exc}",
                decision.rule,
                asked=True,
            )
        if answer is True:
            return Decision("allow", f"{decision.reason}; approved", decision.rule, asked=True)
        return Decision("deny", f"{decision.reason}; not approved", decision.rule, asked=True)

    def walk_filter(
        self, tool_name: str, args: ResolvedArguments, decision: Decision
    ) -> Callable[[ResolvedPath], bool]:
        """What a walking tool may enter or list after ``decision`` allowed the call.

        An entry stands in for each path argument of the call: it is admitted
        when the rules allow that call outright, or when it falls under the same
        ``ask`` rule (or ``ask`` default) the approver just said yes to.
        """
        plain = dict(_plain_args(args))
        annotations = self._annotations.get(tool_name, {})
        single, _arrays = _single_paths(args)
        names = list(single) or [n for n in args.paths]

        def admits(entry: ResolvedPath) -> bool:
            for name in names:
                paths = {**single, name: entry}
                verdict = self._decide_one(tool_name, plain, paths, annotations)
                if verdict.action == "allow":
                    continue
                if verdict.action == "ask" and decision.asked and verdict.rule == decision.rule:
                    continue
                return False
            return True

        return admits

    async def before_tool_call(
        self, ctx: BeforeToolCallContext, signal: AbortSignal | None = None
    ) -> PolicyVerdict:
        """The hook: block denied calls with ``Denied by policy: <reason>``.

        Allowed calls get a non-blocking :class:`PolicyVerdict` carrying the decision;
        for a walking tool the arguments object is restricted to what the rules
        admit (:meth:`walk_filter`).
        """
        args = ctx.args
        decision = await self.resolve(ctx.tool_call.name, args, tool_call_id=ctx.tool_call.id)
        if decision.action == "allow":
            if isinstance(args, ResolvedArguments) and args.walks:
                args.restrict(self.walk_filter(ctx.tool_call.name, args, decision))
            return PolicyVerdict(block=False, decision=decision)
        return PolicyVerdict(
            block=True, reason=f"Denied by policy: {decision.reason}", decision=decision
        )

    # -- validation against the tools ---------------------------------------------

    def bind(self, tools: Iterable[AgentTool], *, strict: bool = True) -> list[PolicyProblem]:
        """Learn the tools' annotations and :meth:`check` the rules against them.

        With ``strict`` (the default) the first error raises
        :class:`~scriptgate.errors.ConfigurationError`; the other problems (the
        warnings, and with ``strict=False`` the errors too) are returned.
        Annotations of tools the policy was never bound to have MCP's defaults.
        """
        tool_list = list(tools)
        seen: dict[str, Mapping[str, Any]] = {}
        for item in tool_list:
            seen.setdefault(item.name, dict(item.annotations))  # first by name, as calls resolve
        self._annotations.update(seen)
        problems = self.check(tool_list)
        if strict:
            for problem in problems:
                if problem.level == "error":
                    raise ConfigurationError(f"policy {problem}")
        return problems

    def check(self, tools: Iterable[AgentTool]) -> list[PolicyProblem]:
        """Validate the rules against ``tools`` (pure); see :class:`PolicyProblem`.

        Errors: an argument none of the rule's tools has (with a hint when it is a
        rule key such as ``reason`` written after ``[rules.arguments]``), a pattern
        whose type the argument can never have, a path pattern with ``.`` or
        ``..`` segments (resolved paths have none). Warnings: a rule that matches
        no tool, a rule an earlier one always decides first, a path-looking
        pattern on an argument the tool does not declare as a path (matched as
        plain text).
        """
        return check_policy(self, list(tools))

    # -- loading ------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        ask: ApprovalCallback | None = None,
        source: str = "policy",
    ) -> Policy:
        """Build a policy from parsed TOML-shaped data; errors name ``source`` and the rule."""
        rules, default = policy_parts(data, source)
        return cls(rules, default=default, ask=ask)

    @classmethod
    def from_toml(
        cls, path_or_text: str | os.PathLike[str], *, ask: ApprovalCallback | None = None
    ) -> Policy:
        """Load a policy from a TOML file or TOML text.

        A :class:`os.PathLike` is a file. A ``str`` is a file when it names an existing
        file or is a single line ending in ``.toml``; otherwise it is TOML text.
        Every problem raises :class:`~scriptgate.errors.ConfigurationError` naming
        the file, the rule index and what is wrong.
        """
        data, source = read_policy_toml(path_or_text)
        return cls.from_dict(data, ask=ask, source=source)
