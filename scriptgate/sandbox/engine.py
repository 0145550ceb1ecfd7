"""Run one script: compile, build the namespace, execute, enforce limits, report.

Above ``compile/``, ``world/`` and ``guards/`` (it puts them together for one run); must not
import ``isolation/`` or ``model/``. Over 800 lines because one run's life (namespace,
sync/async drive, limits, the report) reads best whole.

:func:`run_script` is the in-process engine; the process-isolation worker runs
the same function under ``anyio.run`` with a pipe-backed bridge, so it depends on
nothing but its arguments.

How scripts run
---------------
- A script that uses ``await`` (or ``async for``/``async with``) compiles to an
  ``async def`` run as a task on the event loop. Calling a tool returns an
  awaitable; the call starts when it is awaited (in the script's own task), when
  ``gather`` receives it, or in the background as soon as the script awaits
  something else; ``await gather(a, b)`` runs calls concurrently. Calls not
  finished (or never started) when the script ends are cancelled and recorded as
  ``cancelled``; a running call's abort signal fires.
- Any other script compiles to a plain function run in a greenlet on the event
  loop's thread (no worker thread). A tool call steps the bridge's coroutine in
  the script's greenlet (in the run task's contextvars context); a call that
  never waits needs no switch at all, and whenever it does wait, what it yields
  is passed to the run's task, which yields it to the event loop and switches
  the loop's answer (or cancellation) back, so a sync call costs what an
  awaited one does. The tool (and the pipeline's validation and hooks) then
  runs on top of the script's stack: a call from a script N calls deep has N
  frames less of Python's recursion limit (at most ``max_recursion``, 1,000 by
  default, of the usual 1,000). Every
  ``PAUSE_INTERVAL`` (10 ms) a budget check switches out for one loop turn, so
  other tasks (an abort, other runs) are not starved by a busy script. A stateless
  script that names no tool (no tool identifier, ``tools`` or ``gather``) cannot
  call one and runs without a task group or watchdog, in a greenlet that only ever
  pauses (findings18 L01: run on the caller's stack, it starved the loop until its
  deadline).
- Limits: the injected tick (``_tk_()`` at every ``while`` iteration, function
  and lambda entry: one step of the run's ticker, see ``guards.Budget``) and the guarded ``_getiter_`` (every ``for`` loop and comprehension,
  per 256 items) charge steps and check the step limit, the deadline, the abort
  flag and the call depth. A watchdog task trips the budget at the deadline while
  the script waits for a tool call (the abort signal trips it at once), which
  replaces ``_tick_`` and ``_tk_`` in the script's globals by hooks that raise, cancels running tool
  calls and the script (a sync script gets the stop thrown in at its pending
  call). A tripped budget is final: whatever the script does afterwards, the
  result is the limit/abort error.
- Size refusals are limits: a guard refusing an operation whose result would be
  too large (``'x' * 10**12``, ``1 << 10**11``, a 300 MB rendering, ``range(10**18)``,
  tool-call arguments over the render bound, …) trips the budget through
  :func:`scriptgate.sandbox.guards.errors.refuse_size`, so the result is
  ``ScriptError("limit", "LimitExceeded", <the guard's message>, <its line>)``
  whatever the script's ``except``/``finally`` blocks do. A real ``MemoryError``
  (an allocation that failed) is an ordinary ``runtime`` error in-process.
- Catastrophic regular expressions are stopped in-process: the ``re`` stand-in
  (``scriptgate.sandbox.guards.regex``) runs on the ``regex`` engine and gives each
  call a timeout in slices up to the run's deadline, so a pattern that would
  backtrack for minutes ends as a limit at the deadline, and the loop gets a turn
  (an abort is honoured) at the end of each slice (0.25 s plus 0.5 µs per
  character of the subject, doubling).
- Memory: ``Limits.memory_bytes`` bounds the growth of the host's resident
  memory during the run (``scriptgate.sandbox.guards.memory``: polled every few ms by
  the budget check, checked before each large allocation the size guards see,
  and before each large copy — slices, ``list(x)``/``dict(x)``/``set(x)``…,
  ``sorted``, ``.copy()``, str methods — so ``y.append(x[:])`` of a
  10-million-item ``x`` stops within one copy of the limit; skipped without
  ``/proc``). It is approximate: the host's other threads count too.
- Hash flooding: every entry point that hashes a whole input — ``set(x)``,
  ``frozenset(x)``, ``dict(x)``, ``{*x}``, the set methods (``update``, ``union``,
  ``issubset``…), ``d.update(pairs)``, ``d |= pairs``, ``dict.fromkeys(x)``,
  ``Counter``/``defaultdict``/``OrderedDict`` and ``Counter.update``/``subtract`` —
  feeds a list, tuple or range longer than 256 items, and every iterator, in
  chunks of 256 with the budget checked between them (``guards``: hash feeding),
  so a quadratic build from colliding hashes stops at the deadline.
- Comparisons and hashes are bounded through shared references
  (``scriptgate.sandbox.guards.comparisons``): the compiled ``==``/``<``/``in``/keys and
  the builtins and methods that compare or hash (``sorted``, ``min``,
  ``list.index``, ``s.add``, ``hash``…) measure a value's expansion as a tree
  first, so ``a == b`` on five levels of 1,000 references (10**15 items) is
  refused as a limit instead of running for ever.
- Generators (``guards.generators``): every generator, coroutine and async generator the
  script makes that can run code when closed (its function's body has a ``try``/``with``;
  every async generator) is registered with the run (the compiler's ``_gw_``/``_gwa_``/``_ga_``
  hooks); the run's end closes the suspended ones in the
  script's greenlet (or the run's task), under the budget and at most ``CLEANUP_GRACE``, so
  no ``finally`` runs later in host code. A session keeps its own until
  :func:`close_session`.
- Residual (restrictedpython-notes §8.2): every script runs on the loop's thread,
  and the checks run between Python operations. A sequence of slow C operations
  with no loop or call between them (straight-line code of big-int divisions or
  scans of large strings, each bounded on its own) runs on past the deadline:
  the run is then reported as a timeout (:func:`_finish`), but the event loop
  was blocked meanwhile. A copy made inside a C call (``deque(x)``, the
  backtracking stack of one regex call) is seen at the next memory poll.
  Process isolation (``scriptgate.sandbox.isolation.parent``) covers both, and crashes
  from crafted deep iterator chains: use it for untrusted workloads that must
  not stall or crash the host.
"""

from __future__ import annotations

import contextvars
import sys
import time
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from typing import Any

import anyio
import anyio.lowlevel
from greenlet import greenlet  # type: ignore[import-untyped]

from scriptgate.runtime.abort import AbortSignal
from scriptgate.sandbox.bridge import (
    NotJSONError,
    ToolBridge,
    ToolReply,
    ToolSpec,
    huge_int_path,
    json_copy,
    json_text,
    slot_setters,
    small_flat,
    too_many_nodes,
    too_many_nodes_message,
    value_node_caps,
)
from scriptgate.sandbox.compile.cache import CompileFailure, compile_script
from scriptgate.sandbox.compile.deadline import CompileClock
from scriptgate.sandbox.events import OnEvent, RunEvent
from scriptgate.sandbox.guards.attributes import MAX_RANGE, Budget, OpaqueNamespace, make_guards
from scriptgate.sandbox.guards.boundary import register_opaque, release_typing_cache
from scriptgate.sandbox.guards.constants import ENTRY, FILENAME
from scriptgate.sandbox.guards.errors import ScriptStop, ToolDenied, ToolError
from scriptgate.sandbox.guards.generators import (
    CLEANUP_GRACE,
    GENERATORS_KEY,
    WRAPPER_CODES,
    ScriptGenerators,
    cleanup_message,
    is_async_generator,
)
from scriptgate.sandbox.guards.sizes import check_arguments, exception_text, result_too_large
from scriptgate.sandbox.lastvalue import IntTooLongForText, render_last_value
from scriptgate.sandbox.loopyields import CheckedAwait
from scriptgate.sandbox.naming import to_identifier
from scriptgate.sandbox.records import arguments_size, record_arguments
from scriptgate.sandbox.result import CallRecord, CallStatus, Limits, ScriptError, ScriptResult
from scriptgate.sandbox.world.builtins import CHARGING_NAMES, make_builtins
from scriptgate.sandbox.world.evaluate import EVAL_NAMES, make_evaluators
from scriptgate.sandbox.world.holdable import register_world
from scriptgate.sandbox.world.modules import make_import, make_modules
from scriptgate.sandbox.world.modules.asyncio_tasks import at_await, check_owner, set_no_task
from scriptgate.sandbox.world.modules.sys import ScriptExit
from scriptgate.sandbox.world.print_file import print_to_file

__all__ = ["INJECTED_NAMES", "close_session", "run_script", "session_has_generators"]

_SLEEPS = frozenset({"time", "sleep"})
"""A script naming these may sleep: it runs in a greenlet, so the wait is on the loop."""

SLEEP_SLICE = 0.02
"""The longest stretch ``time.sleep`` blocks without checking the budget, where it blocks."""

_PAUSE = object()
"""What a sync script's greenlet switches out with to let the event loop run."""

_SUSPEND = object()
"""Tags ``(_SUSPEND, yielded)``: a tool call's coroutine, run in the script's
greenlet, yielded ``yielded`` to the event loop; the run's task yields it for it."""

_RAISE = object()
"""Tags ``(_RAISE, exc)``: a tool call's coroutine raised ``exc`` (a cancellation…),
which the run's task raises after unwinding the script."""


def _tool_error(reply: ToolReply) -> ToolError:
    """The exception a failed reply raises in the script; ``err.data`` is its structured content."""
    err = ToolDenied(reply.error) if reply.status == "blocked" else ToolError(reply.error)
    err.data = reply.value
    return err


class _Yield:
    """Awaiting it yields ``value`` to the event loop (a coroutine's own yield, passed up)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield self.value)


_MAX_UNWIND = 8
"""Stops thrown into an unwinding sync script before it is left to the garbage collector."""

MAX_MESSAGE = 10_000

_ENDED = (
    "{name}() belongs to a run that has ended: a run's tool functions work only in that run "
    "(call the tool by its name in the current script)"
)

_OTHER_RUN = (
    "{name}() belongs to another run: a run's tool functions work only in that run "
    "(call the tool by its name in the current script)"
)

_RUNNING: contextvars.ContextVar[Any] = contextvars.ContextVar("scriptgate_run", default=None)
"""The run whose task this is (set for the run's task group; a sync script's greenlet is
told apart by identity): a run's tool functions refuse a caller that is not that run."""

_NOT_INLINE = frozenset({"tools", "gather", *_SLEEPS, *EVAL_NAMES})
"""A script naming one of these runs in a greenlet, with its tool functions (run_script)."""

_EVALUATOR_NAMES = frozenset({"eval", "exec", "compile"})
"""Names whose use makes a one-shot run build the evaluators (``compile`` gives its hint)."""

INJECTED_NAMES = frozenset({"tools", "gather", "__builtins__"})
"""Names the engine binds in every run (besides tool functions and ``_hooks_``)."""


def _error_line(exc: BaseException) -> int | None:
    line = None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == FILENAME and code not in WRAPPER_CODES:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


_LOST_ERROR_TEXTS = ("without setting an exception", "without exception set")
"""CPython's ``SystemError`` texts for a C call that failed and set no exception — what some C
paths (``deque(iterable)``, sequence concatenation) give when an allocation fails."""


def _lost_memory_error(exc: BaseException) -> bool:
    """Whether ``exc`` is a C call's lost ``MemoryError`` under an address-space limit.

    Only where ``RLIMIT_AS`` is set (a process-isolation worker): there an allocation failure
    is the limit the run was given, whatever exception C reported for it.
    """
    if type(exc) is not SystemError or not any(t in str(exc) for t in _LOST_ERROR_TEXTS):
        return False
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return False
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    return soft != resource.RLIM_INFINITY


_NAME_HINTS = {
    "open": "the sandbox has no files: read and write them with the tools",
    "input": "scripts are not interactive: take data from the tools",
    "exit": "end the script by returning or raising an exception",
    "quit": "end the script by returning or raising an exception",
    "help": "help() is not available in the sandbox",
    "dir": "dir() is not available in the sandbox: use hasattr(x, name) or vars(obj)",
    "globals": "globals() is not available in the sandbox: keep the values in a dict",
    "locals": "locals() is not available in the sandbox: keep the values in a dict",
    "id": (
        "id() is not available in the sandbox: key by the object itself (objects of "
        "your own classes hash by identity) or by an index"
    ),
    "breakpoint": "scripts cannot be debugged interactively: print(...) what you need",
}
"""What to write instead of a builtin the sandbox leaves out, added to the uncaught
``NameError``'s message (findings18 M25/M35/M44: a bare NameError read like a typo)."""


def _message(exc: BaseException) -> str:
    try:
        text = exception_text(exc, MAX_MESSAGE)  # sizeguard: no huge rendering in the host
    except BaseException:  # scripts cannot define __str__; still, nothing may escape here
        text = type(exc).__name__
    if type(exc) is NameError:
        name = NameError.__dict__["name"].__get__(exc)  # never a script's __hash__: exact str
        hint = _NAME_HINTS.get(name) if type(name) is str else None
        if hint is not None:
            text = f"{text}: {hint}"
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE] + "…"
    return text


def _missing_tool(names: Sequence[str]) -> Callable[[str], Exception]:
    def missing(name: str) -> Exception:
        import difflib

        text = f"tools.{name} does not exist."
        close = difflib.get_close_matches(name, names, n=3)
        if close:
            text += f" Did you mean {', '.join(close)}?"
        elif len(names) <= 20:
            text += f" Available: {', '.join(names) or '(none)'}."
        return TypeError(text)

    return missing


class _Call:
    __slots__ = ("arguments", "duration_ms", "error", "id", "scope", "size", "status", "tool")

    def __init__(self, call_id: str, tool: str, arguments: Any, size: int = 0) -> None:
        self.size = size
        """Bytes charged to the run's argument budget while the call runs (0: small, kept)."""
        self.id = call_id
        self.tool = tool
        self.arguments = arguments
        self.status: CallStatus | None = None
        self.duration_ms: int | None = None
        self.error: str | None = None
        self.scope: anyio.CancelScope | None = None

    def record(self) -> CallRecord:
        """This call's :class:`CallRecord` (built as ``bridge.slot_setters`` says)."""
        record: CallRecord = _new(CallRecord)
        _SET_RECORD_ID(record, self.id)
        _SET_RECORD_TOOL(record, self.tool)
        arguments = record_arguments(self.arguments) if self.size else self.arguments
        _SET_RECORD_ARGUMENTS(record, arguments)
        _SET_RECORD_STATUS(record, self.status or "cancelled")
        _SET_RECORD_DURATION(record, self.duration_ms)
        _SET_RECORD_ERROR(record, self.error)
        return record


_new = object.__new__
(
    _SET_RECORD_ID,
    _SET_RECORD_TOOL,
    _SET_RECORD_ARGUMENTS,
    _SET_RECORD_STATUS,
    _SET_RECORD_DURATION,
    _SET_RECORD_ERROR,
) = slot_setters(CallRecord)


class PendingToolCall:
    """What an async script gets from a tool call: an awaitable with nothing else on it.

    The call starts when it is awaited (then it runs in the script's own task),
    when ``gather`` receives it, or when the script awaits anything else after
    creating it (then it runs in the background). A call never started or still
    running when the script ends is recorded as ``cancelled``.
    """

    __slots__ = ("_call", "_done", "_reply", "_run", "_spec", "_started")

    def __init__(self, run: _Run, call: _Call, spec: ToolSpec) -> None:
        self._run = run
        self._call = call
        self._spec = spec
        self._started = False
        self._done: anyio.Event | None = None
        self._reply: ToolReply | None = None

    def _start(self) -> None:
        if not self._started:
            self._started = True
            self._done = anyio.Event()
            self._run.tg.start_soon(self._background)

    async def _background(self) -> None:
        try:
            self._reply = await self._run._run_call(self._call, self._spec)
        finally:
            assert self._done is not None
            self._done.set()

    def __await__(self) -> Generator[Any, None, Any]:
        # a point where task.cancel() is delivered, when awaited by an asyncio task's code
        self._run._check_caller(self._spec.identifier)  # one kept from an ended (or other) run
        return at_await(self._steps())

    def _steps(self) -> Generator[Any, None, Any]:
        # a generator, not ``async def``: one coroutine object less per awaited call
        run = self._run
        if not self._started:
            self._started = True
            run._start_pending(self)
            self._reply = yield from run._await_call(self._call).__await__()
        elif self._reply is None and self._done is not None:
            yield from self._done.wait().__await__()
        reply = self._reply
        if reply is None:
            run.budget.check()
            raise ToolError(f'Tool call "{self._spec.name}" was cancelled')
        return run._deliver(reply)

    def _hint(self) -> str:
        return (
            f"{self._spec.identifier}(...) was not awaited: in a script that uses await, "
            f"tool calls must be awaited (r = await {self._spec.identifier}(...))"
        )

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(self._hint())

    def __getitem__(self, key: Any) -> Any:
        raise TypeError(self._hint())

    def __iter__(self) -> Any:
        raise TypeError(self._hint())

    def __repr__(self) -> str:
        return "<pending tool call>"


class PendingGather:
    """What ``gather(...)`` returns in an async script: an awaitable with nothing else on it.

    The host coroutine stays inside: a script can only ``await`` it (or pass it to
    ``gather``), never step it with ``send``/``throw`` and reach the ``Future`` it yields
    (test_boundary_gather_send_reaches_no_event_loop).
    """

    __slots__ = ("_awaited", "_check", "_coro", "_what")

    def __init__(
        self, coro: Any, what: str = "gather(...)", check: Callable[[str], None] | None = None
    ) -> None:
        self._coro = coro
        self._awaited = False
        self._what = what
        self._check = check  # the owning run's caller check

    def _owned(self) -> None:
        # one kept from an ended (or another) run is refused
        if self._check is not None:
            self._check(self._what.removesuffix("(...)"))

    def __await__(self) -> Generator[Any, None, Any]:
        self._owned()
        if self._awaited:
            raise RuntimeError(f"this {self._what} was awaited already")
        self._awaited = True
        return at_await(self._coro.__await__())  # task.cancel() is delivered here

    def _hint(self) -> str:
        if self._what != "gather(...)":
            return f"{self._what} must be awaited: await {self._what}"
        return "gather(...) must be awaited: results = await gather(a(), b())"

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(self._hint())

    def __del__(self) -> None:
        if not self._awaited:
            self._coro.close()  # never awaited: no "never awaited" warning from the host

    def __repr__(self) -> str:
        return "<pending gather>" if self._what == "gather(...)" else f"<pending {self._what}>"


register_opaque((PendingToolCall, PendingGather))


def _check_handle(aw: Any) -> None:
    # an awaitable of an ended or another run is refused where it is handed over, with
    # the message its own ``await`` gives (issue 13, F01)
    if type(aw) is PendingToolCall:
        aw._run._check_caller(aw._spec.identifier)
    elif type(aw) is PendingGather:
        aw._owned()
    else:
        check_owner(aw)


class _Run:
    def __init__(
        self,
        *,
        bridge: ToolBridge,
        tools: Sequence[ToolSpec],
        limits: Limits,
        state: dict[str, Any] | None,
        signal: AbortSignal | None,
        call_id_prefix: str,
        is_async: bool,
        inline: bool = False,
        on_event: OnEvent | None = None,
        evaluates: bool = True,
        final: bool = False,
        charging: bool = True,
    ) -> None:
        self.inline = inline
        self.final = final
        """A session's last run: every generator it kept is closed at the end."""
        self.generators: ScriptGenerators | None = None
        """The script's generators and coroutines (closed at the run's end)."""
        self.cleanup_end: float | None = None
        self.charging = charging or evaluates
        """Whether the run's builtins get ``sum``, ``sorted``… (world.builtins.CHARGING_NAMES):
        a one-shot script that names none of them cannot reach them."""
        self.evaluates = evaluates
        """Whether the run's builtins get ``eval``/``exec`` (a one-shot script that names
        neither cannot reach them: they are not made, a start-up cost)."""
        self.on_event = on_event
        self.bridge = bridge
        self.tools = list(tools)
        self.limits = limits
        self.signal = signal
        self.prefix = call_id_prefix
        self.is_async = is_async
        self.budget = Budget(limits)
        self.budget.signal = signal  # polled at each check: an abort_soon stops a busy script
        self.budget.fixed_floor = not is_async  # a sync script's stack never moves
        self.output: list[str] = []
        self.output_chars = 0
        self.calls: list[_Call] = []
        self.max_calls = limits.max_tool_calls
        self.argument_budget = limits.memory_bytes
        self.argument_bytes = 0
        """Bytes of arguments of calls still running (their records are capped when they end)."""
        self.quotas = limits.max_tool_calls_per_tool
        self.per_tool: dict[str, int] = {}
        self.unstarted: list[PendingToolCall] = []
        self.switch: Callable[[Any], Any] | None = None
        self.child: Any = None
        """The sync script's greenlet (``_drive``)."""
        self.task_context: Any = None
        """The contextvars context of the run's task: tool calls run in it."""
        self.cancelled_exc: type[BaseException] = BaseException
        self.finished = False
        self.tg: Any = None
        self.script_scope: anyio.CancelScope | None = None
        self.fresh = state is None
        self.namespace = state if state is not None else {}

    # -- output -----------------------------------------------------------------

    def print_(
        self, *objects: Any, sep: Any = " ", end: Any = "\n", file: Any = None, flush: Any = False
    ) -> None:
        # test_limits_output_cap: output beyond max_output_chars ends the script.
        if file is not None and print_to_file(file, objects, sep, end):
            return  # an io.StringIO (anything but sys.stdout/stderr refused with a hint)
        if sep is None:
            sep = " "
        if end is None:
            end = "\n"
        if type(sep) is not str or type(end) is not str:
            raise TypeError("sep and end must be strings")
        text = sep.join([str(obj) for obj in objects]) + end
        cap = self.limits.max_output_chars
        if cap is not None and self.output_chars + len(text) > cap:
            room = cap - self.output_chars
            if room > 0:
                self.output.append(text[:room])
                self.output_chars += room
                if self.on_event is not None:
                    self._emit(RunEvent("output", text[:room]))
            raise self.budget.trip("limit", f"Script output exceeded the limit of {cap} characters")
        self.output.append(text)
        self.output_chars += len(text)
        if self.on_event is not None:
            self._emit(RunEvent("output", text))

    def _emit(self, event: RunEvent) -> None:
        """Hand ``event`` to the host's callback; a callback that fails is dropped."""
        callback = self.on_event
        if callback is None:
            return
        try:
            callback(event)
        except Exception:
            self.on_event = None

    def _ended(self, call: _Call) -> None:
        if self.on_event is not None:
            self._emit(
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

    # -- tool calls -------------------------------------------------------------

    def _check_caller(self, name: str) -> None:
        """Refuse a call of this run's tool function (or ``gather``, ``sleep``) that does not
        come from this run: an ended run's, or one made by another run's code that got hold
        of the function (issue 13: a host cache carried one run's object into another)."""
        if self.finished:
            raise ToolError(_ENDED.format(name=name))
        if self.is_async:
            if _RUNNING.get() is not self:
                raise ToolError(_OTHER_RUN.format(name=name))
        elif self.child is not None and greenlet.getcurrent() is not self.child:
            # (a run that names no tool has no child: it reaches no tool to call)
            raise ToolError(_OTHER_RUN.format(name=name))

    def _start_call(self, spec: ToolSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Call:
        self._check_caller(spec.identifier)
        stop = self.budget.stop
        if stop is not None:
            raise stop
        if args:
            if len(args) != 1 or kwargs or type(args[0]) is not dict:
                raise TypeError(
                    f"{spec.identifier}() takes keyword arguments, or a single dict of arguments"
                )
            raw = args[0]
            # the script's own dict: copied (exact str keys and scalar values: a
            # shallow copy is the JSON copy)
            arguments = dict(raw) if small_flat(raw) else self._copy_arguments(spec, raw)
            flat = small_flat(raw)
        else:
            # CPython builds a new dict for ``**kwargs`` on every call: the script
            # holds no reference to it, so a flat one is already our own JSON copy
            flat = small_flat(kwargs)
            arguments = kwargs if flat else self._copy_arguments(spec, kwargs)
        size = 0 if flat else arguments_size(arguments)
        calls = self.calls
        limit = self.max_calls
        if limit is not None and len(calls) >= limit:
            raise self.budget.trip("limit", f"Script exceeded the tool-call limit ({limit} calls)")
        name = spec.name
        if self.quotas:
            per_tool = self.quotas.get(name)
            count = self.per_tool.get(name, 0)
            if per_tool is not None and count >= per_tool:
                raise self.budget.trip(
                    "limit", f'Script exceeded the limit of {per_tool} calls to tool "{name}"'
                )
            self.per_tool[name] = count + 1
        budget = self.argument_budget
        if size and budget is not None and self.argument_bytes + size > budget:
            raise self.budget.trip(
                "limit",
                f"Tool-call arguments exceeded the run's memory budget ({budget} bytes, "
                "Limits.memory_bytes)",
            )
        self.argument_bytes += size
        call = _Call(f"{self.prefix}/{len(calls) + 1}", name, arguments, size)
        calls.append(call)
        if self.on_event is not None:
            self._emit(RunEvent("call_start", call_id=call.id, tool=name, arguments=arguments))
        return call

    def _settle(self, call: _Call) -> None:
        """A call ended: its record keeps capped arguments and its bytes are released."""
        if call.size:
            self.argument_bytes -= call.size
            call.size = 0
            call.arguments = record_arguments(call.arguments)

    def _copy_arguments(self, spec: ToolSpec, raw: dict[Any, Any]) -> Any:
        """The JSON copy of arguments that are not a few flat scalars (or are refused)."""
        for key in raw:
            if type(key) is str and key.startswith("_"):
                raise TypeError(f'argument "{key}" is not allowed because it starts with "_"')
        if raw:
            # sizeguard: no 100M-item copy in one C-speed call; a limit, ends the script
            check_arguments(raw, self.budget.trip)
        try:
            copied = json_copy(raw, what="arguments")
        except NotJSONError as exc:
            raise TypeError(f"{spec.identifier}(): {exc}") from None
        huge = huge_int_path(copied)
        if huge is not None:
            raise TypeError(
                f"{spec.identifier}(): arguments{huge} is an int of more than 4,300 digits, "
                "which is not JSON data; pass it as a str (str(n))"
            )
        return copied

    async def _await_call(self, call: _Call) -> ToolReply:
        """Run one call awaited inline by the async script (its scope cancels it)."""
        started = time.monotonic()
        try:
            reply = await self.bridge.call(call.id, call.tool, call.arguments)
        except anyio.get_cancelled_exc_class():
            self._cancelled(call, started)
            raise
        except Exception as exc:  # a broken bridge: the script sees a ToolError
            reply = _bridge_failure(exc)
        return self._completed(call, reply)

    async def _run_call(self, call: _Call, spec: ToolSpec) -> ToolReply:
        """Run one call in the background, in its own cancel scope."""
        started = time.monotonic()
        with anyio.CancelScope() as scope:
            call.scope = scope
            if self.budget.stop is not None:
                scope.cancel()
            try:
                reply = await self.bridge.call(call.id, spec.name, call.arguments)
            except Exception as exc:  # a broken bridge: the script sees a ToolError
                reply = _bridge_failure(exc)
            call.scope = None
            return self._completed(call, reply)
        call.scope = None
        self._cancelled(call, started)
        return ToolReply(status="cancelled", error=f'Tool call "{spec.name}" was cancelled')

    def _completed(self, call: _Call, reply: ToolReply) -> ToolReply:
        self._settle(call)
        call.status = reply.status
        call.duration_ms = reply.duration_ms
        call.error = reply.error
        if self.on_event is not None:
            self._ended(call)
        return reply

    def _cancelled(self, call: _Call, started: float) -> None:
        self._settle(call)
        call.status = "cancelled"
        call.error = "cancelled"
        if call.duration_ms is None:
            call.duration_ms = int((time.monotonic() - started) * 1000)
        if self.on_event is not None:
            self._ended(call)

    def _deliver(self, reply: ToolReply) -> Any:
        self.budget.check()
        if reply.error is None:
            return reply.value
        raise _tool_error(reply)

    def _make_tool(self, spec: ToolSpec) -> Callable[..., Any]:
        if self.is_async:

            def call_async(*args: Any, **kwargs: Any) -> Any:
                pending = PendingToolCall(self, self._start_call(spec, args, kwargs), spec)
                self.unstarted.append(pending)
                return pending

            call_async.__name__ = spec.identifier
            return call_async

        budget = self.budget

        def call_sync(*args: Any, **kwargs: Any) -> Any:
            call = self._start_call(spec, args, kwargs)
            reply = self._call_from_script(call)
            # _deliver, inline
            if budget.stop is not None:
                raise budget.stop
            if reply.error is None:
                return reply.value
            raise _tool_error(reply)

        call_sync.__name__ = spec.identifier
        return call_sync

    def _call_from_script(self, call: _Call) -> ToolReply:
        """Run ``call`` from the sync script's greenlet, without leaving it if it never waits.

        The bridge's coroutine is stepped here, in the run task's contextvars
        context (the script keeps its own, empty one). A call that completes
        without waiting (an async tool that does not suspend, sync hooks) costs
        no greenlet switch; each time it does suspend, what it yields goes to the
        run's task (``_drive``), which yields it to the event loop and switches
        back what the loop sends or throws, so the coroutine always runs in this
        greenlet (code in it that remembers its greenlet keeps working).
        """
        if self.switch is None:
            raise self.budget.trip("aborted", "Script stopped: no event loop to run tool calls")
        started = time.monotonic()
        try:
            reply: ToolReply = self._await_in_greenlet(
                self.bridge.call(call.id, call.tool, call.arguments),
                lambda: self._cancelled(call, started),
            )
        except Exception as exc:  # a broken bridge: the script sees a ToolError
            reply = _bridge_failure(exc)
        call.status = reply.status
        call.duration_ms = reply.duration_ms
        call.error = reply.error
        if self.on_event is not None:
            self._ended(call)
        return reply

    def _await_in_greenlet(
        self, coro: Coroutine[Any, Any, Any], on_cancel: Callable[[], None] | None = None
    ) -> Any:
        """Step ``coro`` to its end in the sync script's greenlet; its value.

        The coroutine runs in the run task's contextvars context (the script keeps its
        own, empty one). Each time it suspends, what it yields goes to the run's task
        (:meth:`_drive`), which yields it to the event loop and switches back what the
        loop sends or throws. An ``Exception`` it raises is raised here; a cancellation
        (the deadline, an abort) calls ``on_cancel`` and goes to the run's task, which
        throws the run's stop into the script.
        """
        switch = self.switch
        assert switch is not None
        me = self.child
        task_context = self.task_context
        value: Any = None
        error: BaseException | None = None
        while True:
            own_context = me.gr_context
            me.gr_context = task_context
            try:
                yielded = coro.send(value) if error is None else coro.throw(error)
            except StopIteration as stop:
                me.gr_context = own_context
                return stop.value
            except Exception:
                me.gr_context = own_context
                raise
            except BaseException as exc:  # a cancellation: the run's task raises it
                me.gr_context = own_context
                if on_cancel is not None and isinstance(exc, self.cancelled_exc):
                    on_cancel()
                switch((_RAISE, exc))
                raise  # not reached: the task throws the run's stop into the script
            me.gr_context = own_context
            value, error = switch((_SUSPEND, yielded))

    def sleep(self, seconds: float) -> None:
        """The script's ``time.sleep``: waits on the event loop where it can.

        In a sync script's greenlet the wait is an ``anyio.sleep`` on the loop (the host's
        loop keeps running; the deadline or an abort cancels it like a tool call). An async
        script's ``time.sleep`` blocks its loop, as in CPython (``await`` a tool instead),
        in slices of :data:`SLEEP_SLICE` seconds with the budget checked before each, so
        it still ends at the deadline or an abort.
        """
        self._check_caller("time.sleep")
        budget = self.budget
        budget.spend(0)
        end = time.monotonic() + seconds
        if self.switch is not None and greenlet.getcurrent() is self.child:
            self._await_in_greenlet(anyio.sleep(seconds))
            budget.spend(0)
            return
        while True:
            now = time.monotonic()
            if now >= end:
                return
            time.sleep(min(SLEEP_SLICE, end - now))
            budget.spend(0)

    def async_sleep(self, seconds: float, result: Any = None) -> PendingGather:
        """The script's ``asyncio.sleep``: an opaque awaitable that waits on the loop."""
        self._check_caller("asyncio.sleep")
        return PendingGather(
            self._sleep_on_loop(seconds, result), "asyncio.sleep(...)", self._check_caller
        )

    async def _sleep_on_loop(self, seconds: float, result: Any) -> Any:
        self.budget.spend(0)
        await anyio.sleep(seconds)
        self.budget.spend(0)
        return result

    async def _drive(self, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Run the sync script ``fn`` in a greenlet on this (the loop's) thread.

        Tool calls run in the script's greenlet (:meth:`_call_from_script`);
        when one waits, the greenlet switches back here with what it yields,
        which this task yields to the event loop, switching the answer back. If
        this task is cancelled meanwhile (deadline, abort, the caller), the
        cancellation is thrown into the waiting call, then the budget's stop is
        thrown into the script so it unwinds (its handlers cannot swallow it).
        """
        child = greenlet(self._main)
        self.child = child
        self.task_context = greenlet.getcurrent().gr_context
        self.cancelled_exc = anyio.get_cancelled_exc_class()
        self.switch = greenlet.getcurrent().switch
        self.budget.pause = self._pause
        request = child.switch(fn)
        while not child.dead:
            if request is _PAUSE:
                await self._loop_turn(child)
                request = child.switch(None)
                continue
            tag, payload = request
            if tag is _SUSPEND:
                try:
                    sent = await _Yield(payload)
                except BaseException as exc:
                    request = child.switch(None, exc)
                else:
                    request = child.switch(sent, None)
                continue
            self._unwind(child)
            raise payload
        outcome: tuple[bool, Any] = request
        return outcome

    async def _drive_inline(self, fn: Callable[[], Any]) -> tuple[bool, Any]:
        """Run the sync script ``fn`` that reaches no tool in a greenlet on this thread.

        The greenlet only ever switches back to pause (:meth:`_pause`): this task takes a
        loop turn, where a cancellation (the caller's scope) unwinds the script with the
        budget's stop, as :meth:`_drive` does.
        """
        child = greenlet(self._main)
        self.switch = greenlet.getcurrent().switch
        self.budget.pause = self._pause
        request = child.switch(fn)
        while not child.dead:
            await self._loop_turn(child)
            request = child.switch(None)
        outcome: tuple[bool, Any] = request
        return outcome

    async def _loop_turn(self, child: greenlet) -> None:
        """One loop turn for the paused script ``child``; a cancellation unwinds it first."""
        try:
            await anyio.lowlevel.checkpoint()
        except BaseException:
            self._unwind(child)
            raise

    def _pause(self) -> None:
        # called by the budget check in the script's greenlet: one loop turn, then
        # a stop that arrived meanwhile (an abort) is raised at once
        switch = self.switch
        if switch is not None:
            switch(_PAUSE)
            self.budget.check()

    def _unwind(self, child: greenlet) -> None:
        stop = self.budget.stop or self.budget.trip("aborted", "Execution cancelled")
        for _ in range(_MAX_UNWIND):
            if child.dead:
                return
            child.throw(stop)

    def _start_pending(self, current: PendingToolCall | None = None) -> None:
        """Start, in the background, every call created and not yet awaited."""
        waiting = self.unstarted
        if len(waiting) == 1 and waiting[0] is current:
            waiting.clear()  # the common ``await tool(...)``: nothing else to start
            return
        self.unstarted = []
        for pending in waiting:
            if pending is not current:
                pending._start()

    def _gather_opaque(self, *aws: Any, return_exceptions: bool = False) -> PendingGather:
        self._check_caller("gather")
        for aw in aws:
            _check_handle(aw)
        return PendingGather(
            self._gather(*aws, return_exceptions=return_exceptions), check=self._check_caller
        )

    async def _gather(self, *aws: Any, return_exceptions: bool = False) -> list[Any]:
        if self.finished:
            raise ToolError(_ENDED.format(name="gather"))
        self._start_pending()
        boxes: list[list[Any]] = []
        wake = anyio.Event()
        left = [0]
        failure: list[BaseException] = []
        stops = (ScriptStop, anyio.get_cancelled_exc_class())
        for aw in aws:
            box: list[Any] = []

            own = type(aw) is PendingToolCall or type(aw) is PendingGather
            if not own and hasattr(aw, "__await__"):
                aw = CheckedAwait(aw, self._refuse_yield)  # a script's coroutine (F07)

            async def runner(aw: Any = aw, box: list[Any] = box) -> None:
                set_no_task()  # not the code of the asyncio task that called gather
                try:
                    box.append((True, await aw))
                except BaseException as exc:
                    box.append((False, exc))
                    if isinstance(exc, stops) or not return_exceptions:
                        failure.append(exc)  # raised at once, as asyncio.gather does
                        wake.set()
                finally:
                    left[0] -= 1
                    if not left[0]:
                        wake.set()

            if own or type(aw) is CheckedAwait:
                left[0] += 1
                self.tg.start_soon(runner)
            else:
                box.append((True, aw))
            boxes.append(box)
        if left[0]:
            await wake.wait()
        if failure:
            raise failure[0]  # the others keep running, as in asyncio (cancelled at the end)
        return [box[0][1] for box in boxes]

    def _spawn(
        self, aw: Any, runner: Callable[[Any], Awaitable[None]], name: str, trusted: bool = False
    ) -> None:
        """Start ``runner(aw)`` in the run's task group (``asyncio.create_task`` and friends,
        :mod:`~scriptgate.sandbox.world.modules.asyncio_tasks`): in the run's context, so its
        tool calls are this run's; cancelled at the run's end. ``aw`` must be a script
        coroutine (driven through :class:`CheckedAwait`), one of the run's opaque awaitables
        or (``trusted``) one the stand-in made itself."""
        self._check_caller(name)
        _check_handle(aw)
        if not self.is_async or self.tg is None:
            raise RuntimeError(f"{name}() works in an async script (one that uses await)")
        own = trusted or type(aw) is PendingToolCall or type(aw) is PendingGather
        if not own:
            if type(aw) is not types.CoroutineType or aw.cr_code.co_filename != FILENAME:
                raise TypeError(f"{name}() takes a coroutine: {name}(work(...))")
            aw = CheckedAwait(aw, self._refuse_yield)
        self._start_pending()
        self.tg.start_soon(runner, aw)

    def _refuse_yield(self, message: str) -> BaseException:
        # a script's coroutine yielded something not the loop's own: the run ends, final
        self._cancel_calls()
        return self.budget.trip("sandbox", message)

    def _sync_gather(self, *values: Any, return_exceptions: bool = False) -> list[Any]:
        self._check_caller("gather")
        return list(values)

    # -- namespace ----------------------------------------------------------------

    def build_namespace(self) -> dict[str, Any]:
        register_world()  # the stand-in value types join the allow-list (once per process)
        guards = make_guards(self.budget, print_fn=self.print_)
        charge = guards["__charge__"]
        tick = guards["_tick_"]
        built: list[Callable[[str], OpaqueNamespace | None]] = []

        def modules(name: str) -> OpaqueNamespace | None:
            # the stand-in modules are built on the run's first import
            if not built:
                gather = self._gather_opaque if self.is_async else self._sync_gather
                built.append(
                    make_modules(
                        charge, tick, self.sleep, self.async_sleep, gather,
                        spawn=self._spawn, check=self._check_caller,
                    )
                )  # fmt: skip
            return built[0](name)

        builtins = make_builtins(
            guards["__charge__"],
            guards["_getattr_"],
            guards["__hasattr__"],
            make_import(modules),
            max_range=self.limits.max_steps or MAX_RANGE,
            charging=self.charging,
        )
        generators = self.namespace.get(GENERATORS_KEY)
        if type(generators) is not ScriptGenerators:
            generators = ScriptGenerators()
        self.generators = generators
        guards[GENERATORS_KEY] = generators  # a session keeps it in its globals
        guards["_gw_"] = generators.wrap  # the compiler decorates generator functions with it
        guards["_gwa_"] = generators.wrap_async
        guards["_ga_"] = generators.adopt  # and passes async generator expressions to this
        hook_names = tuple(guards) if self.evaluates else ()
        if self.fresh:
            # a one-shot run's globals are its hooks' dict itself, made for this run
            # (no copy of ~60 entries: start-up cost)
            ns = self.namespace = guards
            kept = None
        else:
            ns = self.namespace
            ns.update(guards)
            kept = ns.get("__builtins__")
        self.budget.hooks = ns
        if type(kept) is dict:
            # a session: functions of earlier runs captured this dict when they were made
            # (CPython keeps a function's builtins): it holds this run's builtins now, so
            # their `import`, `len`, `sleep`… act for this run, not a finished one
            kept.clear()
            kept.update(builtins)
            builtins = kept
        ns["__builtins__"] = builtins
        # eval/exec/compile: the string compiles through the script's policy and runs with
        # these hooks (world.evaluate)
        if self.evaluates:
            builtins.update(
                make_evaluators(
                    ns,
                    hook_names,
                    max_source_bytes=self.limits.max_source_bytes,
                    taken=(spec.identifier or to_identifier(spec.name) for spec in self.tools),
                )
            )
        if self.inline:
            # the script names no tool, `tools` or `gather` (run_script): none can be
            # reached, so none is made (start-up cost; test_sandbox_inline_run_binds_no_tools)
            return ns
        members: dict[str, Any] = {}
        names: list[str] = []
        for spec in self.tools:
            ident = spec.identifier or to_identifier(spec.name)
            if ident in members:
                continue
            fn = self._make_tool(spec)
            members[ident] = fn
            names.append(ident)
            if ident not in builtins and ident not in ("tools", "gather"):
                ns[ident] = fn
        for spec in self.tools:
            members.setdefault(spec.name, members.get(spec.identifier or to_identifier(spec.name)))
        ns["tools"] = OpaqueNamespace("tools", members, kind="tools", missing=_missing_tool(names))
        ns["gather"] = self._gather_opaque if self.is_async else self._sync_gather
        return ns

    # -- running ------------------------------------------------------------------

    def release(self) -> None:
        """Break the run's reference cycles (globals ↔ functions ↔ guards ↔ budget)."""
        self.finished = True
        release_typing_cache()  # List[Point] kept the run's class in typing's cache
        self.budget.close()
        self.switch = None
        self.child = None
        self.task_context = None
        if self.fresh:
            self.namespace.clear()
        self.tg = None

    def _cancel_calls(self) -> None:
        for call in self.calls:
            if call.scope is not None:
                call.scope.cancel()

    def _stop(self, kind: str, message: str) -> None:
        self.budget.trip(kind, message)
        self._cancel_calls()
        if self.script_scope is not None:
            self.script_scope.cancel()

    async def _watchdog(self) -> None:
        deadline = self.budget.deadline
        if deadline is None:
            await anyio.sleep_forever()
            return
        await anyio.sleep(max(0.0, deadline - time.monotonic()))
        self._stop("limit", self.budget.timeout_message())

    def _abort_message(self, reason: object) -> str:
        if reason is None:
            return "Execution aborted"
        text = str(reason)
        return text or "Execution aborted"

    def _main(self, fn: Callable[[], Any]) -> tuple[bool, Any]:
        try:
            return True, fn()
        except BaseException as exc:
            return False, exc
        finally:
            self._close_generators()

    # -- the script's generators ------------------------------------------------------

    def _to_close(self) -> list[Any]:
        """What the run's end closes: everything (a fresh run, a session's last run), or in
        a session what only the session still holds (the objects a run dropped)."""
        generators = self.generators
        if generators is None or not generators.pending():
            return []
        if self.fresh or self.final:
            return generators.suspended()
        found = generators.orphans()
        found.extend(generators.dropped)
        generators.dropped.clear()
        return found

    def _begin_cleanup(self) -> None:
        # the generators' finally blocks get the run's budget, and at most a short grace
        if self.cleanup_end is not None:
            return
        budget = self.budget
        end = time.monotonic() + CLEANUP_GRACE
        self.cleanup_end = end
        if budget.deadline is None or budget.deadline > end:
            budget.deadline = end
            budget.deadline_message = cleanup_message(CLEANUP_GRACE)
            if self.tg is not None:  # a wait (a tool call, a sleep) ends at the grace too
                self.tg.start_soon(self._watch_cleanup, end)

    async def _watch_cleanup(self, end: float) -> None:
        await anyio.sleep(max(0.0, end - time.monotonic()))
        self._stop("limit", cleanup_message(CLEANUP_GRACE))

    def _closing_failed(self, exc: BaseException) -> None:
        # a generator's cleanup failed: ignored, as CPython ignores it in a finalizer; a
        # stop (limit, abort) is final in the budget already; anything else goes on
        if isinstance(
            exc, Exception | ScriptStop | GeneratorExit | anyio.get_cancelled_exc_class()
        ):
            return
        raise exc

    def _settle_generators(self) -> None:
        generators = self.generators
        if generators is None:
            return
        if self.fresh or self.final:
            generators.kept = []
        else:
            generators.keep_alive()  # a session's: they live on to its later runs

    def _close_generators(self) -> None:
        """Close the suspended generators, in the script's own greenlet (or stack)."""
        for _ in range(_CLOSE_ROUNDS):
            found = self._to_close()
            if not found:
                break
            self._begin_cleanup()
            for obj in found:
                try:
                    if not is_async_generator(obj):
                        obj.close()
                    elif self.switch is not None and greenlet.getcurrent() is self.child:
                        self._await_in_greenlet(
                            CheckedAwait(obj.aclose(), self._refuse_yield).__await__()  # type: ignore[arg-type]
                        )
                    else:
                        _step_closed(obj.aclose())
                except BaseException as exc:
                    self._closing_failed(exc)
        self._settle_generators()

    async def _close_generators_async(self) -> None:
        """Close the suspended generators in the run's task (an async script)."""
        for _ in range(_CLOSE_ROUNDS):
            found = self._to_close()
            if not found:
                break
            self._begin_cleanup()
            for obj in found:
                try:
                    if is_async_generator(obj):
                        await CheckedAwait(obj.aclose(), self._refuse_yield)
                    else:
                        obj.close()
                except BaseException as exc:
                    self._closing_failed(exc)
        self._settle_generators()

    async def execute(self, code: Any) -> tuple[bool, Any]:
        ns = self.build_namespace()
        exec(code, ns)  # defines __script__ in the script's own globals
        fn = ns.pop(ENTRY)
        remove = None
        if self.signal is not None:
            remove = self.signal.add_listener(
                lambda reason: self._stop("aborted", self._abort_message(reason))
            )
        outcome: tuple[bool, Any] = (False, None)
        if self.inline:
            # No tool is reachable: no task group, watchdog or cancel scope; the ticks
            # enforce the deadline, and the script's greenlet still gives the loop a turn
            # every pause interval, so an abort, the caller's cancel scope and other tasks
            # are not starved by a busy script (findings18 L01: `while True: pass` held
            # the host's loop for the whole deadline)
            try:
                return await self._drive_inline(fn)
            finally:
                if remove is not None:
                    remove()
        running = _RUNNING.set(self)
        try:
            async with anyio.create_task_group() as tg:
                self.tg = tg
                tg.start_soon(self._watchdog)
                with anyio.CancelScope() as scope:
                    self.script_scope = scope
                    try:
                        if self.is_async:
                            # every yield of the script's coroutine is checked (F07)
                            try:
                                outcome = (True, await CheckedAwait(fn(), self._refuse_yield))
                            finally:
                                await self._close_generators_async()
                        else:
                            outcome = await self._drive(fn)
                            deadline = self.budget.deadline
                            if deadline is not None and time.monotonic() > deadline:
                                # a long C call outlived the deadline (the loop was
                                # blocked, the watchdog could not run): a timeout,
                                # as when the script ran in a thread
                                self.budget.trip("limit", self.budget.timeout_message())
                    except BaseException as exc:
                        outcome = (False, exc)
                self.script_scope = None
                self._cancel_calls()
                tg.cancel_scope.cancel()
            if self.is_async:
                # what the run's cancelled tasks left suspended (their handlers ran in the
                # run just now): closed before the run ends as well
                self.tg = None
                self._close_generators()
        finally:
            _RUNNING.reset(running)
            if remove is not None:
                remove()
            if (
                self.budget.stop is None
                and not outcome[0]
                and isinstance(outcome[1], anyio.get_cancelled_exc_class())
            ):
                self.budget.trip("aborted", "Execution cancelled")
        return outcome


async def run_script(
    source: str,
    *,
    bridge: ToolBridge,
    tools: Sequence[ToolSpec],
    limits: Limits,
    state: dict[str, Any] | None = None,
    signal: AbortSignal | None = None,
    call_id_prefix: str = "script",
    on_event: OnEvent | None = None,
    final: bool = False,
) -> ScriptResult:
    """Run ``source`` as a script and return a JSON-compatible :class:`ScriptResult`.

    Never raises for anything the script does (a cancellation of the caller
    still propagates). ``state`` is a session's persistent globals dict (``None``
    for a fresh one); ``signal`` aborts the run (its ``pending`` reason is polled
    at every budget check, see ``AbortController.abort_soon``); tool-call ids are
    ``f"{call_id_prefix}/{n}"``; ``on_event`` receives each
    :class:`~scriptgate.sandbox.events.RunEvent` as it happens. ``final``: the session's
    last run (:func:`close_session`), which closes every generator the session kept.
    """
    started = time.monotonic()

    def wall() -> float:
        return round(time.monotonic() - started, 6)

    if type(source) is not str:
        return ScriptResult(
            ok=False,
            error=ScriptError("syntax", "TypeError", "the script must be a str", None),
            wall_time=wall(),
        )
    if signal is not None and signal.aborted:
        reason = signal.reason
        return ScriptResult(
            ok=False,
            error=ScriptError(
                "aborted", "AbortError", str(reason) if reason else "Execution aborted"
            ),
            wall_time=wall(),
        )
    timeout = limits.timeout
    compiled = compile_script(  # the run's deadline governs its compile too
        source,
        max_source_bytes=limits.max_source_bytes,
        session=state is not None,
        clock=CompileClock(None if timeout is None else started + timeout, timeout, signal),
    )
    if isinstance(compiled, CompileFailure):
        return ScriptResult(
            ok=False,
            error=ScriptError(compiled.kind, compiled.type, compiled.message, compiled.line),  # type: ignore[arg-type]
            wall_time=wall(),
        )
    run = _Run(
        bridge=bridge,
        tools=tools,
        limits=limits,
        state=state,
        signal=signal,
        call_id_prefix=call_id_prefix,
        is_async=compiled.is_async,
        on_event=on_event,
        final=final,
        evaluates=state is not None or bool(compiled.names & _EVALUATOR_NAMES),
        charging=state is not None or not compiled.names.isdisjoint(CHARGING_NAMES),
        inline=(
            state is None
            and not compiled.is_async
            # sleep, or eval/exec: a string may name a tool or sleep
            and compiled.names.isdisjoint(_NOT_INLINE)
            and not _names_a_tool(compiled.names, tools)
        ),
    )
    if timeout is not None:
        run.budget.deadline = started + timeout  # the compile's time counts
    try:
        try:
            ok, payload = await run.execute(compiled.code)
        finally:
            run.finished = True  # its tools and gather are dead from here on (test_boundary_dead_*)
    except anyio.get_cancelled_exc_class():
        run.release()
        raise
    except BaseException as exc:
        return ScriptResult(
            ok=False,
            output="".join(run.output),
            error=ScriptError("sandbox", type(exc).__name__, _message(exc)),
            calls=tuple(call.record() for call in run.calls),
            wall_time=wall(),
        )
    try:
        return _finish(run, ok, payload, wall())
    except MemoryError:
        pass  # left below, so the MemoryError's frames (and the script's values) go first
    finally:
        run.release()
    # The address space is full of the script's own values (a worker's RLIMIT_AS:
    # `x.extend(s)` left `x` holding what it had read when the allocation failed), so even
    # the report failed: released with the run's namespace, it is the bare MemoryError
    # that process isolation reports as the memory limit (test_engine_memory_system_error).
    payload = None
    return ScriptResult(
        ok=False,
        output="".join(run.output),
        error=ScriptError("runtime", "MemoryError", ""),
        calls=tuple(call.record() for call in run.calls),
        wall_time=wall(),
    )


_CLOSE_ROUNDS = 8
"""Times the run's end looks again for generators made by the cleanup of others."""


def _step_closed(closing: Any) -> None:
    # no event loop to wait on (a run with no tool): one step; a wait is closed at once
    try:
        closing.send(None)
    except StopIteration:
        return
    closing.close()


def session_has_generators(state: dict[str, Any]) -> bool:
    """Whether a session's globals hold generators a run left suspended (cheap)."""
    generators = state.get(GENERATORS_KEY)
    return type(generators) is ScriptGenerators and bool(generators.kept)


async def close_session(
    state: dict[str, Any],
    *,
    bridge: ToolBridge,
    tools: Sequence[ToolSpec],
    limits: Limits,
    call_id_prefix: str = "script",
) -> ScriptResult | None:
    """Close the generators a session kept, in a last run of the session (issue 13 §2).

    Their ``finally``/``with`` blocks run inside that run: its tools, records and limits
    (and at most :data:`~scriptgate.sandbox.guards.generators.CLEANUP_GRACE`). ``None`` when
    the session kept none. The caller drops ``state`` afterwards.
    """
    if not session_has_generators(state):
        return None
    return await run_script(
        "None",
        bridge=bridge,
        tools=tools,
        limits=limits,
        state=state,
        call_id_prefix=call_id_prefix,
        final=True,
    )


_STOP_TYPES = {"aborted": "AbortError", "limit": "LimitExceeded", "sandbox": "SandboxViolation"}
"""``error.type`` of a run ended by its budget's stop, per stop kind."""


def _bridge_failure(exc: Exception) -> ToolReply:
    return ToolReply(status="error", error=f"Tool call failed in the sandbox bridge: {exc}")


def _names_a_tool(names: frozenset[str], tools: Sequence[ToolSpec]) -> bool:
    # a loop, not any(<generator>): no generator object per run (start-up cost)
    for spec in tools:  # noqa: SIM110
        if spec.identifier in names:
            return True
    return False


def _finish(run: _Run, ok: bool, payload: Any, wall_time: float) -> ScriptResult:
    output = "".join(run.output)
    calls = tuple([call.record() for call in run.calls])
    budget = run.budget
    stop = budget.stop
    if stop is None and not ok and isinstance(payload, ScriptStop):
        stop = payload  # a stop raised with no run in reach (errors.size_stop): still a limit
    if stop is None and budget.deadline is not None and time.monotonic() > budget.deadline:
        # straight-line code has no budget check between its C operations: a script of
        # slow ones (big-int divisions, scans of large strings) can end past its deadline.
        # It timed out all the same, as process isolation's kill would report it
        # (test_limits_straight_line_code_past_the_deadline_is_a_timeout)
        stop = budget.trip("limit", budget.timeout_message())
    if stop is not None:
        line = stop.line
        if line is None and isinstance(payload, BaseException):
            line = _error_line(payload)
        type_name = _STOP_TYPES[stop.kind]
        return ScriptResult(
            ok=False,
            output=output,
            error=ScriptError(stop.kind, type_name, stop.message, line),
            calls=calls,
            wall_time=wall_time,
        )
    if not ok and type(payload) is ScriptExit:
        status = payload.status
        if status is None or (type(status) in (int, bool) and not status):
            return _ok_result(None, output, calls, wall_time)  # sys.exit(0): a finished run
        # CPython: an int status is the exit code (sys.exit(True) is 1, nothing printed);
        # any other is printed and the code is 1 (sys.exit(0.0) prints 0.0). The message is
        # the exit code or that text, for the types whose str() runs no script code
        status_type = type(status)
        if status_type is bool:
            text = str(int(status))
        elif status_type is int and status.bit_length() > 256:
            text = "a very large int"  # str() of it is quadratic (or refused by Python)
        elif status_type in (int, str, float, complex):
            text = str(status)
        else:
            text = ""
        return ScriptResult(
            ok=False,
            output=output,
            error=ScriptError("runtime", "SystemExit", text[:MAX_MESSAGE], _error_line(payload)),
            calls=calls,
            wall_time=wall_time,
        )
    if not ok:
        exc: BaseException = payload
        kind = "tool" if isinstance(exc, ToolError) else "runtime"
        if _lost_memory_error(exc):
            # a C call whose allocation failed under the address-space limit without setting
            # MemoryError: reported as the bare MemoryError it was, which process isolation
            # turns into the memory limit (test_engine_memory_system_error)
            return ScriptResult(
                ok=False,
                output=output,
                error=ScriptError("runtime", "MemoryError", "", _error_line(exc)),
                calls=calls,
                wall_time=wall_time,
            )
        return ScriptResult(
            ok=False,
            output=output,
            error=ScriptError(kind, type(exc).__name__, _message(exc), _error_line(exc)),  # type: ignore[arg-type]
            calls=calls,
            wall_time=wall_time,
        )
    value_type = type(payload)
    if (
        payload is None
        or value_type is bool
        or value_type is float
        or (value_type is int and payload.bit_length() <= 3 * sys.get_int_max_str_digits())
    ):
        # the common last values: JSON as they are, and the checks below pass them
        # unchanged (json_copy returns them, their size is not measured)
        return _ok_result(payload, output, calls, wall_time)
    cap = run.limits.max_result_bytes
    refusal = None if cap is None else result_too_large(payload, cap, value_node_caps(cap))
    if cap is not None and refusal is not None:  # sizeguard: refused before the copy
        what, count = refusal
        if what == "bytes":
            message = (
                f"The script's value is about {count} bytes or more, "
                f"more than the limit of {cap} bytes"
            )
        else:
            # counted per reference before the copy expands shared ones (findings18 L04)
            message = too_many_nodes_message(what, count, cap)
        return ScriptResult(
            ok=False,
            output=output,
            error=ScriptError("limit", "LimitExceeded", message),
            calls=calls,
            wall_time=wall_time,
        )
    try:
        value = json_copy(payload, what="the script's value")
    except NotJSONError:
        # a set, a date, int keys, an instance: rendered as JSON where obvious, a
        # placeholder otherwise, with a note in the output (never a failed run after
        # all its work; test_last_value_*)
        try:
            rendered, note = render_last_value(payload)
        except IntTooLongForText:
            # a dict key (or a Fraction) holding an int past the int-to-text limit: the
            # error a bare such int gives, not a host traceback (findings15 E08)
            return _int_too_long(output, calls, wall_time)
        try:
            value = json_copy(rendered, what="the script's value")
        except NotJSONError as exc:
            return ScriptResult(
                ok=False,
                output=output,
                error=ScriptError("runtime", "TypeError", str(exc)),
                calls=calls,
                wall_time=wall_time,
            )
        if note is not None:
            output += ("" if not output or output.endswith("\n") else "\n") + f"[note: {note}]\n"
    cap = run.limits.max_result_bytes
    if not (
        value is None
        or type(value) in (bool, float)
        or (type(value) is int and value.bit_length() <= 3 * sys.get_int_max_str_digits())
        or (type(value) is str and (cap is None or len(value) * 4 <= cap))
    ):
        try:
            text = json_text(value)
        except ValueError:
            # an int longer than Python's int-to-text limit: the value has no JSON text,
            # and process isolation could not send it (test_limits_value_with_an_int_too_long_for_text)
            return _int_too_long(output, calls, wall_time)
        size = len(text.encode("utf-8", "surrogatepass"))
        too_many = None if cap is None or size > cap else too_many_nodes(text, cap)
        if too_many is not None:
            # a value whose decode (the parent's, in process isolation) or copy makes far
            # more than its bytes, [{}] * 1_500_000: refused in both modes (findings15 E09)
            return ScriptResult(
                ok=False,
                output=output,
                error=ScriptError("limit", "LimitExceeded", too_many),
                calls=calls,
                wall_time=wall_time,
            )
        if cap is not None and size > cap:
            return ScriptResult(
                ok=False,
                output=output,
                error=ScriptError(
                    "limit",
                    "LimitExceeded",
                    f"The script's value is {size} bytes, more than the limit of {cap} bytes",
                ),
                calls=calls,
                wall_time=wall_time,
            )
    return _ok_result(value, output, calls, wall_time)


def _int_too_long(output: str, calls: tuple[CallRecord, ...], wall: float) -> ScriptResult:
    """The failed run of a last value holding an int that has no text (no JSON either)."""
    return ScriptResult(
        ok=False,
        output=output,
        error=ScriptError(
            "runtime",
            "ValueError",
            "The script's value holds an int too long to convert to text "
            f"(more than {sys.get_int_max_str_digits()} digits)",
        ),
        calls=calls,
        wall_time=wall,
    )


def _ok_result(value: Any, output: str, calls: tuple[CallRecord, ...], wall: float) -> ScriptResult:
    """``ScriptResult(ok=True, ...)`` built through its slots (``bridge.slot_setters``)."""
    result: ScriptResult = _new(ScriptResult)
    _SET_RESULT_OK(result, True)
    _SET_RESULT_VALUE(result, value)
    _SET_RESULT_OUTPUT(result, output)
    _SET_RESULT_ERROR(result, None)
    _SET_RESULT_CALLS(result, calls)
    _SET_RESULT_WALL(result, wall)
    return result


(
    _SET_RESULT_OK,
    _SET_RESULT_VALUE,
    _SET_RESULT_OUTPUT,
    _SET_RESULT_ERROR,
    _SET_RESULT_CALLS,
    _SET_RESULT_WALL,
) = slot_setters(ScriptResult)


def _unused(_: Awaitable[Any]) -> None:  # pragma: no cover - keeps the Awaitable import for typing
    return None
