"""The ``time`` stand-in: clocks only.

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text.
"""

from __future__ import annotations

import time
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "time"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = ("time", "monotonic", "perf_counter")
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = ()
"""Value types this stand-in hands to scripts (beyond numbers)."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {"time": time.time, "monotonic": time.monotonic, "perf_counter": time.perf_counter}
