"""What running a script produces, and the limits it runs under.

These records are shared by both isolation modes (in-process and process), so a
:class:`ScriptResult` has the same shape whichever ran the script. Every field
is plain JSON-compatible data, and ``to_json()`` strict JSON: a NaN or infinity of the
value is there ``{"type": "float", "value": "NaN"}`` (``runtime.strict_json``'s rendering).
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from scriptgate.runtime.strict_json import finite_floats

__all__ = [
    "CallRecord",
    "CallStatus",
    "ErrorKind",
    "Limits",
    "ScriptError",
    "ScriptResult",
]

ErrorKind: TypeAlias = Literal[
    "syntax", "rejected", "runtime", "tool", "limit", "aborted", "sandbox"
]
"""Why a script failed.

- ``syntax``: not valid Python;
- ``rejected``: valid Python the policy refuses (underscore names, ``exec``, …);
- ``runtime``: the script raised;
- ``tool``: an uncaught ``ToolError``/``ToolDenied`` from a tool call;
- ``limit``: a :class:`Limits` budget was exceeded (cannot be caught by the script);
- ``aborted``: the caller's abort signal fired;
- ``sandbox``: the sandbox itself failed (a worker died, the bridge broke).
"""

CallStatus: TypeAlias = Literal["ok", "error", "blocked", "cancelled"]


@dataclass(frozen=True, slots=True)
class ScriptError:
    """Why a script failed: ``kind``, the exception ``type`` name, ``message``, ``line``."""

    kind: ErrorKind
    type: str
    message: str
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object."""
        return {"kind": self.kind, "type": self.type, "message": self.message, "line": self.line}


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One tool call a script made, in the order the calls started."""

    id: str
    tool: str
    arguments: Any
    status: CallStatus
    duration_ms: int | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object."""
        return {
            "id": self.id,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "duration_ms": self.duration_ms,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class ScriptResult:
    """The outcome of one script run.

    ``value`` is the value of the last expression statement (or of a top-level
    ``return``), as JSON data: a value that is not JSON is rendered
    (:mod:`scriptgate.sandbox.lastvalue`: sets and tuples as lists, dates as ISO text,
    non-string dict keys as their JSON text, other objects as ``"<TypeName object>"``
    with a ``[note: ...]`` line appended to ``output``); ``output`` everything the
    script printed, in order; ``calls`` one record per tool call; ``wall_time`` seconds.
    """

    ok: bool
    value: Any = None
    output: str = ""
    error: ScriptError | None = None
    calls: tuple[CallRecord, ...] = ()
    wall_time: float = 0.0

    def summary(self) -> str:
        """A compact human rendering: status, output, value, error and the call trace."""
        lines = [f"{'ok' if self.ok else 'failed'} in {self.wall_time:.3f} s"]
        if self.output:
            lines += ["output:", *("  " + line for line in self.output.rstrip("\n").split("\n"))]
        if self.value is not None:
            lines.append(f"value: {json.dumps(self.value, ensure_ascii=False, default=str)}")
        if self.error is not None:
            where = f" (line {self.error.line})" if self.error.line else ""
            lines.append(
                f"error [{self.error.kind}]: {self.error.type}: {self.error.message}{where}"
            )
        if self.calls:
            lines.append("calls:")
            for call in self.calls:
                took = f" {call.duration_ms} ms" if call.duration_ms is not None else ""
                args = json.dumps(call.arguments, ensure_ascii=False, default=str)
                if len(args) > 80:
                    args = args[:77] + "..."
                lines.append(f"  {call.id} {call.tool}({args}) -> {call.status}{took}")
        return "\n".join(lines)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        """IPython's plain-text display."""
        printer.text(self.summary())

    def _repr_html_(self) -> str:
        """Jupyter's rich display."""
        return f"<pre>{html.escape(self.summary())}</pre>"

    def to_json(self) -> dict[str, Any]:
        """A plain JSON object (``scriptgate run --json`` prints this), strict JSON.

        ``value`` as it is, except that a NaN or an infinity in it is described as
        ``{"type": "float", "value": "NaN"}`` (``"Infinity"``, ``"-Infinity"``), as the audit
        log and ``--json`` render them: the README promises plain JSON, which has no such
        tokens (findings15 E08). :attr:`value` itself keeps the floats.
        """
        return {
            "ok": self.ok,
            "value": finite_floats(self.value),
            "output": self.output,
            "error": self.error.to_json() if self.error else None,
            "calls": [call.to_json() for call in self.calls],
            "wall_time": self.wall_time,
        }


@dataclass(frozen=True, slots=True)
class Limits:
    """Budgets a script runs under; a breach ends it with ``error.kind == "limit"``.

    ``None`` disables a limit. ``max_tool_calls_per_tool`` maps a tool name to its
    own quota (on top of ``max_tool_calls`` overall). ``memory_bytes`` is, in
    process isolation, the worker's address-space rlimit (``RLIMIT_AS``); in-process,
    a bound on how much the host process's resident memory may grow during the run
    (``/proc/self/statm``, polled every few ms by the budget check and checked before
    every large allocation the size guards see). The in-process figure is
    approximate: other threads of the host allocate and free at the same time and
    are counted, memory the allocator keeps is not given back, and concurrent runs
    see each other's growth; without ``/proc`` (macOS, Windows) it is not enforced.
    """

    timeout: float | None = 30.0
    max_steps: int | None = None
    max_tool_calls: int | None = 1_000
    max_tool_calls_per_tool: dict[str, int] = field(default_factory=dict)
    max_output_chars: int | None = 1_000_000
    max_recursion: int = 1_000
    max_result_bytes: int | None = 10_000_000
    max_source_bytes: int = 128_000
    memory_bytes: int | None = 1 << 30
