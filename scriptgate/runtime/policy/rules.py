"""The policy's records: :class:`Rule` (and how one matches a call), :class:`Decision`,
:class:`ApprovalRequest`, :class:`PolicyVerdict`, :class:`PolicyProblem`.

Owns what one rule says and whether it applies to one call (tool pattern, annotation
patterns, argument patterns), and the plain values the policy hands out.

Must not touch: the order of rules and the default (:mod:`.hook`), the TOML shape
(:mod:`.loading`), the checks against tools (:mod:`.checking`). Imports
:mod:`.matching` and :mod:`scriptgate.runtime` records only.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.paths import ResolvedPath
from scriptgate.runtime.policy.matching import (
    _ACTIONS,
    _ANNOTATION_KEYS,
    Action,
    Pattern,
    _match_path,
    _match_value,
    effective_annotations,
    tool_identifier,
)
from scriptgate.runtime.types import BeforeToolCallResult

__all__ = [
    "ApprovalCallback",
    "ApprovalRequest",
    "Decision",
    "Paths",
    "PolicyProblem",
    "PolicyVerdict",
    "Rule",
]

# --------------------------------------------------------------------------- records


Paths: TypeAlias = Mapping[str, ResolvedPath]
"""One resolved path per path argument (an array is judged element by element)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One policy rule: when ``tool``, every ``annotations`` and every ``arguments``
    pattern match, apply ``action``.

    ``tool`` is a tool name or a glob over names (or a sequence of them, any of
    which may match); a name matches by wire name or script identifier.
    ``annotations`` maps an MCP hint to the value it must have. ``arguments``
    maps a top-level argument name to a pattern (a glob string — a path glob for
    a path argument, a text glob otherwise — or an exact non-string value) or a
    sequence of patterns (any of which may match). ``reason`` is shown to the
    model and written to the audit log.
    """

    tool: str | Sequence[str]
    action: Action
    arguments: Mapping[str, Pattern | Sequence[Pattern]] = field(default_factory=dict)
    reason: str | None = None
    annotations: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.action not in _ACTIONS:
            raise ConfigurationError(
                f"rule action must be one of allow, deny, ask (got {self.action!r})"
            )
        unknown = sorted(set(self.annotations) - _ANNOTATION_KEYS)
        if unknown:
            raise ConfigurationError(
                f"unknown tool annotation {unknown[0]!r} (expected one of "
                f"{', '.join(sorted(_ANNOTATION_KEYS))})"
            )

    @property
    def tool_patterns(self) -> tuple[str, ...]:
        """The tool pattern(s) as a tuple."""
        return (self.tool,) if isinstance(self.tool, str) else tuple(self.tool)

    def matches_tool(self, tool_name: str) -> bool:
        """Whether the tool pattern(s) match ``tool_name`` or its script identifier."""
        ident = tool_identifier(tool_name)
        return any(
            fnmatch.fnmatchcase(tool_name, pattern) or fnmatch.fnmatchcase(ident, pattern)
            for pattern in self.tool_patterns
        )

    def matches_annotations(self, annotations: Mapping[str, Any]) -> bool:
        """Whether every annotation pattern equals the tool's (MCP defaults filled in)."""
        if not self.annotations:
            return True
        actual = effective_annotations(annotations)
        return all(
            name in actual and actual[name] == value and type(actual[name]) is type(value)
            for name, value in self.annotations.items()
        )

    def _patterns(self, name: str) -> tuple[Pattern, ...]:
        pattern = self.arguments[name]
        if isinstance(pattern, str | int | float | bool):
            return (pattern,)
        return tuple(pattern)

    def matches_argument(
        self, name: str, args: Mapping[str, Any], paths: Paths | None = None
    ) -> bool:
        """Whether the pattern(s) for argument ``name`` match (missing never matches).

        A path argument (in ``paths``) is matched as a resolved path, any other
        string as plain text.
        """
        if paths and name in paths:
            resolved = paths[name]
            return any(_match_path(p, resolved) for p in self._patterns(name))
        if name not in args:
            return False
        value = args[name]
        return any(_match_value(p, value) for p in self._patterns(name))

    def matches(
        self,
        tool_name: str,
        args: Mapping[str, Any],
        paths: Paths | None = None,
        annotations: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether this rule applies to a call of ``tool_name`` with ``args``."""
        return (
            self.matches_tool(tool_name)
            and self.matches_annotations(annotations or {})
            and all(self.matches_argument(name, args, paths) for name in self.arguments)
        )


@dataclass(frozen=True, slots=True)
class Decision:
    """What the policy says about one call.

    ``action`` is ``allow``, ``deny`` or ``ask`` (from :meth:`Policy.decide`; the
    hook resolves ``ask`` into ``allow`` or ``deny`` and sets ``asked``).
    ``reason`` explains it (the rule's ``reason`` or a generated one); ``rule`` is
    the index of the deciding rule in ``Policy.rules``, or ``None`` for the default.
    """

    action: Action
    reason: str | None = None
    rule: int | None = None
    asked: bool = False

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object."""
        return {
            "action": self.action,
            "reason": self.reason,
            "rule": self.rule,
            "asked": self.asked,
        }


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What an approval callback is asked about: a call an ``ask`` decision covers."""

    tool_name: str
    arguments: Mapping[str, Any]
    tool_call_id: str | None
    decision: Decision


ApprovalCallback: TypeAlias = Callable[[ApprovalRequest], "Awaitable[bool] | bool"]
"""``ask(request) -> bool``: sync or async; ``True`` approves the call."""


@dataclass(frozen=True, slots=True)
class PolicyVerdict(BeforeToolCallResult):
    """The ``before_tool_call`` result of a :class:`Policy`: a block (or not) and its decision.

    An allowed call gets ``block=False`` (the pipeline proceeds, as for ``None``);
    :func:`scriptgate.runtime.hooks.compose_hooks` reads ``decision`` to tell the
    audit log why.
    """

    decision: Decision | None = None


@dataclass(frozen=True, slots=True)
class PolicyProblem:
    """A finding of :meth:`Policy.check`: ``level`` ``error`` (the rule cannot work as
    written) or ``warning``; ``rule`` is the rule index (``None`` for the policy)."""

    level: Literal["error", "warning"]
    rule: int | None
    message: str

    def __str__(self) -> str:
        where = f"rules[{self.rule}]: " if self.rule is not None else ""
        return f"{where}{self.message}"
