"""``Sandbox``: run model-written scripts against live tools.

>>> sandbox = Sandbox([search, fetch], before_tool_call=policy)   # doctest: +SKIP
>>> result = sandbox.run_sync("hits = search(q='x')\\nlen(hits)")  # doctest: +SKIP

Every tool call a script makes runs through
:func:`scriptgate.runtime.pipeline.run_tool_call` with the sandbox's hooks (no
events emitted). ``isolation="in_process"`` runs the engine in this process
(RestrictedPython is the boundary); ``isolation="process"`` runs it in a worker
process (:mod:`scriptgate.sandbox.isolation.parent`), with tool calls coming back over a
pipe so hooks still run here.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
from collections.abc import Callable, Coroutine, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

import anyio

from scriptgate.errors import ConfigurationError
from scriptgate.runtime.abort import AbortSignal
from scriptgate.runtime.tool import AgentTool
from scriptgate.runtime.types import (
    AfterToolCallHook,
    AgentContext,
    AssistantMessage,
    BeforeToolCallHook,
)
from scriptgate.sandbox.bridge import LazyHostBridge, ToolSpec, json_copy, tool_specs
from scriptgate.sandbox.engine import close_session, run_script, session_has_generators
from scriptgate.sandbox.events import OnEvent
from scriptgate.sandbox.result import Limits, ScriptResult

if TYPE_CHECKING:  # pragma: no cover
    from scriptgate.sandbox.isolation.jail.report import JailReport
    from scriptgate.sandbox.isolation.parent import ProcessRunner

__all__ = ["Isolation", "Sandbox", "SandboxSession"]

Isolation = Literal["in_process", "process"]

_session_counter = 0
_session_lock = threading.Lock()


def _next_session_key() -> str:
    global _session_counter
    with _session_lock:
        _session_counter += 1
        return f"session-{_session_counter}"


_MAIN_RUNNER: list[asyncio.Runner] = []
"""The main thread's event loop for ``run_sync``, made at the first call and kept: a new loop
per call (``anyio.run``) cost ~125 µs, ten times a warm run of ``x = 1 + 2``."""


def _close_main_runner() -> None:
    while _MAIN_RUNNER:
        _MAIN_RUNNER.pop().close()


def _main_thread_run(main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    """``await main()`` on the main thread's kept loop, as ``asyncio.run`` would run it.

    What ``asyncio.run`` does when it returns is done here after every call: tasks the
    call left behind are cancelled and awaited, so nothing of one call runs in the next.
    The loop itself (and its executor) is closed when the interpreter exits. Ctrl-C
    cancels the call as under ``asyncio.run`` (``asyncio.Runner``'s own handler).
    """
    if not _MAIN_RUNNER:
        _MAIN_RUNNER.append(asyncio.Runner())
        atexit.register(_close_main_runner)
    runner = _MAIN_RUNNER[0]
    try:
        return runner.run(main())
    finally:
        loop = runner.get_loop()
        left = [task for task in asyncio.all_tasks(loop) if not task.done()]
        if left:
            for task in left:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))


def _run_blocking(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``await fn(*args, **kwargs)`` from sync code, with or without a running loop here."""
    try:
        import sniffio

        sniffio.current_async_library()
        loop_running = True
    except Exception:
        loop_running = False
    if not loop_running:
        import asyncio

        try:
            asyncio.get_running_loop()
            loop_running = True
        except RuntimeError:
            loop_running = False

    async def main() -> Any:
        return await fn(*args, **kwargs)

    if not loop_running:
        if threading.current_thread() is threading.main_thread():
            return _main_thread_run(main)
        return anyio.run(main)
    box: dict[str, Any] = {}

    def worker() -> None:
        try:
            box["value"] = anyio.run(main)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=worker, name="scriptgate-run-sync", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class Sandbox:
    """Runs scripts in which every tool is a plain function.

    ``tools``: the callable tools; ``before_tool_call``/``after_tool_call``: hooks
    applied to every call a script makes; ``limits``: :class:`Limits`;
    ``isolation``: ``"in_process"`` (default) or ``"process"``;
    ``assistant_message``/``context``: passed to the hooks. ``require_jail``
    (process isolation only): refuse to run (a ``sandbox`` error naming the
    missing layers) unless the worker's OS jail has every layer
    (:mod:`scriptgate.sandbox.isolation.jail`); :attr:`jail` says what the workers got.
    ``reuse_workers`` and ``launcher`` (``"builtin"`` or ``"bwrap"``): passed to
    :class:`~scriptgate.sandbox.isolation.parent.ProcessRunner`.
    """

    def __init__(
        self,
        tools: Sequence[AgentTool] = (),
        *,
        before_tool_call: BeforeToolCallHook | None = None,
        after_tool_call: AfterToolCallHook | None = None,
        limits: Limits | None = None,
        isolation: str = "in_process",
        assistant_message: AssistantMessage | None = None,
        context: AgentContext | None = None,
        require_jail: bool = False,
        reuse_workers: bool = False,
        launcher: Literal["builtin", "bwrap"] = "builtin",
    ) -> None:
        if isolation not in ("in_process", "process"):
            raise ConfigurationError(
                f"isolation must be 'in_process' or 'process', got {isolation!r}"
            )
        if require_jail and isolation != "process":
            raise ConfigurationError("require_jail needs isolation='process' (the OS jail)")
        if limits is None:
            limits = Limits()
        if not isinstance(limits, Limits):
            raise ConfigurationError(f"limits must be a Limits, got {type(limits).__name__}")
        tools = list(tools)
        for item in tools:
            if not isinstance(item, AgentTool):
                raise ConfigurationError(f"tools must be AgentTool objects, got {item!r}")
        self.tools = tools
        self.before_tool_call = before_tool_call
        self.after_tool_call = after_tool_call
        self.limits = limits
        self.isolation: Isolation = isolation  # type: ignore[assignment]
        self.assistant_message = assistant_message
        self.context = context
        self._specs: list[ToolSpec] = tool_specs(tools)
        self._runner: ProcessRunner | None = None
        self._closed = False
        self.require_jail = require_jail
        self.reuse_workers = reuse_workers
        self.launcher: Literal["builtin", "bwrap"] = launcher

    @property
    def jail(self) -> JailReport | None:
        """The OS jail the last process-mode worker got (None: in-process, or no worker yet)."""
        return None if self._runner is None else self._runner.jail

    @property
    def tool_specs(self) -> list[ToolSpec]:
        """The :class:`ToolSpec` of each tool, in order."""
        return list(self._specs)

    def _bridge(self, signal: AbortSignal | None) -> LazyHostBridge:
        return LazyHostBridge(
            self.tools,
            before_tool_call=self.before_tool_call,
            after_tool_call=self.after_tool_call,
            signal=signal,
            assistant_message=self.assistant_message,
            context=self.context,
            max_result_bytes=self.limits.max_result_bytes,
        )

    async def _run(
        self,
        code: str,
        *,
        signal: AbortSignal | None,
        call_id_prefix: str,
        state: dict[str, Any] | None,
        session_key: str | None,
        on_event: OnEvent | None = None,
    ) -> ScriptResult:
        if self._closed:
            raise ConfigurationError("the sandbox is closed")
        bridge = self._bridge(signal)
        if self.isolation == "process":
            if self._runner is None:
                from scriptgate.sandbox.isolation.parent import ProcessRunner

                self._runner = ProcessRunner(
                    self.limits,
                    require_jail=self.require_jail,
                    reuse_workers=self.reuse_workers,
                    launcher=self.launcher,
                )
            return await self._runner.run(
                code,
                bridge=bridge,
                tools=self._specs,
                signal=signal,
                call_id_prefix=call_id_prefix,
                session_key=session_key,
                on_event=on_event,
            )
        result = await run_script(
            code,
            bridge=bridge,
            tools=self._specs,
            limits=self.limits,
            state=state,
            signal=signal,
            call_id_prefix=call_id_prefix,
            on_event=on_event,
        )
        # The caller's own cancel scope fired while the script ran (the run unwound it as an
        # abort): the cancellation propagates, as process mode's does (findings18 L07). Not in
        # the engine: a worker's run may end with its address space full, a loop turn failing.
        await anyio.lowlevel.checkpoint_if_cancelled()
        return result

    async def run(
        self,
        code: str,
        *,
        signal: AbortSignal | None = None,
        call_id_prefix: str = "script",
        on_event: OnEvent | None = None,
    ) -> ScriptResult:
        """Run ``code`` in a fresh namespace and return its :class:`ScriptResult`.

        ``on_event`` is called with each :class:`~scriptgate.sandbox.events.RunEvent`
        (printed text, a tool call's start and end) as it happens, in both
        isolation modes; the result still holds everything.
        """
        return await self._run(
            code,
            signal=signal,
            call_id_prefix=call_id_prefix,
            state=None,
            session_key=None,
            on_event=on_event,
        )

    def run_sync(self, code: str, **kwargs: Any) -> ScriptResult:
        """:meth:`run` from synchronous code (also while an event loop runs in this thread)."""
        result: ScriptResult = _run_blocking(self.run, code, **kwargs)
        return result

    def session(self) -> SandboxSession:
        """A session: globals persist across its runs until :meth:`SandboxSession.reset`."""
        return SandboxSession(self)

    async def aclose(self) -> None:
        """Release the worker processes (process isolation); later runs raise."""
        self._closed = True
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.aclose()

    def close(self) -> None:
        """:meth:`aclose` from synchronous code."""
        _run_blocking(self.aclose)

    async def __aenter__(self) -> Sandbox:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        names = ", ".join(t.name for t in self.tools)
        return f"Sandbox(tools=[{names}], isolation={self.isolation!r})"


class SandboxSession:
    """Runs scripts that share their globals (a notebook, a multi-turn agent)."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._state: dict[str, Any] = {}
        self._key = _next_session_key()

    async def run(
        self,
        code: str,
        *,
        signal: AbortSignal | None = None,
        call_id_prefix: str = "script",
        on_event: OnEvent | None = None,
    ) -> ScriptResult:
        """Run ``code`` with this session's globals (``on_event``: as :meth:`Sandbox.run`)."""
        return await self.sandbox._run(
            code,
            signal=signal,
            call_id_prefix=call_id_prefix,
            state=self._state,
            session_key=self._key,
            on_event=on_event,
        )

    def run_sync(self, code: str, **kwargs: Any) -> ScriptResult:
        """:meth:`run` from synchronous code."""
        result: ScriptResult = _run_blocking(self.run, code, **kwargs)
        return result

    def reset(self) -> None:
        """Forget every global (process isolation: the session's pinned worker is discarded).

        Generators a run left suspended in the globals are closed first, in a last run of
        the session (their ``finally`` blocks run with its tools and limits); a discarded
        worker takes its own with it.
        """
        runner = self.sandbox._runner
        if runner is not None:
            runner.drop_session(self._key)
        state, self._state = self._state, {}
        self._key = _next_session_key()
        if session_has_generators(state):
            _run_blocking(self._close_generators, state)

    async def areset(self) -> None:
        """:meth:`reset` from async code (the generators are closed on this event loop)."""
        runner = self.sandbox._runner
        if runner is not None:
            runner.drop_session(self._key)
        state, self._state = self._state, {}
        self._key = _next_session_key()
        await self._close_generators(state)

    async def aclose(self) -> None:
        """End the session: :meth:`areset` (its generators are closed inside a run)."""
        await self.areset()

    def close(self) -> None:
        """End the session: :meth:`reset`."""
        self.reset()

    async def _close_generators(self, state: dict[str, Any]) -> None:
        sandbox = self.sandbox
        with contextlib.suppress(Exception):  # a failed cleanup still forgets the session
            await close_session(
                state,
                bridge=sandbox._bridge(None),
                tools=sandbox._specs,
                limits=sandbox.limits,
                call_id_prefix="session-close",
            )
        state.clear()

    @property
    def globals(self) -> dict[str, Any]:
        """JSON copies of the session's plain-data globals (in-process isolation)."""
        out: dict[str, Any] = {}
        skip = {spec.identifier for spec in self.sandbox._specs} | {"tools", "gather"}
        for name, value in self._state.items():
            if name.startswith("_") or name in skip:
                continue
            try:
                out[name] = json_copy(value)
            except TypeError:
                continue
        return out
