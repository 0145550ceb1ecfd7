"""The deadline and abort signal of one compile: :class:`CompileClock` and :class:`CompileStopped`.

Owns the cheap check the compile passes make (a counter; every few hundred nodes
``time.monotonic()`` against the run's deadline and the abort signal's ``pending`` reason).
The clock of the compile running in this thread is found through :func:`tick` (each
pass's visitor, walk and the policy call it once per node). It imports nothing from scriptgate: the engine and ``eval``/``exec`` pass their run's
deadline and signal in, and turn :class:`CompileStopped` into the run's ordinary stop.
"""

from __future__ import annotations

import ast
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "CHECK_EVERY",
    "CompileClock",
    "CompileStopped",
    "TickingTransformer",
    "TickingVisitor",
    "running",
    "tick",
    "walk",
]

CHECK_EVERY = 256
"""Nodes between two real checks of the clock."""


class CompileStopped(Exception):
    """The compile passed the run's deadline or was aborted; ``kind`` is ``limit`` or ``aborted``."""

    def __init__(self, kind: str, type_name: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.type_name = type_name
        self.message = message


class CompileClock:
    """The run's deadline (``time.monotonic()``) and abort signal, checked while compiling.

    ``timeout`` is the run's limit in seconds (for the message); ``signal`` anything with
    the ``aborted``/``pending``/``reason`` of :class:`~scriptgate.runtime.abort.AbortSignal`.
    ``visits`` counts every tick (tests compare the work of two sizes by it).
    """

    __slots__ = ("_left", "deadline", "signal", "timeout", "visits")

    def __init__(
        self, deadline: float | None, timeout: float | None = None, signal: Any = None
    ) -> None:
        self.deadline = deadline
        self.timeout = timeout
        self.signal = signal
        self.visits = 0
        self._left = CHECK_EVERY

    def tick(self) -> None:
        """Count one node; every :data:`CHECK_EVERY` nodes, :meth:`check`."""
        self.visits += 1
        self._left -= 1
        if self._left <= 0:
            self._left = CHECK_EVERY
            self.check()

    def check(self) -> None:
        """Raise :class:`CompileStopped` if the run was aborted or its deadline has passed."""
        signal = self.signal
        if signal is not None:
            reason = signal.pending  # as the run's budget polls it (guards.budget)
            if reason is not None:
                raise CompileStopped("aborted", "AbortError", str(reason) or "Execution aborted")
        if self.deadline is not None and time.monotonic() > self.deadline:
            limit = self.timeout
            message = (
                f"Script timed out after {limit:g} s" if limit is not None else "Script timed out"
            )
            raise CompileStopped("limit", "LimitExceeded", message)


_CURRENT = threading.local()


def tick() -> None:
    """Count one node against the clock of the compile running in this thread (if any)."""
    clock = getattr(_CURRENT, "clock", None)
    if clock is not None:
        clock.tick()


@contextmanager
def running(clock: CompileClock | None) -> Iterator[None]:
    """Make ``clock`` the one :func:`tick` counts against in this thread, for the block."""
    before = getattr(_CURRENT, "clock", None)
    _CURRENT.clock = clock
    try:
        yield
    finally:
        _CURRENT.clock = before


def walk(tree: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` that ticks at every node."""
    clock = getattr(_CURRENT, "clock", None)
    if clock is None:
        yield from ast.walk(tree)
        return
    count = clock.tick
    for node in ast.walk(tree):
        count()
        yield node


class TickingVisitor(ast.NodeVisitor):
    """``ast.NodeVisitor`` that ticks at every node it visits."""

    def visit(self, node: ast.AST) -> Any:
        """Tick, then visit ``node`` (``ast.NodeVisitor.visit`` inlined: no frame more)."""
        tick()
        return getattr(self, "visit_" + node.__class__.__name__, self.generic_visit)(node)


class TickingTransformer(ast.NodeTransformer):
    """``ast.NodeTransformer`` that ticks at every node it visits."""

    def visit(self, node: ast.AST) -> Any:
        """Tick, then visit ``node`` (``ast.NodeVisitor.visit`` inlined: no frame more)."""
        tick()
        return getattr(self, "visit_" + node.__class__.__name__, self.generic_visit)(node)
