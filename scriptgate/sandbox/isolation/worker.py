"""The worker process of ``isolation="process"``: runs untrusted scripts, one job at a time.

The worker side of ``isolation/``: imports the engine and the bridge; must not import
:mod:`.parent` or the model-facing text.

The parent (:mod:`scriptgate.sandbox.isolation.parent`) starts a *zygote* (fork server)::

    python -I -B -c "<bootstrap>" <package parent dir> <config json with "mode": "zygote">

with an empty environment, a ``SOCK_SEQPACKET`` control socket as ``stdin``,
``stderr`` piped (read only if it dies before it is ready), an empty temporary
working directory and a session of its own. The bootstrap registers bare
``scriptgate``/``scriptgate.runtime``/``scriptgate.sandbox`` package objects, so
only the engine's own modules are imported, not the whole library. The zygote
imports and warms up the engine once, then forks a fresh worker (through a small
monitor process that reports the worker's exit status) whenever the parent asks:
a new worker costs milliseconds instead of an interpreter start. With
``spawn="exec"`` the parent starts each worker directly with the same command
(without the zygote mode) and the socket as ``stdin``/``stdout``.

Before it runs anything it did not write itself, the worker

1. (forked workers) starts a session and process group of its own and moves to
   its own empty temporary directory;
2. keeps the channel on a private descriptor and points 0/1/2 at ``/dev/null``
   (a stray write can never corrupt the framing), closes every other inherited
   descriptor, clears the environment (the engine is already imported: nothing
   else is imported on behalf of a script later, stand-in modules are part of it);
3. lowers the recursion limit and applies the resource limits: ``RLIMIT_CORE``
   0, ``RLIMIT_FSIZE`` 0, a small ``RLIMIT_NOFILE``, ``RLIMIT_AS`` from
   :attr:`Limits.memory_bytes` and a lifetime ``RLIMIT_CPU`` hard limit; before
   each job the soft CPU limit is set to "used so far + this job's budget", so
   a job that burns CPU past its budget gets ``SIGXCPU``.

Then it loops: read a job, run :func:`scriptgate.sandbox.engine.run_script` with
a :class:`PipeToolBridge`, send the :class:`ScriptResult` back. A tool call with
no other call pending waits for its reply on the socket itself (``poll(2)``, the
event loop blocked for at most :data:`DIRECT_WAIT`), so a fast tool's round trip
costs no event-loop wake-ups here; a slower reply, and every call made while
another is pending, is awaited on the event loop. Messages are
length-prefixed JSON (4-byte big-endian length, UTF-8 JSON); nothing is ever
pickled. The protocol, worker → parent: ``{"op": "ready"}``, ``{"op": "call",
"id", "tool", "args"}``, ``{"op": "cancel", "id"}`` (a pending call the script
no longer waits for), ``{"op": "result", "result", "cpu", "retire"}`` (the
result's call records as ``[id, tool, arguments, status, duration_ms, error]``
arrays, or as the id alone of a call the parent answered whose record says
what the reply said: the parent builds that record itself); parent →
worker: ``{"op": "run", ...}``, ``{"op": "reply", "id", "reply"}``,
``{"op": "abort", "reason"}``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import resource
import select
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import fields
from typing import Any

import anyio

from scriptgate.runtime.abort import AbortController
from scriptgate.sandbox.bridge import ToolReply, ToolSpec, _reply
from scriptgate.sandbox.engine import run_script
from scriptgate.sandbox.events import RunEvent
from scriptgate.sandbox.isolation import jail
from scriptgate.sandbox.result import CallRecord, CallStatus, Limits, ScriptError, ScriptResult

__all__ = ["PipeToolBridge", "main"]

_HEADER = 4
_READ_CHUNK = 1 << 16
# The parent is trusted, but a frame this large means something is badly wrong.
_MAX_FRAME = 1 << 30
_RESULT_MAX_DEPTH_MESSAGE = "the script's result could not be encoded as JSON"
# Made once: ``json.dumps`` with options builds a new encoder for every message.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# For text UTF-8 cannot carry (a lone surrogate, which a script's str may hold):
# escaped, it decodes on the other side to the same str.
_ENCODE_ASCII = json.JSONEncoder(separators=(",", ":")).encode
# ``raw_decode``: a frame holds exactly one JSON text with no whitespace around it,
# so ``decode``'s two whitespace scans are not needed (the end is checked instead).
_RAW_DECODE = json.JSONDecoder().raw_decode
# How long a tool call waits for its reply on the socket itself, with the event loop
# blocked, before it falls back to waiting on the loop (see PipeToolBridge.call). The
# engine notices a deadline or a pause at most this much later while a call waits.
DIRECT_WAIT = 0.002
# How long it first spins on non-blocking reads before it blocks in poll() (0: never).
# Spinning 300 µs doubled the worker's CPU per call and slowed the round trip on a
# shared 2-vCPU machine (the spinner takes the CPU the parent needs to answer).
DIRECT_SPIN = 0.0


class _Channel:
    """Length-prefixed JSON over the socket shared with the parent (worker side).

    The socket stays blocking for writes (the parent always reads; a frame is one
    ``send`` call). Reads use ``MSG_DONTWAIT``: :meth:`recv` waits for readiness on
    the event loop, :meth:`poll` in ``poll(2)`` with the event loop blocked.
    """

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._fd = sock.fileno()
        self._buf = bytearray()
        self._eof = False
        self._poller = select.poll()
        self._poller.register(self._fd, select.POLLIN)

    @staticmethod
    def encode(message: dict[str, Any]) -> bytes:
        """One frame: 4-byte big-endian length, then compact UTF-8 JSON."""
        try:
            data = _ENCODE(message).encode()
        except UnicodeEncodeError:  # a lone surrogate: \u escapes
            data = _ENCODE_ASCII(message).encode()
        return len(data).to_bytes(_HEADER, "big") + data

    def send(self, message: dict[str, Any]) -> None:
        """Write one message."""
        self.write(self.encode(message))

    def write(self, frame: bytes) -> None:
        """Write one encoded frame completely."""
        self._sock.sendall(frame)

    def _parse(self) -> dict[str, Any] | None:
        """The next complete message in the buffer, if any (a bad frame closes the channel)."""
        if len(self._buf) < _HEADER:
            return None
        size = int.from_bytes(self._buf[:_HEADER], "big")
        if size > _MAX_FRAME:
            self._eof = True
            return None
        if len(self._buf) < _HEADER + size:
            return None
        text = self._buf[_HEADER : _HEADER + size].decode()
        del self._buf[: _HEADER + size]
        return self._decode(text)

    def _decode(self, text: str) -> dict[str, Any] | None:
        """The JSON object ``text`` holds (anything else closes the channel)."""
        message, end = _RAW_DECODE(text)
        if end != len(text) or type(message) is not dict:
            self._eof = True
            return None
        return message

    def _read(self) -> bool:
        """Append what the socket holds now; ``False``: nothing there (the channel may be at EOF)."""
        try:
            chunk = self._sock.recv(_READ_CHUNK, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            self._eof = True
            return False
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    async def recv(self) -> dict[str, Any] | None:
        """The next message, or ``None`` when the parent has gone away."""
        while True:
            message = self._parse()
            if message is not None:
                return message
            if self._eof:
                return None
            if not self._read() and not self._eof:
                await anyio.wait_readable(self._fd)

    def poll(self, timeout: float, spin: float = 0.0) -> dict[str, Any] | None:
        """The next message if one arrives within ``timeout`` seconds, else ``None``.

        Blocks the thread (and so the event loop): the first ``spin`` seconds on
        non-blocking reads, then in ``poll(2)``. ``None`` also at EOF (then
        :meth:`recv` reports it to the job loop). Called right after a request
        was sent, so it waits before it reads: one ``poll`` and one ``recv`` per
        reply.
        """
        message = self._parse()
        if message is not None or self._eof:
            return message
        start = time.perf_counter()
        if spin <= 0 and not self._buf and timeout > 0:
            # the usual case: one poll(2), one recv that holds exactly one frame
            if not self._poller.poll(math.ceil(timeout * 1000)):
                return None
            try:
                chunk = self._sock.recv(_READ_CHUNK, socket.MSG_DONTWAIT)
            except BlockingIOError:
                chunk = None  # a spurious wake-up: the loop below waits on
            except OSError:
                self._eof = True
                return None
            if chunk is not None:
                if not chunk:
                    self._eof = True
                    return None
                size = len(chunk) - _HEADER
                if size >= 0 and int.from_bytes(chunk[:_HEADER], "big") == size:
                    return self._decode(chunk[_HEADER:].decode())
                self._buf += chunk
                message = self._parse()
                if message is not None or self._eof:
                    return message
        while True:
            elapsed = time.perf_counter() - start
            if elapsed >= timeout:
                return None
            if elapsed >= spin and not self._poller.poll(math.ceil((timeout - elapsed) * 1000)):
                return None
            if not self._read():
                if self.at_eof():  # (or it was only a spurious wake-up)
                    return None
                continue
            message = self._parse()
            if message is not None or self.at_eof():
                return message

    def at_eof(self) -> bool:
        """True once the parent has gone away (or sent something unreadable)."""
        return self._eof


_JSON_CONSTANTS = {True: "true", False: "false", None: "null"}


def _call_frame(call_id: str, tool: str, arguments: dict[str, Any], tool_json: str = "") -> bytes:
    """The frame of ``{"op": "call", "id", "tool", "args"}``, as :meth:`_Channel.encode` makes it.

    Built as text: the encoder object sets itself up again for every dict it
    encodes, which costs more than the whole message. Flat arguments (str keys;
    str, int, bool or ``None`` values) are written here too; anything else goes
    through the encoder. Raises what the encoder raises for data that is not JSON.
    ``tool_json``: ``tool`` as JSON text, if the caller has it already.
    """
    if type(arguments) is dict:
        parts = []
        for key, value in arguments.items():
            kind = type(value)
            if type(key) is not str:
                break
            if kind is str:
                text = _ENCODE(value)
            elif kind is int:
                text = int.__repr__(value)
            elif kind is bool or value is None:
                text = _JSON_CONSTANTS[value]
            else:
                break
            parts.append(_ENCODE(key) + ":" + text)
        else:
            args = "{" + ",".join(parts) + "}"
            tool_json = tool_json or _ENCODE(tool)
            data = f'{{"op":"call","id":{_ENCODE(call_id)},"tool":{tool_json},"args":{args}}}'
            try:
                payload = data.encode()
            except UnicodeEncodeError:  # a lone surrogate: the encoder escapes it
                pass
            else:
                return len(payload).to_bytes(_HEADER, "big") + payload
    return _Channel.encode({"op": "call", "id": call_id, "tool": tool, "args": arguments})


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


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _set_cpu_budget(timeout: float | None) -> None:
    """Soft CPU limit = used so far + this job's budget (never above the lifetime hard limit)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if timeout is None:
        soft = hard
    else:
        soft = math.ceil(_cpu_seconds() + timeout) + 1
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _limits_from_json(data: object) -> Limits:
    if not isinstance(data, dict):
        return Limits()
    names = {f.name for f in fields(Limits)}
    return Limits(**{k: v for k, v in data.items() if k in names})


def _specs_from_json(data: object) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    if isinstance(data, list):
        for item in data:
            if isinstance(item, dict):
                with contextlib.suppress(KeyError, TypeError, ValueError):
                    specs.append(ToolSpec.from_json(item))
    return specs


def _result_json(
    result: ScriptResult, answered: dict[str, ToolReply] | None = None
) -> dict[str, Any]:
    """``result.to_json()`` with each call record as an array, or as its id alone.

    A record is ``[id, tool, arguments, status, duration_ms, error]`` (a third of
    the bytes of the record objects). A call the parent answered (``answered``:
    :attr:`PipeToolBridge.answered`) whose record says what the reply said is only
    its id: the parent ran that call and holds every field of its record already
    (its id, tool name and arguments are the record's own, which the engine hands
    the bridge; a run's records are most of its result, and encoding, decoding and
    checking them cost each side more than a round trip's frames). A record the
    engine changed after the reply (none does today) crosses whole.
    """
    data = dataclasses.replace(result, calls=()).to_json()
    if not answered:
        data["calls"] = [
            [call.id, call.tool, call.arguments, call.status, call.duration_ms, call.error]
            for call in result.calls
        ]
        return data
    records: list[Any] = []
    append = records.append
    for call in result.calls:
        reply = answered.get(call.id)
        if (
            reply is not None
            and reply.status == call.status
            and reply.duration_ms == call.duration_ms
            and reply.error == call.error
        ):
            append(call.id)
            continue
        append([call.id, call.tool, call.arguments, call.status, call.duration_ms, call.error])
    data["calls"] = records
    return data


def _encodable_call(call: CallRecord) -> CallRecord:
    """``call``, or a copy whose arguments are ``{}`` when they have no JSON text."""
    try:
        _ENCODE(call.arguments)
    except (TypeError, ValueError, RecursionError):
        return dataclasses.replace(call, arguments={})
    return call


def _result_frame(
    result: ScriptResult,
    message: dict[str, Any],
    answered: dict[str, ToolReply] | None = None,
) -> bytes:
    """The frame of ``message`` with ``result`` (:func:`_result_json`) as its ``"result"``.

    Encoded once. Call arguments that cannot be encoded are dropped from their
    records; a result that still cannot be encoded becomes a sandbox error (its
    output and calls are kept).
    """
    message["result"] = _result_json(result, answered)
    try:
        return _Channel.encode(message)
    except (TypeError, ValueError, RecursionError):
        pass
    # a call record's own arguments may have no JSON text (an int of more than 4300
    # digits the parent was never sent): those arguments are dropped, the rest of the
    # record kept (test_process_unencodable_call_arguments)
    result = dataclasses.replace(result, calls=tuple(map(_encodable_call, result.calls)))
    message["result"] = _result_json(result, answered)
    try:
        return _Channel.encode(message)
    except (TypeError, ValueError, RecursionError) as exc:
        fallback = ScriptResult(
            ok=False,
            output=result.output,
            error=ScriptError("sandbox", type(exc).__name__, f"{_RESULT_MAX_DEPTH_MESSAGE}: {exc}"),
            calls=result.calls,
            wall_time=result.wall_time,
        )
        message["result"] = _result_json(fallback, answered)
        return _Channel.encode(message)


class _NoTools:
    """The bridge of the warm-up run (it makes no calls)."""

    async def call(self, call_id: str, tool_name: str, arguments: dict[str, Any]) -> ToolReply:
        return ToolReply(status="error", error="no tools while warming up")


_WARM_UP = """
import json, math, re
def square(n):
    return n * n
values = [square(i) for i in range(10)]
print(f"{sum(values):>5}", json.dumps({'v': values[:2]}), re.sub('a', 'b', 'aa'), math.sqrt(4))
values
"""


async def _warm_up() -> None:
    """Run one small script so the first real job does not pay for lazy set-up."""
    # Async scripts only: no worker thread may exist when the zygote forks.
    for source in ("await gather()\n" + _WARM_UP, "await gather()\n1"):
        with contextlib.suppress(Exception):
            await run_script(source, bridge=_NoTools(), tools=[], limits=Limits())


class _Worker:
    """The job loop: one job at a time, messages dispatched while it runs."""

    def __init__(
        self,
        channel: _Channel,
        cpu_lifetime: float | None,
        *,
        warm_up: bool,
        jail_report: list[list[Any]] | None = None,
    ) -> None:
        self.channel = channel
        self.warm_up = warm_up
        self.jail_report = jail_report
        self.cpu_lifetime = cpu_lifetime
        self.session_state: dict[str, Any] | None = None
        self.bridge: PipeToolBridge | None = None
        self.controller: AbortController | None = None

    async def serve(self) -> None:
        if self.warm_up:
            await _warm_up()
        self.channel.send({"op": "ready", "pid": os.getpid(), "jail": self.jail_report})
        send_jobs, receive_jobs = anyio.create_memory_object_stream[dict[str, Any]](1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._jobs, receive_jobs)
            async with send_jobs:
                while True:
                    message = await self.channel.recv()
                    if message is None:
                        break
                    op = message.get("op")
                    if op == "run":
                        self.bridge = PipeToolBridge(self.channel, self._control)
                        self.controller = AbortController()
                        await send_jobs.send(message)
                    elif self.bridge is not None:
                        self.bridge.dispatch(message)
                    else:
                        self._control(message)
            # The parent closed the channel: stop whatever is running.
            if self.bridge is not None:
                self.bridge.cancel_all()
            tg.cancel_scope.cancel()

    def _control(self, message: dict[str, Any]) -> bool:
        """Handle an ``abort``; anything else is not a control message."""
        if message.get("op") != "abort":
            return False
        if self.controller is not None:
            reason = message.get("reason")
            self.controller.abort(reason if isinstance(reason, str) else None)
        return True

    async def _jobs(self, receive: Any) -> None:
        async with receive:
            async for job in receive:
                await self._run(job)

    async def _run(self, job: dict[str, Any]) -> None:
        bridge, controller = self.bridge, self.controller
        assert bridge is not None
        assert controller is not None
        try:
            limits = _limits_from_json(job.get("limits"))
            tools: Sequence[ToolSpec] = _specs_from_json(job.get("tools"))
            source = job.get("source")
            prefix = job.get("call_id_prefix")
            state: dict[str, Any] | None = None
            if job.get("session"):
                if self.session_state is None:
                    self.session_state = {}
                state = self.session_state
            _set_cpu_budget(limits.timeout)
            channel = self.channel

            def stream(event: RunEvent) -> None:
                if event.kind == "output":  # (the parent sees the calls itself)
                    channel.send({"op": "event", "text": event.text})

            result = await run_script(
                source if isinstance(source, str) else "",
                bridge=bridge,
                tools=tools,
                limits=limits,
                state=state,
                signal=controller.signal,
                call_id_prefix=prefix if isinstance(prefix, str) else "script",
                on_event=stream if job.get("stream") is True else None,
            )
            frame = self._result_frame(result, bridge.answered)
        except BaseException as exc:  # the engine never raises; this is the last line of defence
            if isinstance(exc, anyio.get_cancelled_exc_class()):
                raise
            failure = ScriptResult(
                ok=False,
                error=ScriptError("sandbox", type(exc).__name__, f"the worker failed: {exc}"),
            )
            frame = self._result_frame(failure)
        self.channel.write(frame)

    def _result_frame(
        self,
        result: ScriptResult,
        answered: dict[str, ToolReply] | None = None,
    ) -> bytes:
        used = _cpu_seconds()
        retire = self.cpu_lifetime is not None and used > self.cpu_lifetime / 2
        return _result_frame(
            result, {"op": "result", "result": None, "cpu": used, "retire": retire}, answered
        )


def _isolate_descriptors(channel_fd: int) -> _Channel:
    """Channel on a private descriptor, 0/1 → /dev/null, every other descriptor closed."""
    sock = socket.socket(fileno=channel_fd)
    sock.setblocking(True)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    keep = sock.fileno()
    if keep > 2:
        os.closerange(3, keep)
    os.closerange(max(keep + 1, 3), 1 << 16)
    return _Channel(sock)


def _apply_limits(config: dict[str, Any]) -> None:
    def set_limit(which: int, value: int) -> None:
        _soft, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))

    set_limit(resource.RLIMIT_CORE, 0)
    set_limit(resource.RLIMIT_FSIZE, 0)
    set_limit(resource.RLIMIT_NOFILE, int(config.get("nofile", 32)))
    memory = config.get("memory_bytes")
    if isinstance(memory, int) and memory > 0:
        set_limit(resource.RLIMIT_AS, memory)
    cpu = config.get("cpu_lifetime")
    if isinstance(cpu, int | float) and cpu > 0:
        set_limit(resource.RLIMIT_CPU, math.ceil(cpu))


def _become_worker(
    channel_fd: int,
    config: dict[str, Any],
    *,
    warm_up: bool,
    jail_report: list[list[Any]] | None = None,
) -> None:
    """Jail this process (descriptors, environment, limits) and serve jobs until EOF."""
    channel = _isolate_descriptors(channel_fd)
    os.environ.clear()
    recursion = config.get("recursion")
    if isinstance(recursion, int) and recursion > 0:
        sys.setrecursionlimit(recursion)
    _apply_limits(config)
    # From here on nothing may write to stderr: the parent reads it only before "ready".
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 2)
    os.close(devnull)
    cpu = config.get("cpu_lifetime")
    worker = _Worker(
        channel,
        float(cpu) if isinstance(cpu, int | float) else None,
        warm_up=warm_up,
        jail_report=jail_report,
    )
    anyio.run(worker.serve, backend="asyncio")


def _packet(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def _zygote(config: dict[str, Any]) -> None:
    """Fork server: import and warm up once, then fork a fresh worker per request.

    Requests arrive on a ``SOCK_SEQPACKET`` control socket (fd 0) as ``{"op":
    "fork", "tmpdir"}`` with two descriptors attached: the worker's channel and a
    status socket. For each request the zygote forks a *monitor*, which forks the
    worker (its own session and process group, so the parent can kill it with
    ``killpg``), reports ``{"op": "pid"}`` and later ``{"op": "exit", "status"}`` on
    the status socket, and exits. The zygote stays single-threaded (no event loop
    runs while it forks); monitors are reaped automatically (``SIGCHLD`` ignored).
    """
    control = socket.socket(fileno=os.dup(0))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    keep = control.fileno()
    os.closerange(3, keep)
    os.closerange(keep + 1, 1 << 16)
    os.environ.clear()
    if config.get("jail"):  # OS jail: what every worker's jail shares, built once here
        jail.preload()
    anyio.run(_warm_up, backend="asyncio")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    control.sendall(_packet({"op": "ready", "pid": os.getpid()}))
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 2)
    os.close(devnull)
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, 65536, 2)
        except OSError:
            os._exit(0)
        if not data:
            os._exit(0)
        try:
            request = json.loads(data)
            tmpdir = request["tmpdir"]
            channel_fd, status_fd = fds
        except (ValueError, KeyError, TypeError):
            for fd in fds:
                os.close(fd)
            control.sendall(_packet({"op": "error", "message": "malformed fork request"}))
            continue
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(channel_fd)
            os.close(status_fd)
            control.sendall(_packet({"op": "error", "message": f"fork failed: {exc}"}))
            continue
        if pid == 0:  # the monitor
            try:
                _monitor(control, channel_fd, status_fd, tmpdir, config)
            finally:
                os._exit(0)
        os.close(channel_fd)
        os.close(status_fd)
        control.sendall(_packet({"op": "forked"}))


def _monitor(
    control: socket.socket, channel_fd: int, status_fd: int, tmpdir: str, config: dict[str, Any]
) -> None:
    control.close()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    status = socket.socket(fileno=status_fd)
    # --- OS jail (scriptgate.sandbox.isolation.jail): this monitor becomes the jail's outside ---
    if config.get("jail"):
        settings = _jail_settings(config, tmpdir, new_session=True)

        def body(report: jail.JailReport) -> None:
            os.chdir(tmpdir)
            _become_worker(channel_fd, config, warm_up=False, jail_report=report.to_json())

        jail_pid, pid = jail.launch(settings, body)
        os.close(channel_fd)
        with contextlib.suppress(OSError):
            status.sendall(_packet({"op": "pid", "pid": pid}))
        code = jail.wait(jail_pid)
        with contextlib.suppress(OSError):
            status.sendall(_packet({"op": "exit", "status": code}))
        return
    # --- end OS jail ---
    pid = os.fork()
    if pid == 0:  # the worker
        try:
            status.close()
            os.setsid()
            os.chdir(tmpdir)
            _become_worker(channel_fd, config, warm_up=False)
        finally:
            os._exit(0)
    os.close(channel_fd)
    with contextlib.suppress(OSError):
        status.sendall(_packet({"op": "pid", "pid": pid}))
    _, code = os.waitpid(pid, 0)
    with contextlib.suppress(OSError):
        status.sendall(_packet({"op": "exit", "status": os.waitstatus_to_exitcode(code)}))


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point: a worker serving jobs on fd 0, or (``"mode": "zygote"``) the fork server."""
    args = list(sys.argv[1:] if argv is None else argv)
    config: dict[str, Any] = {}
    if args:
        loaded = json.loads(args[-1])
        if isinstance(loaded, dict):
            config = loaded
    if config.get("mode") == "zygote":
        _zygote(config)
    elif config.get("jail"):  # --- OS jail: this process becomes the jail's outside ---
        tmpdir = os.getcwd()

        def body(report: jail.JailReport) -> None:
            os.chdir(tmpdir)
            _become_worker(os.dup(0), config, warm_up=True, jail_report=report.to_json())

        jail_pid, _pid = jail.launch(_jail_settings(config, tmpdir, new_session=False), body)
        code = jail.wait(jail_pid)
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code & 0xFF)
    else:
        _become_worker(os.dup(0), config, warm_up=True)


def _jail_settings(config: dict[str, Any], tmpdir: str, *, new_session: bool) -> jail.JailSettings:
    """The jail of a worker with this config (the same limits ``_apply_limits`` sets after)."""
    memory = config.get("memory_bytes")
    return jail.JailSettings(
        tmpdir=tmpdir,
        memory_bytes=memory if isinstance(memory, int) and memory > 0 else None,
        nofile=int(config.get("nofile", 32)),
        nproc=int(config.get("nproc", 16)),
        fsize=0,
        new_session=new_session,
    )


if __name__ == "__main__":
    main()
