"""The ``time`` stand-in: clocks and a bounded ``sleep``.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text. ``sleep(s)`` is the run's own wait (the engine's
``sleep``): on the event loop in a sync script (the host's loop keeps running), in
budget-checked slices in an async script; either way a sleep past the deadline ends
as the run's timeout, and an abort or interrupt stops it. ``gmtime``/``localtime`` give
the real ``struct_time`` (a tuple of ints and the zone's name); ``strftime``'s format is
bounded as ``datetime``'s is (:func:`guards.dates.check_date_format`) and its time is a
plain ``tuple`` or a ``struct_time`` (never a script's tuple subclass) whose zone name is
at most :data:`MAX_ZONE` characters (the C ``strftime`` copies it onto the stack: a 9 MB
name crashed the process, findings20 P08).
"""

from __future__ import annotations

import math
import time
from typing import Any

from scriptgate.sandbox.guards.dates import check_date_format
from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MAX_ZONE", "MEMBERS", "NAME", "build", "seconds_of", "strftime"]

NAME = "time"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "time", "monotonic", "perf_counter", "sleep", "gmtime", "localtime", "strftime", "struct_time",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (time.struct_time,)
"""Value types this stand-in hands to scripts (beyond numbers): ``struct_time`` (ints and
the zone's name; its ``count``/``index`` compare those only)."""


MAX_ZONE = 100
"""The longest ``tm_zone`` a ``struct_time`` handed to ``strftime`` may carry (real zone
names are a few characters; the C library copies it onto the stack for ``%Z``)."""


def seconds_of(seconds: Any) -> float:
    """A sleep length as a float (a ``TypeError``/``ValueError`` as CPython words it)."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as a number")
    if math.isnan(seconds) or seconds < 0:
        raise ValueError("sleep length must be non-negative")
    return float(seconds)


def _sleep(run: RunWorld, seconds: Any) -> None:
    length = seconds_of(seconds)
    run.tick()
    run.sleep(length)


def strftime(format: Any, t: Any = None, /) -> str:
    """``time.strftime('%Y-%m-%d')`` (``t``: a ``struct_time`` or 9-tuple, else now)."""
    fmt = check_date_format(None, format, "time.strftime()")
    if t is None:
        return time.strftime(fmt)
    if type(t) is not tuple and type(t) is not time.struct_time:
        raise TypeError("Tuple or struct_time argument required")
    if type(t) is time.struct_time:
        zone = t.tm_zone
        if isinstance(zone, str) and len(zone) > MAX_ZONE:
            raise ValueError(
                f"time.strftime(): the struct_time's zone name is {len(zone)} characters long; "
                f"the most is {MAX_ZONE} (use a real zone name such as 'UTC')"
            )
    return time.strftime(fmt, t)


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
        "gmtime": time.gmtime,
        "localtime": time.localtime,
        "strftime": strftime,
        "struct_time": time.struct_time,
    }
