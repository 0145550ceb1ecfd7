"""Jupyter integration: ``%load_ext scriptgate`` and the ``%%scriptgate`` cell magic.

In a notebook::

    sandbox = Sandbox(tools, before_tool_call=policy.before_tool_call)

    %load_ext scriptgate

    %%scriptgate sandbox --timeout 10 --raise
    rows = find(pattern="**/*.py")
    len(rows)

``%%scriptgate [SANDBOX] [--timeout S] [--raise] [--isolation in_process|process]``
runs the cell body as a script in the named sandbox (or session; default
``sandbox``) on an event loop of its own in a helper thread (the notebook's loop
keeps running). What the script prints appears in the cell as it runs; the cell's
value is a rich view of the :class:`~scriptgate.sandbox.result.ScriptResult` (call
trace, collapsible output, the value as a JSON tree, the error with its line),
also stored as ``scriptgate_result``. ``--raise`` makes a failed script a cell
error (so "Run All" stops). Interrupting the kernel aborts the script (its
helper thread stops calling tools), shows what it did, then raises
``KeyboardInterrupt``. Owns the magic only; the rendering is in
``scriptgate._notebook_view``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import inspect
import queue
import shlex
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn, Protocol

import anyio

from scriptgate._notebook_view import ResultView
from scriptgate.errors import ConfigurationError, ScriptgateError
from scriptgate.runtime.abort import AbortController, AbortError, loop_scheduler
from scriptgate.sandbox.events import RunEvent
from scriptgate.sandbox.result import ScriptResult

__all__ = ["CellScriptError", "SyncRunner", "load_ipython_extension", "run_cell"]

DEFAULT_TARGET = "sandbox"


class SyncRunner(Protocol):
    """Anything with ``run_sync(code) -> ScriptResult``: a ``Sandbox`` or a session."""

    def run_sync(self, code: str) -> ScriptResult:
        """Run ``code`` and wait for its result."""
        ...


class CellScriptError(ScriptgateError):
    """``%%scriptgate --raise``: the script failed (the message is its error)."""


_DONE = object()
MAX_LIVE_LINES = 200
"""Lines of output shown live in the cell; the rest is in the result's (collapsed) output."""


def _options(line: str) -> argparse.Namespace:
    parser = _MagicParser(prog="%%scriptgate", add_help=False)
    parser.add_argument("target", nargs="?", default=DEFAULT_TARGET)
    parser.add_argument("--timeout", type=float, default=None)
    parser.add_argument("--raise", dest="raise_", action="store_true")
    parser.add_argument("--isolation", choices=("in_process", "process"), default=None)
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ConfigurationError(f"%%scriptgate: {exc}") from None
    return parser.parse_args(words)


class _MagicParser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ConfigurationError(f"{_USAGE} ({message})")


_USAGE = "usage: %%scriptgate [SANDBOX] [--timeout S] [--raise] [--isolation in_process|process]"


def _target(options: argparse.Namespace, namespace: dict[str, Any]) -> Any:
    name = options.target
    target = namespace.get(name)
    if target is None:
        raise ConfigurationError(
            f"%%scriptgate: no variable {name!r} in the notebook; create one with "
            f"`{name} = Sandbox(tools)` or name another: %%scriptgate my_sandbox"
        )
    if not callable(getattr(target, "run_sync", None)):
        raise ConfigurationError(
            f"%%scriptgate: {name!r} is a {type(target).__name__}, not a Sandbox or session"
        )
    if options.timeout is not None or options.isolation is not None:
        from scriptgate.sandbox.sandbox import Sandbox

        if not isinstance(target, Sandbox):
            raise ConfigurationError(
                "%%scriptgate: --timeout and --isolation need a Sandbox (a session keeps its own)"
            )
        if options.timeout is not None and options.timeout <= 0:
            raise ConfigurationError("%%scriptgate: --timeout must be positive")
        limits = target.limits
        if options.timeout is not None:
            limits = dataclasses.replace(limits, timeout=options.timeout)
        return Sandbox(
            target.tools,
            before_tool_call=target.before_tool_call,
            after_tool_call=target.after_tool_call,
            limits=limits,
            isolation=options.isolation or target.isolation,
            assistant_message=target.assistant_message,
            context=target.context,
        )
    return target


def _run_interruptibly(
    run: Callable[..., Any], code: str, on_event: Callable[[RunEvent], None] | None
) -> tuple[ScriptResult, bool]:
    """``await run(code, signal=..., on_event=...)`` on a loop of its own in a helper thread.

    Events are handed to ``on_event`` on this (the kernel's) thread. A
    ``KeyboardInterrupt`` here (a kernel interrupt) aborts the run, whose helper
    thread then stops at the script's next budget check (cancelling a waiting
    call); returns the result and whether it was interrupted.
    """
    controller = AbortController()
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    box: dict[str, Any] = {}

    async def main() -> ScriptResult:
        box["soon"] = loop_scheduler()
        result: ScriptResult = await run(code, signal=controller.signal, on_event=events.put)
        return result

    def worker() -> None:
        try:
            box["result"] = anyio.run(main)
        except BaseException as exc:
            box["error"] = exc
        finally:
            events.put(_DONE)

    thread = threading.Thread(target=worker, name="scriptgate-cell", daemon=True)
    thread.start()
    interrupted = False

    def interrupt() -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = True
            soon = box.get("soon")
            if soon is not None:
                controller.abort_soon(AbortError("Interrupted (kernel interrupt)"), soon)

    done = False
    while not done:
        # a kernel interrupt can land anywhere in this loop: it always becomes an abort
        try:
            item = events.get()
            if item is _DONE:
                done = True
            elif on_event is not None:
                with contextlib.suppress(Exception):
                    on_event(item)
        except KeyboardInterrupt:
            interrupt()
    while thread.is_alive():
        try:
            thread.join()
        except KeyboardInterrupt:
            interrupt()
    if "error" in box:
        raise box["error"]
    return box["result"], interrupted


class _LiveCell:
    """Prints the script's output in the cell as it comes (at most MAX_LIVE_LINES lines)."""

    def __init__(self) -> None:
        self.lines = 0
        self.streamed = False
        self.cut = False

    def __call__(self, event: RunEvent) -> None:
        if event.kind != "output" or not event.text or self.cut:
            return
        self.streamed = True
        room = MAX_LIVE_LINES - self.lines
        pieces = event.text.split("\n")
        if len(pieces) - 1 >= room:
            sys.stdout.write("\n".join(pieces[:room]) + "\n")
            sys.stdout.write("… (the rest of the output is in the result below)\n")
            self.cut = True
        else:
            sys.stdout.write(event.text)
        self.lines += event.text.count("\n")
        sys.stdout.flush()


def run_cell(line: str, cell: str, namespace: dict[str, Any]) -> ScriptResult:
    """Run ``cell`` in the sandbox named on the magic's ``line`` (default ``sandbox``)."""
    result, _interrupted = _run_cell(line, cell, namespace, None)
    return result


def _run_cell(
    line: str, cell: str, namespace: dict[str, Any], live: Callable[[RunEvent], None] | None
) -> tuple[ScriptResult, bool]:
    options = _options(line)
    target = _target(options, namespace)
    run = getattr(target, "run", None)
    interrupted = False
    try:
        if inspect.iscoroutinefunction(run):
            result, interrupted = _run_interruptibly(run, cell, live)
        else:
            result = target.run_sync(cell)
    finally:
        if target is not namespace.get(options.target):
            target.close()  # the per-cell sandbox made for --timeout/--isolation
    if not isinstance(result, ScriptResult):
        raise ConfigurationError(
            f"%%scriptgate: {options.target}.run_sync() did not return a ScriptResult"
        )
    namespace["scriptgate_result"] = result
    return result, interrupted


def load_ipython_extension(ipython: Any) -> None:
    """Register the ``%%scriptgate`` cell magic (called by ``%load_ext scriptgate``)."""

    def scriptgate(line: str, cell: str) -> ResultView | None:
        live = _LiveCell()
        try:
            result, interrupted = _run_cell(line, cell, ipython.user_ns, live)
            options = _options(line)
        except ConfigurationError as exc:
            print(exc)
            return None
        view = ResultView(result, cell, streamed=live.streamed, interrupted=interrupted)
        if interrupted or (options.raise_ and not result.ok):
            _show(view)
            if interrupted:
                raise KeyboardInterrupt
            error = result.error
            text = f"{error.type}: {error.message}" if error is not None else "the script failed"
            if error is not None and error.line:
                text += f" (line {error.line})"
            raise CellScriptError(text)
        return view

    ipython.register_magic_function(scriptgate, magic_kind="cell", magic_name="scriptgate")


def _show(view: ResultView) -> None:
    try:
        from IPython.display import display
    except ImportError:  # pragma: no cover - the magic runs under IPython
        print(repr(view))
        return
    display(view)  # type: ignore[no-untyped-call]
