"""The ``time`` stand-in: clocks and a bounded ``sleep``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``sleep(s)`` waits in slices of at most
:data:`SLICE` seconds, checking the run's budget before each (so a sleep past the
deadline ends as the run's timeout, and an abort or interrupt stops it within a
slice) and, in a sync script's greenlet, letting the event loop run between slices.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

from scriptgate.sandbox.guards.constants import FILENAME
from scriptgate.sandbox.guards.errors import STOP_NAME
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "SLICE", "build"]

NAME = "time"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("time", "monotonic", "perf_counter", "sleep")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (beyond numbers)."""
SLICE = 0.02
"""The longest stretch ``sleep`` blocks without checking the budget."""


def _budget() -> Any:
    frame: Any = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == FILENAME:
            trip = frame.f_globals.get(STOP_NAME)
            return getattr(trip, "__self__", None)
        frame = frame.f_back
    return None


def _sleep(run: RunWorld, seconds: Any) -> None:
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as a number")
    if math.isnan(seconds) or seconds < 0:
        raise ValueError("sleep length must be non-negative")
    budget = _budget()
    end = time.monotonic() + seconds
    while True:
        run.tick()
        if budget is not None:
            budget.spend(0)  # the deadline, an abort, the stop flag
        now = time.monotonic()
        if now >= end:
            return
        pause = getattr(budget, "pause", None)
        if pause is not None:
            pause()  # a sync script's greenlet: the event loop runs a turn
        time.sleep(max(0.0, min(SLICE, end - time.monotonic())))


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""

    def sleep(seconds: Any) -> None:
        """Wait ``seconds`` (bounded by the run's deadline)."""
        _sleep(run, seconds)

    return {
        "time": time.time,
        "monotonic": time.monotonic,
        "perf_counter": time.perf_counter,
        "sleep": sleep,
    }
