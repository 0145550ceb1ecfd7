"""What a tool returns: content blocks, usage and :class:`AgentToolResult` (pi §1.2-1.3).

The leaf of the runtime's records: it imports nothing of scriptgate, so that
:mod:`scriptgate.runtime.tool` (which builds results) and
:mod:`scriptgate.runtime.types` (messages, events and hook contexts, which refer
to tools) both sit on it without importing each other. Every name here is
re-exported by :mod:`scriptgate.runtime.types`; field order is the wire key order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = [
    "AgentToolResult",
    "Content",
    "Cost",
    "ImageContent",
    "JsonValue",
    "TextContent",
    "Usage",
]

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None
"""A value that survives a JSON round trip."""


@dataclass(frozen=True, slots=True)
class TextContent:
    """A text block (``{type:"text", text, textSignature?}``)."""

    text: str
    text_signature: str | None = None
    type: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ImageContent:
    """An image block: base64 ``data`` and its ``mime_type``."""

    data: str
    mime_type: str
    type: Literal["image"] = "image"


Content: TypeAlias = TextContent | ImageContent
"""What a tool result (and the model) can see: text and images."""


@dataclass(frozen=True, slots=True)
class Cost:
    """Money spent, by category (pi ``Usage.cost``)."""

    input: float = 0
    output: float = 0
    cache_read: float = 0
    cache_write: float = 0
    total: float = 0


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of a model response or of a tool's own execution."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost = field(default_factory=Cost)

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input=self.input + other.input,
            output=self.output + other.output,
            cache_read=self.cache_read + other.cache_read,
            cache_write=self.cache_write + other.cache_write,
            total_tokens=self.total_tokens + other.total_tokens,
            cost=Cost(
                input=self.cost.input + other.cost.input,
                output=self.cost.output + other.cost.output,
                cache_read=self.cost.cache_read + other.cost.cache_read,
                cache_write=self.cost.cache_write + other.cost.cache_write,
                total=self.cost.total + other.cost.total,
            ),
        )


@dataclass(frozen=True, slots=True)
class AgentToolResult:
    """What a tool's ``execute`` returns (pi §1.3).

    - ``content``: what the model sees.
    - ``details``: JSON-compatible data for logs, UI and persistence (``{}`` on
      loop-made error results).
    - ``structured_content``: machine-readable result for scripts; never sent to
      the model and never copied into the transcript. ``None`` means absent.
    - ``usage``: usage of the tool's own execution (nested model calls).
    - ``is_error``: failure reported without raising; details are kept.
    - ``terminate``: a hint to stop after this batch (pi §3.9).
    """

    content: Sequence[Content] = ()
    details: Any = None
    structured_content: Any = None
    usage: Usage | None = None
    is_error: bool = False
    terminate: bool = False

    @classmethod
    def text(cls, text: str, **kwargs: Any) -> AgentToolResult:
        """A result with one text block."""
        return cls(content=(TextContent(text),), **kwargs)

    @classmethod
    def error(cls, message: str) -> AgentToolResult:
        """pi's ``createErrorToolResult``: one text block and ``details == {}``.

        The error flag itself lives on the outcome and the message, not here.
        """
        return cls(content=(TextContent(message),), details={})

    def text_content(self) -> str:
        """The text blocks joined with newlines (images dropped)."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))
