"""Live events of a running script: printed text and tool calls as they start and end.

Owns :class:`RunEvent` and the :data:`OnEvent` callback type only; the engine
(in-process) and the process-isolation parent emit them. Imports nothing of the
sandbox but ``result``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from scriptgate.sandbox.result import CallStatus

__all__ = ["EventKind", "OnEvent", "RunEvent"]

EventKind: TypeAlias = Literal["output", "call_start", "call_end"]
"""What happened: the script printed ``text``; a tool call started; a tool call ended."""


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One live event of a run (plain JSON data, the same in both isolation modes).

    ``output``: ``text`` is what one ``print`` wrote. ``call_start``: ``call_id``,
    ``tool`` and ``arguments`` are set. ``call_end``: also ``status``,
    ``duration_ms`` and ``error`` (as the call's :class:`~scriptgate.sandbox.result.CallRecord`).
    """

    kind: EventKind
    text: str = ""
    call_id: str | None = None
    tool: str | None = None
    arguments: Any = None
    status: CallStatus | None = None
    duration_ms: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object."""
        return {
            "kind": self.kind,
            "text": self.text,
            "call_id": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "duration_ms": self.duration_ms,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunEvent:
        """The inverse of :meth:`to_json` (unknown kinds are read as ``output``)."""
        kind = data.get("kind")
        status = data.get("status")
        duration = data.get("duration_ms")
        error = data.get("error")
        return cls(
            kind=kind if kind in ("output", "call_start", "call_end") else "output",
            text=str(data.get("text") or ""),
            call_id=str(data["call_id"]) if data.get("call_id") is not None else None,
            tool=str(data["tool"]) if data.get("tool") is not None else None,
            arguments=data.get("arguments"),
            status=status if status in ("ok", "error", "blocked", "cancelled") else None,
            duration_ms=duration if type(duration) is int else None,
            error=error if type(error) is str else None,
        )


OnEvent: TypeAlias = Callable[[RunEvent], None]
"""The ``on_event`` callback of :meth:`Sandbox.run <scriptgate.sandbox.sandbox.Sandbox.run>`:
called on the event loop's thread as each event happens; it must not block."""
