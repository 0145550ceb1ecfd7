"""A write-ahead, fail-closed audit log of tool calls: two JSON lines per call.

:class:`AuditLog` is a hook source for :func:`scriptgate.runtime.hooks.compose_hooks`
(``compose_hooks(policy, your_hooks, audit)``, or ``audit.hooks()`` alone). The
guarantee: **every executed call has an intent line written (and flushed) before
it ran.**

- When the composed before chain has decided (``observe_verdict``: after the
  policy and every other before hook, before ``execute``), the call's *intent*
  line is written and flushed. If it cannot be written — an unencodable stream,
  a full disk, a closed file — :class:`AuditWriteError` is raised from the before
  hook, so the pipeline turns the call into an error result and ``execute`` never
  runs; the log then stays broken and refuses every later call the same way.
- The *outcome* line follows: from ``after_tool_call`` (``ok``/``error``, with the
  final result's digest), or from the pipeline (:mod:`scriptgate.runtime.observe`)
  when the call was cut off while it ran (``cancelled``: a deadline, an abort) or
  aborted after the gate (``aborted``), or at once for a blocked call
  (``blocked``, or ``error`` when a before hook raised).
- Calls that never reach the gate — unknown tool, invalid arguments, an abort
  before the call started — get both lines at once (status ``invalid`` /
  ``aborted``), with the arguments as given.
- The two lines of a call share a ``token``: random and unique per call (call ids
  are only unique within a run; two runs may share a log, a batch may repeat an id).
  :meth:`close` writes an ``aborted`` outcome for every intent still open.

Every line is one strict JSON object (``scriptgate.runtime.strict_json``): no
``NaN``/``Infinity`` tokens, lone surrogates and terminal controls escaped, and big
values capped — a string over ``max_value_chars``, an int over 100 digits, a
container over 1,000 items — by a description carrying the sha256 of the full
value; the pointers of the replaced values are listed in ``replaced``. A line is at
most about ``max_line_chars`` characters (beyond, ``arguments`` becomes one
description).

Intent line keys, in order: ``event`` (``"intent"``), ``time`` (ISO-8601 UTC, ms),
``run_id``, ``token``, ``tool_call_id``, ``tool``, ``arguments`` (validated and
coerced, as the gate saw them; as given for ``invalid`` calls), ``replaced``,
``decision`` (``allow``/``deny`` from a policy, ``block`` from another hook or a
raising one, ``allow`` when no policy took part, ``null`` when the call never
reached the gate), ``reason``, ``rule`` (the policy rule index, ``null`` for its
default).

Outcome line keys: ``event`` (``"outcome"``), ``time``, ``run_id``, ``token``,
``tool_call_id``, ``tool``, ``status`` (``ok``, ``error``, ``blocked``, ``invalid``,
``cancelled``, ``aborted``), ``duration_ms`` (monotonic milliseconds from the intent
line; ``null`` when the call never started), ``result_digest`` (``sha256:<hex>`` of
the canonical JSON of ``{"content": [...wire blocks], "structured_content": ...}``,
``null`` without a result), ``error`` (the error text, capped; ``null`` for ``ok``).

The log is thread- and task-safe; it never closes a stream it did not open.
"""

from __future__ import annotations

import codecs
import io
import os
import secrets
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from pydantic import BaseModel

from scriptgate.errors import ScriptgateError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.hooks import CANCELLED_TEXT, BeforeVerdict, Hooks, compose_hooks
from scriptgate.runtime.strict_json import bounded, digest, dumps_line
from scriptgate.runtime.types import (
    AfterToolCallContext,
    AgentToolResult,
    BeforeToolCallContext,
    ToolCall,
)
from scriptgate.runtime.wire import to_wire

__all__ = ["AuditLog", "AuditWriteError", "result_digest"]

_ERROR_CHARS = 2_000


class AuditWriteError(ScriptgateError):
    """The audit log could not write a call's intent line, so the call was not run."""


def _utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        try:
            return value.model_dump(mode="json")
        except Exception:
            return value.model_dump()
    return value


def result_digest(result: AgentToolResult) -> str:
    """``sha256:<hex>`` of the canonical JSON of a result's content and structured content.

    Canonical JSON: sorted keys, no spaces, UTF-8 (see
    :func:`scriptgate.runtime.strict_json.canonical_bytes` for values JSON cannot hold).
    """
    payload = {
        "content": [to_wire(block) for block in result.content],
        "structured_content": result.structured_content,
    }
    return digest(payload)


@dataclass(slots=True)
class _Open:
    """An intent line written, its outcome not yet."""

    token: str
    tool_call: ToolCall  # held so that its id() stays unique while open
    started: float


class AuditLog:
    """Writes an intent and an outcome line per tool call to a file (appended) or a text stream.

    ``path_or_stream`` is a path (opened for appending, closed by :meth:`close`) or
    an open text stream such as ``sys.stderr`` (left open). ``max_value_chars``
    caps each string argument, ``max_line_chars`` a whole line. Use it as a
    context manager, or call :meth:`close`. See the module docstring for the
    guarantee and the line format. ``path`` is the log file's path (``None`` for a
    stream): keep it out of the tools' reach (``file_tools(..., protected=[path])``).
    """

    def __init__(
        self,
        path_or_stream: str | os.PathLike[str] | TextIO,
        *,
        run_id: str | None = None,
        max_value_chars: int = 1_000,
        max_line_chars: int = 64_000,
    ) -> None:
        self._owned: TextIO | None = None
        self.path: Path | None = None
        if isinstance(path_or_stream, str | os.PathLike):
            self.path = Path(path_or_stream)
            self._stream: TextIO = open(path_or_stream, "a", encoding="utf-8")  # noqa: SIM115
            self._owned = self._stream
        elif isinstance(path_or_stream, io.TextIOBase) or hasattr(path_or_stream, "write"):
            self._stream = path_or_stream
        else:
            raise TypeError(f"AuditLog needs a path or a text stream, got {path_or_stream!r}")
        self.run_id: str = run_id if run_id is not None else uuid.uuid4().hex
        self.max_value_chars = max_value_chars
        self.max_line_chars = max_line_chars
        self.lines_written = 0
        self.broken: str | None = None
        """Why the log stopped accepting calls (a write failed), or ``None``."""
        self._ascii = not _is_utf8(getattr(self._stream, "encoding", "utf-8"))
        self._lock = threading.Lock()
        self._open: dict[int, list[_Open]] = {}
        self._closed = False

    def __repr__(self) -> str:
        return f"AuditLog(run_id={self.run_id!r}, lines_written={self.lines_written})"

    # -- hook source ----------------------------------------------------------------

    def observe_verdict(self, ctx: BeforeToolCallContext, verdict: BeforeVerdict) -> None:
        """Told by the composed before chain how it ended: write the intent (and a block's outcome).

        Raises :class:`AuditWriteError` when the intent line cannot be written, which
        keeps the call from running.
        """
        decision = verdict.decision
        if verdict.blocked:
            if decision is not None and decision.action == "deny" and verdict.error is None:
                name, reason, rule = "deny", decision.reason, decision.rule
            else:
                name, reason, rule = "block", verdict.reason, None
            token = self._intent(ctx.tool_call, ctx.args, name, reason, rule, strict=False)
            if verdict.error is None:
                status = "blocked"
            else:
                status = "cancelled" if verdict.error == CANCELLED_TEXT else "error"
            self._outcome(ctx.tool_call, token, status, None, None, verdict.reason)
            return
        if decision is not None:
            name = "allow" if decision.action == "allow" else decision.action
            reason, rule = decision.reason, decision.rule
        else:
            name, reason, rule = "allow", None, None
        token = self._intent(ctx.tool_call, ctx.args, name, reason, rule)
        with self._lock:
            self._open.setdefault(id(ctx.tool_call), []).append(
                _Open(token, ctx.tool_call, time.monotonic())
            )

    def after_tool_call(self, ctx: AfterToolCallContext, signal: AbortSignal | None = None) -> None:
        """Write the outcome line of a call that ran (``ok`` or ``error``); never overrides it."""
        entry = self._take(ctx.tool_call)
        ended = time.monotonic()
        if entry is None:
            # Not gated through a composed before hook (no intent line): write what we know.
            token = self._intent(
                ctx.tool_call, ctx.args, None, "not gated by compose_hooks", None, strict=False
            )
            duration = None
        else:
            token = entry.token
            duration = round((ended - entry.started) * 1000)
        error = _error_text(ctx.result) if ctx.is_error else None
        self._outcome(
            ctx.tool_call,
            token,
            "error" if ctx.is_error else "ok",
            duration,
            result_digest(ctx.result),
            error,
            strict=False,
        )

    def observe_refused(self, tool_call: ToolCall, status: str, text: str) -> None:
        """The pipeline's word that a call never reached the gate: both lines at once."""
        token = self._intent(tool_call, tool_call.arguments, None, None, None, strict=False)
        self._outcome(tool_call, token, status, None, None, text, strict=False)

    def observe_cut_off(self, tool_call: ToolCall, status: str, text: str) -> None:
        """The pipeline's word that a gated call did not finish: its outcome line."""
        entry = self._take(tool_call)
        if entry is None:
            return  # its outcome is already written
        duration = (
            round((time.monotonic() - entry.started) * 1000) if status == "cancelled" else None
        )
        self._outcome(tool_call, entry.token, status, duration, None, text, strict=False)

    def hooks(self) -> Hooks:
        """``compose_hooks(self)``: the log alone as a before/after pair."""
        return compose_hooks(self)

    # -- lifecycle ------------------------------------------------------------------

    def close(self) -> None:
        """Write an ``aborted`` outcome for every open intent; close an owned file."""
        with self._lock:
            if self._closed:
                return
            leftovers = [entry for queue in self._open.values() for entry in queue]
            self._open.clear()
        for entry in leftovers:
            self._outcome(
                entry.tool_call,
                entry.token,
                "aborted",
                None,
                None,
                "the log was closed before the call finished",
                strict=False,
            )
        with self._lock:
            self._closed = True
            if self._owned is not None:
                try:
                    self._owned.close()
                except OSError as exc:
                    self.broken = self.broken or f"closing the log failed: {exc}"

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------

    def _take(self, tool_call: ToolCall) -> _Open | None:
        with self._lock:
            queue = self._open.get(id(tool_call))
            if not queue:
                return None
            entry = queue.pop(0)
            if not queue:
                del self._open[id(tool_call)]
            return entry

    def _intent(
        self,
        tool_call: ToolCall,
        args: Any,
        decision: str | None,
        reason: str | None,
        rule: int | None,
        *,
        strict: bool = True,
    ) -> str:
        token = secrets.token_hex(16)
        arguments, replaced = bounded(
            _plain(args), path="/arguments", max_chars=self.max_value_chars
        )
        record: dict[str, Any] = {
            "event": "intent",
            "time": _utc_now(),
            "run_id": self.run_id,
            "token": token,
            "tool_call_id": _short(tool_call.id),
            "tool": _short(tool_call.name),
            "arguments": arguments,
            "replaced": replaced,
            "decision": decision,
            "reason": _short(reason),
            "rule": rule,
        }
        self._write(record, strict=strict)
        return token

    def _outcome(
        self,
        tool_call: ToolCall,
        token: str,
        status: str,
        duration_ms: int | None,
        result: str | None,
        error: str | None,
        *,
        strict: bool = False,
    ) -> None:
        record = {
            "event": "outcome",
            "time": _utc_now(),
            "run_id": self.run_id,
            "token": token,
            "tool_call_id": _short(tool_call.id),
            "tool": _short(tool_call.name),
            "status": status,
            "duration_ms": duration_ms,
            "result_digest": result,
            "error": _short(error, _ERROR_CHARS),
        }
        self._write(record, strict=strict)

    def _render(self, record: dict[str, Any]) -> str:
        line = dumps_line(record, ascii_only=self._ascii)
        if len(line) > self.max_line_chars and "arguments" in record:
            full = record["arguments"]
            record = dict(record)
            record["arguments"] = {
                "type": type(full).__name__ if not isinstance(full, dict) else "dict",
                "length": len(full) if isinstance(full, dict | list) else None,
                "sha256": digest(full)[7:],
            }
            record["replaced"] = ["/arguments"]
            line = dumps_line(record, ascii_only=self._ascii)
        return line + "\n"

    def _write(self, record: dict[str, Any], *, strict: bool) -> None:
        """Write and flush one line; with ``strict``, any failure raises :class:`AuditWriteError`."""
        try:
            text = self._render(record)
        except Exception as exc:  # pragma: no cover - bounded() returns plain JSON data
            self._fail(f"the line could not be rendered: {exc}", strict)
            return
        with self._lock:
            if self.broken is not None:
                if strict:
                    raise AuditWriteError(
                        f"audit log unavailable ({self.broken}); the call was not run"
                    )
                return
            if self._closed:
                if strict:
                    raise AuditWriteError("audit log is closed; the call was not run")
                return
            try:
                self._stream.write(text)
                self._stream.flush()
            except (OSError, ValueError, UnicodeError) as exc:
                self.broken = f"writing it failed: {type(exc).__name__}: {exc}"
                if strict:
                    raise AuditWriteError(
                        f"audit log unavailable ({self.broken}); the call was not run"
                    ) from None
                return
            self.lines_written += 1

    def _fail(self, why: str, strict: bool) -> None:
        with self._lock:
            self.broken = self.broken or why
        if strict:
            raise AuditWriteError(f"audit log unavailable ({why}); the call was not run")


def _short(text: str | None, limit: int = 1_000) -> str | None:
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"... [{len(text)} characters]"


def _error_text(result: AgentToolResult) -> str:
    texts = [getattr(block, "text", "") for block in result.content]
    return "\n".join(t for t in texts if isinstance(t, str)) or "error"


def _is_utf8(encoding: Any) -> bool:
    try:
        return codecs.lookup(str(encoding)).name == "utf-8"
    except LookupError:
        return False
