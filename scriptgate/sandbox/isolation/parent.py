"""Process isolation: scripts run in pooled, resource-limited worker processes.

The parent side of ``isolation/``: worker handles, the zygote, :class:`ProcessRunner`; the
wire format and result checks are :mod:`.framing`. Must not import the engine (the worker
runs it) or the model-facing text. Over 800 lines because :class:`ProcessRunner` is one
state machine (pool, sessions, deadlines, kills) that reads best whole.

:class:`ProcessRunner` keeps a warm pool of workers (:mod:`scriptgate.sandbox.isolation.worker`),
forked on demand from a zygote that has already imported and warmed up the engine
(so replacing a discarded worker costs milliseconds; ``spawn="exec"`` starts each
worker as a fresh interpreter instead). Each run takes one worker, sends it the job
as length-prefixed JSON over a Unix socket, and
answers the tool calls the worker sends back by running them *here*, through
the :class:`~scriptgate.sandbox.bridge.HostToolBridge` (so ``run_tool_call``, the
permission hooks and the audit never run inside the untrusted process). Only
plain JSON data crosses the boundary, in both directions; nothing is pickled.

Containment (restrictedpython-notes §10.1; on Linux every worker also runs in the OS
jail of :mod:`scriptgate.sandbox.isolation.jail`, whose report arrives with its ``ready`` message:
:attr:`ProcessRunner.jail`, and ``require_jail=True`` refuses a worker that lacks a layer):

- a worker holds no secrets: empty environment, isolated interpreter (``-I``),
  no inherited descriptors, an empty temporary working directory, its own
  process group; it applies ``RLIMIT_AS`` (:attr:`Limits.memory_bytes`),
  ``RLIMIT_CPU``, ``RLIMIT_FSIZE`` 0, a small ``RLIMIT_NOFILE`` and
  ``RLIMIT_CORE`` 0 to itself before it runs anything untrusted;
- the parent kills the worker's whole process group with ``SIGKILL`` at the
  wall-clock deadline (``Limits.timeout`` plus ``kill_grace``; the engine
  inside the worker normally stops the script cleanly at the deadline, the
  kill is the backstop for C loops the engine cannot interrupt);
- the parent never trusts what the worker says: frames are size-capped, and by
  kind (a call, a result, an output event: ``framing.FrameCaps``, text and JSON
  containers counted before parsing), every message and the final result are
  checked field by field, the tool-call quotas are enforced again on this side
  (records of calls the worker never sent included), a call past the deadline is
  not run, a cancel after a call's reply changes nothing.

A tool call's round trip is one frame each way and as few event-loop turns as
possible (``benchmarks/isolation.py`` measures it against the bare transport):
the worker waits for the reply on its socket with its loop blocked, for up to
``worker_bridge.DIRECT_WAIT``; the parent keeps the socket registered with the loop
for the whole run (asyncio: one future per wait, the reader callback reads
before it wakes the run). On asyncio a call that arrives alone while the run's
task waits is started by the loop's reader callback itself, *as* the run's task
(made the loop's current task for the step, in that task's own contextvars
context): a call that completes without suspending (an async tool that never
waits on anything pending) is answered right there, with no loop turn and no
task switch; a call that suspends is handed, mid-way, to the run's task, which
yields what the call yielded and drives it on, so anyio cancel scopes, task
groups and threads the tool starts behave as if the task had run it from the
start. While such a call waits, the reader callback handles whatever arrives (a
cancel, the result, a concurrent call, which gets a task of its own). Every
frame is still size-capped and checked, every call still goes through the
bridge here, and the quotas are still counted here. Trio reads in the run's
task and runs the calls in tasks. The frames of a call and of its reply are
built as text on both sides (the same bytes the JSON encoder makes; the encoder
sets itself up again for every dict, which costs more than such a message) and
every frame is decoded with ``raw_decode`` and an end check (exactly one JSON
object, nothing after it).

Outcomes, with the same :class:`ScriptResult` shape as in-process runs:

- the deadline kill → ``error.kind == "limit"`` (``TimeoutError``);
- an abort the worker does not honour within ``kill_grace`` → ``"aborted"``;
- a worker that died on its own → ``"sandbox"`` with the signal or exit status
  in the message (``SIGXCPU``: the CPU-time limit → ``"limit"``); a
  ``MemoryError`` under the address-space limit → ``"limit"``;
- calls still pending on the host when the script ends are cancelled and
  recorded as ``cancelled``.

A worker runs one script: afterwards it is killed and a background thread forks
its replacement from the zygote, waits for it and runs the private warm-up job of
:mod:`.warm` on it (tool calls this side answers itself, never recorded or audited)
before it enters the pool, so the next run starts on a ready worker that has already
paid its first touch of the engine; nothing a script left in its interpreter reaches
a later run.
``reuse_workers=True`` puts a worker whose script succeeded back into the pool
instead (the engine gives every run fresh globals); a worker that crashed, was
killed, or ran a failing script is always discarded. The pool survives anything
a script does.

Sessions (``session_key``): the first run of a session pins a worker, whose
globals persist across the session's runs. A script error (``syntax``,
``rejected``, ``runtime``, ``tool``) keeps the worker and its globals, as
in-process. A ``limit``, ``aborted`` or ``sandbox`` outcome discards the worker:
that run's error message says the session's globals were lost, and the next
run of the session starts with empty globals in a fresh worker.
:meth:`ProcessRunner.reset_session` (or the synchronous ``drop_session``) discards a
session's worker on purpose. At most ``max_sessions`` sessions keep a worker; beyond
that the least recently used idle session is discarded (its globals are lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import json
import math
import os
import select
import shutil
import signal as signals
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Coroutine, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from greenlet import getcurrent  # type: ignore[import-untyped]

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.sandbox.bridge import ToolBridge, ToolReply, ToolSpec
from scriptgate.sandbox.events import OnEvent, RunEvent
from scriptgate.sandbox.isolation.framing import (
    _CALL_STATUSES,
    _HEADER,
    FrameCaps,
    _as_text,
    _failure,
    _frame,
    _limits_json,
    _packet,
    _ProtocolError,
    _reply_frame,
    _result_from_json,
    _seconds,
    _spec_json,
    _with_note,
    _within_limits,
)
from scriptgate.sandbox.isolation.jail.bwrap import (
    bwrap_command,
    bwrap_path,
    host_uid,
    launch_as,
    seccomp_for_bwrap,
)
from scriptgate.sandbox.isolation.jail.report import JailReport
from scriptgate.sandbox.isolation.warm import WarmUpFailed, warm_limits, warm_up
from scriptgate.sandbox.records import record_arguments
from scriptgate.sandbox.result import (
    CallRecord,
    CallStatus,
    ErrorKind,
    Limits,
    ScriptError,
    ScriptResult,
)

__all__ = ["ProcessRunner"]

_READ_CHUNK = 1 << 16
_MAX_EMPTY_EVENTS = 100_000
"""Empty output events a worker may send in one run (they are not kept; F05's frame cap)."""
# ``raw_decode``: a frame is one JSON text; ``decode`` would scan for whitespace around
# it twice (a frame with anything after the JSON value is refused below instead).
_RAW_DECODE = json.JSONDecoder().raw_decode
# The worker imports only what it needs: the package ``__init__``s (which re-export
# the whole library) are replaced by bare package objects, so importing the engine
# does not drag in the tools, the CLI or their dependencies.
_BOOTSTRAP = (
    "import sys, types\n"
    "for name in ('scriptgate', 'scriptgate.runtime', 'scriptgate.sandbox'):\n"
    "    package = types.ModuleType(name)\n"
    "    package.__path__ = [sys.argv[1] + '/' + name.replace('.', '/')]\n"
    "    sys.modules[name] = package\n"
    "from scriptgate.sandbox.isolation.worker import main\n"
    "main(sys.argv[2:])\n"
)
_PACKAGE_PARENT = str(Path(__file__).resolve().parents[3])
# Make a task the current one while the reader callback runs a call for it (asyncio);
# without them (another interpreter) the run's task reads and runs every call itself.
_enter_task: Callable[[asyncio.AbstractEventLoop, asyncio.Task[Any]], None] | None = getattr(
    asyncio.tasks, "_enter_task", None
)
_leave_task: Callable[[asyncio.AbstractEventLoop, asyncio.Task[Any]], None] | None = getattr(
    asyncio.tasks, "_leave_task", None
)
_CLOSED_STOP: tuple[ErrorKind, str, str] = (
    "sandbox",
    "WorkerCrashed",
    "The sandbox was closed while the script ran.",
)
"""How a run ends when the runner is closed under it, whatever else was stopping it."""
_SESSION_LOST = " The session's worker process was discarded; its globals are lost."


class _WorkerGone(Exception):
    """The worker closed its end of the channel (it exited or was killed)."""


def _signal_name(number: int) -> str:
    try:
        return signals.Signals(number).name
    except ValueError:
        return f"signal {number}"


class _JailMissing(Exception):
    """``require_jail`` is set and the worker's jail lacks a layer; ``str()`` says which."""


class _StartError(Exception):
    """A worker (or the zygote) could not be started; ``str()`` says why."""


class _Readable:
    """Waits until a descriptor is readable, for the length of one run.

    On asyncio the descriptor stays registered with the loop's selector for the
    whole run and each wait is one future: registering and unregistering it for
    every message (what ``anyio.wait_readable`` does) costs more than the message.
    While nobody waits the reader callback unregisters itself (the selector is
    level-triggered: nothing is lost, the next wait registers again). Other
    backends (trio) use ``anyio.wait_readable``, which is cheap there.

    ``fill`` (asyncio) reads what is there before a waiter is woken and says
    whether anything was (data, or EOF): the selector may report readiness that
    the waiting task consumed in the same loop turn, and waking the task for
    nothing costs a loop turn and a read.
    """

    def __init__(self, fd: int, fill: Callable[[], bool] | None = None) -> None:
        self.fd = fd
        self.fill = fill
        # Called instead of ``fill`` when the descriptor is readable while the run
        # waits for a message (asyncio only); ``True``: wake the waiter.
        self.serve: Callable[[], bool] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.registered = False
        # Called instead when the descriptor is readable and nobody waits (asyncio only).
        self.busy: Callable[[], None] | None = None
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            if asyncio.current_task() is not None:
                self.loop = loop

    def _ready(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            serve = self.serve
            if serve is not None:
                if serve() and not waiter.done():  # (a tool may cancel the task it runs as)
                    waiter.set_result(None)
            elif self.fill is None or self.fill():
                waiter.set_result(None)
        elif waiter is None:
            if self.busy is not None:
                self.busy()
            else:
                self._unregister()

    def watch(self, busy: Callable[[], None]) -> None:
        """Call ``busy`` whenever the descriptor is readable while nobody waits (asyncio)."""
        assert self.loop is not None
        self.busy = busy
        if not self.registered:
            self.loop.add_reader(self.fd, self._ready)
            self.registered = True

    def unwatch(self) -> None:
        """Stop calling the ``busy`` handler."""
        self.busy = None

    def _unregister(self) -> None:
        if self.registered and self.loop is not None:
            self.registered = False
            self.loop.remove_reader(self.fd)

    async def wait(self) -> None:
        """Return once the descriptor is readable (or at EOF)."""
        loop = self.loop
        if loop is None:
            await anyio.wait_readable(self.fd)
            return
        if not self.registered:
            try:
                loop.add_reader(self.fd, self._ready)
            except NotImplementedError:  # a loop without add_reader
                self.loop = None
                await anyio.wait_readable(self.fd)
                return
            self.registered = True
        self.waiter = loop.create_future()
        try:
            await self.waiter
        finally:
            self.waiter = None

    def close(self) -> None:
        """Unregister the descriptor (the run is over)."""
        self.busy = None
        self._unregister()
        self.loop = None


class _Worker:
    """One worker process and the parent's end of its channel.

    Started either directly (``popen``: the parent is its parent) or by the zygote
    (``status``: a socket on which the worker's monitor reports its exit status).
    """

    def __init__(
        self,
        pid: int,
        sock: socket.socket,
        tmpdir: str,
        max_frame: int,
        *,
        popen: subprocess.Popen[bytes] | None = None,
        status: socket.socket | None = None,
    ) -> None:
        self.popen = popen
        self.status = status
        self.pid = pid
        self.sock = sock
        self.tmpdir = tmpdir
        self.max_frame = max_frame
        sock.setblocking(False)
        self.wfd = self.rfd = sock.fileno()
        self.buf = bytearray()
        self.ready = False
        self.warmed = False  # it ran the parent's warm-up job (:mod:`.warm`) and is clean
        self.jail: JailReport | None = None  # what its OS jail got (from its ready message)
        self.busy = False
        self.killed = False
        self.reaped = False
        self.code: int | None = None
        self.exited = False
        self.partial = b""  # the unsent rest of a frame try_write could not finish
        self.readable: _Readable | None = None  # set while a run drives this worker
        # what the reader callback took from the buffer for the run's loop (asyncio):
        # messages, a call it started (_Stepped), or an exception to raise
        self.inbox: deque[Any] = deque()
        self.gone = False  # ``fill`` saw EOF or a read error
        # the session's previous worker was discarded when this one was pinned (_acquire)
        self.session_lost = False
        # what one frame may hold (set by the runner; None: only ``max_frame``)
        self.caps: FrameCaps | None = None
        self.result_deep = True  # the last result frame may nest past the engine's bound

    # -- channel ------------------------------------------------------------------
    async def send(self, message: dict[str, Any]) -> None:
        await self.write(_frame(message))

    def try_write(self, frame: bytes) -> bool:
        """Write ``frame`` now if the socket takes all of it (``False``: nothing written)."""
        try:
            sent = self.sock.send(frame, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError as exc:
            raise _WorkerGone from exc
        if sent == len(frame):
            return True
        self.partial = frame[sent:]
        return False

    async def send_frame(self, frame: bytes, lock: anyio.Lock) -> None:
        """Write ``frame`` whole, after what other writers holding ``lock`` queued.

        Fast path: nobody holds the lock and the socket takes the whole frame at
        once. Otherwise the rest (all of it, or what :meth:`try_write` left in
        :attr:`partial`) is written under the lock.
        """
        if not self.send_now(frame, lock):
            await self.send_rest(frame, lock)

    def send_now(self, frame: bytes, lock: anyio.Lock) -> bool:
        """:meth:`send_frame`'s fast path; ``False``: :meth:`send_rest` must follow."""
        return not lock.locked() and self.try_write(frame)

    async def send_rest(self, frame: bytes, lock: anyio.Lock) -> None:
        """Write what :meth:`send_now` did not (all of ``frame``, or the rest of it)."""
        if self.partial:
            frame = b""  # the unsent rest of it is in self.partial, written first
        async with lock:
            await self.write(frame)

    async def write(self, frame: bytes) -> None:
        """Write ``frame`` completely, waiting for the socket to drain as needed."""
        if self.partial:
            frame, self.partial = self.partial + frame, b""
        view = memoryview(frame)
        while view:
            try:
                written = os.write(self.wfd, view)
            except BlockingIOError:
                await anyio.wait_writable(self.wfd)
                continue
            except (BrokenPipeError, OSError) as exc:
                raise _WorkerGone from exc
            view = view[written:]

    def _parse(self) -> dict[str, Any] | None:
        """The next complete message in the buffer, if any."""
        if len(self.buf) < _HEADER:
            return None
        size = int.from_bytes(self.buf[:_HEADER], "big")
        if size > self.max_frame:
            raise _ProtocolError(f"a {size}-byte message exceeds the {self.max_frame}-byte cap")
        if len(self.buf) < _HEADER + size:
            return None
        payload = self.buf[_HEADER : _HEADER + size]
        del self.buf[: _HEADER + size]
        try:
            text = payload.decode()
        except ValueError as exc:
            raise _ProtocolError(f"a message is not valid JSON ({exc})") from None
        caps = self.caps
        if caps is not None:  # hostile worker (B03): bounded before it is parsed
            op, deep = caps.check(text)
            if op == "result":
                self.result_deep = deep
        try:
            message, end = _RAW_DECODE(text)
        except (ValueError, RecursionError) as exc:
            raise _ProtocolError(f"a message is not valid JSON ({exc})") from None
        if end != len(text):
            raise _ProtocolError("a message is not valid JSON (extra data after the value)")
        if type(message) is not dict:
            raise _ProtocolError("a message is not a JSON object")
        return message

    def _read(self) -> bool:
        """Append what the socket holds now (``False``: nothing yet)."""
        try:
            chunk = os.read(self.rfd, _READ_CHUNK)
        except BlockingIOError:
            return False
        except OSError as exc:
            raise _WorkerGone from exc
        if not chunk:
            raise _WorkerGone
        self.buf += chunk
        return True

    def fill(self) -> bool:
        """Read what the socket holds now; ``True`` if there was anything (data, EOF)."""
        try:
            return self._read()
        except _WorkerGone:
            self.gone = True
            return True

    def try_recv(self) -> dict[str, Any] | None:
        """The next message if it is complete after one read without blocking, else ``None``."""
        message = self._parse()
        if message is None and self._read():
            message = self._parse()
        return message

    async def recv(self) -> Any:
        """The next message (raises :class:`_WorkerGone`, :class:`_ProtocolError`).

        During a run (``readable`` set) an empty buffer waits before it reads: a
        message rarely follows the one just handled at once, and the wait costs
        one loop turn when the descriptor is already readable. What the reader
        callback left in :attr:`inbox` comes first (a message, a
        :class:`_Stepped` call, or an exception, raised here).
        """
        inbox = self.inbox
        if not self.buf and not inbox and self.readable is not None:
            await self.readable.wait()
        while True:
            if inbox:
                item = inbox.popleft()
                if isinstance(item, Exception):
                    raise item
                return item
            message = self._parse()
            if message is not None:
                return message
            if self.gone:
                raise _WorkerGone
            if not self._read():
                if self.readable is not None:
                    await self.readable.wait()
                else:
                    await anyio.wait_readable(self.rfd)

    # -- blocking I/O (the refill thread's warm-up job, off every run's path) ---------
    def recv_blocking(self, deadline: float) -> dict[str, Any]:
        """The next message, waiting until the ``time.monotonic()`` deadline (no event loop)."""
        while True:
            message = self._parse()
            if message is not None:
                return message
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the worker did not answer in time")
            readable, _, _ = select.select([self.rfd], [], [], left)
            if readable:
                self._read()

    def write_blocking(self, frame: bytes, deadline: float) -> None:
        """Write ``frame`` completely, waiting until the deadline for the socket to drain."""
        view = memoryview(frame)
        while view:
            try:
                view = view[os.write(self.wfd, view) :]
            except BlockingIOError:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("the worker did not read in time") from None
                select.select([], [self.wfd], [], left)
            except OSError as exc:
                raise _WorkerGone from exc

    # -- life cycle ---------------------------------------------------------------
    def alive(self) -> bool:
        if self.killed or self.exited:
            return False
        if self.popen is not None:
            return self.popen.poll() is None
        if self.status is None:
            return False
        readable, _, _ = select.select([self.status], [], [], 0)
        return not readable

    def quiet(self) -> bool:
        """Nothing buffered or waiting from the worker (between runs it has nothing to say)."""
        if self.buf or self.partial:
            return False
        try:
            readable, _, _ = select.select([self.sock], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable

    def kill(self) -> None:
        """SIGKILL the worker's whole process group (idempotent, never raises)."""
        if self.killed:
            return
        self.killed = True
        if self.exited or (self.popen is not None and self.popen.returncode is not None):
            return
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signals.SIGKILL)
        # Also the process itself: a just-forked worker may not have called setsid() yet.
        # (Its pid cannot be reused before we have seen its exit status.)
        with contextlib.suppress(OSError):
            os.kill(self.pid, signals.SIGKILL)

    def exit_status(self, timeout: float = 2.0) -> int | None:
        """Wait (at most ``timeout``) for the worker's exit status (negative: a signal)."""
        if self.exited:
            return self.code
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                self.code = self.popen.wait(timeout=timeout)
                self.exited = True
            return self.code
        if self.status is not None:
            deadline = time.monotonic() + timeout
            with contextlib.suppress(OSError, ValueError):
                while (left := deadline - time.monotonic()) > 0:
                    self.status.settimeout(left)
                    data = self.status.recv(4096)
                    if not data:
                        self.exited = True  # the monitor died with it: status unknown
                        break
                    message = json.loads(data)
                    if isinstance(message, dict) and message.get("op") == "exit":
                        code = message.get("status")
                        self.code = code if isinstance(code, int) else None
                        self.exited = True
                        break
        return self.code

    def reap(self) -> int | None:
        """Kill, wait for the exit status, release descriptors and the temp dir."""
        self.kill()
        code = self.exit_status(timeout=10)
        if not self.reaped:
            self.reaped = True
            with contextlib.suppress(OSError):
                self.sock.close()
            if self.status is not None:
                with contextlib.suppress(OSError):
                    self.status.close()
            if self.popen is not None and self.popen.stderr is not None:
                with contextlib.suppress(OSError):
                    self.popen.stderr.close()
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        return code

    def stderr_tail(self) -> str:
        """What the worker wrote to stderr before it became ready (startup failures)."""
        stream = self.popen.stderr if self.popen is not None else None
        if stream is None:
            return ""
        return _tail(stream)


def _tail(stream: Any) -> str:
    try:
        os.set_blocking(stream.fileno(), False)
        data = os.read(stream.fileno(), 4096)
    except (OSError, ValueError):
        return ""
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[-1] if text else ""


class _Zygote:
    """The fork server (:func:`scriptgate.sandbox.isolation.zygote._zygote`) and its control socket."""

    def __init__(self, popen: subprocess.Popen[bytes], control: socket.socket, tmpdir: str) -> None:
        self.popen = popen
        self.control = control
        self.tmpdir = tmpdir

    def alive(self) -> bool:
        return self.popen.poll() is None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self.popen.pid, signals.SIGKILL)
        with contextlib.suppress(OSError):
            self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired, OSError):
            self.popen.wait(timeout=10)
        with contextlib.suppress(OSError):
            self.control.close()
        if self.popen.stderr is not None:
            with contextlib.suppress(OSError):
                self.popen.stderr.close()
        shutil.rmtree(self.tmpdir, ignore_errors=True)


@dataclass(slots=True)
class _Call:
    id: str
    tool: str
    arguments: dict[str, Any]
    status: CallStatus | None = None
    duration_ms: int | None = None
    error: str | None = None
    scope: anyio.CancelScope | None = None

    def record(self) -> CallRecord:
        return CallRecord(
            id=self.id,
            tool=self.tool,
            arguments=record_arguments(self.arguments),
            status=self.status or "cancelled",
            duration_ms=self.duration_ms,
            error=self.error,
        )


@dataclass(slots=True)
class _Run:
    """Parent-side bookkeeping of one job."""

    calls: list[_Call] = field(default_factory=list)
    by_id: dict[str, _Call] = field(default_factory=dict)
    per_tool: dict[str, int] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    retire: bool = False
    stop: tuple[ErrorKind, str, str] | None = None  # kind, type, message when WE stopped it
    output: list[str] = field(default_factory=list)
    """What the script printed, as streamed (``on_event`` runs): kept if the worker is killed."""
    on_event: OnEvent | None = None
    tools: frozenset[str] = frozenset()  # the run's tool names
    lines: int = 1  # the script's line count
    deep: bool = True  # the result's frame may hold a value nested past the engine's bound

    def emit(self, event: RunEvent) -> None:
        """Hand ``event`` to the host's callback; a callback that fails is dropped."""
        callback = self.on_event
        if callback is not None:
            try:
                callback(event)
            except Exception:
                self.on_event = None

    def ended(self, call: _Call) -> None:
        """Emit the ``call_end`` event of ``call``."""
        if self.on_event is not None:
            self.emit(
                RunEvent(
                    "call_end",
                    call_id=call.id,
                    tool=call.tool,
                    arguments=call.arguments,
                    status=call.status or "cancelled",
                    duration_ms=call.duration_ms,
                    error=call.error,
                )
            )


class _Stepped:
    """A call the reader callback started that suspended: the run's task goes on with it."""

    __slots__ = ("call", "coro", "yielded")

    def __init__(self, call: _Call, coro: Coroutine[Any, Any, None], yielded: Any) -> None:
        self.call = call
        self.coro = coro
        self.yielded = yielded

    def __await__(self) -> Generator[Any, Any, None]:
        """Yield what the coroutine yielded, then drive it on from the awaiting task."""
        coro, yielded = self.coro, self.yielded
        while True:
            try:
                sent = yield yielded
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:
                try:
                    yielded = coro.throw(exc)
                except StopIteration:
                    return
                continue
            try:
                yielded = coro.send(sent)
            except StopIteration:
                return


def _drop_stepped(inbox: deque[Any]) -> None:
    """Unwind the calls a reader callback started that no task took over; empty ``inbox``."""
    for item in inbox:
        if type(item) is _Stepped:
            item.call.status = "cancelled"
            with contextlib.suppress(Exception):  # (RuntimeError: it ignored GeneratorExit)
                item.coro.close()
    inbox.clear()


def _as_task(
    loop: asyncio.AbstractEventLoop | None, body: Callable[[], bool]
) -> Callable[[], bool] | None:
    """``body`` wrapped to run from a loop callback as if the calling task were running it.

    The wrapper makes the current task (the caller of this function) the loop's
    current task and runs ``body`` in that task's own contextvars context (not
    a copy), so what ``body`` starts behaves exactly as if the task ran it.
    ``None`` where that cannot be done (no asyncio task, an interpreter without
    ``asyncio.tasks._enter_task``).
    """
    task = asyncio.current_task() if loop is not None else None
    context: contextvars.Context | None = getcurrent().gr_context
    enter, leave = _enter_task, _leave_task
    if loop is None or task is None or context is None or enter is None or leave is None:
        return None
    run = context.run

    def as_task() -> bool:
        enter(loop, task)
        try:
            return run(body)
        finally:
            leave(loop, task)

    return as_task


def _kill_all(workers: set[_Worker], zygote: list[_Zygote]) -> None:
    for worker in list(workers):
        worker.kill()
    for worker in list(workers):
        worker.reap()
    workers.clear()
    _drop_zygotes(zygote)


def _drop_zygotes(box: list[_Zygote]) -> None:
    """Close every zygote in ``box`` (the finalizer may empty it at exit concurrently)."""
    while True:
        try:
            zygote = box.pop()
        except IndexError:
            return
        zygote.close()


def _refill_loop(ref: weakref.ref[ProcessRunner], wake: threading.Condition) -> None:
    """The refill thread of a :class:`ProcessRunner` (holds it only while it works)."""
    while True:
        with wake:
            runner = ref()
            if runner is None or runner.closed:
                return
            pending = bool(runner._retiring or runner._reaping)
            del runner
            if not pending:
                wake.wait(1.0)
                continue
        runner = ref()
        if runner is None:
            return
        runner._refill()
        del runner


class ProcessRunner:
    """Runs scripts in a warm pool of resource-limited worker processes.

    ``limits`` are the budgets of every run (``memory_bytes`` becomes the workers'
    ``RLIMIT_AS``); ``pool_size`` workers are kept warm. ``kill_grace`` is how
    long after its deadline (or after an abort) a worker that has not answered
    is killed; ``start_timeout`` how long a new worker may take to start.

    Each worker runs one script and is then killed (a session's runs keep their
    worker: its globals are the session's state); its replacement is forked in the
    background while the result goes back, so the next run starts on a ready
    worker. ``reuse_workers=True`` puts a worker whose run ended ``ok`` back into
    the pool instead (more throughput when runs come faster than workers start;
    an interpreter a script broke without the parent noticing then sees later
    runs).

    The runner may be used from several event loops and threads (``run_sync``
    creates one per call); every worker is used by one run at a time.
    """

    def __init__(
        self,
        limits: Limits,
        *,
        pool_size: int = 2,
        kill_grace: float = 0.05,
        start_timeout: float = 30.0,
        spawn: Literal["fork", "exec"] = "fork",
        max_sessions: int = 16,
        jail: bool = True,
        require_jail: bool = False,
        reuse_workers: bool = False,
        launcher: Literal["builtin", "bwrap"] = "builtin",
    ) -> None:
        if pool_size < 0:
            raise ConfigurationError(f"pool_size must be >= 0, got {pool_size}")
        if spawn not in ("fork", "exec"):
            raise ConfigurationError(f"spawn must be 'fork' or 'exec', got {spawn!r}")
        if launcher not in ("builtin", "bwrap"):
            raise ConfigurationError(f"launcher must be 'builtin' or 'bwrap', got {launcher!r}")
        # --- OS jail: bubblewrap builds the namespaces, each worker is its own exec ---
        self.launcher = launcher
        self._bwrap_uid: int | None = None
        if launcher == "bwrap":
            if not jail:
                raise ConfigurationError("launcher='bwrap' is a jail launcher: it needs jail=True")
            if bwrap_path() is None:
                raise ConfigurationError(
                    "launcher='bwrap' needs bubblewrap: install it (apt-get install bubblewrap)"
                )
            spawn = "exec"
        self.spawn = spawn
        self.max_sessions = max(1, max_sessions)
        # The OS jail (scriptgate.sandbox.isolation.jail) of every worker; ``jail`` is the last
        # worker's report (None until one started).
        self.jail_enabled = jail
        self.require_jail = require_jail
        # One run per worker unless ``reuse_workers``: a run that ended ``ok`` hands its
        # worker to a background thread that kills it and forks the replacement.
        self.reuse_workers = reuse_workers
        self._retiring: list[_Worker] = []
        self._reaping: list[_Worker] = []  # killed, exit status not yet read (refill thread)
        # The refill thread is at work (retired workers to reap, the pool to refill and
        # warm up): for benchmarks and tests that wait until a run meets a settled machine.
        self._refilling = False
        self._refiller: threading.Thread | None = None
        self._retired = threading.Condition(threading.Lock())
        self.jail: JailReport | None = None
        self._zygote: list[_Zygote] = []  # zero or one; a list so the finalizer can see it
        self._zygote_lock = threading.Lock()
        self.limits = limits
        self.pool_size = pool_size
        self.kill_grace = kill_grace
        self.start_timeout = start_timeout
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._warming = 0  # workers being spawned and warmed up for the pool (``_fill``)
        self._all: set[_Worker] = set()
        self._sessions: dict[str, _Worker] = {}
        self._closed = False
        self._started = False
        timeout = limits.timeout
        self._config: dict[str, Any] = {
            "memory_bytes": limits.memory_bytes,
            "cpu_lifetime": 3600 if timeout is None else max(300, 20 * math.ceil(timeout)),
            "nofile": 32,
            "nproc": 16,
            "jail": ("bwrap" if launcher == "bwrap" else True)
            if jail and sys.platform == "linux"
            else False,
            # Lowered, but with room for the engine's own recursion (JSON copies of
            # nested values go 200 levels deep, two frames each) above the script's.
            "recursion": max(600, 2 * limits.max_recursion + 300),
        }
        budget = (limits.max_result_bytes or 10_000_000) + 4 * (
            limits.max_output_chars or 1_000_000
        )
        self._max_frame = max(16 << 20, 4 * budget)
        self._caps = FrameCaps.of(limits, self._max_frame)
        self._job_limits = _limits_json(limits)
        self._warm_limits = _limits_json(warm_limits(limits))
        if launcher == "bwrap":
            _command, bound = bwrap_command(["true"], "/", tmp_bytes=16 << 20)
            self._bwrap_uid = host_uid(bound)
            self._config["bwrap_seccomp"] = list(seccomp_for_bwrap())
            self._config["bwrap_uid"] = self._bwrap_uid
        self._finalizer = weakref.finalize(self, _kill_all, self._all, self._zygote)

    # -- pool ---------------------------------------------------------------------
    def _popen(self, config: dict[str, Any], stdin: int, stdout: int, cwd: str) -> Any:
        command = [
            sys.executable,
            "-I",
            "-B",
            "-c",
            _BOOTSTRAP,
            _PACKAGE_PARENT,
            json.dumps(config),
        ]
        user: int | None = None
        if self.launcher == "bwrap" and config.get("mode") != "zygote":
            command, bound = bwrap_command(command, cwd, tmp_bytes=16 << 20)
            command, user = launch_as(command, bound)  # as nobody: directly or via the shim
        return subprocess.Popen(
            command,
            user=user,
            group=user,
            extra_groups=[] if user is not None else None,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={"MALLOC_ARENA_MAX": "2"},
            close_fds=True,
            start_new_session=True,
        )

    def _spawn(self) -> _Worker:
        """A new worker (forked by the zygote, or started directly); raises :class:`_StartError`."""
        worker = self._fork() if self.spawn == "fork" else self._exec()
        with self._lock:
            closed = self._closed
            if not closed:
                self._all.add(worker)
        if closed:
            worker.reap()
            raise ConfigurationError("the process runner is closed")
        return worker

    def _exec(self) -> _Worker:
        tmpdir = tempfile.mkdtemp(prefix="scriptgate-worker-")
        # A socket pair, not pipes: cross-CPU wake-ups are several times cheaper.
        ours, theirs = socket.socketpair()
        try:
            popen = self._popen(self._config, theirs.fileno(), theirs.fileno(), tmpdir)
        except OSError as exc:
            ours.close()
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise _StartError(f"could not start a worker process: {exc}") from None
        finally:
            theirs.close()
        worker = _Worker(popen.pid, ours, tmpdir, self._max_frame, popen=popen)
        worker.caps = self._caps
        return worker

    def _start_zygote(self) -> _Zygote:
        tmpdir = tempfile.mkdtemp(prefix="scriptgate-zygote-")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            popen = self._popen(
                {**self._config, "mode": "zygote"}, theirs.fileno(), subprocess.DEVNULL, tmpdir
            )
        except OSError as exc:
            ours.close()
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise _StartError(f"could not start the zygote process: {exc}") from None
        finally:
            theirs.close()
        zygote = _Zygote(popen, ours, tmpdir)
        try:
            ours.settimeout(self.start_timeout)
            reply = ours.recv(4096)
            message = json.loads(reply) if reply else None
        except (OSError, ValueError):
            message = None
        if not isinstance(message, dict) or message.get("op") != "ready":
            popen.poll()
            detail = _tail(popen.stderr) if popen.stderr is not None else ""
            zygote.close()
            status = popen.returncode
            reason = f" ({detail})" if detail else ""
            raise _StartError(f"The zygote process failed to start (exit status {status}){reason}.")
        return zygote

    def _fork(self) -> _Worker:
        box = self._zygote
        with self._zygote_lock:
            for attempt in (1, 2):
                # the finalizer (interpreter exit) empties ``box`` without this lock: read it once
                zygote = box[0] if box else None
                if zygote is None or not zygote.alive():
                    _drop_zygotes(box)
                    if self._closed:
                        raise ConfigurationError("the process runner is closed")
                    zygote = self._start_zygote()
                    box.append(zygote)
                try:
                    return self._fork_once(zygote)
                except (OSError, ValueError, _StartError) as exc:
                    with contextlib.suppress(ValueError):
                        box.remove(zygote)  # already gone if the finalizer ran
                    zygote.close()
                    if attempt == 2 or self._closed:
                        raise _StartError(f"The worker process failed to start: {exc}") from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _fork_once(self, zygote: _Zygote) -> _Worker:
        tmpdir = tempfile.mkdtemp(prefix="scriptgate-worker-")
        ours, theirs = socket.socketpair()
        status, status_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            request = _packet({"op": "fork", "tmpdir": tmpdir})
            socket.send_fds(zygote.control, [request], [theirs.fileno(), status_theirs.fileno()])
            theirs.close()
            status_theirs.close()
            zygote.control.settimeout(self.start_timeout)
            reply = json.loads(zygote.control.recv(4096) or b"null")
            if not isinstance(reply, dict) or reply.get("op") != "forked":
                raise _StartError(str(reply.get("message") if isinstance(reply, dict) else reply))
            status.settimeout(self.start_timeout)
            hello = json.loads(status.recv(4096) or b"null")
            pid = hello.get("pid") if isinstance(hello, dict) else None
            if not isinstance(pid, int):
                raise _StartError("the zygote did not report the worker's pid")
        except BaseException:
            for sock in (ours, theirs, status, status_theirs):
                sock.close()
            shutil.rmtree(tmpdir, ignore_errors=True)
            raise
        worker = _Worker(pid, ours, tmpdir, self._max_frame, status=status)
        worker.caps = self._caps
        return worker

    def _fill(self, *, warm: bool = False) -> None:
        """Spawn workers until ``pool_size`` are idle (or starting, or warming up).

        ``warm`` (the refill thread and :meth:`start`): each new worker is waited for
        and runs the parent's private warm-up job (:mod:`.warm`) before it enters the
        pool, so a run never pays a fresh worker's first touch of the engine; a worker
        that fails it is discarded.
        """
        fresh: list[_Worker] = []
        while True:
            with self._lock:
                if self._closed or len(self._idle) + self._warming >= self.pool_size:
                    break
                if warm:
                    self._warming += 1
            try:
                worker = self._spawn()
            except (_StartError, ConfigurationError, OSError):
                if warm:
                    with self._lock:
                        self._warming -= 1
                break
            if warm:
                fresh.append(worker)
                continue
            with self._lock:
                if not self.closed:
                    self._idle.append(worker)
                    continue
            worker.reap()
            break
        for worker in fresh:
            ok = self._warm(worker)
            with self._lock:
                self._warming -= 1
                ok = ok and not self._closed
                if ok:
                    self._idle.append(worker)
                else:
                    self._all.discard(worker)
            if not ok:
                worker.reap()

    def _warm(self, worker: _Worker) -> bool:
        """Wait (blocking) for ``worker``'s ready message, then run the warm-up job on it."""
        deadline = time.monotonic() + self.start_timeout
        try:
            self._accept_ready(worker, worker.recv_blocking(deadline))
            warm_up(
                worker.recv_blocking,
                worker.write_blocking,
                self._warm_limits,
                max(1.0, deadline - time.monotonic()),
            )
        except (_WorkerGone, _ProtocolError, _JailMissing, WarmUpFailed, TimeoutError, OSError):
            return False
        worker.warmed = worker.quiet()
        return worker.warmed

    async def start(self) -> None:
        """Start the pool now and wait until its workers are ready (otherwise the first run does)."""
        self._check_open()
        self._started = True
        await anyio.to_thread.run_sync(lambda: self._fill(warm=True))
        with self._lock:
            idle = list(self._idle)
        for worker in idle:
            with self._lock:
                if worker not in self._idle:
                    continue
                self._idle.remove(worker)
                worker.busy = True
            try:
                await self._wait_ready(worker)
            except (_WorkerGone, _ProtocolError, TimeoutError, _JailMissing):
                await self._discard(worker)
                continue
            self._release(worker)

    @property
    def closed(self) -> bool:
        """True once :meth:`aclose` or :meth:`close` ran."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise ConfigurationError("the process runner is closed")

    async def _acquire(self, session_key: str | None) -> _Worker:
        stale: list[_Worker] = []
        worker: _Worker | None = None
        lost = False  # the session's worker was discarded here (its globals are lost)
        if not self._started:
            self._started = True
            await anyio.to_thread.run_sync(self._fill)
        with self._lock:
            self._check_open()
            if session_key is not None and session_key in self._sessions:
                pinned = self._sessions.pop(session_key)
                if pinned.busy:
                    self._sessions[session_key] = pinned
                    raise ConfigurationError(f"session {session_key!r} is already running a script")
                # --- hostile worker (B05): a session's worker that sent anything after its
                # last result (a late call) is never used again; that call is never run ---
                if pinned.alive() and pinned.quiet():
                    self._sessions[session_key] = pinned  # most recently used last
                    pinned.busy = True
                    return pinned
                stale.append(pinned)
                lost = True
            while self._idle:
                candidate = self._idle.pop(0)
                if candidate.alive() and (not candidate.ready or candidate.quiet()):
                    worker = candidate
                    break
                stale.append(candidate)
            if worker is not None:
                worker.busy = True
        for dead in stale:
            await self._discard(dead)
        if worker is None:
            worker = await anyio.to_thread.run_sync(self._spawn)
            worker.busy = True
        worker.session_lost = lost
        if session_key is not None:
            with self._lock:
                self._sessions[session_key] = worker
                evicted = self._evict_sessions()
            for old in evicted:
                await self._discard(old)
            # The pinned worker left the pool: top it up.
            await anyio.to_thread.run_sync(self._fill)
        return worker

    def _evict_sessions(self) -> list[_Worker]:
        """Unpin the least recently used idle sessions beyond ``max_sessions`` (lock held)."""
        evicted: list[_Worker] = []
        for key in list(self._sessions):
            if len(self._sessions) <= self.max_sessions:
                break
            worker = self._sessions[key]
            if not worker.busy:
                del self._sessions[key]
                evicted.append(worker)
        return evicted

    def _retire(self, worker: _Worker) -> None:
        """Kill ``worker`` and fork its replacement off the caller's path (a background thread).

        The thread is started once and then woken: starting a thread per run made the
        caller wait for the new thread's first GIL slice (several ms on a loaded machine).
        """
        with self._lock:
            worker.busy = False
            for key, pinned in list(self._sessions.items()):
                if pinned is worker:
                    del self._sessions[key]
            start = self._refiller is None
            if start:
                self._refiller = threading.Thread(
                    target=_refill_loop,
                    args=(weakref.ref(self), self._retired),
                    name="scriptgate-refill",
                    daemon=True,
                )
        with self._retired:
            self._retiring.append(worker)
            self._refilling = True
            self._retired.notify()
        if start:
            assert self._refiller is not None
            self._refiller.start()

    def _refill(self) -> None:
        """One pass of the background thread: reap ``batch``, top the pool up."""
        with self._retired:
            batch, self._retiring = self._retiring, []
            self._reaping.extend(batch)  # leaving from here on (worker_pids)
            self._refilling = True
        try:
            for worker in batch:
                worker.kill()
            if not self._closed:
                with contextlib.suppress(ConfigurationError, OSError):
                    self._fill(warm=True)
            # Reaping waits for each killed worker's exit status (a jail's teardown takes
            # milliseconds): it stops as soon as another worker retires, whose replacement
            # comes first (the rest is reaped on a later pass).
            while self._reaping:
                with self._retired:
                    if self._retiring and not self._closed:
                        break
                worker = self._reaping[0]
                with self._lock:
                    self._all.discard(worker)
                worker.reap()
                self._reaping.pop(0)
        finally:
            with self._retired:
                self._refilling = bool(self._retiring or self._reaping)

    def _release(self, worker: _Worker) -> None:
        """A healthy worker goes back to the pool (or is closed when the pool is full)."""
        with self._lock:
            worker.busy = False
            if worker in self._sessions.values():
                return
            keep = not self._closed and len(self._idle) < self.pool_size and worker.alive()
            if keep:
                self._idle.append(worker)
            else:
                self._all.discard(worker)
        if not keep:
            worker.reap()

    async def _discard(self, worker: _Worker) -> int | None:
        """Kill and reap a worker, drop it from every table, top the pool up again."""
        with self._lock:
            self._all.discard(worker)
            if worker in self._idle:
                self._idle.remove(worker)
            for key, pinned in list(self._sessions.items()):
                if pinned is worker:
                    del self._sessions[key]
        code = await anyio.to_thread.run_sync(worker.reap)
        if not self._closed:
            with contextlib.suppress(ConfigurationError, OSError):
                await anyio.to_thread.run_sync(self._fill)
        return code

    async def _wait_ready(self, worker: _Worker) -> None:
        if worker.ready:
            return
        with anyio.fail_after(self.start_timeout):
            message = await worker.recv()
        self._accept_ready(worker, message)

    def _accept_ready(self, worker: _Worker, message: dict[str, Any]) -> None:
        """Check a worker's first message (``ready``, its jail's report); raises if it fails."""
        if message.get("op") != "ready":
            raise _ProtocolError("the worker did not start with a ready message")
        # --- OS jail (scriptgate.sandbox.isolation.jail) ---
        if self.jail_enabled and sys.platform != "linux":
            worker.jail = JailReport.unavailable(
                f"not Linux ({sys.platform}): run scriptgate in a Linux container, gVisor or a VM"
            )
        elif self.jail_enabled:
            worker.jail = JailReport.from_json(message.get("jail"))
        else:
            worker.jail = JailReport.unavailable("disabled (ProcessRunner(jail=False))")
        self.jail = worker.jail
        if self.require_jail and not worker.jail.complete:
            raise _JailMissing(
                "The worker's OS jail is incomplete and require_jail is set; unavailable: "
                + "; ".join(worker.jail.missing)
            )
        # --- end OS jail ---
        worker.ready = True

    async def reset_session(self, session_key: str) -> None:
        """Discard the session's worker (its globals); the next run starts a fresh one."""
        with self._lock:
            worker = self._sessions.pop(session_key, None)
        if worker is not None:
            if worker.busy:
                worker.kill()
            else:
                await self._discard(worker)

    close_session = reset_session

    def drop_session(self, session_key: str) -> None:
        """Synchronous :meth:`reset_session` (kills the session's worker; safe from any thread)."""
        with self._lock:
            worker = self._sessions.pop(session_key, None)
            if worker is not None and not worker.busy:
                self._all.discard(worker)
        if worker is None:
            return
        if worker.busy:
            worker.kill()
        else:
            worker.reap()

    def zygote_pid(self) -> int | None:
        """Process id of the zygote (fork server), if one is running: for tests and monitoring."""
        box = self._zygote
        return box[0].popen.pid if box and box[0].alive() else None

    def worker_pids(self) -> list[int]:
        """Process ids of every live worker (idle, busy and pinned): for tests and monitoring.

        A retired worker (killed after its run, reaped by the refill thread) is not listed.
        """
        with self._retired:
            leaving = {*self._retiring, *self._reaping}
        with self._lock:
            return sorted(w.pid for w in self._all if w not in leaving)

    def _take_all(self) -> set[_Worker]:
        with self._lock:
            self._closed = True
            workers = set(self._all)
            self._all.clear()
            self._idle.clear()
            self._sessions.clear()
        with self._retired:  # the refill thread ends
            self._retired.notify_all()
        return workers

    async def aclose(self) -> None:
        """Kill every worker (running scripts end with a ``sandbox`` error) and reap them."""
        workers = self._take_all()
        for worker in workers:
            worker.kill()
        with self._zygote_lock:
            await anyio.to_thread.run_sync(_kill_all, workers, self._zygote)

    def close(self) -> None:
        """Synchronous :meth:`aclose`."""
        workers = self._take_all()
        with self._zygote_lock:
            _kill_all(workers, self._zygote)

    async def __aenter__(self) -> ProcessRunner:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- running ------------------------------------------------------------------
    async def run(
        self,
        source: str,
        *,
        bridge: ToolBridge,
        tools: Sequence[ToolSpec],
        signal: AbortSignal | None = None,
        call_id_prefix: str = "script",
        session_key: str | None = None,
        on_event: OnEvent | None = None,
    ) -> ScriptResult:
        """Run one script in a pooled worker; never raises for anything the script does.

        ``on_event`` receives each :class:`~scriptgate.sandbox.events.RunEvent` as
        it happens (the worker then streams what the script prints; that output
        is kept even if the worker has to be killed).

        ``bridge`` (a :class:`~scriptgate.sandbox.bridge.HostToolBridge`) runs the
        tool calls here in the parent; ``tools`` are the
        :class:`~scriptgate.sandbox.bridge.ToolSpec` records the script sees.
        Raises :class:`~scriptgate.errors.ConfigurationError` if the runner is closed.
        """
        started = time.perf_counter()
        try:
            worker = await self._acquire(session_key)
        except _StartError as exc:
            return _failure("sandbox", "WorkerStartError", str(exc), [], started)
        try:
            await self._wait_ready(worker)
        except _JailMissing as exc:
            await self._discard(worker)
            return _failure("sandbox", "JailUnavailable", str(exc), [], started)
        except (_WorkerGone, _ProtocolError, TimeoutError) as exc:
            detail = worker.stderr_tail()
            code = await self._discard(worker)
            reason = f" ({detail})" if detail else ""
            if isinstance(exc, TimeoutError):
                what = f"did not start within {self.start_timeout:g} s"
            else:
                what = f"failed to start (exit status {code}){reason}"
            return _failure(
                "sandbox", "WorkerStartError", f"The worker process {what}.", [], started
            )
        job = {
            "op": "run",
            "source": source,
            "tools": [_spec_json(spec) for spec in tools],
            "limits": self._job_limits,
            "call_id_prefix": call_id_prefix,
            "session": session_key is not None,
            "stream": on_event is not None,
        }
        state = _Run(on_event=on_event)
        state.tools = frozenset(spec.name for spec in tools)
        state.lines = source.count("\n") + 1
        try:
            await self._drive(worker, job, bridge, signal, state)
        except BaseException:
            # Our own caller was cancelled: never leave a half-run worker behind.
            with anyio.CancelScope(shield=True):
                await self._discard(worker)
            raise
        result = await self._finish(worker, state, session_key, started)
        if worker.session_lost:
            worker.session_lost = False
            error = result.error
            if (
                session_key is not None
                and error is not None
                and not error.message.endswith(_SESSION_LOST)
            ):
                result = _with_note(result, _SESSION_LOST)
        return result

    async def _drive(
        self,
        worker: _Worker,
        job: dict[str, Any],
        bridge: ToolBridge,
        signal: AbortSignal | None,
        state: _Run,
    ) -> None:
        send_lock = anyio.Lock()
        limits = self.limits
        timeout = limits.timeout
        deadline = math.inf if timeout is None else timeout + self.kill_grace
        run_deadline = time.monotonic() + deadline
        timeout_text = f"Script exceeded the time limit of {_seconds(timeout)} (the worker process was killed)."
        max_calls, quotas = limits.max_tool_calls, limits.max_tool_calls_per_tool
        # hostile worker (issue 13, F05): what the parent keeps of its output events is
        # capped by the run's own output limit; more is a protocol violation (killed)
        output_cap = limits.max_output_chars
        output_seen = [0, 0]  # characters, and empty events (kept out of state.output)

        async def send_frame(frame: bytes) -> None:
            await worker.send_frame(frame, send_lock)

        async def send(message: dict[str, Any]) -> None:
            await send_frame(_frame(message))

        async def handle_call(call: _Call) -> None:
            if call.status is not None:  # cancelled before it started: it never runs
                state.ended(call)
                return
            try:
                with anyio.CancelScope() as scope:
                    call.scope = scope
                    reply = await bridge.call(call.id, call.tool, call.arguments)
            except BaseException:
                call.status = "cancelled"
                raise
            if scope.cancelled_caught:
                call.status = "cancelled"
                state.ended(call)
                return
            await reply_to(call, reply)

        async def step_call(call: _Call) -> None:
            # handle_call without a cancel scope of its own (one costs as much as a
            # fast tool): stepped from the reader callback, it runs in the run's task
            # inside the ``calls`` scope, which is this call's scope while it waits
            try:
                reply = await bridge.call(call.id, call.tool, call.arguments)
            except BaseException:
                call.status = "cancelled"
                raise
            call.scope = None  # answered: a cancel from now on has nothing to stop
            await reply_to(call, reply)

        async def reply_to(call: _Call, reply: ToolReply) -> None:
            # (the call's record: what the worker reads from the reply frame, so that
            # the worker's result may name the call instead of repeating its record)
            status = reply.status if reply.status in _CALL_STATUSES else "error"
            duration, error = reply.duration_ms, reply.error
            call.status = status
            call.arguments = record_arguments(call.arguments)  # the record keeps a capped copy
            call.duration_ms = duration if type(duration) is int else None
            call.error = error if error is None or type(error) is str else _as_text(error)
            if state.on_event is not None:
                state.ended(call)
            try:
                frame = _reply_frame(call.id, status, reply)
            except (TypeError, ValueError, RecursionError) as exc:
                call.status = "error"
                call.error = f"the tool's result is not JSON data: {exc}"
                payload = {
                    "status": "error",
                    "value": None,
                    "error": call.error,
                    "duration_ms": reply.duration_ms,
                }
                frame = _frame({"op": "reply", "id": call.id, "reply": payload})
            try:
                if not worker.send_now(frame, send_lock):
                    await worker.send_rest(frame, send_lock)
            except _WorkerGone:
                pass

        # How calls run. The loop below reads the worker's messages. On asyncio it
        # runs each call itself while the socket stays watched: what arrives
        # meanwhile is handled by the loop's reader callback (``while_busy``: a
        # cancel, the result or a failure stops the call, another call is handed
        # to a helper task that starts a task for it), so a sequential call costs
        # no task switch. On other backends (trio) the loop only reads: one
        # long-lived helper task runs the calls, handed each call while it is
        # idle, and a call that arrives while it is busy gets a task of its own.
        readable = _Readable(worker.rfd, worker.fill)
        inline = readable.loop is not None
        queue: deque[_Call] = deque()
        idle: list[anyio.Event] = []  # the helper's wake-up event while it is idle
        helper = False
        running: list[_Call] = []  # the call the loop below runs itself
        failure: list[Exception] = []

        async def run_calls(first: _Call | None) -> None:
            if first is not None:
                await handle_call(first)
            while True:
                while queue:
                    call = queue.popleft()
                    if inline:
                        tg.start_soon(handle_call, call)
                    else:
                        await handle_call(call)
                wake = anyio.Event()
                idle.append(wake)
                await wake.wait()

        def hand_over(call: _Call) -> None:
            nonlocal helper
            if idle:
                queue.append(call)
                idle.pop().set()
            elif inline:
                queue.append(call)  # the helper is starting or busy starting tasks
            elif not helper:
                helper = True
                tg.start_soon(run_calls, call)
            else:
                tg.start_soon(handle_call, call)

        def while_busy() -> None:
            try:
                while state.result is None:
                    message = worker.try_recv()
                    if message is None:
                        return
                    call = on_message(message)
                    if call is not None:
                        hand_over(call)
            except Exception as exc:  # _ProtocolError, _WorkerGone
                failure.append(exc)
            # the result, EOF or a bad message: the loop below takes over
            readable.unwatch()
            for call in running:
                if call.scope is not None:
                    call.scope.cancel()

        def stop(kind: ErrorKind, type_: str, message: str) -> None:
            if state.stop is None:
                # once the runner is closing, what ends a run is the close (under load a
                # close raced the loop's own stop and was reported as the time limit)
                state.stop = _CLOSED_STOP if self._closed else (kind, type_, message)
            worker.kill()

        async def watch_abort(abort_signal: AbortSignal) -> None:
            reason = await abort_signal.wait()
            text = str(reason) if reason is not None else "This operation was aborted"
            with contextlib.suppress(_WorkerGone):
                await send({"op": "abort", "reason": text})
            await anyio.sleep(self.kill_grace)
            stop("aborted", "AbortError", text)

        def on_call(message: dict[str, Any]) -> _Call | None:
            call_id, tool, args = message.get("id"), message.get("tool"), message.get("args")
            if not isinstance(call_id, str) or not isinstance(tool, str):
                raise _ProtocolError("a tool call without a string id and tool name")
            if not isinstance(args, dict) or call_id in state.by_id:
                raise _ProtocolError(f"a malformed or repeated tool call {call_id!r:.100}")
            if state.stop is not None or time.monotonic() > run_deadline:
                # hostile worker (B03): past the deadline (a flood of heavy frames kept
                # the loop busy) or once stopped, nothing more runs
                stop("limit", "TimeoutError", timeout_text)
                return None
            if max_calls is not None and len(state.calls) >= max_calls:
                stop(
                    "limit",
                    "ToolCallLimitError",
                    f"Tool-call limit exceeded: more than {max_calls} calls "
                    "(the worker process was killed).",
                )
                return None
            if quotas:  # (counted only for the tools a quota names)
                quota = quotas.get(tool)
                if quota is not None:
                    count = state.per_tool.get(tool, 0) + 1
                    if count > quota:
                        stop(
                            "limit",
                            "ToolCallLimitError",
                            f'Tool-call limit exceeded: more than {quota} calls to "{tool}" '
                            "(the worker process was killed).",
                        )
                        return None
                    state.per_tool[tool] = count
            call = _Call(call_id, tool, args)
            state.calls.append(call)
            state.by_id[call_id] = call
            if state.on_event is not None:
                state.emit(RunEvent("call_start", call_id=call_id, tool=tool, arguments=args))
            return call

        def on_message(message: dict[str, Any]) -> _Call | None:
            """Handle one message; a tool call is returned to be run."""
            op = message.get("op")
            if op == "call":
                return on_call(message)
            if op == "event":
                text = message.get("text")
                if type(text) is str:
                    if text:
                        output_seen[0] += len(text)
                        if output_cap is not None and output_seen[0] > output_cap:
                            raise _ProtocolError(
                                f"more output than the limit of {output_cap} characters"
                            )
                        state.output.append(text)
                    else:
                        output_seen[1] += 1
                        if output_seen[1] > _MAX_EMPTY_EVENTS:
                            raise _ProtocolError("a flood of empty output events")
                    state.emit(RunEvent("output", text))
                return None
            if op == "cancel":
                cancel_id = message.get("id")
                target = state.by_id.get(cancel_id) if type(cancel_id) is str else None
                if target is None:
                    raise _ProtocolError("a cancel for a call the worker never sent")
                # --- hostile worker (B10): a call that got its reply ran; a cancel that
                # crossed the reply (or came after it) changes nothing, its record stays
                # as the parent ran it ---
                if target.status is None:
                    if target.scope is not None:
                        target.scope.cancel()
                    else:  # handed over, not started yet: it never runs
                        target.status = "cancelled"
            elif op == "result":
                result = message.get("result")
                if not isinstance(result, dict):
                    raise _ProtocolError("a result that is not a JSON object")
                state.result = result
                state.retire = message.get("retire") is True
                state.deep = worker.result_deep
            else:
                raise _ProtocolError(f"an unknown message {str(op)[:40]!r}")
            return None

        # The reader callback runs a sequential call itself (asyncio): while this
        # task waits for a message, a call that arrives alone is stepped right in
        # the callback, as this task (it is made the current task, and the call
        # runs in its contextvars context), so a call that completes without
        # suspending is answered with no loop turn and no task switch. A call that
        # suspends is passed to this task (a _Stepped in the inbox), which yields
        # what the call yielded and drives it on exactly as if it had started it.
        # Anything else the callback reads (a cancel, the result, a second call
        # already buffered, a bad frame) goes to this task as it is.
        def serve_one() -> bool:
            nonlocal helper
            if not worker.fill():
                return False  # (readiness that was consumed meanwhile)
            inbox = worker.inbox
            while True:
                try:
                    message = worker._parse()
                except _ProtocolError as exc:
                    inbox.append(exc)
                    return True
                if message is None:
                    return worker.gone
                if message.get("op") != "call" or worker.buf or state.result is not None:
                    inbox.append(message)
                    return True
                try:
                    call = on_call(message)
                except _ProtocolError as exc:
                    inbox.append(exc)
                    return True
                if call is None:
                    if not worker.buf:
                        return worker.gone
                    continue  # over a quota: the worker was killed
                if not helper:
                    helper = True
                    tg.start_soon(run_calls, None)
                coro = step_call(call)
                try:
                    yielded = coro.send(None)
                except StopIteration:
                    if not worker.buf:
                        return worker.gone
                    continue  # answered
                except Exception as exc:
                    inbox.append(exc)
                    return True
                inbox.append(_Stepped(call, coro, yielded))
                return True

        serve = _as_task(readable.loop, serve_one) if inline else None

        async def next_message(calls: anyio.CancelScope) -> None:
            """Read the worker's next message and act on it (the run's task)."""
            nonlocal helper
            if serve is not None:
                readable.serve = serve
                try:
                    item = await worker.recv()
                except BaseException:
                    # (a started call this task never took over runs inside its scopes:
                    # it unwinds here, before they are left)
                    _drop_stepped(worker.inbox)
                    raise
                finally:
                    readable.serve = None
            else:
                item = await worker.recv()
            if type(item) is _Stepped:
                stepped = item.call
                stepped.scope = calls
                running.append(stepped)
                readable.watch(while_busy)
                try:
                    await item
                finally:
                    stepped.scope = None
                    readable.unwatch()
                    running.clear()
                if failure:
                    raise failure[0]
                return
            call = on_message(item)
            if call is None:
                return
            if inline and not helper:
                helper = True
                tg.start_soon(run_calls, None)
            if not inline or worker.buf:
                # (more is buffered already: this loop must go on reading)
                hand_over(call)
                return
            running.append(call)
            readable.watch(while_busy)
            try:
                await handle_call(call)
            finally:
                readable.unwatch()
                running.clear()
            if failure:
                raise failure[0]

        worker.readable = readable
        worker.inbox.clear()
        try:
            async with anyio.create_task_group() as tg:
                if signal is not None:
                    tg.start_soon(watch_abort, signal)
                try:
                    await send(job)
                    if inline and job["tools"]:
                        # started while the worker runs the script, off the round trip
                        helper = True
                        tg.start_soon(run_calls, None)
                    with anyio.move_on_after(deadline) as clock:
                        while state.result is None:
                            # the scope of the calls the reader callback starts (a new
                            # one once it has been cancelled)
                            with anyio.CancelScope() as calls:
                                while state.result is None and not calls.cancel_called:
                                    await next_message(calls)
                            if failure:  # (it cancelled the call ``calls`` stopped)
                                raise failure[0]
                    if clock.cancelled_caught:
                        stop("limit", "TimeoutError", timeout_text)
                except _ProtocolError as exc:
                    stop("sandbox", "ProtocolError", f"The worker process misbehaved: {exc}.")
                except _WorkerGone:
                    pass
                tg.cancel_scope.cancel()
        finally:
            readable.close()
            worker.readable = None
            _drop_stepped(worker.inbox)

    async def _finish(
        self, worker: _Worker, state: _Run, session_key: str | None, started: float
    ) -> ScriptResult:
        result: ScriptResult | None = None
        if state.result is not None and state.stop is None:
            try:
                result = _result_from_json(
                    state.result,
                    state.by_id,
                    tools=state.tools,
                    limits=self.limits,
                    lines=state.lines,
                    wall_time=time.perf_counter() - started,
                )
            except _ProtocolError as exc:
                state.stop = ("sandbox", "ProtocolError", f"The worker process misbehaved: {exc}.")
        if result is not None:
            result = self._memory_error_to_limit(result)
            # --- hostile worker: the limits hold on what comes back, whatever the worker did
            checked = _within_limits(result, self.limits, deep=state.deep)
            if checked is not result:
                state.retire = True  # an honest worker never sends that
                result = checked
            failed = result.error is not None
            fatal = result.error is not None and result.error.kind in (
                "limit",
                "aborted",
                "sandbox",
            )
            discard = state.retire or (fatal if session_key is not None else failed)
            # --- hostile worker: anything sent after its result (a late call) is refused,
            # and the worker is never used again ---
            if not discard and not worker.quiet():
                discard = True
            # --- end hostile worker ---
            if discard:
                await self._discard(worker)
                if session_key is not None and result.error is not None:
                    result = _with_note(result, _SESSION_LOST)
            elif session_key is None and not self.reuse_workers:
                self._retire(worker)  # one run per worker
            else:
                self._release(worker)
            return result
        # The worker is gone: we killed it, or it died on its own.
        if state.stop is not None:
            await self._discard(worker)
            kind, type_, message = state.stop
        else:
            code = await anyio.to_thread.run_sync(worker.exit_status)
            await self._discard(worker)
            kind, type_, message = self._death(code)
        if session_key is not None:
            message += _SESSION_LOST
        # (the worker's result has its own records; ours are only needed here)
        calls = [call.record() for call in state.calls]
        failure = _failure(kind, type_, message, calls, started)
        if state.output:  # streamed before the kill: kept
            failure = dataclasses.replace(failure, output="".join(state.output))
        return failure

    def _death(self, code: int | None) -> tuple[ErrorKind, str, str]:
        if self._closed:
            return _CLOSED_STOP
        if code is None:
            return ("sandbox", "WorkerCrashed", "The worker process stopped answering.")
        if code < 0:
            number = -code
            name = _signal_name(number)
            if number == signals.SIGXCPU:
                timeout = self.limits.timeout
                limit = "" if timeout is None else f" of {math.ceil(timeout) + 1} s"
                return (
                    "limit",
                    "CPUTimeLimitError",
                    f"Script exceeded its CPU-time limit{limit} (the worker process was "
                    f"killed by {name}).",
                )
            if number == signals.SIGXFSZ:
                return (
                    "limit",
                    "FileSizeLimitError",
                    f"The worker process tried to write a file and was killed by {name}.",
                )
            description = signals.strsignal(number) or name
            return (
                "sandbox",
                "WorkerCrashed",
                f"The worker process crashed: killed by {name} ({description}).",
            )
        return (
            "sandbox",
            "WorkerCrashed",
            f"The worker process exited unexpectedly with status {code}.",
        )

    def _memory_error_to_limit(self, result: ScriptResult) -> ScriptResult:
        error = result.error
        # Only a bare MemoryError is the address-space limit. The guards' own size
        # refusals ("... would be too large for the sandbox") are already limits
        # (LimitExceeded) from the worker's engine, exactly as in-process.
        # (a MemoryError raised by host Python code under the limit, `OrderedDict.update`'s
        # loop, may come back rendered with its own name as its text: bare too)
        if error is None or error.type != "MemoryError":
            return result
        if error.message.strip() not in ("", "MemoryError"):
            return result
        limit = self.limits.memory_bytes
        text = f" of {limit} bytes" if limit else ""
        return ScriptResult(
            ok=False,
            value=None,
            output=result.output,
            error=ScriptError(
                "limit", "MemoryError", f"Script exceeded the memory limit{text}.", error.line
            ),
            calls=result.calls,
            wall_time=result.wall_time,
        )
