"""The ``datetime`` stand-in: the real classes (immutable values with no path to the host).

Part of ``world/modules/``; uses ``guards/`` and must not import the engine,
isolation or the model-facing text.
"""

from __future__ import annotations

import datetime
from typing import Any

from scriptgate.sandbox.world.modules.common import RunWorld

__all__ = ["HOLDABLE", "MEMBERS", "NAME", "build"]

NAME = "datetime"
"""The name a script imports."""
MEMBERS: tuple[str, ...] = (
    "datetime", "date", "time", "timedelta", "timezone", "MINYEAR", "MAXYEAR",
)  # fmt: skip
"""The members a script may use."""
HOLDABLE: tuple[type, ...] = (
    datetime.datetime, datetime.date, datetime.time, datetime.timedelta, datetime.timezone,
)  # fmt: skip
"""Value types this stand-in hands to scripts."""


def build(run: RunWorld) -> dict[str, Any]:
    """The members of one run."""
    return {name: getattr(datetime, name) for name in MEMBERS}
