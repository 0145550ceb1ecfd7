"""An audit log of tool calls: one JSON line per call, written by ordinary hooks.

:class:`AuditLog` is a hook source: its ``before_tool_call`` notes when a call
passed the gate, its ``after_tool_call`` writes the line. Compose it with a
policy (and your own hooks) through :func:`scriptgate.runtime.hooks.compose_hooks`,
which tells it how each before chain ended (``observe_verdict``): that is how a
*blocked* call — which never reaches ``after_tool_call`` — still gets its line, and
how the policy's decision and reason reach the log. The same hooks serve direct
calls (``run_tool_call``, batches, the agent loop) and scripted calls alike, so
both produce the same lines.

A line is a JSON object with these keys, in this order:

``time``
    ISO-8601 UTC (``2026-11-30T01:02:03.456Z``): when the call passed (or failed)
    the gate.
``run_id``
    The log's ``run_id`` (a random hex id unless given).
``tool_call_id``, ``tool``
    The call's id and tool name.
``arguments``
    The validated, coerced arguments as the gate saw them (a JSON copy).
``decision``, ``reason``, ``rule``
    ``allow`` or ``deny`` from a policy (with its reason and rule index, ``null``
    for the policy default); ``block`` when another hook blocked (or raised);
    ``allow`` with ``null`` reason when no policy took part.
``status``
    ``ok``, ``error`` (the tool failed, or a hook raised), ``blocked``, or
    ``aborted`` (the call passed the gate but never finished — written by
    :meth:`AuditLog.close`).
``duration_ms``
    Milliseconds from this log's before hook to its after hook (monotonic clock;
    ``null`` when the call never ran).
``result_digest``
    ``sha256:<hex>`` of the canonical JSON (sorted keys, no spaces, UTF-8) of
    ``{"content": <content blocks in wire form>, "structured_content": ...}``;
    ``null`` for blocked and aborted calls.

Calls that never reach ``before_tool_call`` (unknown tools, invalid arguments,
an abort before the gate) are not logged: hooks never see them.

The log is thread- and task-safe and flushes after every line.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, TextIO

from pydantic import BaseModel

from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.hooks import BeforeVerdict, Hooks
from scriptgate.runtime.types import AfterToolCallContext, AgentToolResult, BeforeToolCallContext
from scriptgate.runtime.wire import to_wire

__all__ = ["AuditLog", "result_digest"]


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _json_copy(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    try:
        return json.loads(json.dumps(value, ensure_ascii=False, default=str))
    except (TypeError, ValueError):
        return repr(value)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def result_digest(result: AgentToolResult) -> str:
    """``sha256:<hex>`` of the canonical JSON of a result's content and structured content."""
    payload = {
        "content": [to_wire(block) for block in result.content],
        "structured_content": result.structured_content,
    }
    return "sha256:" + hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


@dataclass(slots=True)
class _Pending:
    time: str
    tool_call_id: str
    tool: str
    arguments: Any
    started: float | None
    decision: str = "allow"
    reason: str | None = None
    rule: int | None = None


class AuditLog:
    """Writes one JSON line per tool call to a file (appended) or a text stream.

    ``path_or_stream`` is a path (opened for appending, closed by :meth:`close`)
    or an open text stream such as ``sys.stderr`` (left open). Use it as a
    context manager, or call :meth:`close` to log unfinished calls as ``aborted``
    and close an owned file. See the module docstring for the line format.
    """

    def __init__(
        self, path_or_stream: str | os.PathLike[str] | TextIO, *, run_id: str | None = None
    ) -> None:
        self._owned: TextIO | None = None
        if isinstance(path_or_stream, str | os.PathLike):
            self._stream: TextIO = open(path_or_stream, "a", encoding="utf-8")  # noqa: SIM115
            self._owned = self._stream
        elif isinstance(path_or_stream, io.TextIOBase) or hasattr(path_or_stream, "write"):
            self._stream = path_or_stream
        else:
            raise TypeError(f"AuditLog needs a path or a text stream, got {path_or_stream!r}")
        self.run_id: str = run_id if run_id is not None else uuid.uuid4().hex
        self.lines_written = 0
        self._lock = threading.Lock()
        self._pending: dict[str, list[_Pending]] = {}
        self._closed = False

    def __repr__(self) -> str:
        return f"AuditLog(run_id={self.run_id!r}, lines_written={self.lines_written})"

    # -- hooks --------------------------------------------------------------------

    def before_tool_call(
        self, ctx: BeforeToolCallContext, signal: AbortSignal | None = None
    ) -> None:
        """Note that a call passed the gates before this one (never blocks)."""
        entry = self._entry(ctx, started=time.monotonic())
        with self._lock:
            self._pending.setdefault(ctx.tool_call.id, []).append(entry)

    def observe_verdict(self, ctx: BeforeToolCallContext, verdict: BeforeVerdict) -> None:
        """Told by :func:`compose_hooks` how the before chain ended: log blocks, keep decisions."""
        decision = verdict.decision
        if verdict.blocked:
            with self._lock:
                entry = self._take(ctx.tool_call.id)
            if entry is None:
                entry = self._entry(ctx, started=None)
            if decision is not None and decision.action == "deny" and verdict.error is None:
                entry.decision, entry.reason, entry.rule = "deny", decision.reason, decision.rule
            else:
                entry.decision, entry.reason = "block", verdict.reason
                entry.rule = None
            status = "error" if verdict.error is not None else "blocked"
            self._write(entry, status=status, duration_ms=None, digest=None)
            return
        with self._lock:
            queue = self._pending.get(ctx.tool_call.id)
            if not queue:
                queue = self._pending.setdefault(ctx.tool_call.id, [])
                queue.append(self._entry(ctx, started=time.monotonic()))
            entry = queue[-1]
            if decision is not None:
                entry.decision = "allow" if decision.action == "allow" else decision.action
                entry.reason, entry.rule = decision.reason, decision.rule

    def after_tool_call(self, ctx: AfterToolCallContext, signal: AbortSignal | None = None) -> None:
        """Write the line of a call that ran (``ok`` or ``error``); never overrides the result."""
        ended = time.monotonic()
        with self._lock:
            entry = self._take(ctx.tool_call.id)
        if entry is None:
            entry = _Pending(
                time=_utc_now(),
                tool_call_id=ctx.tool_call.id,
                tool=ctx.tool_call.name,
                arguments=_json_copy(ctx.args),
                started=None,
            )
        duration = None if entry.started is None else round((ended - entry.started) * 1000)
        self._write(
            entry,
            status="error" if ctx.is_error else "ok",
            duration_ms=duration,
            digest=result_digest(ctx.result),
        )

    def hooks(self) -> Hooks:
        """``(before_tool_call, after_tool_call)`` of this log (blocked calls need compose_hooks)."""
        return Hooks(self.before_tool_call, self.after_tool_call)

    # -- lifecycle ----------------------------------------------------------------

    def close(self) -> None:
        """Log calls that passed the gate but never finished as ``aborted``; close an owned file."""
        with self._lock:
            if self._closed:
                return
            leftovers = [entry for queue in self._pending.values() for entry in queue]
            self._pending.clear()
        for entry in leftovers:
            self._write(entry, status="aborted", duration_ms=None, digest=None)
        with self._lock:
            self._closed = True
            if self._owned is not None:
                self._owned.close()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals ----------------------------------------------------------------

    def _entry(self, ctx: BeforeToolCallContext, *, started: float | None) -> _Pending:
        return _Pending(
            time=_utc_now(),
            tool_call_id=ctx.tool_call.id,
            tool=ctx.tool_call.name,
            arguments=_json_copy(ctx.args),
            started=started,
        )

    def _take(self, tool_call_id: str) -> _Pending | None:
        queue = self._pending.get(tool_call_id)
        if not queue:
            return None
        entry = queue.pop(0)
        if not queue:
            del self._pending[tool_call_id]
        return entry

    def _write(
        self, entry: _Pending, *, status: str, duration_ms: int | None, digest: str | None
    ) -> None:
        line = {
            "time": entry.time,
            "run_id": self.run_id,
            "tool_call_id": entry.tool_call_id,
            "tool": entry.tool,
            "arguments": entry.arguments,
            "decision": entry.decision,
            "reason": entry.reason,
            "rule": entry.rule,
            "status": status,
            "duration_ms": duration_ms,
            "result_digest": digest,
        }
        text = json.dumps(line, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            if self._closed:
                return
            self._stream.write(text)
            self._stream.flush()
            self.lines_written += 1
