"""Tool declarations in the transcript (pi §6, pi-ai ``utils/transcript.ts``).

Tools are declared by system messages (``tools_added`` / ``tools_removed``);
replaying the system messages yields the current tool set. A declaration is a
plain dict with pi's wire keys: ``{"name", "description", "parameters"
[, "constrainedSampling"]}``.

Messages may be :class:`~scriptgate.runtime.types.SystemMessage` records or
their wire form (dicts with ``role``, ``toolsAdded``, ``toolsRemoved``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, TypeAlias

from scriptgate.errors import ToolDefinitionError
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import AgentMessage, SystemMessage, ToolRemoval, now_ms

__all__ = [
    "ToolDeclaration",
    "ToolLike",
    "ToolStateChanges",
    "TranscriptToolSupport",
    "TranscriptTools",
    "declarations_equal",
    "declare_tool_changes",
    "get_current_tools",
    "get_declared_tools",
    "get_tool_state_changes",
    "has_non_additive_tool_changes",
    "has_tool_redefinitions",
    "resolve_transcript_tools",
    "to_tool_declaration",
]

ToolDeclaration: TypeAlias = dict[str, Any]
"""``{"name", "description", "parameters"[, "constrainedSampling"]}`` (wire keys)."""

ToolLike: TypeAlias = AgentTool | Mapping[str, Any]
"""An executable tool or a declaration (a mapping with wire keys)."""

TranscriptToolSupport: TypeAlias = Literal["none", "additions", "changes"]


def _json_copy(value: Any, path: str, active: set[int]) -> Any:
    """A JSON round trip of ``value`` (pi ``JSON.parse(JSON.stringify(x))``).

    Non-string keys are dropped (JS symbol keys), non-finite floats become
    ``None`` (JSON ``null``); cycles and non-JSON values raise.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (Mapping, list, tuple)):
        marker = id(value)
        if marker in active:
            raise ToolDefinitionError(f"tool schema is cyclic at {path}")
        active.add(marker)
        try:
            if isinstance(value, Mapping):
                return {
                    key: _json_copy(item, f"{path}.{key}", active)
                    for key, item in value.items()
                    if isinstance(key, str)
                }
            return [_json_copy(item, f"{path}[{i}]", active) for i, item in enumerate(value)]
        finally:
            active.discard(marker)
    raise ToolDefinitionError(f"tool schema is not JSON: {type(value).__name__} value at {path}")


def _tool_fields(tool: ToolLike) -> tuple[str, str, Any, Any]:
    if isinstance(tool, AgentTool):
        return (
            tool.name,
            tool.description,
            tool.parameters_schema,
            getattr(tool, "constrained_sampling", None),
        )
    if isinstance(tool, Mapping):
        name = tool.get("name")
        if not isinstance(name, str):
            raise ToolDefinitionError(f"a tool declaration needs a string 'name', got {name!r}")
        sampling = tool.get("constrainedSampling", tool.get("constrained_sampling"))
        return name, str(tool.get("description", "")), tool.get("parameters"), sampling
    raise ToolDefinitionError(
        f"expected an AgentTool or a declaration mapping, got {type(tool).__name__}"
    )


def to_tool_declaration(tool: ToolLike) -> ToolDeclaration:
    """The transcript declaration of a tool: name, description, a JSON copy of the
    parameters, and ``constrainedSampling`` only when set (``False`` is kept).

    Executable and display fields (``execute``, ``label``, ``execution_mode``, …)
    are stripped. A cyclic or non-JSON schema raises :class:`ToolDefinitionError`.
    """
    name, description, parameters, sampling = _tool_fields(tool)
    active: set[int] = set()
    declaration: ToolDeclaration = {
        "name": name,
        "description": description,
        "parameters": _json_copy(parameters, "parameters", active),
    }
    if sampling is not None:
        declaration["constrainedSampling"] = _json_copy(sampling, "constrainedSampling", active)
    return declaration


def _canonical(tool: ToolLike) -> str:
    return json.dumps(to_tool_declaration(tool), ensure_ascii=False, separators=(",", ":"))


def declarations_equal(a: ToolLike, b: ToolLike) -> bool:
    """Whether two tools declare the same thing; key order matters (pi compares JSON text)."""
    return _canonical(a) == _canonical(b)


# --------------------------------------------------------------------------- transcript access


def _is_system(message: Any) -> bool:
    if isinstance(message, SystemMessage):
        return True
    return isinstance(message, Mapping) and message.get("role") == "system"


def _added(message: Any) -> Sequence[Mapping[str, Any]]:
    if isinstance(message, SystemMessage):
        return message.tools_added or ()
    value = message.get("toolsAdded")
    return value if isinstance(value, Sequence) else ()


def _removed_names(message: Any) -> list[str]:
    if isinstance(message, SystemMessage):
        entries: Iterable[Any] = message.tools_removed or ()
    else:
        value = message.get("toolsRemoved")
        entries = value if isinstance(value, Sequence) else ()
    names: list[str] = []
    for entry in entries:
        if isinstance(entry, ToolRemoval):
            names.append(entry.name)
        elif isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            names.append(entry["name"])
    return names


def _system_messages(messages: Iterable[Any]) -> list[Any]:
    return [m for m in messages if _is_system(m)]


def _replay(system_messages: Iterable[Any]) -> dict[str, Mapping[str, Any]]:
    tools: dict[str, Mapping[str, Any]] = {}
    for message in system_messages:
        for name in _removed_names(message):
            tools.pop(name, None)
        for declaration in _added(message):
            tools[str(declaration.get("name"))] = declaration
    return tools


def get_current_tools(messages: Iterable[Any]) -> list[Mapping[str, Any]]:
    """The tools declared by the system messages (pi ``getCurrentTools``).

    Per message, removals apply first, then additions; a re-added name keeps its
    place unless it was removed first (then it moves to the end). Non-system
    messages are ignored.
    """
    return list(_replay(_system_messages(messages)).values())


def get_declared_tools(messages: Iterable[Any]) -> list[Mapping[str, Any]]:
    """Every tool ever declared: latest definition, first-declaration order."""
    tools: dict[str, Mapping[str, Any]] = {}
    for message in _system_messages(messages):
        for declaration in _added(message):
            tools[str(declaration.get("name"))] = declaration
    return list(tools.values())


@dataclass(frozen=True, slots=True)
class ToolStateChanges:
    """What a system message must declare to go from one tool set to another."""

    tools_added: tuple[ToolDeclaration, ...] = ()
    tools_removed: tuple[ToolRemoval, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.tools_added or self.tools_removed)


def get_tool_state_changes(
    previous: Iterable[ToolLike], current: Iterable[ToolLike]
) -> ToolStateChanges:
    """The delta from ``previous`` to ``current`` (pi ``getToolStateChanges``).

    Added: tools of ``current`` (in its order) that are new or whose definition
    differs; removed: previous tools that are gone or changed. A changed
    definition is a removal plus an addition. Names are exact.
    """
    previous_list = list(previous)
    current_list = list(current)
    before: dict[str, ToolLike] = {}
    for tool in previous_list:
        before[_tool_fields(tool)[0]] = tool
    after: dict[str, ToolLike] = {}
    for tool in current_list:
        after[_tool_fields(tool)[0]] = tool
    added: list[ToolDeclaration] = []
    for tool in current_list:
        name = _tool_fields(tool)[0]
        old = before.get(name)
        if old is None or not declarations_equal(old, tool):
            added.append(to_tool_declaration(tool))
    removed: list[ToolRemoval] = []
    for tool in previous_list:
        name = _tool_fields(tool)[0]
        new = after.get(name)
        if new is None or not declarations_equal(tool, new):
            removed.append(ToolRemoval(name))
    return ToolStateChanges(tuple(added), tuple(removed))


def _non_additive(message: Any, seen: set[str]) -> bool:
    """Whether ``message`` removes or re-declares a name (updates ``seen``)."""
    hit = bool(_removed_names(message))
    for declaration in _added(message):
        name = str(declaration.get("name"))
        if name in seen:
            hit = True
        seen.add(name)
    return hit


def has_non_additive_tool_changes(messages: Iterable[Any]) -> bool:
    """Any removal, or any re-declaration of a name declared before (even identical,
    even after a removal)."""
    seen: set[str] = set()
    result = False
    for message in _system_messages(messages):
        if _non_additive(message, seen):
            result = True
    return result


def has_tool_redefinitions(messages: Iterable[Any]) -> bool:
    """Deprecated in pi: whether a *different* definition reuses a declared name."""
    declared: dict[str, Mapping[str, Any]] = {}
    for message in _system_messages(messages):
        for declaration in _added(message):
            name = str(declaration.get("name"))
            old = declared.get(name)
            if old is not None and not declarations_equal(old, declaration):
                return True
            declared[name] = declaration
    return False


@dataclass(frozen=True, slots=True)
class TranscriptTools:
    """``request_tools`` go in the request's top-level tool list; the first
    ``folded_system_messages`` system messages are already accounted for by them."""

    request_tools: tuple[Mapping[str, Any], ...]
    folded_system_messages: int


def resolve_transcript_tools(
    messages: Sequence[Any], support: TranscriptToolSupport
) -> TranscriptTools:
    """Split the transcript's tool declarations for a transport (pi ``resolveTranscriptTools``).

    - ``"none"``: everything folds into the top-level list;
    - ``"additions"``: fold up to the last removal or re-declaration (at least the
      leading system message); later additions stay in place;
    - ``"changes"``: nothing folds; every system message declares in place.
    """
    if support not in ("none", "additions", "changes"):
        raise ValueError(f"support must be 'none', 'additions' or 'changes', got {support!r}")
    system = _system_messages(messages)
    if support == "none":
        return TranscriptTools(tuple(_replay(system).values()), len(system))
    if support == "changes":
        return TranscriptTools((), 0)
    folded = 1 if messages and _is_system(messages[0]) else 0
    seen: set[str] = set()
    for index, message in enumerate(system):
        if _non_additive(message, seen):
            folded = max(folded, index + 1)
    return TranscriptTools(tuple(_replay(system[:folded]).values()), folded)


def declare_tool_changes(
    committed: Sequence[AgentMessage],
    pending: Sequence[AgentMessage],
    tools: Iterable[ToolLike],
) -> list[AgentMessage]:
    """Make the pending messages declare the executable ``tools`` (pi §6.3).

    - When a pending system message exists, its tool fields are intent: the
      first one gets the real delta against the committed transcript, any other
      loses its tool fields. A message with nothing to change is kept as is.
    - Otherwise, a non-empty delta becomes a new system message (empty content)
      inserted before the first non-system pending message.

    Returns the new pending list; the inputs are not mutated.
    """
    wanted = [to_tool_declaration(tool) for tool in tools]
    pending_list = list(pending)
    system_indexes = [i for i, m in enumerate(pending_list) if isinstance(m, SystemMessage)]
    if system_indexes:
        changes = get_tool_state_changes(get_current_tools(committed), wanted)
        for position, index in enumerate(system_indexes):
            message = pending_list[index]
            assert isinstance(message, SystemMessage)
            if position == 0:
                added = changes.tools_added or None
                removed = changes.tools_removed or None
            else:
                added = removed = None
            if message.tools_added == added and message.tools_removed == removed:
                continue
            if (
                not (message.tools_added or message.tools_removed)
                and added is None
                and removed is None
            ):
                continue
            pending_list[index] = replace(message, tools_added=added, tools_removed=removed)
        return pending_list
    changes = get_tool_state_changes(get_current_tools([*committed, *pending_list]), wanted)
    if not changes:
        return pending_list
    declaration = SystemMessage(
        content="",
        tools_added=changes.tools_added or None,
        tools_removed=changes.tools_removed or None,
        timestamp=now_ms(),
    )
    insert_at = next(
        (i for i, m in enumerate(pending_list) if not _is_system(m)), len(pending_list)
    )
    pending_list.insert(insert_at, declaration)
    return pending_list
