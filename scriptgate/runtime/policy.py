"""Permission policies: ordered allow / deny / ask rules, as a ``before_tool_call`` hook.

A :class:`Policy` holds an ordered list of :class:`Rule`\\ s and a default action.
For a call, the **first** rule whose tool pattern, annotation patterns and
argument patterns all match decides; when no rule matches, ``default`` decides.
``ask`` calls the approval callback (sync or async; it may prompt a human); with
no callback, an ``ask`` becomes a denial whose reason says approval was
unavailable. This module decides; it resolves nothing itself (path arguments
arrive resolved, :mod:`scriptgate.runtime.paths`) and touches no file.

Used as a hook (``Policy.before_tool_call``), a denial blocks the call: the model
(or the script, as ``ToolDenied``) reads ``Denied by policy: <reason>``. The same
rules run without side effects through :meth:`Policy.decide` (``scriptgate check``
previews them). :meth:`Policy.check` validates a policy against the tools it
names; :meth:`Policy.bind` does that and tells the policy the tools' annotations.

Matching rules
--------------
- **Tool patterns** are globs over tool names with :mod:`fnmatch` syntax
  (``*`` any characters, ``?`` one character, ``[abc]`` a set), case-sensitive;
  a pattern matches a tool by its wire name *or* by the identifier a script
  calls it by (``a_b`` matches the tool ``a-b``); a list matches when any does.
- **Annotation patterns** (``[rules.annotations]``) match the tool's MCP
  annotations (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
  ``openWorldHint``, ``title``) by equality. An absent hint has MCP's default
  (``readOnlyHint = false``, ``destructiveHint = true`` unless the tool is
  read-only, ``idempotentHint = false``, ``openWorldHint = true``), so a tool
  that says nothing counts as destructive: ``deny destructive`` fails closed.
  The policy knows a tool's annotations once :meth:`Policy.bind` saw it.
- **Argument patterns** (``[rules.arguments]``) are matched against the
  validated, coerced — and, for path arguments, resolved — arguments, one
  top-level argument each; all of them must match. A list of patterns matches
  when any does. A missing argument never matches (but a tool may declare what
  a missing path means: the file tools' missing ``path`` is the root, ``"."``).
  Non-string patterns (numbers, booleans) match equal values (booleans only
  equal booleans).
- **Path arguments** are the ones the tool declares
  (:class:`~scriptgate.runtime.paths.PathArguments`): the pipeline has already
  turned them into the real path the tool will open — symlinks followed,
  absolute and ``..`` spellings canonicalised, escapes refused — so
  ``/abs/root/.git/config``, ``../root/.git/config`` and a link into ``.git``
  all arrive as ``.git/config``. A relative pattern matches the root-relative
  form (``"."`` is the root), an absolute pattern (``/srv/**``) the real
  absolute path. Path globs: ``*`` any characters within one segment (not
  ``/``), ``?`` one character other than ``/``, ``[abc]`` a set, ``**`` as a
  whole segment zero or more segments (``src/**`` matches ``src`` and everything
  below; ``**/*.py`` matches ``a.py`` and ``x/y/a.py``). An array of paths is
  judged path by path and the call gets the strictest answer (deny, then ask,
  then allow). A walking tool (``find``, ``grep``, ``ls``) lists and descends
  only into entries the same rules allow for that tool — or that fall under
  the ``ask`` rule a human just approved for the call — so a denied subtree is
  neither walked nor listed.
- **Any other string argument is plain text**: no normalisation at all. A
  pattern without glob characters is an exact value (``boss@example.com`` does
  not match ``attacker@evil.example/../boss@example.com``). In text, ``*`` is a
  run of *word* characters — letters, digits and ``_ . - + = % ~`` — and ``?``
  one of them; neither crosses ``/``, ``:``, ``@``, ``,``, whitespace or shell
  punctuation, so ``*.example.com`` matches ``api.example.com`` but not
  ``evil.example:x@a.example.com``, and ``git status*`` does not admit
  ``git status; curl … | sh``. ``**`` is any text at all (separators
  included): ``https://api.example.com/**`` admits every URL that starts with
  that prefix — and, being unnormalised, not
  ``https://evil.example/../api.example.com/v1``. ``[abc]`` is one character
  of the set, ``[!abc]`` one word character outside it.

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
    tool = "*"
    action = "deny"
    reason = "no destructive tools"   # keys of the rule come before its sub-tables
    [rules.annotations]
    destructiveHint = true

A key written after ``[rules.arguments]`` belongs to the arguments table (TOML's
rule); :meth:`Policy.check` reports an argument the named tools do not have —
with a hint when it is a rule key such as ``reason``.
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import keyword
import os
import posixpath
import re
import tomllib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic import BaseModel

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.paths import ResolvedArguments, ResolvedPath, path_combinations
from scriptgate.runtime.types import BeforeToolCallContext, BeforeToolCallResult

if TYPE_CHECKING:
    from scriptgate.runtime.tool import AgentTool

__all__ = [
    "ANNOTATION_DEFAULTS",
    "Action",
    "ApprovalCallback",
    "ApprovalRequest",
    "Decision",
    "Policy",
    "PolicyProblem",
    "PolicyVerdict",
    "Rule",
    "match_path_glob",
    "match_text_glob",
    "tool_identifier",
]

Action: TypeAlias = Literal["allow", "deny", "ask"]
"""What a rule (or the default) says about a call."""

_ACTIONS: tuple[Action, ...] = ("allow", "deny", "ask")

Pattern: TypeAlias = str | int | float | bool
"""One argument pattern: a glob (``str``; path or text, by the argument) or an exact value."""

ANNOTATION_DEFAULTS: Mapping[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
"""MCP's values for hints a tool does not declare (``destructiveHint`` is ``False`` for a
read-only tool)."""

_ANNOTATION_KEYS = frozenset({*ANNOTATION_DEFAULTS, "title"})


# --------------------------------------------------------------------------- names


_INVALID_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


@functools.lru_cache(maxsize=4096)
def tool_identifier(name: str) -> str:
    """The identifier a script calls tool ``name`` by, before collisions are resolved.

    The sandbox's binding rule (:func:`scriptgate.sandbox.naming.to_identifier`, which
    ``runtime`` may not import; ``test_policy_tool_identifier_matches_the_sandbox_binding``
    keeps the two in step): ``"a-b"`` → ``a_b``, ``"1st-tool"`` → ``tool_1st_tool``, a
    keyword gets a trailing ``_``. Names the sandbox reserves for its builtins
    (``print``, ``gather``…) and collision suffixes (``a_b_2``) are the sandbox's own:
    a rule names such a tool by its wire name.
    """
    ident = _INVALID_IDENTIFIER.sub("_", name)
    if not ident or ident[0].isdigit() or ident[0] == "_":
        ident = "tool_" + ident
    while keyword.iskeyword(ident) or keyword.issoftkeyword(ident):
        ident += "_"
    return ident


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
        out.append(_translate_segment(segment, "[^/]", "/"))
        if index != last:
            out.append("/")
    return re.compile("".join(out), re.DOTALL)


def _set_end(segment: str, i: int) -> int:
    n = len(segment)
    j = i + 1
    if j < n and segment[j] in "!^":
        j += 1
    if j < n and segment[j] == "]":
        j += 1
    return segment.find("]", j)


def _translate_segment(segment: str, one: str, excluded: str) -> str:
    """Glob → regex for one segment: ``*`` is ``one*``, ``?`` is ``one``, sets stay in ``one``."""
    parts: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "*":
            while i + 1 < n and segment[i + 1] == "*":
                i += 1
            parts.append(f"{one}*")
        elif char == "?":
            parts.append(one)
        elif char == "[":
            end = _set_end(segment, i)
            if end == -1:
                parts.append(re.escape(char))
            else:
                body = segment[i + 1 : end]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                body = body.replace("\\", "\\\\")
                if negate:
                    parts.append(f"(?![{body}]){one}")
                else:
                    parts.append(f"[{body}]")
                i = end
        else:
            parts.append(re.escape(char))
        i += 1
    return "".join(parts)


_WORD = r"[\w.\-+=%~]"
"""What ``*`` and ``?`` stand for in plain text (see the module docstring)."""


@functools.lru_cache(maxsize=1024)
def _compile_text_glob(pattern: str) -> re.Pattern[str]:
    """Translate a plain-text glob: ``**`` any text, ``*``/``?`` word characters only."""
    pieces = pattern.split("**")
    return re.compile(".*".join(_translate_segment(p, _WORD, "") for p in pieces), re.DOTALL)


def _has_glob(pattern: str) -> bool:
    return any(c in pattern for c in "*?[")


def _normalise_pattern(pattern: str) -> str:
    if not pattern:
        return pattern
    return posixpath.normpath(pattern)


def match_path_glob(pattern: str, value: str) -> bool:
    """Whether the canonical path ``value`` matches the path glob ``pattern``.

    ``value`` is a resolved path (see the module docstring); both are normalised
    lexically (``./a`` → ``a``, ``a//b`` → ``a/b``), which changes nothing for a
    resolved value. ``*`` stays within a segment; ``**`` as a whole segment spans
    zero or more segments.
    """
    return (
        _compile_path_glob(_normalise_pattern(pattern)).fullmatch(_normalise_pattern(value))
        is not None
    )


def match_text_glob(pattern: str, value: str) -> bool:
    """Whether the plain text ``value`` matches ``pattern`` (no normalisation; see the
    module docstring): equality without glob characters, ``*`` word characters,
    ``**`` anything."""
    if not _has_glob(pattern):
        return pattern == value
    return _compile_text_glob(pattern).fullmatch(value) is not None


def _match_path(pattern: Pattern, path: ResolvedPath) -> bool:
    if not isinstance(pattern, str):
        return False
    if pattern.startswith("/"):
        return match_path_glob(pattern, path.absolute)
    return path.relative is not None and match_path_glob(pattern, path.relative)


def _match_value(pattern: Pattern, value: Any) -> bool:
    if isinstance(pattern, str):
        return isinstance(value, str) and match_text_glob(pattern, value)
    if isinstance(pattern, bool) or isinstance(value, bool):
        return isinstance(pattern, bool) and isinstance(value, bool) and pattern is value
    if isinstance(value, int | float):
        return bool(pattern == value)
    return False


def effective_annotations(annotations: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's annotations with MCP's defaults filled in (see :data:`ANNOTATION_DEFAULTS`)."""
    out: dict[str, Any] = dict(ANNOTATION_DEFAULTS)
    if annotations.get("readOnlyHint") is True:
        out["destructiveHint"] = False
    out.update({k: v for k, v in annotations.items() if v is not None})
    return out


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
        return _check_policy(self, list(tools))

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


# --------------------------------------------------------------------------- checking

_RULE_KEY_NAMES = frozenset({"tool", "action", "reason", "arguments", "annotations"})


def _schema_properties(item: AgentTool) -> tuple[dict[str, Any], bool]:
    """``(properties, open)``: the declared top-level properties and whether others may come."""
    schema: Any = item.parameters_schema
    if not isinstance(schema, Mapping):
        return {}, True
    props = schema.get("properties")
    properties = dict(props) if isinstance(props, Mapping) else {}
    extra = schema.get("additionalProperties", True)
    is_open = extra is not False and (not properties or bool(schema.get("patternProperties")))
    return properties, is_open


def _schema_types(prop: Any) -> set[str] | None:
    """The JSON types a property may have, or ``None`` when the schema does not say simply."""
    if not isinstance(prop, Mapping):
        return None
    kind = prop.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list) and all(isinstance(k, str) for k in kind):
        return set(kind)
    if "enum" in prop and isinstance(prop["enum"], list):
        found: set[str] = set()
        for value in prop["enum"]:
            found.add(
                "boolean"
                if isinstance(value, bool)
                else "string"
                if isinstance(value, str)
                else "number"
                if isinstance(value, int | float)
                else "other"
            )
        return found
    return None


def _pattern_fits(pattern: Pattern, types: set[str], is_path: bool) -> bool:
    if isinstance(pattern, str):
        return "string" in types or (is_path and "array" in types)
    if isinstance(pattern, bool):
        return "boolean" in types
    if isinstance(pattern, int) or (isinstance(pattern, float) and pattern.is_integer()):
        return bool(types & {"integer", "number"})
    return "number" in types


def _is_path_argument(item: AgentTool, name: str) -> bool:
    return item.paths is not None and name in item.paths.names


def _path_pattern_error(pattern: str) -> str | None:
    segments = pattern.split("/")
    if any(seg in (".", "..") for seg in segments[1:] if seg) or (
        segments[0] == ".." or (segments[0] == "." and len(segments) > 1 and segments[1] == "..")
    ):
        return "has '..' segments, which a resolved path never has"
    return None


def _check_policy(policy: Policy, tools: list[AgentTool]) -> list[PolicyProblem]:
    problems: list[PolicyProblem] = []
    matched_by: list[list[AgentTool]] = []
    for index, rule in enumerate(policy.rules):
        matched = [t for t in tools if rule.matches_tool(t.name)]
        matched_by.append(matched)
        if not matched:
            problems.append(
                PolicyProblem(
                    "warning",
                    index,
                    f"tool {rule.tool!r} matches no available tool, so the rule never applies",
                )
            )
            continue
        if rule.annotations and not any(rule.matches_annotations(t.annotations) for t in matched):
            problems.append(
                PolicyProblem(
                    "warning",
                    index,
                    "no matching tool has these annotations; the rule never applies",
                )
            )
        names = ", ".join(t.name for t in matched[:5]) + (", ..." if len(matched) > 5 else "")
        every = set(rule.arguments)
        somewhere = {n for t in matched for n in _schema_properties(t)[0]}
        if (
            len(every) > 1
            and every <= somewhere
            and not any(
                _schema_properties(t)[1] or every <= set(_schema_properties(t)[0]) for t in matched
            )
        ):
            problems.append(
                PolicyProblem(
                    "error",
                    index,
                    f"no tool among {names} has all of the arguments "
                    f"{', '.join(sorted(every))}, and a rule matches only when every one of "
                    "its argument patterns does: split it into one rule per argument",
                )
            )
        for name, raw in rule.arguments.items():
            patterns = (raw,) if isinstance(raw, str | int | float | bool) else tuple(raw)
            having: list[tuple[AgentTool, Any]] = []
            open_schema = False
            for item in matched:
                properties, is_open = _schema_properties(item)
                if name in properties:
                    having.append((item, properties[name]))
                elif is_open:
                    open_schema = True
            if not having and not open_schema:
                hint = ""
                if name in _RULE_KEY_NAMES:
                    hint = (
                        f" — {name!r} looks like a key of the rule: in TOML, a key written after "
                        "[rules.arguments] belongs to the arguments table; move it above that line"
                    )
                problems.append(
                    PolicyProblem(
                        "error",
                        index,
                        f"argument {name!r} is not an argument of {names}, so the rule can "
                        f"never match{hint}",
                    )
                )
                continue
            for pattern in patterns:
                fits = open_schema
                for item, prop in having:
                    types = _schema_types(prop)
                    if types is None or _pattern_fits(
                        pattern, types, _is_path_argument(item, name)
                    ):
                        fits = True
                if not fits:
                    problems.append(
                        PolicyProblem(
                            "error",
                            index,
                            f"arguments.{name} = {pattern!r} can never match: the argument is "
                            f"never a {type(pattern).__name__}",
                        )
                    )
                if not isinstance(pattern, str):
                    continue
                as_path = [item for item, _prop in having if _is_path_argument(item, name)]
                if as_path:
                    error = _path_pattern_error(pattern)
                    if error is not None:
                        problems.append(
                            PolicyProblem(
                                "error",
                                index,
                                f"arguments.{name} = {pattern!r} {error}, so it can never match",
                            )
                        )
                text_only = [
                    item.name for item, _prop in having if not _is_path_argument(item, name)
                ]
                if text_only and "/" in pattern and "://" not in pattern:
                    problems.append(
                        PolicyProblem(
                            "warning",
                            index,
                            f"arguments.{name} = {pattern!r} looks like a path, but "
                            f"{', '.join(text_only)} does not declare {name!r} as a path: it is "
                            "matched as plain text, unresolved",
                        )
                    )
    for index in range(len(policy.rules)):
        if not matched_by[index]:
            continue
        mine = {id(t) for t in matched_by[index]}
        for earlier in range(index):
            other = policy.rules[earlier]
            if other.arguments or other.annotations:
                continue
            if mine <= {id(t) for t in matched_by[earlier]}:
                problems.append(
                    PolicyProblem(
                        "warning",
                        index,
                        f"never decides anything: rules[{earlier}] decides every call of "
                        f"{', '.join(t.name for t in matched_by[index])} first",
                    )
                )
                break
    return problems


def _looks_like_path(value: str) -> bool:
    if "\n" in value or "=" in value:
        return False
    return value.endswith(".toml") or os.path.isfile(value)


_RULE_KEYS = frozenset({"tool", "action", "arguments", "reason", "annotations"})


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
            f"{where}: unknown key {unknown[0]!r} "
            "(expected tool, action, reason, arguments, annotations)"
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
    raw_annotations = raw.get("annotations", {})
    if not isinstance(raw_annotations, Mapping):
        raise ConfigurationError(f"{where}: 'annotations' must be a table ([rules.annotations])")
    for name, value in raw_annotations.items():
        if name not in _ANNOTATION_KEYS:
            raise ConfigurationError(
                f"{where}: unknown annotation {name!r} (expected one of "
                f"{', '.join(sorted(_ANNOTATION_KEYS))})"
            )
        expected = str if name == "title" else bool
        if not isinstance(value, expected):
            raise ConfigurationError(
                f"{where}: annotations.{name} must be a {expected.__name__.replace('bool', 'boolean')}"
            )
    return Rule(
        tool=tool,
        action=action,
        arguments=arguments,
        reason=reason,
        annotations=dict(raw_annotations),
    )
