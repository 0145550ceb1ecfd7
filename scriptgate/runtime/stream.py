"""Streaming assistant messages: the events a model stream function emits (pi-ai's
``AssistantMessageEvent``) and the parser of a tool call's complete arguments text.

A stream function (``AgentLoopConfig.stream_fn``) may report its progress through
``StreamOptions.on_event``: ``start`` first, then ``text_*``/``thinking_*``/``toolcall_*``
events as deltas arrive; each carries the partial :class:`AssistantMessage` so far.
The loop turns them into ``message_start`` / ``message_update`` events and emits
``message_end`` with the message the function returns. This module owns no I/O and
knows no provider.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from scriptgate.runtime.types import AssistantMessage

__all__ = [
    "AssistantMessageEvent",
    "AssistantMessageEventType",
    "parse_tool_arguments",
]

AssistantMessageEventType: TypeAlias = Literal[
    "start",
    "text_start",
    "text_delta",
    "text_end",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "toolcall_start",
    "toolcall_delta",
    "toolcall_end",
]
"""The kinds of streaming event (pi-ai's, without ``done``/``error``: the stream
function's return value is the final message)."""


@dataclass(frozen=True, slots=True)
class AssistantMessageEvent:
    """One streaming step of an assistant message.

    ``partial`` is the message so far; ``content_index`` names the content block
    the event is about (``None`` for ``start``); ``delta`` is the new text (text,
    thinking, or raw tool-call arguments JSON) for ``*_delta`` events.
    """

    type: AssistantMessageEventType
    partial: AssistantMessage
    content_index: int | None = None
    delta: str | None = None


_VALID_ESCAPES = frozenset('"\\/bfnrtu')


def _repair(text: str) -> str:
    """Double every backslash that does not start a valid JSON escape."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if nxt and nxt in _VALID_ESCAPES:
                out.append(char + nxt)
                i += 2
                continue
            out.append("\\\\")
            i += 1
            continue
        out.append(char)
        i += 1
    return "".join(out)


def parse_tool_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """Parse a tool call's complete arguments text (pi-ai's parser, §1.1).

    Returns ``(arguments, None)`` for a JSON object (empty or blank text is
    ``{}``), else ``({}, error)`` where ``error`` is the parser's message, a blank
    line, ``Received arguments:`` and the raw text. Raw control characters inside
    strings and backslashes before invalid escapes are repaired first.
    """
    if not text.strip():
        return {}, None
    value: Any
    try:
        value = json.loads(text, strict=False)
    except ValueError as first:
        try:
            value = json.loads(_repair(text), strict=False)
        except ValueError:
            return {}, f"{first}\n\nReceived arguments:\n{text}"
    if not isinstance(value, dict):
        return {}, f"Tool arguments must be a JSON object\n\nReceived arguments:\n{text}"
    return value, None
