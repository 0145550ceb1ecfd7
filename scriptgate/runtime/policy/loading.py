"""Loading a policy from TOML-shaped data or a TOML file/text (:meth:`Policy.from_dict`,
:meth:`Policy.from_toml`).

Owns the accepted shape (``default``, ``[[rules]]`` with ``tool``, ``action``,
``reason``, ``[rules.arguments]``, ``[rules.annotations]``), the file-or-text rule of
``from_toml``, and every load error (one line naming the source, the rule index and what
is wrong).

Must not touch: decisions (:mod:`.hook`), matching (:mod:`.matching`, :mod:`.rules`),
the checks against tools (:mod:`.checking`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.policy.matching import _ACTIONS, _ANNOTATION_KEYS, Action, Pattern
from scriptgate.runtime.policy.rules import Rule

__all__ = ["policy_parts", "read_policy_toml"]


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


def policy_parts(data: Mapping[str, Any], source: str) -> tuple[list[Rule], Action]:
    """The rules and the default of TOML-shaped ``data``; errors name ``source`` and the rule."""
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{source}: a policy must be a table, got {type(data).__name__}")
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
    return rules, default


def read_policy_toml(path_or_text: str | os.PathLike[str]) -> tuple[dict[str, Any], str]:
    """The parsed TOML of a policy file or text, and the source name its errors use.

    A :class:`os.PathLike` is a file. A ``str`` is a file when it names an existing file or
    is a single line ending in ``.toml``; otherwise it is TOML text.
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
    return data, source
