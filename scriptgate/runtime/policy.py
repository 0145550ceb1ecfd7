"""Permission policies: ordered allow / deny / ask rules, as a ``before_tool_call`` hook.

A :class:`Policy` holds an ordered list of :class:`Rule`\\ s and a default action.
For a call, the **first** rule whose tool pattern and argument patterns all match
decides; when no rule matches, ``default`` decides. ``ask`` calls the approval
callback (sync or async; it may prompt a human); with no callback, an ``ask``
becomes a denial whose reason says approval was unavailable.

Used as a hook (``Policy.before_tool_call``), a denial blocks the call: the model
(or the script, as ``ToolDenied``) reads ``Denied by policy: <reason>``. The same
rules run without side effects through :meth:`Policy.decide` (``scriptgate check``
previews them).

Matching rules
--------------
- **Tool patterns** are globs over tool names with :mod:`fnmatch` syntax
  (``*`` any characters, ``?`` one character, ``[abc]`` a set), case-sensitive;
  a list of patterns matches when any does.
- **Argument patterns** (``[rules.arguments]``) are matched against the
  validated, coerced arguments, one top-level argument each; all of them must
  match. A *string* pattern is a path-style glob (below) that must match a
  *string* argument. Any other pattern (a number, a boolean) matches an
  argument equal to it (booleans only equal booleans). A list of patterns
  matches when any does. A missing argument never matches.
- **Path globs**: ``*`` matches any characters within one path segment (not
  ``/``), ``?`` one character other than ``/``, ``[abc]`` a character set,
  ``**`` as a whole segment matches zero or more segments (``src/**`` matches
  ``src`` itself and everything below it; ``**/*.py`` matches ``a.py`` and
  ``x/y/a.py``); a ``**`` inside a segment acts as ``*``. Before matching, string
  arguments and patterns are normalised like paths (``./a`` → ``a``,
  ``a//b`` → ``a/b``, ``a/../b`` → ``b``), so ``src/../secret`` does **not** match
  ``src/**``. A pattern without glob characters is therefore an exact value.

The TOML file
-------------
.. code-block:: toml

    default = "deny"          # allow | deny | ask, for calls no rule matches
    [[rules]]
    tool = "read"             # a tool name or a glob over names (or a list)
    action = "allow"
    [rules.arguments]
    path = "src/**"           # a glob (or exact value) per argument (or a list)
    [[rules]]
    tool = "write"
    action = "deny"
    reason = "read-only run"  # shown to the model and in the audit log
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import os
import posixpath
import re
import tomllib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeAlias

from pydantic import BaseModel

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.types import BeforeToolCallContext, BeforeToolCallResult

__all__ = [
    "Action",
    "ApprovalCallback",
    "ApprovalRequest",
    "Decision",
    "Policy",
    "PolicyVerdict",
    "Rule",
    "match_path_glob",
]

Action: TypeAlias = Literal["allow", "deny", "ask"]
"""What a rule (or the default) says about a call."""

_ACTIONS: tuple[Action, ...] = ("allow", "deny", "ask")

Pattern: TypeAlias = str | int | float | bool
"""One argument pattern: a path glob (``str``) or an exact value."""


# --------------------------------------------------------------------------- globs


@functools.lru_cache(maxsize=1024)
def _compile_path_glob(pattern: str) -> re.Pattern[str]:
    """Translate a path glob (``*``, ``?``, ``[...]``, ``**``) into an anchored regex."""
    segments: list[str] = []
    for segment in pattern.split("/"):
        if segment == "**" and segments and segments[-1] == "**":
            continue  # ``**/**`` is ``**``
        segments.append(segment)
    out: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            if index == last:
                # trailing ``/**``: the directory itself or anything below it
                if out:
                    out[-1] = out[-1].removesuffix("/")
                    out.append("(?:/.*)?")
                else:
                    out.append(".*")
            else:
                out.append("(?:[^/]*/)*")  # zero or more whole segments
            continue
        out.append(_translate_segment(segment))
        if index != last:
            out.append("/")
    return re.compile("".join(out), re.DOTALL)


def _translate_segment(segment: str) -> str:
    parts: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            parts.append("[^/]*")
        elif char == "?":
            parts.append("[^/]")
        elif char == "[":
            end = segment.find("]", i + 2 if i + 1 < n and segment[i + 1] in "!^" else i + 1)
            if end == -1:
                parts.append(re.escape(char))
            else:
                body = segment[i + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                parts.append(f"[{'^/' if negate else ''}{body}]")
                i = end
        else:
            parts.append(re.escape(char))
        i += 1
    return "".join(parts)


def _normalise_path(value: str) -> str:
    if not value:
        return value
    return posixpath.normpath(value)


def match_path_glob(pattern: str, value: str) -> bool:
    """Whether ``value`` matches the path glob ``pattern`` (see the module docstring).

    Both are normalised like paths first. ``*`` stays within a segment; ``**`` as a
    whole segment spans zero or more segments.
    """
    return (
        _compile_path_glob(_normalise_path(pattern)).fullmatch(_normalise_path(value)) is not None
    )


def _match_value(pattern: Pattern, value: Any) -> bool:
    if isinstance(pattern, str):
        return isinstance(value, str) and match_path_glob(pattern, value)
    if isinstance(pattern, bool) or isinstance(value, bool):
        return isinstance(pattern, bool) and isinstance(value, bool) and pattern is value
    if isinstance(value, int | float):
        return bool(pattern == value)
    return False


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class Rule:
    """One policy rule: when ``tool`` and every ``arguments`` pattern match, apply ``action``.

    ``tool`` is a tool name or a glob over names (or a sequence of them, any of
    which may match). ``arguments`` maps a top-level argument name to a pattern
    (a path glob string or an exact non-string value) or a sequence of patterns
    (any of which may match). ``reason`` is shown to the model and written to
    the audit log.
    """

    tool: str | Sequence[str]
    action: Action
    arguments: Mapping[str, Pattern | Sequence[Pattern]] = field(default_factory=dict)
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.action not in _ACTIONS:
            raise ConfigurationError(
                f"rule action must be one of allow, deny, ask (got {self.action!r})"
            )

    def matches_tool(self, tool_name: str) -> bool:
        """Whether the tool pattern(s) match ``tool_name``."""
        patterns = [self.tool] if isinstance(self.tool, str) else list(self.tool)
        return any(fnmatch.fnmatchcase(tool_name, pattern) for pattern in patterns)

    def matches_argument(self, name: str, args: Mapping[str, Any]) -> bool:
        """Whether the pattern(s) for argument ``name`` match ``args`` (missing never matches)."""
        if name not in args:
            return False
        pattern = self.arguments[name]
        value = args[name]
        if isinstance(pattern, str | int | float | bool):
            return _match_value(pattern, value)
        return any(_match_value(p, value) for p in pattern)

    def matches(self, tool_name: str, args: Mapping[str, Any]) -> bool:
        """Whether this rule applies to a call of ``tool_name`` with ``args``."""
        return self.matches_tool(tool_name) and all(
            self.matches_argument(name, args) for name in self.arguments
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


class Policy:
    """Ordered allow / deny / ask rules; the first match wins, else ``default``.

    ``ask`` is the approval callback used for ``ask`` decisions (sync or async,
    returning ``True`` to approve). Use :meth:`decide` for a side-effect-free
    answer and :meth:`before_tool_call` as the hook. See the module docstring
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

    def __repr__(self) -> str:
        return f"Policy(rules={len(self.rules)}, default={self.default!r})"

    # -- pure decisions ---------------------------------------------------------

    def decide(self, tool_name: str, args: Any) -> Decision:
        """The decision for a call of ``tool_name`` with ``args`` (pure; ``ask`` is not resolved)."""
        plain = _plain_args(args)
        for index, rule in enumerate(self.rules):
            if rule.matches(tool_name, plain):
                return _rule_decision(rule, index, tool_name)
        return Decision(self.default, _default_reason(self.default, tool_name), None)

    def preview(
        self, tool_name: str, known: Mapping[str, Any], unknown: Iterable[str] = ()
    ) -> Decision | None:
        """The decision when only some arguments are known, or ``None`` if it depends on the rest.

        ``known`` are arguments with known values, ``unknown`` the names of arguments
        present with values known only at run time; any other argument is missing.
        Rules are walked in order: a rule that cannot match is skipped; a rule that
        certainly matches decides; a rule whose match depends on an unknown
        argument makes the answer uncertain (``None``).
        """
        unknown_names = set(unknown)
        for index, rule in enumerate(self.rules):
            if not rule.matches_tool(tool_name):
                continue
            certain = True
            failed = False
            for name in rule.arguments:
                if name in unknown_names and name not in known:
                    certain = False
                elif not rule.matches_argument(name, known):
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
        callback that raises → deny with its error.
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

    async def before_tool_call(
        self, ctx: BeforeToolCallContext, signal: AbortSignal | None = None
    ) -> PolicyVerdict:
        """The hook: block denied calls with ``Denied by policy: <reason>``.

        Allowed calls get a non-blocking :class:`PolicyVerdict` carrying the decision.
        """
        decision = await self.resolve(ctx.tool_call.name, ctx.args, tool_call_id=ctx.tool_call.id)
        if decision.action == "allow":
            return PolicyVerdict(block=False, decision=decision)
        return PolicyVerdict(
            block=True, reason=f"Denied by policy: {decision.reason}", decision=decision
        )

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
        if not isinstance(data, Mapping):
            raise ConfigurationError(
                f"{source}: a policy must be a table, got {type(data).__name__}"
            )
        unknown = sorted(set(data) - {"default", "rules"})
        if unknown:
            raise ConfigurationError(
                f"{source}: unknown top-level key {unknown[0]!r} (expected 'default' and [[rules]])"
            )
        default = data.get("default", "deny")
        if default not in _ACTIONS:
            raise ConfigurationError(
                f"{source}: default must be one of allow, deny, ask (got {default!r})"
            )
        raw_rules = data.get("rules", [])
        if not isinstance(raw_rules, list):
            raise ConfigurationError(f"{source}: 'rules' must be an array of tables ([[rules]])")
        rules = [_parse_rule(raw, index, source) for index, raw in enumerate(raw_rules)]
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
        text: str
        if isinstance(path_or_text, os.PathLike) or _looks_like_path(path_or_text):
            path = Path(path_or_text)
            source = str(path_or_text)
            try:
                text = path.read_text(encoding="utf-8")
            except FileNotFoundError:
                raise ConfigurationError(f"{source}: policy file not found") from None
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigurationError(f"{source}: cannot read policy file: {exc}") from None
        else:
            source = "<policy text>"
            text = path_or_text
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigurationError(f"{source}: invalid TOML: {exc}") from None
        return cls.from_dict(data, ask=ask, source=source)


def _looks_like_path(value: str) -> bool:
    if "\n" in value or "=" in value:
        return False
    return value.endswith(".toml") or os.path.isfile(value)


_RULE_KEYS = frozenset({"tool", "action", "arguments", "reason"})


def _check_pattern(value: Any, where: str) -> Pattern:
    if isinstance(value, str | int | float | bool):
        return value
    raise ConfigurationError(
        f"{where} must be a string glob, a number or a boolean (got {type(value).__name__})"
    )


def _parse_rule(raw: Any, index: int, source: str) -> Rule:
    where = f"{source}: rules[{index}]"
    if not isinstance(raw, Mapping):
        raise ConfigurationError(f"{where}: a rule must be a table, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _RULE_KEYS)
    if unknown:
        raise ConfigurationError(
            f"{where}: unknown key {unknown[0]!r} (expected tool, action, arguments, reason)"
        )
    if "tool" not in raw:
        raise ConfigurationError(f"{where}: missing 'tool' (a tool name or glob)")
    tool = raw["tool"]
    if isinstance(tool, list):
        if not tool or not all(isinstance(t, str) and t for t in tool):
            raise ConfigurationError(f"{where}: 'tool' must be a non-empty string or list of them")
        tool = tuple(tool)
    elif not isinstance(tool, str) or not tool:
        raise ConfigurationError(f"{where}: 'tool' must be a non-empty string or list of them")
    if "action" not in raw:
        raise ConfigurationError(f"{where}: missing 'action' (allow, deny or ask)")
    action = raw["action"]
    if action not in _ACTIONS:
        raise ConfigurationError(
            f"{where}: 'action' must be one of allow, deny, ask (got {action!r})"
        )
    reason = raw.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise ConfigurationError(f"{where}: 'reason' must be a string")
    raw_args = raw.get("arguments", {})
    if not isinstance(raw_args, Mapping):
        raise ConfigurationError(f"{where}: 'arguments' must be a table ([rules.arguments])")
    arguments: dict[str, Pattern | tuple[Pattern, ...]] = {}
    for name, value in raw_args.items():
        arg_where = f"{where}: arguments.{name}"
        if isinstance(value, list):
            if not value:
                raise ConfigurationError(f"{arg_where} must not be an empty list")
            arguments[name] = tuple(_check_pattern(v, arg_where) for v in value)
        else:
            arguments[name] = _check_pattern(value, arg_where)
    return Rule(tool=tool, action=action, arguments=arguments, reason=reason)
