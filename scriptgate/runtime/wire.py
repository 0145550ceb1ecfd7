"""The JSON wire form of messages, results and events (pi's camelCase keys, pi's key order).

``to_wire(record)`` turns any record of :mod:`scriptgate.runtime.types` into
plain JSON data: the discriminator (``type`` or ``role``) first, then the fields
in declaration order (which follows pi §1.5), ``None`` fields omitted like
JavaScript ``undefined``. ``from_wire(data)`` parses that form back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from scriptgate.runtime import types as t

__all__ = ["from_wire", "to_wire"]

_DISCRIMINATED: dict[str, type[Any]] = {}
_cls: type[Any]
for _cls in (
    t.TextContent,
    t.ImageContent,
    t.ThinkingContent,
    t.ToolCall,
    t.AgentStartEvent,
    t.AgentEndEvent,
    t.TurnStartEvent,
    t.TurnEndEvent,
    t.MessageStartEvent,
    t.MessageUpdateEvent,
    t.MessageEndEvent,
    t.ToolExecutionStartEvent,
    t.ToolExecutionUpdateEvent,
    t.ToolExecutionEndEvent,
):
    _DISCRIMINATED["type:" + str(_cls.__dataclass_fields__["type"].default)] = _cls
for _cls in (t.SystemMessage, t.UserMessage, t.AssistantMessage, t.ToolResultMessage):
    _DISCRIMINATED["role:" + str(_cls.__dataclass_fields__["role"].default)] = _cls

# Booleans that pi leaves out when false (they are optional flags on the result).
_OMIT_FALSE: dict[type[Any], frozenset[str]] = {
    t.AgentToolResult: frozenset({"is_error", "terminate"}),
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


_LAYOUTS: dict[type[Any], tuple[tuple[str, str], ...]] = {}


def _layout(cls: type[Any]) -> tuple[tuple[str, str], ...]:
    cached = _LAYOUTS.get(cls)
    if cached is not None:
        return cached
    names = [f.name for f in dataclasses.fields(cls)]
    first = [n for n in names if n in ("type", "role")]
    rest = [n for n in names if n not in ("type", "role")]
    layout = tuple((n, _camel(n)) for n in first + rest)
    _LAYOUTS[cls] = layout
    return layout


def to_wire(value: Any) -> Any:
    """Convert a record (or a list/dict of them) to pi's JSON form."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        omit_false = _OMIT_FALSE.get(cls, frozenset())
        out: dict[str, Any] = {}
        for name, key in _layout(cls):
            item = getattr(value, name)
            if item is None or (item is False and name in omit_false):
                continue
            out[key] = to_wire(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_wire(item) for item in value]
    if isinstance(value, Mapping):
        return {str(k): to_wire(v) for k, v in value.items()}
    return value


def _parse_usage(data: Any) -> t.Usage:
    cost = data.get("cost") or {}
    return t.Usage(
        input=data.get("input", 0),
        output=data.get("output", 0),
        cache_read=data.get("cacheRead", 0),
        cache_write=data.get("cacheWrite", 0),
        total_tokens=data.get("totalTokens", 0),
        cost=t.Cost(
            input=cost.get("input", 0),
            output=cost.get("output", 0),
            cache_read=cost.get("cacheRead", 0),
            cache_write=cost.get("cacheWrite", 0),
            total=cost.get("total", 0),
        ),
    )


def _parse_blocks(data: Any) -> tuple[Any, ...]:
    return tuple(from_wire(item) for item in (data or []))


def _parse_result(data: Any) -> t.AgentToolResult:
    return t.AgentToolResult(
        content=_parse_blocks(data.get("content")),
        details=data.get("details"),
        structured_content=data.get("structuredContent"),
        usage=_parse_usage(data["usage"]) if data.get("usage") is not None else None,
        is_error=bool(data.get("isError", False)),
        terminate=bool(data.get("terminate", False)),
    )


def _parse_user_content(data: Any) -> Any:
    return data if isinstance(data, str) else _parse_blocks(data)


_FIELD_PARSERS: dict[str, Callable[[Any], Any]] = {
    "usage": _parse_usage,
    "cost": lambda d: t.Cost(**{f: d.get(_camel(f), 0) for f in t.Cost.__dataclass_fields__}),
    "result": _parse_result,
    "message": lambda d: from_wire(d),
    "messages": lambda d: tuple(from_wire(m) for m in d),
    "tool_results": lambda d: tuple(from_wire(m) for m in d),
    "tools_removed": lambda d: tuple(t.ToolRemoval(name=r["name"]) for r in d),
    "tools_added": lambda d: tuple(d),
}


def from_wire(data: Any) -> Any:
    """Parse pi's JSON form of a message, content block or event back into a record.

    Raises ``ValueError`` for data that names no known ``type``/``role``.
    """
    if not isinstance(data, Mapping):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    if "role" in data:
        key = "role:" + str(data["role"])
    elif "type" in data:
        key = "type:" + str(data["type"])
    else:
        raise ValueError("a wire record needs a 'type' or a 'role'")
    cls = _DISCRIMINATED.get(key)
    if cls is None:
        raise ValueError(f"unknown wire record {key.replace(':', ' ')!r}")
    kwargs: dict[str, Any] = {}
    for name, wire_key in _layout(cls):
        if name in ("type", "role") or wire_key not in data:
            continue
        value = data[wire_key]
        if name == "content" and cls is not t.SystemMessage:
            value = _parse_user_content(value) if cls is t.UserMessage else _parse_blocks(value)
        elif name in _FIELD_PARSERS and value is not None:
            value = _FIELD_PARSERS[name](value)
        kwargs[name] = value
    if cls is t.ToolResultMessage and kwargs.get("content") is None:
        kwargs["content"] = ()
    return cls(**kwargs)
