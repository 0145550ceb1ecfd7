"""Validation of a policy against the tools it names (:meth:`Policy.check`).

Owns the findings (:class:`~.rules.PolicyProblem`): an argument no named tool has (with
the hint for a rule key written after ``[rules.arguments]``), a pattern whose type the
argument never has, ``..`` in a path pattern (errors); a rule that matches no tool, a
rule an earlier one always decides, a path-looking pattern on a non-path argument
(warnings).

Must not touch: decisions or the hook (:mod:`.hook`), loading (:mod:`.loading`). Pure: it
reads the tools' schemas and path declarations and changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scriptgate.runtime.policy.matching import Pattern
from scriptgate.runtime.policy.rules import PolicyProblem

if TYPE_CHECKING:
    from scriptgate.runtime.policy.hook import Policy
    from scriptgate.runtime.tool import AgentTool

__all__ = ["check_policy"]


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


def check_policy(policy: Policy, tools: list[AgentTool]) -> list[PolicyProblem]:
    """Every finding for ``policy``'s rules against ``tools``, rule by rule, in order."""
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
