"""The worker's tool bridge: every tool call a script makes is a round trip to the parent.

Owns :class:`PipeToolBridge` (a call waits for its reply on the socket first, then on the
event loop) and how a reply is delivered to the waiting call. It must not import
:mod:`.parent` or the job loop (:mod:`.worker_jobs`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio

from scriptgate.sandbox.bridge import ToolReply, _reply
from scriptgate.sandbox.isolation.worker_channel import _ENCODE, _call_frame, _Channel
from scriptgate.sandbox.result import CallStatus

# How long a tool call waits for its reply on the socket itself, with the event loop
# blocked, before it falls back to waiting on the loop (see PipeToolBridge.call). The
# engine notices a deadline or a pause at most this much later while a call waits.
DIRECT_WAIT = 0.002
# How long it first spins on non-blocking reads before it blocks in poll() (0: never).
# Spinning 300 µs doubled the worker's CPU per call and slowed the round trip on a
# shared 2-vCPU machine (the spinner takes the CPU the parent needs to answer).
DIRECT_SPIN = 0.0


class _Pending:
    """A call waiting for its reply; the event is made only if the call waits on the loop."""

    __slots__ = ("event", "reply")

    def __init__(self) -> None:
        self.reply: ToolReply | None = None
        self.event: anyio.Event | None = None


class PipeToolBridge:
    """The worker's :class:`~scriptgate.sandbox.bridge.ToolBridge`: every call is a round trip.

    ``call`` sends ``{"op": "call", "id", "tool", "args"}`` to the parent, which runs
    the real tool through ``run_tool_call`` with the sandbox's hooks and answers
    with a ``reply``. If the script stops waiting (the call is cancelled), the
    parent is told with ``{"op": "cancel", "id"}`` so it cancels the host call.
    """

    def __init__(
        self,
        channel: _Channel,
        on_message: Callable[[dict[str, Any]], object] | None = None,
        *,
        wait: float = DIRECT_WAIT,
        spin: float = DIRECT_SPIN,
    ) -> None:
        self._channel = channel
        self._pending: dict[str, _Pending] = {}
        self._on_message = on_message
        self._wait = wait
        self._spin = spin
        self._tool_json: dict[str, str] = {}  # each tool name of this run as JSON text
        self.answered: dict[str, ToolReply] = {}
        """The reply of each call the parent answered (kept for :func:`_result_json`)."""

    async def call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> ToolReply:
        """Ask the parent to run one tool call and wait for its reply.

        When no other call is pending (a sync script's call, or one ``await`` at
        a time), the reply is first awaited on the socket itself for up to
        ``wait`` seconds, with the event loop blocked: a fast tool's reply then
        costs no event-loop wake-ups on this side. Messages that arrive meanwhile
        are handled as the job loop would (other replies delivered, an abort
        passed on). A slower reply, and every call made while another one is
        pending (``gather``), is awaited on the event loop, so concurrent calls
        are never held back by more than ``wait`` once.
        """
        pending_calls = self._pending
        if call_id in pending_calls:
            return ToolReply(status="error", error=f"duplicate tool call id {call_id!r}")
        tool_json = self._tool_json.get(tool_name)
        if tool_json is None:
            tool_json = self._tool_json[tool_name] = _ENCODE(tool_name)
        try:
            frame = _call_frame(call_id, tool_name, arguments, tool_json)
        except (TypeError, ValueError, RecursionError) as exc:
            return ToolReply(status="error", error=f"tool arguments are not JSON data: {exc}")
        direct = not pending_calls and self._wait > 0
        pending = pending_calls[call_id] = _Pending()
        try:
            self._channel.write(frame)
            if direct:
                self._wait_directly(pending)
            if pending.reply is None:
                pending.event = anyio.Event()
                await pending.event.wait()
        except BaseException:
            if pending.reply is None:
                self._channel.send({"op": "cancel", "id": call_id})
            raise
        finally:
            self._pending.pop(call_id, None)
        reply = pending.reply
        assert reply is not None
        self.answered[call_id] = reply
        return reply

    def _wait_directly(self, pending: _Pending) -> None:
        """Read and dispatch messages until the reply is there or ``wait`` has passed."""
        start = time.perf_counter()
        left = self._wait
        while True:
            message = self._channel.poll(left, self._spin)
            if message is None:
                return
            if message.get("op") != "reply":
                self.dispatch(message)
                return  # an abort: let the event loop act on it now
            self.deliver(message.get("id"), message.get("reply"))
            if pending.reply is not None:
                return
            left = self._wait - (time.perf_counter() - start)
            if left <= 0:
                return

    def dispatch(self, message: dict[str, Any]) -> None:
        """Handle a message from the parent while a job runs: a reply, or (``on_message``) the rest."""
        if message.get("op") == "reply":
            self.deliver(message.get("id"), message.get("reply"))
        elif self._on_message is not None:
            self._on_message(message)

    def deliver(self, call_id: object, reply: object) -> None:
        """Hand the parent's reply to the waiting call (unknown ids are ignored)."""
        if not isinstance(call_id, str) or not isinstance(reply, dict):
            return
        pending = self._pending.get(call_id)
        if pending is None or pending.reply is not None:
            return
        raw_status = reply.get("status")
        status: CallStatus = "error"
        if raw_status in ("ok", "error", "blocked", "cancelled"):
            status = raw_status
        error = reply.get("error")
        duration = reply.get("duration_ms")
        pending.reply = _reply(
            status,
            reply.get("value"),
            error if type(error) is str else None,
            duration if type(duration) is int else None,
        )
        if pending.event is not None:
            pending.event.set()

    def cancel_all(self) -> None:
        """Wake every waiting call with a cancelled reply (the parent has gone away)."""
        for call_id in list(self._pending):
            self.deliver(call_id, {"status": "cancelled", "error": "the host went away"})
