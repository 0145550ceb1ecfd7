"""What the ``scriptgate run`` command shows while a script runs, and how Ctrl-C stops it.

Owns :func:`sigint_aborts` (SIGINT becomes an abort of the run, never a
``KeyboardInterrupt`` inside the sandbox) and :class:`LiveView` (printed text
streamed as it comes, tool calls shown as progress on a terminal's stderr).
Sits on top (cli layer): imports the runtime and the sandbox's event record only.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType
from typing import Any, TextIO

from scriptgate.runtime.abort import AbortController, AbortError, loop_scheduler
from scriptgate.sandbox.events import RunEvent

__all__ = ["INTERRUPT_MESSAGE", "Interrupts", "LiveView", "sigint_aborts"]

INTERRUPT_MESSAGE = "Interrupted (Ctrl-C)"
"""The abort reason a Ctrl-C gives the running script."""


class Interrupts:
    """How many times SIGINT arrived while :func:`sigint_aborts` was active."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


@contextlib.contextmanager
def sigint_aborts(controller: AbortController) -> Iterator[Interrupts]:
    """While active, the first SIGINT aborts ``controller`` (a second one raises ``KeyboardInterrupt``).

    Enter it on the event loop's thread inside the running loop. The handler only
    marks the signal pending and schedules the abort on the loop
    (:meth:`AbortController.abort_soon`), both safe in a signal handler: a busy
    in-process script stops at its next budget check, a waiting tool call is
    cancelled, a worker process is told to stop (and killed if it does not).
    Outside the main thread it does nothing.
    """
    seen = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return
    soon = loop_scheduler()

    def handler(signum: int, frame: FrameType | None) -> None:
        seen.count += 1
        if seen.count > 1:
            raise KeyboardInterrupt
        controller.abort_soon(AbortError(INTERRUPT_MESSAGE), soon)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield seen
    finally:
        signal.signal(signal.SIGINT, previous)


class LiveView:
    """The ``on_event`` callback of ``scriptgate run``: stream output, show calls in progress.

    Printed text goes to ``out`` at once (flushed, so a pipe reader sees it as it
    comes). When ``progress`` is set (stderr is a terminal), each call's start
    and end is shown on ``err`` as one line, after the run has lasted
    ``after`` seconds (short runs stay quiet).
    """

    def __init__(
        self, out: Any, err: TextIO | None = None, *, progress: bool = False, after: float = 1.0
    ) -> None:
        self.out = out
        self.err = err
        self.progress = progress and err is not None
        self.after = after
        self.started = time.monotonic()
        self.streamed = False
        self.calls = 0

    def __call__(self, event: RunEvent) -> None:
        """Handle one event."""
        if event.kind == "output":
            if event.text:
                self.streamed = True
                self.out.write(event.text)
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    self.out.flush()
            return
        if event.kind == "call_start":
            self.calls += 1
        if not self.progress or self.err is None:
            return
        elapsed = time.monotonic() - self.started
        if elapsed < self.after:
            return
        if event.kind == "call_start":
            line = f"… {elapsed:6.1f} s  call {self.calls}: {event.tool} started"
        else:
            took = f" in {event.duration_ms} ms" if event.duration_ms is not None else ""
            line = f"… {elapsed:6.1f} s  {event.call_id} {event.tool}: {event.status}{took}"
        self.err.write(line + "\n")
        with contextlib.suppress(OSError, ValueError):
            self.err.flush()
